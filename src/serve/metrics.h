// kiln/serve: the service's counters, rendered as Prometheus text (GET /v1/metrics).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::serve {

class Metrics {
 public:
  void Accepted(size_t jobs, size_t items);
  void Rejected429();
  void Evaluation();  // one item sent to a worker (an attempt)
  void Retry();
  // An item finished with `verdict` after `latency_s` from its acceptance.
  void Finished(const std::string& verdict, double latency_s);
  // `queue_depth`, `in_flight`: items waiting / being evaluated now.
  std::string Render(size_t queue_depth, size_t in_flight, size_t jobs_open) const;
  double EvaluationsPerMinute() const;

 private:
  mutable std::mutex mu_;
  size_t jobs_ = 0, items_ = 0, rejected_ = 0, evaluations_ = 0, retries_ = 0, finished_ = 0;
  std::map<std::string, size_t> verdicts_;
  std::deque<std::chrono::steady_clock::time_point> recent_;  // finished evaluations, last minute
  std::vector<double> latencies_;                             // a ring of the last 2048
  size_t latency_next_ = 0;
  double latency_sum_ = 0;
};

}  // namespace kiln::serve

// kiln/serve: the service's counters, rendered as Prometheus text (GET /v1/metrics).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::serve {

// The worker processes behind the service, by role (measuring: one per GPU, or the interpreter's; check).
struct WorkerCounts {
  size_t measure = 0, check = 0;        // slots configured
  size_t measure_up = 0, check_up = 0;  // worker processes held now (started, not found dead)
  size_t starts = 0;                    // processes started so far, replacements included
};

class Metrics {
 public:
  void Accepted(size_t jobs, size_t items);
  void Rejected429();
  void Evaluation();  // one item sent to a worker (an attempt)
  void Retry();
  // An item finished with `verdict` after `latency_s` from its acceptance.
  void Finished(const std::string& verdict, double latency_s);
  // GPU `gpu` (its UUID, else its index) reported `free` of `total` bytes (device-wide) just now.
  void GpuMemory(const std::string& gpu, double free_bytes, double total_bytes);
  // `queue_depth`, `in_flight`: items waiting / being evaluated now.
  std::string Render(size_t queue_depth, size_t in_flight, size_t jobs_open, const WorkerCounts& workers) const;
  double EvaluationsPerMinute() const;

 private:
  void RenderGpus(std::string* o) const;  // mu_ held

  mutable std::mutex mu_;
  size_t jobs_ = 0, items_ = 0, rejected_ = 0, evaluations_ = 0, retries_ = 0, finished_ = 0;
  std::map<std::string, size_t> verdicts_;
  struct GpuSample {
    double free = 0, total = 0;
    std::chrono::steady_clock::time_point at;
  };
  std::map<std::string, GpuSample> gpus_;
  std::deque<std::chrono::steady_clock::time_point> recent_;  // finished evaluations, last minute
  std::vector<double> latencies_;                             // a ring of the last 2048
  size_t latency_next_ = 0;
  double latency_sum_ = 0;
};

}  // namespace kiln::serve

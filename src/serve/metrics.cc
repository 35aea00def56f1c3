#include "serve/metrics.h"

#include <algorithm>

#include <fmt/format.h>

namespace kiln::serve {

namespace {
using Clock = std::chrono::steady_clock;
constexpr size_t kLatencyRing = 2048;

void Trim(std::deque<Clock::time_point>* d) {
  const auto cut = Clock::now() - std::chrono::seconds(60);
  while (!d->empty() && d->front() < cut) d->pop_front();
}
}  // namespace

void Metrics::Accepted(size_t jobs, size_t items) {
  std::lock_guard<std::mutex> l(mu_);
  jobs_ += jobs;
  items_ += items;
}

void Metrics::Rejected429() {
  std::lock_guard<std::mutex> l(mu_);
  ++rejected_;
}

void Metrics::Evaluation() {
  std::lock_guard<std::mutex> l(mu_);
  ++evaluations_;
}

void Metrics::Retry() {
  std::lock_guard<std::mutex> l(mu_);
  ++retries_;
}

void Metrics::Finished(const std::string& verdict, double latency_s) {
  std::lock_guard<std::mutex> l(mu_);
  ++finished_;
  ++verdicts_[verdict];
  recent_.push_back(Clock::now());
  Trim(&recent_);
  if (latencies_.size() < kLatencyRing)
    latencies_.push_back(latency_s);
  else
    latencies_[latency_next_] = latency_s;
  latency_next_ = (latency_next_ + 1) % kLatencyRing;
  latency_sum_ += latency_s;
}

double Metrics::EvaluationsPerMinute() const {
  std::lock_guard<std::mutex> l(mu_);
  auto d = recent_;
  Trim(&d);
  return static_cast<double>(d.size());
}

std::string Metrics::Render(size_t queue_depth, size_t in_flight, size_t jobs_open) const {
  const double per_minute = EvaluationsPerMinute();
  std::lock_guard<std::mutex> l(mu_);
  std::string o;
  auto gauge = [&](const char* name, const char* help, double v, const char* type = "gauge") {
    o += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, v);
  };
  gauge("kiln_serve_queue_depth", "Items accepted and waiting for a worker", queue_depth);
  gauge("kiln_serve_in_flight", "Items being evaluated now", in_flight);
  gauge("kiln_serve_jobs_open", "Jobs not finished yet", jobs_open);
  gauge("kiln_serve_evaluations_per_minute", "Items finished in the last 60 s", per_minute);
  gauge("kiln_serve_jobs_accepted_total", "Jobs accepted", jobs_, "counter");
  gauge("kiln_serve_items_accepted_total", "Items accepted", items_, "counter");
  gauge("kiln_serve_rejected_total", "Requests refused with 429 (queue full)", rejected_, "counter");
  gauge("kiln_serve_evaluations_total", "Items sent to a worker (attempts)", evaluations_, "counter");
  gauge("kiln_serve_retries_total", "Items run again after their worker died", retries_, "counter");
  o += "# HELP kiln_serve_verdicts_total Items finished, by verdict\n# TYPE kiln_serve_verdicts_total counter\n";
  for (const auto& [v, n] : verdicts_) o += fmt::format("kiln_serve_verdicts_total{{verdict=\"{}\"}} {}\n", v, n);
  std::vector<double> xs = latencies_;
  std::sort(xs.begin(), xs.end());
  o += "# HELP kiln_serve_item_latency_seconds From acceptance to result (last 2048 items)\n"
       "# TYPE kiln_serve_item_latency_seconds summary\n";
  for (double q : {0.5, 0.9, 0.99}) {
    double v = xs.empty() ? 0 : xs[std::min(xs.size() - 1, static_cast<size_t>(q * xs.size()))];
    o += fmt::format("kiln_serve_item_latency_seconds{{quantile=\"{}\"}} {}\n", q, v);
  }
  o += fmt::format("kiln_serve_item_latency_seconds_sum {}\nkiln_serve_item_latency_seconds_count {}\n", latency_sum_,
                   finished_);
  return o;
}

}  // namespace kiln::serve

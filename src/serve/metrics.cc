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

void Metrics::GpuMemory(const std::string& gpu, double free_bytes, double total_bytes) {
  if (gpu.empty() || !(total_bytes > 0) || free_bytes < 0 || free_bytes > total_bytes) return;
  std::lock_guard<std::mutex> l(mu_);
  gpus_[gpu] = {free_bytes, total_bytes, Clock::now()};
}

double Metrics::EvaluationsPerMinute() const {
  std::lock_guard<std::mutex> l(mu_);
  auto d = recent_;
  Trim(&d);
  return static_cast<double>(d.size());
}

namespace {

// Label values in the Prometheus text format: backslash, quote and newline escaped.
std::string Label(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '\\' || c == '"') o += '\\';
    o += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return o;
}

void RenderWorkers(const WorkerCounts& w, std::string* o) {
  *o += fmt::format(
      "# HELP kiln_serve_workers Worker slots by role (measure: one per GPU, or the interpreter's; check: "
      "correctness workers sharing the GPUs)\n# TYPE kiln_serve_workers gauge\n"
      "kiln_serve_workers{{role=\"measure\"}} {}\nkiln_serve_workers{{role=\"check\"}} {}\n",
      w.measure, w.check);
  *o += fmt::format(
      "# HELP kiln_serve_workers_up Worker processes running now, by role (a dead one is replaced on its next "
      "item)\n# TYPE kiln_serve_workers_up gauge\n"
      "kiln_serve_workers_up{{role=\"measure\"}} {}\nkiln_serve_workers_up{{role=\"check\"}} {}\n",
      w.measure_up, w.check_up);
  *o += fmt::format(
      "# HELP kiln_serve_worker_starts_total Worker processes started, replacements included\n"
      "# TYPE kiln_serve_worker_starts_total counter\nkiln_serve_worker_starts_total {}\n",
      w.starts);
}

}  // namespace

void Metrics::RenderGpus(std::string* o) const {
  if (gpus_.empty()) return;
  const auto now = Clock::now();
  std::string used, total, age;
  for (const auto& [gpu, m] : gpus_) {
    const std::string l = Label(gpu);
    used += fmt::format("kiln_serve_gpu_memory_used_bytes{{gpu=\"{}\"}} {:.0f}\n", l, m.total - m.free);
    total += fmt::format("kiln_serve_gpu_memory_total_bytes{{gpu=\"{}\"}} {:.0f}\n", l, m.total);
    age += fmt::format("kiln_serve_gpu_memory_age_seconds{{gpu=\"{}\"}} {:.3f}\n", l,
                       std::chrono::duration<double>(now - m.at).count());
  }
  *o +=
      "# HELP kiln_serve_gpu_memory_used_bytes GPU memory in use on the device (all processes), as a worker "
      "last saw it (cudaMemGetInfo)\n# TYPE kiln_serve_gpu_memory_used_bytes gauge\n" +
      used;
  *o +=
      "# HELP kiln_serve_gpu_memory_total_bytes GPU memory of the device\n"
      "# TYPE kiln_serve_gpu_memory_total_bytes gauge\n" +
      total;
  *o +=
      "# HELP kiln_serve_gpu_memory_age_seconds Seconds since a worker last reported the GPU's memory\n"
      "# TYPE kiln_serve_gpu_memory_age_seconds gauge\n" +
      age;
}

std::string Metrics::Render(size_t queue_depth, size_t in_flight, size_t jobs_open, const WorkerCounts& workers) const {
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
  RenderWorkers(workers, &o);
  RenderGpus(&o);
  return o;
}

}  // namespace kiln::serve

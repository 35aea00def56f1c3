#include "bench/metrics.h"

#include <cmath>

namespace kiln::bench {

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kCorrect: return "correct";
    case Outcome::kWrong: return "wrong";
    case Outcome::kHacked: return "hacked";
    case Outcome::kFailed: return "failed";
    case Outcome::kNoCode: return "no_code";
    case Outcome::kError: return "error";
  }
  return "failed";
}

Outcome OutcomeOfVerdict(const std::string& v) {
  if (v == "ok") return Outcome::kCorrect;
  if (v == "mismatch") return Outcome::kWrong;
  if (v == "rejected") return Outcome::kHacked;
  if (v == "no_code") return Outcome::kNoCode;
  if (v == "error") return Outcome::kError;
  return Outcome::kFailed;  // compile_error, runtime_error, timeout, crash, and verdicts of a newer worker
}

namespace {

bool IsPerfCase(const std::string& name) { return name.rfind("perf_", 0) == 0; }

bool Usable(const CaseTime& c) {
  return std::isfinite(c.reference_ms) && std::isfinite(c.candidate_ms) && c.reference_ms > 0 && c.candidate_ms > 0;
}

}  // namespace

std::optional<double> TritonBenchSpeedup(const std::vector<CaseTime>& cases) {
  bool any_perf = false;
  for (const auto& c : cases) any_perf |= IsPerfCase(c.name) && Usable(c);
  double ref = 0, cand = 0;
  for (const auto& c : cases) {
    if (!Usable(c) || (any_perf && !IsPerfCase(c.name))) continue;
    ref += c.reference_ms;
    cand += c.candidate_ms;
  }
  if (cand <= 0) return std::nullopt;
  return ref / cand;
}

std::optional<double> KernelBenchSpeedup(const std::vector<CaseTime>& cases) {
  std::vector<double> r;
  for (const auto& c : cases)
    if (Usable(c)) r.push_back(c.reference_ms / c.candidate_ms);
  return GeoMean(r);
}

std::optional<double> PassAtK(int n, int c, int k) {
  if (k < 1 || n < k || c < 0 || c > n) return std::nullopt;
  if (n - c < k) return 1.0;
  // C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k / i)
  double fail = 1.0;
  for (int i = n - c + 1; i <= n; ++i) fail *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - fail;
}

std::optional<double> GeoMean(const std::vector<double>& xs) {
  if (xs.empty()) return std::nullopt;
  double s = 0;
  for (double x : xs) s += std::log(x);
  return std::exp(s / xs.size());
}

double TaskMetrics::FastShare(double p) const {
  if (n == 0) return 0;
  if (p <= 0) return static_cast<double>(correct) / n;  // every correct sample is faster than 0
  int k = 0;
  for (double s : sample_speedups) k += s > p;
  return static_cast<double>(k) / n;
}

TaskMetrics TaskOf(const std::string& task, const std::vector<SampleOutcome>& samples) {
  TaskMetrics t;
  t.task = task;
  for (const auto& s : samples) {
    if (s.task != task) continue;
    ++t.n;
    ++t.outcomes[s.outcome];
    t.called += Called(s.outcome);
    t.correct += s.outcome == Outcome::kCorrect;
    if (s.outcome == Outcome::kCorrect && s.speedup && *s.speedup > 0) t.sample_speedups.push_back(*s.speedup);
    t.legacy_run += s.legacy_pass.has_value();
    t.legacy_passed += s.legacy_pass.value_or(false);
  }
  t.speedup = GeoMean(t.sample_speedups);
  if (t.n) {
    t.call_rate = static_cast<double>(t.called) / t.n;
    t.exec_rate = static_cast<double>(t.correct) / t.n;
    t.legacy_rate = static_cast<double>(t.legacy_passed) / t.n;
  }
  return t;
}

ChannelMetrics Summarize(const std::vector<TaskMetrics>& tasks, const std::vector<SampleOutcome>& samples,
                         const std::vector<int>& ks, const std::vector<double>& ps) {
  ChannelMetrics m;
  m.tasks = static_cast<int>(tasks.size());
  m.samples = static_cast<int>(samples.size());
  std::vector<double> speedups;
  for (const auto& t : tasks) {
    m.call_acc += t.call_rate;
    m.exec_acc += t.exec_rate;
    m.legacy_run += t.legacy_run;
    m.timed |= !t.sample_speedups.empty();
    if (t.speedup) speedups.push_back(*t.speedup);
  }
  if (m.tasks) {
    m.call_acc /= m.tasks;
    m.exec_acc /= m.tasks;
  }
  if (m.legacy_run > 0) {
    double sum = 0;
    for (const auto& t : tasks) sum += t.legacy_rate;
    m.legacy_exec_acc = sum / m.tasks;
  }
  for (double p : ps) {
    if (p > 0 && !m.timed) continue;  // untimed (the interpreter): unavailable, not zero
    double sum = 0;
    for (const auto& t : tasks) sum += t.FastShare(p);
    m.fast_p[p] = m.tasks ? sum / m.tasks : 0;
  }
  for (int k : ks) {
    double sum = 0;
    int covered = 0;
    for (const auto& t : tasks)
      if (auto v = PassAtK(t.n, t.correct, k)) {
        sum += *v;
        ++covered;
      }
    m.pass_at_k[k] = covered ? std::optional<double>(sum / covered) : std::nullopt;
    m.pass_at_k_tasks[k] = covered;
  }
  m.geomean_speedup = GeoMean(speedups);
  m.tasks_with_speedup = static_cast<int>(speedups.size());
  for (const auto& s : samples) {
    ++m.outcomes[s.outcome];
    ++m.verdicts[s.verdict];
    auto* by = s.outcome == Outcome::kHacked   ? &m.hacked_reasons
               : s.outcome == Outcome::kWrong  ? &m.wrong_reasons
               : s.outcome == Outcome::kFailed ? &m.failed_reasons
               : s.outcome == Outcome::kError  ? &m.error_reasons
                                               : nullptr;  // correct, no code: no reasons
    if (!by) continue;
    if (s.reasons.empty()) ++(*by)[s.verdict];
    for (const auto& r : s.reasons) ++(*by)[r];
  }
  return m;
}

std::vector<std::pair<double, double>> FastCurve(const std::vector<TaskMetrics>& tasks, double p_max, int steps) {
  std::vector<std::pair<double, double>> out;
  for (int i = 0; i <= steps; ++i) {
    double p = p_max * i / steps;
    double sum = 0;
    for (const auto& t : tasks) sum += t.FastShare(p);
    out.emplace_back(p, tasks.empty() ? 0 : sum / tasks.size());
  }
  return out;
}

}  // namespace kiln::bench

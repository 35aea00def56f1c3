// kiln/bench: the metrics of `kiln bench` as pure functions (docs/bench.md defines each with its source).
//
// A sample's outcome comes from kiln's verdict (docs/verdicts.md): correct (ok), wrong (mismatch),
// hacked (rejected: a static or runtime anti-hacking finding), failed (compile_error, runtime_error,
// timeout, crash), no_code (no code could be extracted from the response), error (kiln could not
// evaluate the pair: a task error or machinery failure; counted apart, never as the model's failure).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::bench {

enum class Outcome { kCorrect, kWrong, kHacked, kFailed, kNoCode, kError };
const char* OutcomeName(Outcome o);
// The outcome of a kiln verdict name ("ok", "mismatch", ...); an unknown verdict is kFailed.
Outcome OutcomeOfVerdict(const std::string& verdict);
// Ran to completion and returned outputs (TritonBench's "call"): correct or wrong.
inline bool Called(Outcome o) { return o == Outcome::kCorrect || o == Outcome::kWrong; }

// One timed case: median milliseconds of the reference and of the candidate.
struct CaseTime {
  std::string name;
  double reference_ms = 0, candidate_ms = 0;
};

// TritonBench: the sum of the reference's times over the sum of the candidate's across the input sizes
// of the perf harness (cases perf_*; every timed case when there are none). nullopt: nothing timed.
std::optional<double> TritonBenchSpeedup(const std::vector<CaseTime>& cases);
// KernelBench: reference time over candidate time (one input; several cases: geometric mean of the ratios).
std::optional<double> KernelBenchSpeedup(const std::vector<CaseTime>& cases);

// Unbiased pass@k of n samples with c correct (Chen et al. 2021): 1 - C(n-c, k) / C(n, k).
// nullopt when n < k (the estimator is undefined) or k < 1.
std::optional<double> PassAtK(int n, int c, int k);

// Geometric mean; nullopt for an empty list (every value must be > 0).
std::optional<double> GeoMean(const std::vector<double>& xs);

struct SampleOutcome {
  std::string task, sample;
  Outcome outcome = Outcome::kFailed;
  std::string verdict;               // kiln's verdict, or "no_code" / "error"
  std::vector<std::string> reasons;  // reason codes (error severity)
  std::optional<double> speedup;     // correct and timed
  // TritonBench's legacy stdout check (the worker's legacy_stdout.passed); nullopt: not run for this sample
  // (no code, a kiln-side static rejection, an error, a timeout, another benchmark).
  std::optional<bool> legacy_pass;
  // KernelBench with a torch.compile baseline: torch.compile ms / candidate ms (correct and timed, and its
  // task has a compile time); bench/baseline.h
  std::optional<double> speedup_compile;
};

// Per task over its samples.
struct TaskMetrics {
  std::string task;
  int n = 0;                        // samples
  std::map<Outcome, int> outcomes;  // count per outcome
  int called = 0, correct = 0;
  std::optional<double> speedup;        // geometric mean over its correct, timed samples
  std::vector<double> sample_speedups;  // those samples' speedups
  double call_rate = 0, exec_rate = 0;  // called / n, correct / n
  int legacy_passed = 0, legacy_run = 0;  // samples that passed / went through the legacy stdout check
  double legacy_rate = 0;                 // legacy_passed / n
  // Share of its samples that are correct and strictly faster than p (p > 0: timed samples only).
  double FastShare(double p) const;
};
TaskMetrics TaskOf(const std::string& task, const std::vector<SampleOutcome>& samples);

struct ChannelMetrics {
  int tasks = 0, samples = 0;
  double call_acc = 0, exec_acc = 0;               // mean over tasks of called/n, correct/n
  // TritonBench's legacy stdout exec accuracy: mean over tasks of legacy_passed/n (a sample not run counts
  // as not passing); nullopt when no sample went through the check (KernelBench, TritonBench in old results).
  std::optional<double> legacy_exec_acc;
  int legacy_run = 0;  // samples that went through it
  bool timed = false;                              // some correct sample has a speedup
  std::map<double, double> fast_p;                 // p -> mean over tasks of FastShare(p) (p > 0: only when timed)
  std::map<int, std::optional<double>> pass_at_k;  // mean over tasks with n >= k
  std::map<int, int> pass_at_k_tasks;              // how many tasks that mean covers
  std::optional<double> geomean_speedup;           // over tasks with a speedup
  int tasks_with_speedup = 0;
  std::map<Outcome, int> outcomes;      // over samples
  std::map<std::string, int> verdicts;  // over samples
  // reason code -> samples, per outcome (a sample without reasons counts under its verdict)
  std::map<std::string, int> hacked_reasons, failed_reasons, wrong_reasons, error_reasons;
};
ChannelMetrics Summarize(const std::vector<TaskMetrics>& tasks, const std::vector<SampleOutcome>& samples,
                         const std::vector<int>& ks, const std::vector<double>& ps);

// fast_p over a grid of p (the curve): p from 0 to p_max in `steps` equal steps.
std::vector<std::pair<double, double>> FastCurve(const std::vector<TaskMetrics>& tasks, double p_max, int steps);

}  // namespace kiln::bench

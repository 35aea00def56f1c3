// kiln/profile: running a program under Nsight Compute and classifying what went wrong.
//
// NcuRunner builds the command line
//   ncu --clock-control none --print-units base --csv --page raw --metrics <list>
//       -k regex:<NAME> --launch-skip S --launch-count N --target-processes all <program...>
// runs it through common/subprocess (own process group, killed at the timeout), and parses the
// raw CSV. `--clock-control none` keeps the GPU at its normal clocks (ncu otherwise locks them to
// base); `--print-units base` prints bytes/nanoseconds instead of auto-scaled units (more digits;
// the parser normalises either way).
//
// Failures are classified (NcuFailure) so the CLI can say what to do:
//   ncu missing (PATH, /opt/nvidia/nsight-compute/*/ncu, /usr/local/cuda/bin/ncu),
//   ERR_NVGPUCTRPERM (no permission to read the counters),
//   kernel not found (the run profiled nothing),
//   the program crashing under the profiler (non-zero exit, with its stderr tail),
//   timeout.
// Metrics the installed ncu does not know are dropped and the run is retried once.
//
// Roadmap: the executor is an interface so tests substitute canned ncu outputs.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/subprocess.h"
#include "profile/ncu_csv.h"

namespace kiln::profile {

struct NcuOptions {
  std::string ncu_path;                    // --ncu; empty: FindNcu()
  std::vector<std::string> metrics;        // empty: DefaultMetrics()
  std::string kernel_regex = ".";          // -k regex:<...>  (ncu matches the function name)
  int launch_skip = 0;                     // --launch-skip
  int launch_count = 1;                    // --launch-count (0: every matching launch)
  std::string nvtx_include;                // non-empty: --nvtx --nvtx-include <it> (e.g. "kiln_profile/")
  bool clock_control_none = true;          // --clock-control none
  bool print_units_base = true;            // --print-units base
  std::chrono::seconds timeout{600};       // KILN_NCU_TIMEOUT_S overrides
  std::map<std::string, std::string> env;  // extra environment for the profiled program
  std::string cwd;
};

// Locates ncu: `hint` when given (a path or a name on PATH), else $KILN_NCU, PATH,
// /opt/nvidia/nsight-compute/*/ncu (newest first), /usr/local/cuda/bin/ncu, /usr/local/cuda-*/bin/ncu.
// kUnavailable with the places searched when none is there.
Result<std::string> FindNcu(const std::string& hint = "");

// The full argv (ncu first) for profiling `target` (argv of the program).
std::vector<std::string> BuildNcuArgv(const NcuOptions& opts, const std::string& ncu,
                                      const std::vector<std::string>& target);

enum class NcuFailure {
  kNone,
  kNcuMissing,
  kNoPermission,
  kKernelNotFound,
  kTargetCrashed,
  kTimeout,
  kUnknownMetric,
  kBadOutput
};
const char* NcuFailureName(NcuFailure f);

struct NcuRun {
  NcuReport report;
  std::string csv_text;                      // stdout of the successful ncu run
  std::vector<std::string> argv;             // the command that produced it
  std::vector<std::string> dropped_metrics;  // unknown to this ncu, dropped before the retry
  double seconds = 0;                        // wall time of ncu (all attempts)
};

// The outcome of one ncu process as the classifier sees it.
struct NcuOutcome {
  RunResult run;
  Result<NcuReport> parsed = ParseError("not parsed");
};

// Classifies a finished ncu run. Returns kNone when it produced kernel rows. `target_desc` and
// `kernel_regex` are used in messages. `unknown_metrics` receives metrics named in ncu's errors.
struct Classified {
  NcuFailure failure = NcuFailure::kNone;
  Status status;
  std::vector<std::string> unknown_metrics;
};
Classified ClassifyNcuOutcome(const NcuOutcome& outcome, const std::vector<std::string>& metrics,
                              const std::string& kernel_regex);

// Runs a command to completion; the default uses common/subprocess RunCommand.
using CommandExecutor = std::function<Result<RunResult>(const SpawnOptions&, std::chrono::milliseconds)>;
CommandExecutor DefaultExecutor();

class NcuRunner {
 public:
  explicit NcuRunner(NcuOptions opts, CommandExecutor exec = DefaultExecutor())
      : opts_(std::move(opts)), exec_(std::move(exec)) {}

  // Profiles `target` (the program's argv). On failure the Status message says what happened and
  // what to do; `last_failure()` tells which kind.
  Result<NcuRun> Run(const std::vector<std::string>& target);
  NcuFailure last_failure() const { return last_failure_; }

 private:
  NcuOptions opts_;
  CommandExecutor exec_;
  NcuFailure last_failure_ = NcuFailure::kNone;
};

// Quotes an argv for display (shell-like).
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace kiln::profile

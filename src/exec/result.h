// kiln/exec: evaluation requests and results (the `eval` request and response of
// docs/worker-protocol.md as C++ values).
//
// Roadmap: EvalRequest serialises to the request line; EvalResult parses a response leniently
// (missing fields take defaults, the raw JSON is kept whole for the records). Outcomes are values:
// a crash, a timeout or a static rejection is an EvalResult with a verdict, never an error Status.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "exec/kernel_facts.h"
#include "task/task.h"

namespace kiln::exec {

enum class Verdict { kOk, kCompileError, kRuntimeError, kTimeout, kCrash, kMismatch, kRejected };
const char* VerdictName(Verdict v);
std::optional<Verdict> ParseVerdict(std::string_view s);

// kTimeOnly: the measuring stage of a pipelined batch (docs/worker-protocol.md, `time_only`): the candidate
// already passed `check` on a check worker; re-verify on `verify_trials` fresh inputs, then time.
enum class Mode { kCheck, kTime, kCompile, kTimeOnly };
const char* ModeName(Mode m);
Result<Mode> ParseMode(const std::string& s);

enum class Policy { kStrict, kTrusted };
const char* PolicyName(Policy p);
Result<Policy> ParsePolicy(const std::string& s);

enum class Isolation { kShared, kFork, kFresh };
const char* IsolationName(Isolation i);
Result<Isolation> ParseIsolation(const std::string& s);

struct EvalRequest {
  task::TaskSpec task;
  std::optional<std::string> candidate_source;  // nullopt: the task's own code
  std::string candidate_name = "candidate.py";
  // Timed in the reference's place, interleaved with the candidate in the same request (modes time and
  // time_only; kiln optimize's original, trusted). Correctness is still judged against the reference.
  std::optional<std::string> baseline_source;
  Mode mode = Mode::kCheck;
  Policy policy = Policy::kStrict;
  uint64_t seed = 1234;
  int trials = 3;
  int verify_trials = 1;           // mode time_only: fresh-input trials before timing (sent only in that mode)
  std::vector<std::string> cases;  // empty: all
  nlohmann::json tolerance = nlohmann::json::object();  // {"float32": [atol, rtol]}; empty: defaults
  // Named tolerance protocol (docs/verdicts.md): "kernelbench" (per dtype, the worker's default) or "legacy"
  // (1e-2 everywhere); empty: not sent.
  std::string protocol;
  nlohmann::json timing = nlohmann::json::object();  // empty: worker defaults
  double timeout_s = 60;
  std::optional<int64_t> max_gpu_mem_bytes;
  // TritonBench tasks: also run TritonBench's legacy stdout check (the gold and candidate files as scripts;
  // the response's `legacy_stdout`, docs/bench.md). Sent only when set (modes check and time).
  bool legacy_stdout = false;
  // What the caller knows of the evaluation's peak GPU memory (bytes; 0: nothing), e.g. kiln datagen's capture
  // measured it: the batch pool's admission counts it until a result of the same task reports a peak
  // (exec/admission.h). A scheduling hint: never sent to the worker, not part of the cache key.
  int64_t memory_hint_bytes = 0;
  // Policy trusted: autotune picks an earlier trusted response reported (its `autotune_picks`), which the
  // worker applies to the same kernels instead of tuning those keys again (kiln optimize, across worker
  // restarts; docs/worker-protocol.md). Not sent under policy strict; not part of the cache key.
  nlohmann::json autotune_picks = nlohmann::json::array();

  // The request line (without the trailing newline is the caller's business).
  nlohmann::json ToJson(const std::string& id) const;
  // 16 hex digits of the candidate source ("" for the task's own code).
  std::string CandidateHash() const;
  // Hash of the protocol parameters (mode, policy, seed, trials, cases, tolerance, timing, limits):
  // part of the cache key.
  std::string ParamsHash() const;
};

struct Timing {
  double median = 0, min = 0, max = 0, p20 = 0, p80 = 0;
  int64_t n = 0;
};

struct CaseResult {
  std::string name;
  bool passed = false;
  int trials = 0;
  std::optional<double> max_abs_err, rel_l2_err;
  nlohmann::json shapes = nlohmann::json::array();
  nlohmann::json dtypes = nlohmann::json::array();
  std::optional<Timing> candidate_ms, reference_ms;
  std::optional<double> speedup;
  std::optional<std::pair<double, double>> speedup_spread;
  std::string timing_method;
  bool reference_is_baseline = false;  // reference_ms and speedup are against the request's baseline
  std::string error;                   // case-level message when the worker gives one
  // Trusted requests: the autotune keys the candidate's autotuned kernels first met in this case, by kernel
  // name: {"names": [key parameter names], "keys": [[value, ...], ...]} (worker: autotune_share.keys_added).
  nlohmann::json autotune_keys = nlohmann::json::object();
};

struct Reason {
  std::string code;  // stable string (docs/verdicts.md)
  std::string message;
  // Where the finding sits in the candidate (static checks); line 0 when unknown.
  std::string file;
  int line = 0, column = 0;
  std::string severity = "error";  // "error" or "warning" (static findings under policy trusted)
};

inline Reason MakeReason(std::string code, std::string message, std::string severity = "error") {
  Reason r;
  r.code = std::move(code);
  r.message = std::move(message);
  r.severity = std::move(severity);
  return r;
}

struct EvalResult {
  Verdict verdict = Verdict::kCrash;
  std::vector<Reason> reasons;
  std::vector<Reason> warnings;  // kiln-side notes that do not change the verdict
  std::string message;
  std::vector<CaseResult> cases;
  std::vector<KernelFacts> kernels;
  std::map<std::string, int64_t> aten_ops;
  nlohmann::json runtime_checks = nlohmann::json::object();
  nlohmann::json clocks = nlohmann::json::object();
  nlohmann::json versions = nlohmann::json::object();
  nlohmann::json device = nlohmann::json::object();
  double elapsed_s = 0;
  std::string stderr_tail;
  bool from_cache = false;
  bool restart_worker = false;                    // the worker asked to be replaced (e.g. CUDA context poisoned)
  nlohmann::json raw = nlohmann::json::object();  // the response as received

  bool ok() const { return verdict == Verdict::kOk; }
  // Parses an `eval` response (ok: true). Fails only when it is not a response at all.
  static Result<EvalResult> FromResponse(const nlohmann::json& response);
  // A worker's `{"ok": false, "error_code": "infra_out_of_memory"}` (out of memory, not the candidate's alone)
  // as the provisional runtime_error / infra_out_of_memory result the pool retries alone; nullopt for any
  // other response. Shared by the live runner and the replay of a recording, so both retry alike.
  static std::optional<EvalResult> FromInfraOom(const nlohmann::json& response);
  // A result made on the kiln side (timeout, crash, static rejection).
  static EvalResult Make(Verdict v, std::string code, std::string message);
  // Full JSON (the response fields plus kiln's: warnings, from_cache).
  nlohmann::json ToJson() const;
  // Geometric mean of the per-case speedups, when every timed case has one.
  std::optional<double> GeomeanSpeedup() const;
};

// Human-readable summary: verdict, reasons, per-case errors and times, kernels, clocks, versions.
std::string FormatSummary(const EvalResult& r, const EvalRequest* req = nullptr);

// What `hello` answered.
struct DeviceInfo {
  int index = 0;
  std::string name, uuid;
  nlohmann::json raw = nlohmann::json::object();
};
struct HelloInfo {
  int protocol = 0;
  bool interpreter = false;
  std::string isolation;
  nlohmann::json versions = nlohmann::json::object();
  std::vector<DeviceInfo> devices;
  nlohmann::json raw = nlohmann::json::object();
  static Result<HelloInfo> FromResponse(const nlohmann::json& response);
  // The UUID of device `index` among those listed, or "cpu-interpreter" / "unknown".
  std::string DeviceUuid(int index = 0) const;
};

inline constexpr int kProtocolVersion = 1;

}  // namespace kiln::exec

// kiln/exec: the evaluation pipeline around a Runner, and the pool that spreads it over GPUs.
//
//   StaticGate   parses the candidate and runs the static checks: a syntax error is compile_error,
//                a missing entry is compile_error, findings are `rejected` under policy strict and
//                warnings under trusted. Runs before any worker sees the candidate.
//   Evaluator    static gate -> result cache (store) -> runner -> record (store).
//   EvalPool     one measuring runner per GPU, plus either K check runners per GPU (the pipeline:
//                stage 1 = `check` on the check runners, sharing the GPU, in parallel; a barrier;
//                stage 2 = `time_only` on the measuring runners, alone on their GPU) or optional
//                compile runners (mode `compile` warms the Triton cache before the measuring worker
//                times); results arrive through a callback as they finish, in any order; a bad
//                candidate never stops the batch. docs/eval.md ("Batch") explains the pipeline.
//
// Roadmap: the cache key is the task hash, the candidate hash, the device UUID, the torch/triton/
// driver versions and the protocol parameters; only deterministic verdicts are cached (ok,
// mismatch, compile_error, runtime_error, rejected), never timeout or crash.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/admission.h"
#include "exec/result.h"
#include "exec/runner.h"
#include "store/store.h"

namespace kiln::exec {

// nullopt: the candidate may go on to the worker (with `warnings` to attach to its result).
std::optional<EvalResult> StaticGate(const EvalRequest& req, std::vector<Reason>* warnings);

bool IsCacheable(Verdict v);

// The cache key of `req` on the device `hello` describes (device index within hello's list).
store::CacheKey MakeCacheKey(const EvalRequest& req, const HelloInfo& hello, int device_index = 0);

class Evaluator {
 public:
  // `store` may be null (no records, no cache).
  Evaluator(Runner* runner, store::Store* store, bool use_cache)
      : runner_(runner), store_(store), use_cache_(use_cache) {}

  // Errors only for machinery failures (worker cannot start, protocol error, replay miss).
  Result<EvalResult> Evaluate(const EvalRequest& req);
  // The cache alone: a stored result for `req` on this runner's device, if any.
  std::optional<EvalResult> Cached(const EvalRequest& req);
  Result<HelloInfo> Hello();
  // Records a result made elsewhere (the pool's compile stage) under this runner's device.
  void Record(const EvalRequest& req, const EvalResult& r);

 private:
  Runner* runner_;
  store::Store* store_;
  bool use_cache_;
  std::optional<HelloInfo> hello_;
};

struct PoolConfig {
  int measure_slots = 1;
  std::function<std::unique_ptr<Runner>(int slot)> make_measure;
  // Check runners (the pipeline; 0: none). Check slot c shares the device of measuring slot
  // c % measure_slots. With check runners, every `check` item runs on them (in parallel) and every
  // `time` item gets its `check` there first; the measuring runners start timing only after the last
  // check request has finished (no check request ever overlaps a timing request).
  int check_slots = 0;
  std::function<std::unique_ptr<Runner>(int slot)> make_check;
  int compile_slots = 0;  // 0: no compile stage (ignored when there are check runners)
  std::function<std::unique_ptr<Runner>(int slot)> make_compile;
  store::Store* store = nullptr;
  bool use_cache = true;
  // Admission of check work by GPU memory (exec/admission.h; 0: off): the bytes of one GPU the check runners
  // sharing it may use together, by the peaks their tasks reported earlier in the batch (before that, by the
  // requests' memory_hint_bytes); a task that needs more than half of it runs alone. An infrastructure
  // out-of-memory outcome is retried once, alone.
  int64_t gpu_memory_bytes = 0;
  // Filled by Run when not null: the most estimated bytes, and the most checks, admitted on one GPU at once
  // (tests, reports).
  int64_t* max_admitted_bytes = nullptr;
  int* max_admitted_checks = nullptr;
};

struct PoolItem {
  size_t index = 0;
  EvalRequest request;
};

class EvalPool {
 public:
  explicit EvalPool(PoolConfig cfg) : cfg_(std::move(cfg)) {}
  // Evaluates every item; `done` is called (serialised, from worker threads) once per item.
  // `slot` names the measuring slot that ran it, or whose device the check runner shares
  // (-1: decided before any worker: static gate, or by a compile worker).
  void Run(std::vector<PoolItem> items,
           const std::function<void(const PoolItem&, const Result<EvalResult>&, int slot)>& done);

 private:
  PoolConfig cfg_;
};

// True when a stage-1 (check worker) verdict may be an artefact of sharing the GPU: a timeout, or
// running out of (GPU) memory. Such items are evaluated again, alone, on a measuring worker.
bool ContentionSensitive(const EvalResult& r);

// Folds the stage-1 (`check`) result into the stage-2 (`time_only`) one: per case, trials add up and
// the error maxima are the larger of both; the stage-1 facts stay under raw["check_stage"].
void MergeCheckStage(const EvalResult& check, EvalResult* timed);

}  // namespace kiln::exec

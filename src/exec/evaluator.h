// kiln/exec: the evaluation pipeline around a Runner, and the pool that spreads it over GPUs.
//
//   StaticGate   parses the candidate and runs the static checks: a syntax error is compile_error,
//                a missing entry is compile_error, findings are `rejected` under policy strict and
//                warnings under trusted. Runs before any worker sees the candidate.
//   Evaluator    static gate -> result cache (store) -> runner -> record (store).
//   EvalPool     one measuring runner per GPU plus optional compile runners (mode `compile` warms
//                the Triton cache before the measuring worker times); results arrive through a
//                callback as they finish, in any order; a bad candidate never stops the batch.
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
  int compile_slots = 0;  // 0: no compile stage
  std::function<std::unique_ptr<Runner>(int slot)> make_compile;
  store::Store* store = nullptr;
  bool use_cache = true;
};

struct PoolItem {
  size_t index = 0;
  EvalRequest request;
};

class EvalPool {
 public:
  explicit EvalPool(PoolConfig cfg) : cfg_(std::move(cfg)) {}
  // Evaluates every item; `done` is called (serialised, from worker threads) once per item.
  // `slot` names the measuring slot that ran it (-1: decided before measuring).
  void Run(std::vector<PoolItem> items,
           const std::function<void(const PoolItem&, const Result<EvalResult>&, int slot)>& done);

 private:
  PoolConfig cfg_;
};

}  // namespace kiln::exec

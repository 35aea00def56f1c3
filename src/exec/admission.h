// kiln/exec: admission of check work by GPU memory (issue 14, docs/eval.md "Batch"). The worker reports the
// peak GPU memory of each evaluation (`memory.peak_bytes`); the pool learns it per task and admits check work on
// a GPU while the sum of the running items' estimated peaks fits that GPU's memory. A task whose estimate exceeds
// half of it runs alone (the pool's second stage). An item of a task not seen yet counts as its request's
// `memory_hint_bytes` (what the caller knows, e.g. kiln datagen's capture; 0 without one) until its first result
// teaches the pool the task's peak, which then wins (an out-of-memory error it meets is the infrastructure's:
// retried alone, see ContentionSensitive).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "exec/result.h"
#include "exec/runner.h"

namespace kiln::exec {

class MemoryAdmission {
 public:
  // `capacity_bytes` per GPU (0: admission off, every item admitted at once).
  MemoryAdmission(int n_gpus, int64_t capacity_bytes);

  bool enabled() const { return capacity_ > 0; }
  int64_t capacity() const { return capacity_; }
  // The estimated peak of a request: learned from earlier results of the same task and cases, else the request's
  // memory hint (0 without one). `learned` (optional) says which.
  int64_t Estimate(const EvalRequest& req, bool* learned = nullptr) const;
  // Needs more than half of a GPU: runs alone.
  bool Large(int64_t estimate) const { return enabled() && estimate > capacity_ / 2; }
  // Blocks until `estimate` fits beside what runs on `gpu` (or nothing runs there).
  void Acquire(int gpu, int64_t estimate);
  void Release(int gpu, int64_t estimate);
  // Learns the peak a result reports (raw["memory"]["peak_bytes"], the larger of all seen).
  void Learn(const EvalRequest& req, const EvalResult& r);
  // The most bytes, and the most items, admitted on one GPU at once so far (tests, reports).
  int64_t max_in_use() const;
  int max_running() const;

 private:
  static std::string Key(const EvalRequest& req);
  int64_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int64_t> in_use_;
  std::vector<int> running_;
  int64_t max_in_use_ = 0;
  int max_running_ = 0;
  std::map<std::string, int64_t> peaks_;
};

// The peak GPU bytes a result reports (0 when it reports none).
int64_t ReportedPeakBytes(const EvalResult& r);
// True when the result is the infrastructure's out-of-memory outcome (no verdict for the candidate yet).
bool IsInfraOutOfMemory(const EvalResult& r);

}  // namespace kiln::exec

// kiln/app: the tuning loop's Measurer over the exec machinery.
//
// CandidateRunner sends measuring requests to one exec::Evaluator (static gate, cache, records) over
// the measuring runner, serialised; a round's compile requests (mode `compile`) go through
// exec::EvalPool (the one pool of workers kiln has) over warm compile runners made on demand, so
// compiles run in parallel while the measuring runner times. A machinery failure (a worker that
// cannot start, a protocol error, a replay miss) is returned as an error Status and remembered
// (machinery_error): it stops the job; it never becomes a candidate's verdict.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "exec/evaluator.h"
#include "exec/runner.h"
#include "search/interfaces.h"
#include "store/store.h"

namespace kiln::app {

class CandidateRunner : public search::Measurer {
 public:
  // `measure` and `store` (may be null) must outlive this. `make_compile` may be null or
  // `compile_workers` 0: compile requests then go to the measuring runner, one at a time.
  CandidateRunner(exec::Runner* measure, store::Store* store, bool use_cache,
                  std::function<std::unique_ptr<exec::Runner>()> make_compile, int compile_workers);
  ~CandidateRunner() override;
  Result<exec::EvalResult> Evaluate(const exec::EvalRequest& r) override;
  Result<exec::HelloInfo> Hello() override;
  std::unique_ptr<search::CompileBatch> StartCompiles(std::vector<exec::EvalRequest> requests, int jobs) override;
  // Starts every compile runner now, in the background (importing torch takes seconds), so the first
  // round's compiles do not wait for them.
  void Prewarm();
  // The first machinery failure seen, if any; RememberFailure records one (and returns it).
  std::optional<Status> machinery_error() const;
  Status RememberFailure(const Status& s);
  // The compile runner of `slot` (made when needed; waits for its prewarm).
  exec::Runner* CompileRunner(int slot);

 private:
  exec::Runner* measure_;
  exec::Evaluator eval_;
  std::mutex measure_mu_;
  std::function<std::unique_ptr<exec::Runner>()> make_compile_;
  int compile_workers_;
  std::vector<std::unique_ptr<exec::Runner>> compile_runners_;  // by slot
  std::vector<std::thread> warming_;                            // by slot
  mutable std::mutex error_mu_;
  std::optional<Status> machinery_error_;
};

}  // namespace kiln::app

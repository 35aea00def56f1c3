// kiln/search: adapters from the loop's interfaces to the real modules.
//
//   RunnerEvaluator  exec::Evaluator (static gate, cache, records) over a measuring exec::Runner,
//                    plus a pool of compile runners (CPU) made on demand for mode `compile`
//                    requests, so compiles run in parallel while the measuring runner times.
//   RewriteRenderer  rewrite::ApplySequence with SetParams (a config) or InsertAutotune (a list).
//   NcuProfiler      profile::ProfileTask (ncu on the task's case) + diagnose::DiagnoseRun; the
//                    tuned kernel's roofline fraction, class and findings with their moves.
//   PrepareInput     reads the task's module, analyses it, picks the kernel to tune and builds the
//                    Space and baseline config from its tunables.
#pragma once

#include <condition_variable>
#include <functional>
#include <thread>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "exec/evaluator.h"
#include "exec/runner.h"
#include "profile/device.h"
#include "search/interfaces.h"
#include "search/loop.h"
#include "store/store.h"

namespace kiln::search {

class RunnerEvaluator : public Evaluator {
 public:
  // `measure` and `store` (may be null) must outlive this. `make_compile` may be null (compile
  // requests then go to the measuring runner, serialised).
  RunnerEvaluator(exec::Runner* measure, store::Store* store, bool use_cache,
                  std::function<std::unique_ptr<exec::Runner>()> make_compile, int max_compile_runners);
  ~RunnerEvaluator() override;
  exec::EvalResult Evaluate(const exec::EvalRequest& r) override;
  Result<exec::HelloInfo> Hello() override;
  // Starts every compile runner now, in the background (importing torch takes seconds), so the first
  // round's compiles do not wait for them; compile requests wait for a runner that is starting.
  void Prewarm();

 private:
  exec::Runner* measure_;
  exec::Evaluator eval_;
  std::mutex measure_mu_;
  std::function<std::unique_ptr<exec::Runner>()> make_compile_;
  int max_compile_;
  std::mutex pool_mu_;
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<exec::Runner>> idle_;
  int created_ = 0;
  std::vector<std::thread> warming_;
};

class RewriteRenderer : public Renderer {
 public:
  RewriteRenderer(std::string source, std::string path, std::string kernel)
      : source_(std::move(source)), path_(std::move(path)), kernel_(std::move(kernel)) {}
  Result<std::string> Render(const Config& c) override;
  Result<std::string> RenderAutotune(const std::vector<Config>& configs) override;
  Result<std::string> RenderPerShape(const Config& winner, const Config& baseline) override;

 private:
  std::string source_, path_, kernel_;
};

class NcuProfiler : public Profiler {
 public:
  NcuProfiler(std::string kernel, std::optional<profile::DeviceRecord> device, std::string python,
              std::string ncu_path = "")
      : kernel_(std::move(kernel)), device_(std::move(device)), python_(std::move(python)),
        ncu_path_(std::move(ncu_path)) {}
  bool Available(std::string* why) override;
  Result<ProfileSummary> Profile(const task::TaskSpec& task, const std::optional<std::string>& source,
                                 const std::string& case_name) override;

 private:
  std::string kernel_;
  std::optional<profile::DeviceRecord> device_;
  std::string python_, ncu_path_;
};

// Moves named by the diagnosis (diagnose::MoveName) in the search's vocabulary.
std::string SearchMoveName(const std::string& diagnose_move);

// The module text a candidate replaces (TritonBench: the part above the separator line), the
// analysed kernel (`kernel` or, when empty, the launched kernel with the most tunables), and the
// space. Errors: unreadable or unparsable module, no launched kernel, unsupported format.
Result<OptimizeInput> PrepareInput(const task::TaskSpec& spec, const std::string& kernel,
                                   const SpaceOptions& so = {});

}  // namespace kiln::search

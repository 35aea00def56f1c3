#include "app/candidate_runner.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>

namespace kiln::app {

namespace {

// A compile runner lent to one EvalPool run: forwards to the warm runner it borrows, or refuses at
// once when the batch was abandoned (its results are no longer wanted).
class BorrowedRunner : public exec::Runner {
 public:
  BorrowedRunner(exec::Runner* inner, const std::atomic<bool>* abandoned) : inner_(inner), abandoned_(abandoned) {}
  Result<exec::HelloInfo> Hello() override { return inner_->Hello(); }
  Result<exec::EvalResult> Evaluate(const exec::EvalRequest& r) override {
    if (*abandoned_) return Unavailable("compile abandoned: the round ended");
    return inner_->Evaluate(r);
  }
  Result<nlohmann::json> DevicePeaks(const std::vector<std::string>& d) override { return inner_->DevicePeaks(d); }

 private:
  exec::Runner* inner_;
  const std::atomic<bool>* abandoned_;
};

// One round's compiles on an exec::EvalPool run in the background; results land by index.
class PoolCompileBatch : public search::CompileBatch {
 public:
  PoolCompileBatch(CandidateRunner* owner, std::vector<exec::EvalRequest> reqs, int slots)
      : owner_(owner), results_(reqs.size()) {
    std::vector<exec::PoolItem> items;
    for (size_t i = 0; i < reqs.size(); ++i) items.push_back({i, std::move(reqs[i])});
    exec::PoolConfig cfg;
    cfg.measure_slots = slots;
    cfg.make_measure = [owner, this](int slot) -> std::unique_ptr<exec::Runner> {
      return std::make_unique<BorrowedRunner>(owner->CompileRunner(slot), &abandoned_);
    };
    cfg.use_cache = false;
    driver_ = std::thread([this, cfg = std::move(cfg), items = std::move(items)]() mutable {
      exec::EvalPool(std::move(cfg))
          .Run(std::move(items), [this](const exec::PoolItem& it, const Result<exec::EvalResult>& r, int) {
            std::lock_guard<std::mutex> l(mu_);
            results_[it.index] = r;
            cv_.notify_all();
          });
    });
  }
  ~PoolCompileBatch() override {
    abandoned_ = true;
    driver_.join();
  }
  Result<exec::EvalResult> Wait(size_t i) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return results_[i].has_value(); });
    if (!results_[i]->ok()) return owner_->RememberFailure(results_[i]->status());
    return *results_[i];
  }

 private:
  CandidateRunner* owner_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::optional<Result<exec::EvalResult>>> results_;
  std::atomic<bool> abandoned_{false};
  std::thread driver_;
};

}  // namespace

CandidateRunner::CandidateRunner(exec::Runner* measure, store::Store* store, bool use_cache,
                                 std::function<std::unique_ptr<exec::Runner>()> make_compile, int compile_workers)
    : measure_(measure),
      eval_(measure, store, use_cache),
      make_compile_(std::move(make_compile)),
      compile_workers_(make_compile_ ? std::max(0, compile_workers) : 0),
      compile_runners_(compile_workers_),
      warming_(compile_workers_) {}

CandidateRunner::~CandidateRunner() {
  for (auto& t : warming_)
    if (t.joinable()) t.join();
  // Compile workers shut down at once, not one after another: each may take seconds to exit (a
  // request still finishing, Python and CUDA teardown), which added up at the end of every run.
  std::vector<std::thread> stopping;
  for (auto& r : compile_runners_)
    if (r) stopping.emplace_back([r = std::move(r)]() mutable { r.reset(); });
  for (auto& t : stopping) t.join();
}

void CandidateRunner::Prewarm() {
  for (int slot = 0; slot < compile_workers_; ++slot) {
    if (compile_runners_[slot] || warming_[slot].joinable()) continue;
    compile_runners_[slot] = make_compile_();
    exec::Runner* r = compile_runners_[slot].get();
    warming_[slot] = std::thread([r] { (void)r->Hello(); });  // starts the worker, waits until it is ready
  }
}

exec::Runner* CandidateRunner::CompileRunner(int slot) {
  // Slot `slot` is used by one pool thread at a time (one batch runs at once).
  if (warming_[slot].joinable()) warming_[slot].join();
  if (!compile_runners_[slot]) compile_runners_[slot] = make_compile_();
  return compile_runners_[slot].get();
}

Status CandidateRunner::RememberFailure(const Status& s) {
  std::lock_guard<std::mutex> l(error_mu_);
  if (!machinery_error_) machinery_error_ = s;
  return s;
}

std::optional<Status> CandidateRunner::machinery_error() const {
  std::lock_guard<std::mutex> l(error_mu_);
  return machinery_error_;
}

Result<exec::HelloInfo> CandidateRunner::Hello() {
  std::lock_guard<std::mutex> l(measure_mu_);
  auto h = eval_.Hello();
  if (!h.ok()) return RememberFailure(h.status());
  return h;
}

Result<exec::EvalResult> CandidateRunner::Evaluate(const exec::EvalRequest& r) {
  std::lock_guard<std::mutex> l(measure_mu_);
  auto res = eval_.Evaluate(r);
  if (!res.ok()) return RememberFailure(res.status());
  return res;
}

std::unique_ptr<search::CompileBatch> CandidateRunner::StartCompiles(std::vector<exec::EvalRequest> requests,
                                                                     int jobs) {
  if (compile_workers_ <= 0) return search::Measurer::StartCompiles(std::move(requests), jobs);
  const int slots = std::min({std::max(1, jobs), compile_workers_, static_cast<int>(requests.size())});
  return std::make_unique<PoolCompileBatch>(this, std::move(requests), std::max(1, slots));
}

}  // namespace kiln::app

// Admission of check work by GPU memory and the retry of an infrastructure out-of-memory outcome, with a fake
// runner that reports the peaks a real worker would (exec/admission.h, docs/eval.md "Batch").
#include "exec/admission.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "exec/evaluator.h"

namespace kiln::exec {
namespace {

using nlohmann::json;
constexpr int64_t kGiB = int64_t{1} << 30;

// What every fake runner shares: the calls in flight (their true peaks), per task the calls made.
struct Gpu {
  std::mutex mu;
  int in_flight = 0;
  // A call is "learned" when its runner's previous call answered the same task: the pool's thread learned
  // that answer's peak before it took the next item, so this call was admitted with its peak known. (Calls
  // admitted with a known peak on other runners are not counted: a lower bound, never a race.)
  int in_flight_learned = 0;
  int max_in_flight_after_learning = 0;  // the most of those at once
  std::map<std::string, int> calls;
  std::map<std::string, int> concurrent_at_start;  // the largest number of others running when one started
  // With `hold_small_until_big`, a "small" call after the first four waits (at most 10 s) until a "big" item
  // has been reported (the pool learns a check's peak before it reports it): the big task's later items are
  // then taken with its peak known, whatever the load.
  bool hold_small_until_big = false;
  bool big_learned = false;
  // With `first_small_waits_for_company`, the first "small" call waits (at most 10 s) until another call is in
  // flight: `small_shared` then says that admission let two checks share the GPU, whatever the load.
  bool first_small_waits_for_company = false;
  bool small_shared = false;
  std::condition_variable cv;
};

// A task "small" peaks at 10 GiB, "big" at 20 GiB; "oom_once" answers infra_out_of_memory at its first call,
// "oom_always" at every call.
class FakeRunner : public Runner {
 public:
  explicit FakeRunner(Gpu* gpu) : gpu_(gpu) {}
  Result<HelloInfo> Hello() override {
    HelloInfo h;
    h.protocol = kProtocolVersion;
    return h;
  }
  Result<json> DevicePeaks(const std::vector<std::string>&) override { return json::object(); }
  Result<EvalResult> Evaluate(const EvalRequest& req) override {
    const std::string& t = req.task.name;
    int call;
    const bool learned = last_answered_ == t;
    {
      std::lock_guard<std::mutex> l(gpu_->mu);
      call = ++gpu_->calls[t];
      auto& c = gpu_->concurrent_at_start[t];
      c = std::max(c, gpu_->in_flight);
      ++gpu_->in_flight;
      if (learned) {
        ++gpu_->in_flight_learned;
        gpu_->max_in_flight_after_learning = std::max(gpu_->max_in_flight_after_learning, gpu_->in_flight_learned);
      }
    }
    if (t == "small" && gpu_->first_small_waits_for_company && call == 1) {
      std::unique_lock<std::mutex> l(gpu_->mu);
      gpu_->small_shared =
          gpu_->cv.wait_for(l, std::chrono::seconds(10), [&] { return gpu_->in_flight >= 2; });
    }
    if (gpu_->first_small_waits_for_company) gpu_->cv.notify_all();  // a call started: the waiter may have company
    if (t == "small" && gpu_->hold_small_until_big && call > 4) {
      std::unique_lock<std::mutex> l(gpu_->mu);
      gpu_->cv.wait_for(l, std::chrono::seconds(10), [&] { return gpu_->big_learned; });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    EvalResult r;
    if (t == "oom_always" || (t == "oom_once" && call == 1)) {
      r = EvalResult::Make(Verdict::kRuntimeError, "infra_out_of_memory", "out of memory: not the candidate's alone");
      r.raw = {{"ok", false}, {"error_code", "infra_out_of_memory"},
               {"memory", {{"requested_bytes", 4 * kGiB}, {"in_use_bytes", 8 * kGiB}}}};
    } else {
      r.verdict = Verdict::kOk;
      r.raw = {{"verdict", "ok"}, {"memory", {{"peak_bytes", (t == "big" ? 20 : 10) * kGiB}}}};
    }
    std::lock_guard<std::mutex> l(gpu_->mu);
    --gpu_->in_flight;
    if (learned) --gpu_->in_flight_learned;
    last_answered_ = t;
    return r;
  }

 private:
  Gpu* gpu_;
  std::string last_answered_;
};

EvalRequest Item(const std::string& task, int tag, int64_t hint = 0) {
  EvalRequest r;
  r.memory_hint_bytes = hint;
  r.task.name = task;
  r.task.hash = task;
  r.candidate_source = "# tag " + std::to_string(tag) +
                       "\nimport torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr):\n"
                       "    pass\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        k[(1,)](x)\n"
                       "        return x\n";
  r.candidate_name = "c.py";
  r.mode = Mode::kCheck;
  return r;
}

struct PoolRun {
  std::map<size_t, EvalResult> got;
  int64_t max_admitted = 0;
  int max_admitted_checks = 0;
};

// `hints`: per task, the memory_hint_bytes of its items (none: 0).
PoolRun RunPool(Gpu* gpu, int64_t capacity, const std::vector<std::string>& tasks,
                const std::map<std::string, int64_t>& hints = {}) {
  PoolConfig cfg;
  cfg.measure_slots = 1;
  cfg.make_measure = [gpu](int) { return std::make_unique<FakeRunner>(gpu); };
  cfg.check_slots = 4;
  cfg.make_check = [gpu](int) { return std::make_unique<FakeRunner>(gpu); };
  cfg.gpu_memory_bytes = capacity;
  PoolRun run;
  cfg.max_admitted_bytes = &run.max_admitted;
  cfg.max_admitted_checks = &run.max_admitted_checks;
  std::vector<PoolItem> items;
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto h = hints.find(tasks[i]);
    items.push_back({i, Item(tasks[i], static_cast<int>(i), h == hints.end() ? 0 : h->second)});
  }
  std::mutex mu;
  EvalPool(cfg).Run(items, [&](const PoolItem& it, const Result<EvalResult>& r, int) {
    std::lock_guard<std::mutex> l(mu);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (r.ok()) run.got[it.index] = *r;
    if (tasks[it.index] == "big") {
      std::lock_guard<std::mutex> g(gpu->mu);
      gpu->big_learned = true;
      gpu->cv.notify_all();
    }
  });
  return run;
}

bool HasWarning(const EvalResult& r, const std::string& text) {
  for (const auto& w : r.warnings) {
    if (w.message.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(MemoryAdmission, ChecksShareTheGpuWithinItsMemoryAndLargeTasksRunAlone) {
  Gpu gpu;
  gpu.hold_small_until_big = true;
  // 25 GiB: two small tasks (10 GiB) fit together, a big one (20 GiB) needs more than half
  std::vector<std::string> tasks = {"small", "big"};
  for (int i = 0; i < 8; ++i) tasks.push_back("small");
  tasks.push_back("big");
  tasks.push_back("big");
  PoolRun run = RunPool(&gpu, 25 * kGiB, tasks);
  ASSERT_EQ(run.got.size(), tasks.size());
  for (const auto& [i, r] : run.got) EXPECT_EQ(r.verdict, Verdict::kOk) << i;
  // once the peaks are known, never more than two small checks at once (the sum fits 25 GiB)
  EXPECT_LE(gpu.max_in_flight_after_learning, 2);
  EXPECT_GT(run.max_admitted, 0);
  EXPECT_LE(run.max_admitted, 25 * kGiB);
  // the big task's later items ran alone, after the check stage, and say why
  EXPECT_TRUE(HasWarning(run.got[10], "runs alone")) << run.got[10].ToJson().dump();
  EXPECT_TRUE(HasWarning(run.got[11], "runs alone"));
}

TEST(MemoryAdmission, TheHintIsTheEstimateUntilAResultTeachesThePeak) {
  MemoryAdmission a(1, 25 * kGiB);
  EvalRequest hinted = Item("big", 0, 30 * kGiB);
  bool learned = true;
  EXPECT_EQ(a.Estimate(hinted, &learned), 30 * kGiB);
  EXPECT_FALSE(learned);
  EXPECT_TRUE(a.Large(a.Estimate(hinted)));  // a hint above the whole budget: alone
  EXPECT_EQ(a.Estimate(Item("big", 1)), 0);  // no hint, nothing learned: 0, as before
  EvalResult r;
  r.raw = {{"memory", {{"peak_bytes", 8 * kGiB}}}};
  a.Learn(hinted, r);
  // the learned peak wins, smaller than the hint or not, for every item of the task
  EXPECT_EQ(a.Estimate(hinted, &learned), 8 * kGiB);
  EXPECT_TRUE(learned);
  EXPECT_EQ(a.Estimate(Item("big", 2, 40 * kGiB)), 8 * kGiB);
  EXPECT_FALSE(a.Large(a.Estimate(hinted)));
  EXPECT_EQ(a.Estimate(Item("small", 3, -5)), 0);  // a negative hint counts as none
  MemoryAdmission off(1, 0);
  EXPECT_FALSE(off.Large(off.Estimate(hinted)));  // admission off: every item admitted
}

TEST(MemoryAdmission, HintedLargeTasksRunAloneOnTheirFirstTryAndHintedSmallOnesShare) {
  // A batch of tasks never seen before, each with a hint (kiln datagen's captured peaks): on a 25 GiB GPU the
  // two big tasks (hint 22 GiB, peak 20) run alone from their first item on, the small ones (hint 10 GiB) two at
  // a time. Without the hints the first wave admits everything at 0 bytes, big ones beside small ones.
  Gpu gpu;
  gpu.first_small_waits_for_company = true;
  std::vector<std::string> tasks = {"big", "small", "small", "big2", "small", "small", "small", "small"};
  // "big2" is a second big task (its own peak is unknown: another key), answered as a 10 GiB one by the fake
  PoolRun run = RunPool(&gpu, 25 * kGiB, tasks, {{"big", 22 * kGiB}, {"big2", 22 * kGiB}, {"small", 10 * kGiB}});
  ASSERT_EQ(run.got.size(), tasks.size());
  for (const auto& [i, r] : run.got) EXPECT_EQ(r.verdict, Verdict::kOk) << i;
  for (size_t i : {size_t{0}, size_t{3}}) {
    EXPECT_TRUE(HasWarning(run.got[i], "its memory hint is 22.00 GiB")) << i << " " << run.got[i].ToJson().dump();
    EXPECT_TRUE(HasWarning(run.got[i], "runs alone")) << i;
  }
  // the admission's bookkeeping: never more than two checks (20 GiB) admitted at once, and the big tasks never
  // admitted in the check stage at all; each big item evaluated once, with nothing else running
  EXPECT_LE(run.max_admitted_checks, 2);
  EXPECT_LE(run.max_admitted, 20 * kGiB);
  EXPECT_EQ(gpu.calls["big"], 1);
  EXPECT_EQ(gpu.calls["big2"], 1);
  EXPECT_EQ(gpu.concurrent_at_start["big"], 0);
  EXPECT_EQ(gpu.concurrent_at_start["big2"], 0);
  // small ones still share the GPU: the first waited for company, and two were admitted together
  EXPECT_TRUE(gpu.small_shared);
  EXPECT_EQ(run.max_admitted_checks, 2);
  EXPECT_EQ(run.max_admitted, 20 * kGiB);
}

TEST(MemoryAdmission, WithoutItTheChecksOverlapFreely) {
  // the control: the same batch with admission off runs up to four checks at once
  Gpu gpu;
  std::vector<std::string> tasks(12, "small");
  RunPool(&gpu, 0, tasks);
  EXPECT_GT(gpu.max_in_flight_after_learning, 2);
}

TEST(MemoryAdmission, InfraOutOfMemoryIsRetriedOnceAloneBeforeItStands) {
  Gpu gpu;
  PoolRun run = RunPool(&gpu, 80 * kGiB, {"small", "oom_once", "small", "oom_always", "small"});
  ASSERT_EQ(run.got.size(), 5u);
  // the retry alone succeeded: the candidate's own verdict, with a note
  EXPECT_EQ(run.got[1].verdict, Verdict::kOk);
  EXPECT_TRUE(HasWarning(run.got[1], "retried alone"));
  EXPECT_EQ(gpu.calls["oom_once"], 2);
  EXPECT_EQ(gpu.concurrent_at_start["oom_once"] >= 0, true);
  // out of memory alone too: the infrastructure outcome stands, after exactly one retry
  EXPECT_EQ(run.got[3].verdict, Verdict::kRuntimeError);
  EXPECT_TRUE(IsInfraOutOfMemory(run.got[3]));
  EXPECT_EQ(gpu.calls["oom_always"], 2);
}

TEST(MemoryAdmission, WithoutCheckWorkersTheMeasuringWorkerRetriesOnce) {
  Gpu gpu;
  PoolConfig cfg;
  cfg.measure_slots = 1;
  cfg.make_measure = [&gpu](int) { return std::make_unique<FakeRunner>(&gpu); };
  std::vector<PoolItem> items = {{0, Item("oom_once", 0)}, {1, Item("oom_always", 1)}};
  std::map<size_t, EvalResult> got;
  EvalPool(cfg).Run(items, [&](const PoolItem& it, const Result<EvalResult>& r, int) {
    ASSERT_TRUE(r.ok());
    got[it.index] = *r;
  });
  EXPECT_EQ(got[0].verdict, Verdict::kOk);
  EXPECT_EQ(gpu.calls["oom_once"], 2);
  EXPECT_TRUE(IsInfraOutOfMemory(got[1]));
  EXPECT_EQ(gpu.calls["oom_always"], 2);
}

TEST(MemoryAdmission, ReportedPeak) {
  EvalResult r;
  r.raw = {{"memory", {{"peak_bytes", 123}}}};
  EXPECT_EQ(ReportedPeakBytes(r), 123);
  r.raw = {{"memory", {{"in_use_bytes", 100}, {"requested_bytes", 20}}}};
  EXPECT_EQ(ReportedPeakBytes(r), 120);
  r.raw = json::object();
  EXPECT_EQ(ReportedPeakBytes(r), 0);
}

}  // namespace
}  // namespace kiln::exec

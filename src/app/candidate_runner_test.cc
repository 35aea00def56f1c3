// The optimizer's Measurer over exec runners: compiles go through exec::EvalPool over warm compile
// runners; a worker that cannot start is a machinery error (an error Status, remembered), never a
// candidate's verdict.
#include "app/candidate_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kiln::app {
namespace {

// A runner whose every request succeeds after a short while, counting concurrent requests.
class SlowRunner : public exec::Runner {
 public:
  explicit SlowRunner(std::atomic<int>* concurrent, std::atomic<int>* peak) : concurrent_(concurrent), peak_(peak) {}
  Result<exec::HelloInfo> Hello() override {
    exec::HelloInfo h;
    h.protocol = 1;
    return h;
  }
  Result<exec::EvalResult> Evaluate(const exec::EvalRequest&) override {
    int now = ++*concurrent_;
    int prev = peak_->load();
    while (now > prev && !peak_->compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    --*concurrent_;
    return exec::EvalResult::Make(exec::Verdict::kOk, "", "");
  }
  Result<nlohmann::json> DevicePeaks(const std::vector<std::string>&) override { return nlohmann::json::object(); }

 private:
  std::atomic<int>* concurrent_;
  std::atomic<int>* peak_;
};

exec::EvalRequest CompileRequest() {
  exec::EvalRequest r;  // the task's own code: no static gate
  r.task.name = "t";
  r.mode = exec::Mode::kCompile;
  return r;
}

std::unique_ptr<exec::Runner> NoWorker() {
  exec::WorkerOptions o;
  o.python = "/nonexistent/python3";
  o.worker_dir = std::string(KILN_SOURCE_DIR) + "/worker";
  o.startup_s = 20;
  return std::make_unique<exec::WorkerRunner>(o);
}

TEST(CandidateRunner, CompilesRunInParallelOnThePool) {
  std::atomic<int> concurrent{0}, peak{0};
  SlowRunner measure(&concurrent, &peak);
  int made = 0;
  CandidateRunner cr(
      &measure, nullptr, false,
      [&]() -> std::unique_ptr<exec::Runner> {
        ++made;
        return std::make_unique<SlowRunner>(&concurrent, &peak);
      },
      3);
  cr.Prewarm();
  std::vector<exec::EvalRequest> reqs(6, CompileRequest());
  auto batch = cr.StartCompiles(reqs, 3);
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto r = batch->Wait(i);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->verdict, exec::Verdict::kOk);
  }
  EXPECT_GE(peak.load(), 2);
  EXPECT_EQ(made, 3);
  // The warm runners serve the next round: no new ones.
  batch = cr.StartCompiles(reqs, 3);
  for (size_t i = 0; i < reqs.size(); ++i) ASSERT_TRUE(batch->Wait(i).ok());
  EXPECT_EQ(made, 3);
  EXPECT_FALSE(cr.machinery_error().has_value());
}

TEST(CandidateRunner, CompileWorkerThatCannotStartIsAMachineryError) {
  std::atomic<int> concurrent{0}, peak{0};
  SlowRunner measure(&concurrent, &peak);
  CandidateRunner cr(&measure, nullptr, false, NoWorker, 2);
  auto batch = cr.StartCompiles({CompileRequest(), CompileRequest()}, 2);
  auto r = batch->Wait(0);
  ASSERT_FALSE(r.ok()) << exec::VerdictName(r->verdict);
  EXPECT_NE(r.status().message().find("/nonexistent/python3"), std::string::npos) << r.status().message();
  ASSERT_TRUE(cr.machinery_error().has_value());
}

TEST(CandidateRunner, MeasuringWorkerThatCannotStartIsAMachineryError) {
  auto worker = NoWorker();
  CandidateRunner cr(worker.get(), nullptr, false, nullptr, 0);
  exec::EvalRequest r = CompileRequest();
  r.mode = exec::Mode::kTime;
  auto res = cr.Evaluate(r);
  EXPECT_FALSE(res.ok());
  EXPECT_TRUE(cr.machinery_error().has_value());
  EXPECT_FALSE(cr.Hello().ok());
}

}  // namespace
}  // namespace kiln::app

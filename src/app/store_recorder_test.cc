// The optimizer's records in the store (every step of a run) and its progress display.
#include "app/store_recorder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/progress.h"
#include "fakes.h"
#include "search/loop.h"

namespace kiln::app {
namespace {

using search::Config;

TEST(StoreRecorder, RecordsEveryStepOfARun) {
  auto dir = std::filesystem::temp_directory_path() / ("kiln_app_rec_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto st = store::Store::Open((dir / "kiln.db").string());
  ASSERT_TRUE(st.ok()) << st.status().message();
  StoreRecorder rec(st->get());
  search::testing::FakeMeasurer ev;
  search::testing::FakeRenderer rr;
  ev.time_ms = [](const Config& c, bool) { return 1.0 / std::log2(static_cast<double>(c.at("BLOCK_SIZE"))); };
  double clock = 0;
  ev.clock = &clock;
  search::OptimizeOptions o;
  o.clock = [&clock] { return clock; };
  o.budget_seconds = 1000;
  search::OptimizeInput in;
  in.task.name = "fake/task";
  in.kernel = "kernel";
  in.space = search::Space({{"BLOCK_SIZE", search::Role::kBlock, {16, 32, 64, 128, 256}, false}});
  in.baseline = {{"BLOCK_SIZE", 32}};
  in.original_source = search::testing::RenderConfig(in.baseline);
  auto r = search::Optimize(in, o, {&ev, &rr, nullptr, &rec});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->run_id, 0);
  EXPECT_EQ(*(*st)->CountOptimizeRuns(), 1);
  EXPECT_GE(*(*st)->CountOptimizeSteps(r->run_id), static_cast<int64_t>(r->candidates.size()));
  std::filesystem::remove_all(dir);
}

TEST(Progress, PlainLinesWhenNotATty) {
  char buf[4096] = {0};
  std::FILE* f = fmemopen(buf, sizeof buf, "w");
  StderrProgress p(f, 0);
  search::ProgressState s;
  s.phase = "search";
  s.tried = 3;
  s.best_speedup = 1.5;
  s.budget_s = 60;
  s.elapsed_s = 10;
  p.Update(s);
  p.Update(s);  // unchanged: no second line
  p.Line("hello");
  p.Finish();
  std::fclose(f);
  std::string out = buf;
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_NE(out.find("best 1.500x"), std::string::npos);
  EXPECT_NE(out.find("50s left"), std::string::npos);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2);
}

}  // namespace
}  // namespace kiln::app

#include "exec/evaluator.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace kiln::exec {
namespace {

const std::string kFake = std::string(KILN_SOURCE_DIR) + "/src/exec/testdata/fake_worker.py";

std::string Source(const std::string& behaviour, const std::string& extra = "") {
  return "# fake: " + behaviour + "\nimport torch\nimport triton\nimport triton.language as tl\n" + extra +
         "\n@triton.jit\ndef k(x_ptr):\n    pass\n\nclass ModelNew(torch.nn.Module):\n"
         "    def forward(self, x):\n        k[(1,)](x)\n        return x\n";
}

EvalRequest Req(const std::string& behaviour, const std::string& extra = "") {
  EvalRequest r;
  r.task.name = "t";
  r.task.hash = "0123456789abcdef";
  r.candidate_source = Source(behaviour, extra);
  r.candidate_name = "c.py";
  r.timeout_s = 1;
  return r;
}

WorkerOptions Fake() {
  WorkerOptions o;
  o.command = {"python3", kFake};
  o.grace_s = 1;
  return o;
}

TEST(StaticGate, DecidesBeforeTheWorker) {
  std::vector<Reason> w;
  EXPECT_FALSE(StaticGate(Req("ok"), &w).has_value());
  EXPECT_TRUE(w.empty());
  auto r = StaticGate(Req("ok", "import threading\n"), &w);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->verdict, Verdict::kRejected);
  EXPECT_EQ(r->reasons[0].code, "process_spawn");
  EXPECT_EQ(r->reasons[0].file, "c.py");
  EXPECT_EQ(r->reasons[0].line, 5);
  // Trusted: findings become warnings, the candidate goes on.
  EvalRequest t = Req("ok", "import threading\n");
  t.policy = Policy::kTrusted;
  EXPECT_FALSE(StaticGate(t, &w).has_value());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].severity, "warning");
  // Syntax errors and a missing entry are compile errors under either policy.
  EvalRequest s = Req("ok");
  s.candidate_source = "def f(:\n";
  auto se = StaticGate(s, &w);
  ASSERT_TRUE(se.has_value());
  EXPECT_EQ(se->verdict, Verdict::kCompileError);
  EXPECT_EQ(se->reasons[0].code, "syntax_error");
  // An error the parser flags without locating it (found by tests/cli/fuzz_inputs.py: it crashed kiln).
  s.candidate_source = "import triton.languagetas tl\n";
  auto ue = StaticGate(s, &w);
  ASSERT_TRUE(ue.has_value());
  EXPECT_EQ(ue->verdict, Verdict::kCompileError);
  EXPECT_EQ(ue->reasons[0].code, "syntax_error");
  EXPECT_EQ(ue->reasons[0].line, 1);
  s.candidate_source = "import triton\n@triton.jit\ndef k():\n    pass\n";
  s.policy = Policy::kTrusted;
  auto me = StaticGate(s, &w);
  ASSERT_TRUE(me.has_value());
  EXPECT_EQ(me->reasons[0].code, "missing_entry");
  // The task's own code is not checked.
  s.candidate_source.reset();
  EXPECT_FALSE(StaticGate(s, &w).has_value());
}

TEST(Evaluator, CachesDeterministicVerdictsOnly) {
  auto st = store::Store::Open(":memory:");
  ASSERT_TRUE(st.ok());
  WorkerRunner w(Fake());
  Evaluator ev(&w, st->get(), /*use_cache=*/true);
  auto a = ev.Evaluate(Req("ok"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_FALSE(a->from_cache);
  auto b = ev.Evaluate(Req("ok"));
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->from_cache);
  EXPECT_EQ(b->verdict, Verdict::kOk);
  ASSERT_EQ(b->cases.size(), 1u);
  EXPECT_DOUBLE_EQ(*b->cases[0].speedup, 2.0);
  EvalRequest more = Req("ok");
  more.trials = 7;  // another protocol parameter: a miss
  auto c = ev.Evaluate(more);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->from_cache);
  // A timeout is recorded but never served from the cache.
  auto t1 = ev.Evaluate(Req("hang"));
  ASSERT_TRUE(t1.ok());
  EXPECT_EQ(t1->verdict, Verdict::kTimeout);
  EXPECT_FALSE(ev.Cached(Req("hang")).has_value());
  EXPECT_EQ(*(*st)->CountEvaluations(), 3);
  // Static rejections are recorded too (device "static").
  auto r = ev.Evaluate(Req("ok", "import socket\n"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kRejected);
  EXPECT_EQ(*(*st)->CountEvaluations(), 4);
  // --no-cache: evaluates again.
  Evaluator fresh(&w, st->get(), /*use_cache=*/false);
  auto d = fresh.Evaluate(Req("ok"));
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->from_cache);
}

TEST(EvalPool, EveryItemOnceWithCompileStage) {
  PoolConfig cfg;
  cfg.measure_slots = 2;
  cfg.make_measure = [](int) { return std::make_unique<WorkerRunner>(Fake()); };
  cfg.compile_slots = 1;
  cfg.make_compile = [](int) { return std::make_unique<WorkerRunner>(Fake()); };
  std::vector<PoolItem> items;
  std::map<size_t, std::string> kind;
  for (size_t i = 0; i < 10; ++i) {
    std::string b = i == 3 ? "compile_error" : i == 5 ? "crash" : "ok";
    EvalRequest r = Req(b, i == 7 ? "import ctypes\n" : "");
    r.mode = Mode::kTime;
    r.candidate_source = *r.candidate_source + "# " + std::to_string(i) + "\n";  // distinct candidates
    kind[i] = i == 7 ? "static" : b;
    items.push_back({i, r});
  }
  std::map<size_t, int> seen;
  std::map<size_t, std::pair<Verdict, int>> got;
  EvalPool pool(cfg);
  pool.Run(items, [&](const PoolItem& it, const Result<EvalResult>& r, int slot) {
    ++seen[it.index];
    ASSERT_TRUE(r.ok()) << r.status().message();
    got[it.index] = {r->verdict, slot};
  });
  ASSERT_EQ(seen.size(), 10u);
  for (const auto& [i, n] : seen) EXPECT_EQ(n, 1) << i;
  EXPECT_EQ(got[3].first, Verdict::kCompileError);
  EXPECT_EQ(got[3].second, -1);              // settled by the compile worker, never measured
  EXPECT_EQ(got[5].first, Verdict::kCrash);  // the compile worker crashed: settled there too
  EXPECT_EQ(got[7].first, Verdict::kRejected);
  EXPECT_EQ(got[7].second, -1);
  for (size_t i : {0, 1, 2, 4, 6, 8, 9}) {
    EXPECT_EQ(got[i].first, Verdict::kOk) << i;
    EXPECT_GE(got[i].second, 0) << i;
  }
}

TEST(EvalPool, MachineryFailureReachesEveryItem) {
  PoolConfig cfg;
  cfg.measure_slots = 1;
  cfg.make_measure = [](int) {
    WorkerOptions o = Fake();
    o.command = {"/nonexistent/python3"};
    return std::make_unique<WorkerRunner>(o);
  };
  std::vector<PoolItem> items = {{0, Req("ok")}, {1, Req("ok")}};
  int errors = 0;
  EvalPool(cfg).Run(items, [&](const PoolItem&, const Result<EvalResult>& r, int) { errors += !r.ok(); });
  EXPECT_EQ(errors, 2);
}

// ---- the pipeline: check workers in parallel, a barrier, then exclusive timing ----------------------

struct Event {
  bool start;
  std::string mode, tag;
  long pid;
  long long ns;
};
struct Interval {
  std::string mode, tag;
  long long begin, end;
};

std::vector<Interval> ReadIntervals(const std::string& path) {
  std::ifstream in(path);
  std::map<long, Event> open;  // pid -> its request in flight (a fake worker runs one at a time)
  std::vector<Interval> out;
  std::string what;
  Event e;
  while (in >> what >> e.mode >> e.tag >> e.pid >> e.ns) {
    if (what == "start") {
      open[e.pid] = e;
    } else {
      auto it = open.find(e.pid);
      if (it == open.end()) continue;
      out.push_back({e.mode, e.tag, it->second.ns, e.ns});
      open.erase(it);
    }
  }
  return out;
}

int MaxInFlight(const std::vector<Interval>& v, const std::string& mode) {
  std::vector<std::pair<long long, int>> pts;
  for (const auto& i : v) {
    if (i.mode != mode) continue;
    pts.push_back({i.begin, +1});
    pts.push_back({i.end, -1});
  }
  std::sort(pts.begin(), pts.end());  // an end before a start at the same instant
  int cur = 0, best = 0;
  for (const auto& [t, d] : pts) best = std::max(best, cur += d);
  return best;
}

struct PipelineRun {
  std::vector<Interval> intervals;
  std::map<size_t, int> seen;
  std::map<size_t, EvalResult> got;
  std::map<size_t, int> slot;
  std::map<size_t, std::string> tag_of;  // the tag of the request each report carried
};

PipelineRun RunPipeline(const std::vector<std::pair<std::string, Mode>>& specs, int check_slots,
                        int measure_slots = 1) {
  char tmpl[] = "/tmp/kiln_pool_events_XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  const std::string events = tmpl;
  auto fake = [events] {
    WorkerOptions o = Fake();
    o.env["FAKE_WORKER_EVENTS"] = events;
    o.env["FAKE_WORKER_SLEEP"] = "0.3";
    return std::make_unique<WorkerRunner>(o);
  };
  PoolConfig cfg;
  cfg.measure_slots = measure_slots;
  cfg.make_measure = [&](int) { return fake(); };
  cfg.check_slots = check_slots;
  cfg.make_check = [&](int) { return fake(); };
  std::vector<PoolItem> items;
  for (size_t i = 0; i < specs.size(); ++i) {
    EvalRequest r = Req(specs[i].first, specs[i].first == "static" ? "import ctypes\n" : "");
    r.timeout_s = 5;
    r.mode = specs[i].second;
    r.candidate_source = *r.candidate_source + "# tag: " + std::to_string(i) + "\n";
    items.push_back({i, r});
  }
  PipelineRun run;
  EvalPool(cfg).Run(items, [&](const PoolItem& it, const Result<EvalResult>& r, int slot) {
    ++run.seen[it.index];
    run.slot[it.index] = slot;
    const std::string& src = *it.request.candidate_source;
    run.tag_of[it.index] = src.substr(src.rfind("# tag: ") + 7);
    run.tag_of[it.index].pop_back();
    ASSERT_TRUE(r.ok()) << r.status().message();
    run.got[it.index] = *r;
  });
  run.intervals = ReadIntervals(events);
  std::remove(events.c_str());
  return run;
}

TEST(EvalPool, PipelineChecksInParallelThenTimesAlone) {
  // 0..9 time (2 and 5 fail their check, 7 runs out of memory only when sharing the GPU, 9 is rejected
  // statically), 10..15 check (12 fails).
  std::vector<std::pair<std::string, Mode>> specs;
  for (int i = 0; i < 10; ++i) {
    specs.push_back({i == 2 || i == 5 ? "mismatch"
                     : i == 7         ? "oom_when_shared"
                     : i == 9         ? "static"
                                      : "ok",
                     Mode::kTime});
  }
  for (int i = 10; i < 16; ++i) specs.push_back({i == 12 ? "mismatch" : "ok", Mode::kCheck});
  const int K = 4;
  PipelineRun run = RunPipeline(specs, K);

  // Nothing lost, nothing twice, every result under its own pair.
  ASSERT_EQ(run.seen.size(), specs.size());
  for (const auto& [i, n] : run.seen) {
    EXPECT_EQ(n, 1) << i;
    EXPECT_EQ(run.tag_of[i], std::to_string(i));
  }
  // Parallelism: K check requests in flight at once (14 checks of 0.3 s each on K workers).
  EXPECT_EQ(MaxInFlight(run.intervals, "check"), K);
  // The measuring worker is alone: every timing request starts after the last check request ended.
  long long last_check_end = 0;
  for (const auto& iv : run.intervals) {
    if (iv.mode == "check") last_check_end = std::max(last_check_end, iv.end);
  }
  int timed = 0;
  for (const auto& iv : run.intervals) {
    if (iv.mode == "time_only" || iv.mode == "time") {
      ++timed;
      EXPECT_GE(iv.begin, last_check_end) << "timing of " << iv.tag << " overlaps a check";
    }
  }
  EXPECT_EQ(MaxInFlight(run.intervals, "time_only"), 1);
  // Requests per pair: which stages each one reached.
  std::map<std::string, std::multiset<std::string>> modes;
  for (const auto& iv : run.intervals) modes[iv.tag].insert(iv.mode);
  for (int i : {0, 1, 3, 4, 6, 8}) {
    SCOPED_TRACE(i);
    EXPECT_EQ(modes[std::to_string(i)], (std::multiset<std::string>{"check", "time_only"}));
    const EvalResult& r = run.got[i];
    EXPECT_EQ(r.verdict, Verdict::kOk);
    EXPECT_EQ(run.slot[i], 0);
    ASSERT_EQ(r.cases.size(), 1u);
    EXPECT_EQ(r.cases[0].trials, 3 + 1);  // the check's trials plus the re-verification before timing
    EXPECT_DOUBLE_EQ(*r.cases[0].max_abs_err, 0.5);
    EXPECT_DOUBLE_EQ(*r.cases[0].speedup, 2.0);
    EXPECT_EQ(r.ToJson()["cases"][0]["trials"], 4);
    EXPECT_EQ(r.raw["check_stage"]["verdict"], "ok");
    EXPECT_EQ(r.raw["mode_seen"], "time_only");
  }
  for (int i : {2, 5}) {  // failed the check: never timed
    SCOPED_TRACE(i);
    EXPECT_EQ(modes[std::to_string(i)], (std::multiset<std::string>{"check"}));
    EXPECT_EQ(run.got[i].verdict, Verdict::kMismatch);
    ASSERT_FALSE(run.got[i].warnings.empty());
    EXPECT_EQ(run.got[i].warnings.back().code, "check_stage");
  }
  // Out of memory while sharing the GPU: evaluated again, whole (mode time), alone.
  EXPECT_EQ(modes["7"], (std::multiset<std::string>{"check", "time"}));
  EXPECT_EQ(run.got[7].verdict, Verdict::kOk);
  EXPECT_TRUE(modes["9"].empty());
  EXPECT_EQ(run.got[9].verdict, Verdict::kRejected);
  EXPECT_EQ(run.slot[9], -1);
  for (int i = 10; i < 16; ++i) {  // check items: only on the check workers
    SCOPED_TRACE(i);
    EXPECT_EQ(modes[std::to_string(i)], (std::multiset<std::string>{"check"}));
    EXPECT_EQ(run.got[i].verdict, i == 12 ? Verdict::kMismatch : Verdict::kOk);
    EXPECT_EQ(run.slot[i], 0);
  }
  EXPECT_EQ(timed, 6 + 1);
}

TEST(EvalPool, CheckBatchUsesEveryCheckWorkerOfEveryGpu) {
  std::vector<std::pair<std::string, Mode>> specs(16, {"ok", Mode::kCheck});
  PipelineRun run = RunPipeline(specs, /*check_slots=*/6, /*measure_slots=*/2);
  ASSERT_EQ(run.seen.size(), 16u);
  EXPECT_EQ(MaxInFlight(run.intervals, "check"), 6);
  std::set<int> slots;
  for (const auto& [i, s] : run.slot) slots.insert(s);
  EXPECT_EQ(slots, (std::set<int>{0, 1}));  // check slot c reports the GPU of measuring slot c % 2
  for (const auto& iv : run.intervals) EXPECT_EQ(iv.mode, "check");
}


// A runner in this process whose destructor (as a worker's shutdown does) waits until `expected` runners are
// stopping together, or `patience` passes; the board records the most stopping at once. Every item ok.
struct StopBoard {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;    // runners that began to stop
  int inside = 0;     // runners stopping now
  int most_seen = 0;  // the most stopping at once
};

class SlowToStopRunner : public Runner {
 public:
  SlowToStopRunner(StopBoard* board, int expected, std::chrono::milliseconds patience)
      : board_(board), expected_(expected), patience_(patience) {}
  ~SlowToStopRunner() override {
    std::unique_lock lock(board_->mu);
    ++board_->arrived;
    board_->most_seen = std::max(board_->most_seen, ++board_->inside);
    board_->cv.notify_all();
    board_->cv.wait_for(lock, patience_, [&] { return board_->arrived >= expected_; });
    --board_->inside;
  }
  Result<HelloInfo> Hello() override { return HelloInfo{}; }
  Result<EvalResult> Evaluate(const EvalRequest&) override { return EvalResult::Make(Verdict::kOk, "", ""); }
  Result<nlohmann::json> DevicePeaks(const std::vector<std::string>&) override { return nlohmann::json::object(); }

 private:
  StopBoard* board_;
  int expected_;
  std::chrono::milliseconds patience_;
};

TEST(EvalPool, StopsEveryWorkerAtOnceWhenTheRunEnds) {
  // 1 measuring and 8 check runners, each waiting (up to 3 s) in its shutdown for all 9 to be stopping: stopped
  // together, every one sees 9 at once; stopped one after another (the behaviour before), each sees only itself
  // after waiting its 3 s. Counted, not timed, so a loaded machine cannot fail it.
  StopBoard board;
  PoolConfig cfg;
  cfg.measure_slots = 1;
  cfg.check_slots = 8;
  auto make = [&board](int) {
    return std::make_unique<SlowToStopRunner>(&board, 9, std::chrono::milliseconds(3000));
  };
  cfg.make_measure = make;
  cfg.make_check = make;
  std::vector<PoolItem> items;
  for (size_t i = 0; i < 8; ++i) {
    EvalRequest r = Req("ok");
    r.mode = Mode::kCheck;
    items.push_back({i, r});
  }
  int ok = 0;
  EvalPool(cfg).Run(items, [&](const PoolItem&, const Result<EvalResult>& r, int) {
    ok += r.ok() && r->verdict == Verdict::kOk;
  });
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(board.arrived, 9);      // the run waited for every runner to stop
  EXPECT_EQ(board.inside, 0);
  EXPECT_EQ(board.most_seen, 9);    // and they stopped together
}

}  // namespace
}  // namespace kiln::exec

#include "exec/evaluator.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

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
  EXPECT_EQ(got[3].second, -1);  // settled by the compile worker, never measured
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

}  // namespace
}  // namespace kiln::exec

#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "store/sqlite_stmt.h"

namespace kiln::store {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_store_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    path_ = (dir_ / "sub" / "kiln.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  static CacheKey Key() {
    return {"task0000task0000", "cand0000cand0000", "GPU-1234", "2.11.0", "3.6.0", "580.1", "params00"};
  }
  static EvaluationRecord Rec(const CacheKey& k, const std::string& verdict = "ok") {
    EvaluationRecord r;
    r.key = k;
    r.task_name = "level1/19_ReLU";
    r.verdict = verdict;
    r.mode = "time";
    r.policy = "strict";
    r.speedup = 1.5;
    r.candidate_ms = 0.1;
    r.elapsed_s = 2.5;
    r.response = {{"verdict", verdict}, {"cases", {{{"name", "default"}, {"speedup", 1.5}}}}};
    return r;
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(StoreTest, OpenCreatesDirectoriesAndSchema) {
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_EQ((*s)->schema_version(), kSchemaVersion);
  // Re-opening is a no-op migration.
  s->reset();
  auto again = Store::Open(path_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->schema_version(), kSchemaVersion);
}

TEST_F(StoreTest, RoundTrip) {
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok());
  Store& st = **s;
  ASSERT_TRUE(st.PutDevice("GPU-1234", {{"name", "NVIDIA H100"}}).ok());
  ASSERT_TRUE(st.PutDevice("GPU-1234", {{"name", "NVIDIA H100"}, {"sm_count", 132}}).ok());
  ASSERT_TRUE(st.PutTask("task0000task0000", "level1/19_ReLU", "kernelbench", {{"path", "/x"}}).ok());
  ASSERT_TRUE(st.PutCandidate("cand0000cand0000", "c.py", "print(1)\n").ok());
  ASSERT_TRUE(st.PutCandidate("cand0000cand0000", "c.py", "print(1)\n").ok());  // idempotent
  auto id = st.PutEvaluation(Rec(Key()));
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto got = st.Lookup(Key());
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  const EvaluationRecord& r = **got;
  EXPECT_EQ(r.id, *id);
  EXPECT_EQ(r.verdict, "ok");
  EXPECT_EQ(r.task_name, "level1/19_ReLU");
  EXPECT_DOUBLE_EQ(*r.speedup, 1.5);
  EXPECT_FALSE(r.reference_ms.has_value());
  EXPECT_EQ(r.response["cases"][0]["speedup"], 1.5);
  EXPECT_EQ(r.key.Digest(), Key().Digest());
  EXPECT_FALSE(r.created_at.empty());
  auto src = st.CandidateSource("cand0000cand0000");
  ASSERT_TRUE(src.ok() && src->has_value());
  EXPECT_EQ(**src, "print(1)\n");
  auto list = st.EvaluationsOf("cand0000cand0000");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 1u);
}

TEST_F(StoreTest, CacheMissesWhenAnyKeyPartChanges) {
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->PutEvaluation(Rec(Key())).ok());
  std::vector<std::string CacheKey::*> fields = {
      &CacheKey::task_hash,      &CacheKey::candidate_hash, &CacheKey::device_uuid, &CacheKey::torch_version,
      &CacheKey::triton_version, &CacheKey::driver_version, &CacheKey::params_hash};
  for (auto f : fields) {
    CacheKey k = Key();
    k.*f += "x";
    auto got = (*s)->Lookup(k);
    ASSERT_TRUE(got.ok());
    EXPECT_FALSE(got->has_value()) << "a changed key part still hit: " << k.*f;
  }
  auto hit = (*s)->Lookup(Key());
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(hit->has_value());
  // The newest of several evaluations under one key wins.
  ASSERT_TRUE((*s)->PutEvaluation(Rec(Key(), "mismatch")).ok());
  EXPECT_EQ((*(*s)->Lookup(Key()))->verdict, "mismatch");
}

TEST_F(StoreTest, ConcurrentWritersThreads) {
  ASSERT_TRUE(Store::Open(path_).ok());
  constexpr int kThreads = 4, kEach = 50;
  std::vector<std::thread> ts;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      auto s = Store::Open(path_);  // one connection per thread
      if (!s.ok()) {
        ++failures;
        return;
      }
      for (int i = 0; i < kEach; ++i) {
        CacheKey k = Key();
        k.candidate_hash = std::to_string(t * 1000 + i);
        if (!(*s)->PutCandidate(k.candidate_hash, "c", "x").ok()) ++failures;
        if (!(*s)->PutEvaluation(Rec(k)).ok()) ++failures;
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto s = Store::Open(path_);
  EXPECT_EQ(*(*s)->CountEvaluations(), kThreads * kEach);
}

TEST_F(StoreTest, ConcurrentWritersProcesses) {
  constexpr int kProcs = 4, kEach = 40;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    if (pid == 0) {
      // Each process opens (and races to migrate) the same new file.
      auto s = Store::Open(path_);
      if (!s.ok()) _exit(2);
      for (int i = 0; i < kEach; ++i) {
        CacheKey k = Key();
        k.candidate_hash = std::to_string(p * 1000 + i);
        if (!(*s)->PutEvaluation(Rec(k)).ok()) _exit(3);
      }
      _exit(0);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "writer exit " << st;
  }
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->CountEvaluations(), kProcs * kEach);
}

TEST_F(StoreTest, MigratesAnOlderSchemaAndRefusesANewerOne) {
  fs::create_directories(fs::path(path_).parent_path());
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    // A version-1 database: the evaluations table without the later indexes.
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE evaluations (id INTEGER PRIMARY KEY AUTOINCREMENT, cache_key TEXT NOT "
                           "NULL, task_hash TEXT NOT NULL, candidate_hash TEXT NOT NULL, device_uuid TEXT NOT "
                           "NULL, torch_version TEXT, triton_version TEXT, driver_version TEXT, params_hash TEXT "
                           "NOT NULL, task_name TEXT, verdict TEXT NOT NULL, mode TEXT, policy TEXT, speedup "
                           "REAL, candidate_ms REAL, reference_ms REAL, elapsed_s REAL, response_json TEXT NOT "
                           "NULL, created_at TEXT NOT NULL); PRAGMA user_version = 1;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  {
    auto s = Store::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ((*s)->schema_version(), kSchemaVersion);
    ASSERT_TRUE((*s)->PutEvaluation(Rec(Key())).ok());
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='evaluations_by_candidate'", -1, &st,
                       nullptr);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(st, 0), 1);
    sqlite3_finalize(st);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto s = Store::Open(path_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("schema version 99"), std::string::npos);
}

TEST_F(StoreTest, OptimizeRunsAndStepsRoundTrip) {
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  Store& st = **s;
  auto run = st.BeginOptimizeRun({{"task", "softmax"}, {"kernel", "softmax_kernel"}, {"strategy", "rules"}});
  ASSERT_TRUE(run.ok()) << run.status().message();
  auto other = st.BeginOptimizeRun({{"task", "add"}});
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*run, *other);
  ASSERT_TRUE(st.AddOptimizeStep(*run, "baseline", {{"source_hash", "h0"}, {"verdict", "ok"}, {"score_ms", 1.5}}).ok());
  ASSERT_TRUE(st.AddOptimizeStep(*run, "verify", {{"id", 3}, {"outcome", "won"}}).ok());
  ASSERT_TRUE(st.AddOptimizeStep(*other, "baseline", {{"verdict", "crash"}}).ok());
  ASSERT_TRUE(st.EndOptimizeRun(*run, "improved", {{"improved", true}}).ok());
  EXPECT_EQ(*st.CountOptimizeRuns(), 2);
  EXPECT_EQ(*st.CountOptimizeSteps(*run), 2);
  EXPECT_EQ(*st.CountOptimizeSteps(*other), 1);
  s->reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT seq, kind, candidate_hash, verdict, score_ms FROM optimize_steps WHERE run_id = ?1 "
                     "ORDER BY seq",
                     -1, &q, nullptr);
  sqlite3_bind_int64(q, 1, *run);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 1);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 2)), "h0");
  EXPECT_DOUBLE_EQ(sqlite3_column_double(q, 4), 1.5);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 2);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 3)), "won");  // the outcome as the verdict
  EXPECT_EQ(sqlite3_column_type(q, 4), SQLITE_NULL);
  sqlite3_finalize(q);
  sqlite3_prepare_v2(db, "SELECT status, finished_at IS NOT NULL FROM optimize_runs WHERE id = ?1", -1, &q, nullptr);
  sqlite3_bind_int64(q, 1, *run);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)), "improved");
  EXPECT_EQ(sqlite3_column_int(q, 1), 1);
  sqlite3_finalize(q);
  sqlite3_close(db);
}

// A version-2 database, as kiln wrote it before the optimize records were a migration: with or without
// the optimize tables that `kiln optimize` then created itself. Both upgrade; existing rows stay.
TEST_F(StoreTest, Version2DatabaseUpgradesToTheOptimizeRecords) {
  for (bool had_optimize_tables : {true, false}) {
    fs::remove_all(dir_);
    {
      auto s = Store::Open(path_);
      ASSERT_TRUE(s.ok());
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "DROP TABLE IF EXISTS optimize_steps; DROP TABLE IF EXISTS optimize_runs; "
                           "PRAGMA user_version = 2;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    if (had_optimize_tables) {
      ASSERT_EQ(sqlite3_exec(db,
                             "CREATE TABLE optimize_runs(id INTEGER PRIMARY KEY AUTOINCREMENT, started_at TEXT "
                             "NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')), finished_at TEXT, task "
                             "TEXT, task_hash TEXT, kernel TEXT, device TEXT, device_uuid TEXT, strategy TEXT, "
                             "status TEXT NOT NULL DEFAULT 'running', info_json TEXT, result_json TEXT);"
                             "CREATE TABLE optimize_steps(run_id INTEGER NOT NULL REFERENCES optimize_runs(id), "
                             "seq INTEGER NOT NULL, at TEXT NOT NULL DEFAULT "
                             "(strftime('%Y-%m-%dT%H:%M:%fZ','now')), kind TEXT NOT NULL, candidate_hash TEXT, "
                             "verdict TEXT, score_ms REAL, detail_json TEXT, PRIMARY KEY(run_id, seq));"
                             "INSERT INTO optimize_runs(task) VALUES('old');"
                             "INSERT INTO optimize_steps(run_id, seq, kind) VALUES(1, 1, 'baseline');",
                             nullptr, nullptr, nullptr),
                SQLITE_OK);
    }
    sqlite3_close(db);
    auto s = Store::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ((*s)->schema_version(), kSchemaVersion);
    EXPECT_EQ(*(*s)->CountOptimizeRuns(), had_optimize_tables ? 1 : 0);
    auto run = (*s)->BeginOptimizeRun({{"task", "new"}});
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(*run, had_optimize_tables ? 2 : 1);
    ASSERT_TRUE((*s)->AddOptimizeStep(*run, "baseline", {}).ok());
    EXPECT_EQ(*(*s)->CountOptimizeSteps(*run), 1);
    EXPECT_EQ(*(*s)->CountOptimizeSteps(1), 1);
  }
}

// The step helpers every write shares (sqlite_stmt.h): done is ok; a locked database is kUnavailable (so
// that WithRetry tries again), any other failure kIo with SQLite's message.
TEST_F(StoreTest, StepDoneSaysWhyAWriteFailed) {
  fs::create_directories(dir_);
  const std::string path = (dir_ / "step.db").string();
  sqlite3* a = nullptr;
  sqlite3* b = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &a), SQLITE_OK);
  ASSERT_EQ(sqlite3_open(path.c_str(), &b), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(a, "CREATE TABLE t(x TEXT NOT NULL)", nullptr, nullptr, nullptr), SQLITE_OK);
  {
    internal::Stmt ok(a, "INSERT INTO t(x) VALUES(?1)");
    ok.Bind(1, std::string("v"));
    EXPECT_TRUE(internal::StepDone(ok).ok());
    internal::Stmt null(a, "INSERT INTO t(x) VALUES(NULL)");
    Status s = internal::StepDone(null);
    EXPECT_EQ(s.code(), Code::kIo);
    EXPECT_NE(s.message().find("NOT NULL"), std::string::npos) << s.message();
  }
  {
    internal::Stmt locked(b, "INSERT INTO t(x) VALUES('w')");
    ASSERT_TRUE(locked.ok()) << locked.Error();
    ASSERT_EQ(sqlite3_exec(a, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
    EXPECT_EQ(internal::StepDone(locked).code(), Code::kUnavailable);
  }
  sqlite3_exec(a, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(b);
  sqlite3_close(a);
}

TEST(StorePaths, DefaultDbPathFollowsXdg) {
  std::string old_x = std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "";
  std::string old_db = std::getenv("KILN_DB") ? std::getenv("KILN_DB") : "";
  unsetenv("KILN_DB");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(DefaultDbPath(), "/tmp/xdg/kiln/kiln.db");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultDbPath(), "/home/u/.cache/kiln/kiln.db");
  if (!old_x.empty()) setenv("XDG_CACHE_HOME", old_x.c_str(), 1);
  if (!old_db.empty()) setenv("KILN_DB", old_db.c_str(), 1);
}

// The serve journal: a job with its idempotency key, items kept once each, unfinished jobs listed
// until finished, and all of it surviving a reopen (a restarted server).
TEST_F(StoreTest, ServeJournal) {
  {
    auto s = Store::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->PutServeJob("j1", "key-1", {{"items", {{{"task", "t"}}}}}).ok());
    ASSERT_TRUE((*s)->PutServeJob("j2", "", {{"items", nlohmann::json::array()}}).ok());
    EXPECT_FALSE((*s)->PutServeJob("j3", "key-1", nlohmann::json::object()).ok());  // the key is taken
    EXPECT_FALSE((*s)->PutServeJob("j1", "", nlohmann::json::object()).ok());       // the id is taken
    EXPECT_TRUE(*(*s)->PutServeItem("j1", 0, {{"reward", 1.0}}));
    EXPECT_FALSE(*(*s)->PutServeItem("j1", 0, {{"reward", 0.0}}));  // a second result is not kept
    ASSERT_TRUE((*s)->FinishServeJob("j2", {{"status", "done"}}).ok());
  }
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok());
  auto by_key = (*s)->ServeJobByKey("key-1");
  ASSERT_TRUE(by_key.ok() && by_key->has_value());
  EXPECT_EQ((*by_key)->id, "j1");
  EXPECT_EQ((*by_key)->request["items"][0]["task"], "t");
  auto items = (*s)->ServeItems("j1");
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 1u);
  EXPECT_EQ(items->at(0)["reward"], 1.0);
  auto open = (*s)->UnfinishedServeJobs();
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ(open->at(0).id, "j1");
  auto j2 = (*s)->ServeJob("j2");
  ASSERT_TRUE(j2.ok() && j2->has_value());
  EXPECT_EQ((*j2)->state, "done");
  EXPECT_EQ((*j2)->response["status"], "done");
  EXPECT_FALSE((*(*s)->ServeJob("nope")).has_value());
}

// The LLM cache answers by key after a reopen; the calls add up per purpose prefix, failed calls
// and other purposes apart.
TEST_F(StoreTest, LlmCacheAndUsage) {
  {
    auto s = Store::Open(path_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_FALSE((*(*s)->LlmCached("k1")).has_value());
    ASSERT_TRUE((*s)->PutLlmCache("k1", "http://h/v1", "m", {{"messages", 1}}, {{"id", "r1"}}, 10, 5).ok());
    ASSERT_TRUE((*s)->PutLlmCache("k1", "http://h/v1", "m", {{"messages", 1}}, {{"id", "r2"}}, 10, 5).ok());
    LlmCallRecord c;
    c.endpoint = "http://h/v1";
    c.model = "m";
    c.cache_key = "k1";
    c.purpose = "generate:relu";
    c.status = "ok";
    c.prompt_tokens = 10;
    c.completion_tokens = 5;
    c.cost_usd = 0.25;
    ASSERT_TRUE((*s)->AddLlmCall(c).ok());
    c.cached = true;
    c.cost_usd = 0;
    ASSERT_TRUE((*s)->AddLlmCall(c).ok());
    c.status = "http 500";
    ASSERT_TRUE((*s)->AddLlmCall(c).ok());
    c.status = "ok";
    c.purpose = "optimize:k";
    c.cost_usd = 1;
    ASSERT_TRUE((*s)->AddLlmCall(c).ok());
  }
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok());
  auto hit = (*s)->LlmCached("k1");
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((**hit)["id"], "r2");
  auto gen = (*s)->LlmUsageTotals("generate:");
  ASSERT_TRUE(gen.ok());
  EXPECT_EQ(gen->calls, 2);
  EXPECT_EQ(gen->cached, 1);
  EXPECT_EQ(gen->prompt_tokens, 20);
  EXPECT_DOUBLE_EQ(gen->cost_usd, 0.25);
  auto all = (*s)->LlmUsageTotals();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->calls, 3);
  EXPECT_DOUBLE_EQ(all->cost_usd, 1.25);
}

}  // namespace
}  // namespace kiln::store

#include "store/store.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include <fmt/format.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "store/sqlite_stmt.h"

namespace kiln::store {

namespace fs = std::filesystem;
using nlohmann::json;

std::string DefaultDbPath() {
  if (const char* e = std::getenv("KILN_DB"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kiln/kiln.db";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kiln/kiln.db";
  return ".kiln/kiln.db";
}

std::string CacheKey::Digest() const {
  std::string acc;
  for (const std::string* s :
       {&task_hash, &candidate_hash, &device_uuid, &torch_version, &triton_version, &driver_version, &params_hash}) {
    acc += *s;
    acc += '\x1f';
  }
  return HashHex(acc);
}

using internal::Busy;
using internal::kNow;
using internal::StepDone;
using internal::StepError;
using internal::Stmt;

namespace {

// Numbered migrations: migration i takes the schema from version i to i+1.
const char* kMigrations[] = {
    // 0 -> 1: the records.
    R"(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS devices (
  uuid TEXT PRIMARY KEY, name TEXT, info_json TEXT NOT NULL,
  first_seen TEXT NOT NULL, last_seen TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
  hash TEXT PRIMARY KEY, name TEXT NOT NULL, format TEXT NOT NULL, spec_json TEXT NOT NULL,
  created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS candidates (
  hash TEXT PRIMARY KEY, name TEXT, source TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS evaluations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cache_key TEXT NOT NULL,
  task_hash TEXT NOT NULL, candidate_hash TEXT NOT NULL, device_uuid TEXT NOT NULL,
  torch_version TEXT, triton_version TEXT, driver_version TEXT, params_hash TEXT NOT NULL,
  task_name TEXT, verdict TEXT NOT NULL, mode TEXT, policy TEXT,
  speedup REAL, candidate_ms REAL, reference_ms REAL, elapsed_s REAL,
  response_json TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS evaluations_by_key ON evaluations(cache_key);
)",
    // 1 -> 2: look-ups by candidate and by task for reports.
    R"(
CREATE INDEX IF NOT EXISTS evaluations_by_candidate ON evaluations(candidate_hash);
CREATE INDEX IF NOT EXISTS evaluations_by_task ON evaluations(task_hash);
)",
    // 2 -> 3: the optimize runs and their steps (optimize_records.cc). IF NOT EXISTS: databases written
    // before version 3 may hold these tables already (kiln optimize created them itself then); their
    // rows are kept.
    R"(
CREATE TABLE IF NOT EXISTS optimize_runs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  finished_at TEXT,
  task TEXT, task_hash TEXT, kernel TEXT, device TEXT, device_uuid TEXT, strategy TEXT,
  status TEXT NOT NULL DEFAULT 'running',
  info_json TEXT, result_json TEXT);
CREATE TABLE IF NOT EXISTS optimize_steps(
  run_id INTEGER NOT NULL REFERENCES optimize_runs(id),
  seq INTEGER NOT NULL,
  at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  kind TEXT NOT NULL,
  candidate_hash TEXT, verdict TEXT, score_ms REAL,
  detail_json TEXT,
  PRIMARY KEY(run_id, seq));
)",
    // 3 -> 4: the journal of `kiln serve` (serve_records.cc): accepted reward jobs and their items'
    // results, so a restarted server finishes what it accepted and answers every job.
    R"(
CREATE TABLE IF NOT EXISTS serve_jobs(
  id TEXT PRIMARY KEY,
  idem_key TEXT UNIQUE,
  request_json TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'accepted',
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  finished_at TEXT,
  response_json TEXT);
CREATE TABLE IF NOT EXISTS serve_items(
  job_id TEXT NOT NULL REFERENCES serve_jobs(id),
  idx INTEGER NOT NULL,
  result_json TEXT NOT NULL,
  PRIMARY KEY(job_id, idx));
)",
    // 4 -> 5: the LLM client's response cache and its calls' tokens and cost (llm_records.cc).
    R"(
CREATE TABLE IF NOT EXISTS llm_cache(
  key TEXT PRIMARY KEY,
  endpoint TEXT NOT NULL, model TEXT NOT NULL,
  request_json TEXT NOT NULL, response_json TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')));
CREATE TABLE IF NOT EXISTS llm_calls(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  endpoint TEXT NOT NULL, model TEXT NOT NULL, cache_key TEXT NOT NULL,
  purpose TEXT, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 1, cached INTEGER NOT NULL DEFAULT 0,
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0, latency_s REAL);
CREATE INDEX IF NOT EXISTS llm_calls_by_purpose ON llm_calls(purpose);
)",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion, "one migration per version");

}  // namespace

Store::~Store() {
  if (db_) sqlite3_close_v2(db_);
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  std::unique_ptr<Store> s(new Store());
  s->path_ = path;
  if (path != ":memory:") {
    std::error_code ec;
    fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) return IoError(fmt::format("{}: cannot create directory: {}", parent.string(), ec.message()));
  }
  int rc = sqlite3_open_v2(path.c_str(), &s->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = s->db_ ? sqlite3_errmsg(s->db_) : "out of memory";
    return IoError(fmt::format("{}: cannot open the records database: {}", path, msg));
  }
  sqlite3_busy_timeout(s->db_, 30000);
  KILN_RETURN_IF_ERROR(s->WithRetry([&] { return s->Exec("PRAGMA journal_mode=WAL"); }));
  KILN_RETURN_IF_ERROR(s->Exec("PRAGMA synchronous=NORMAL"));
  KILN_RETURN_IF_ERROR(s->Exec("PRAGMA foreign_keys=ON"));
  KILN_RETURN_IF_ERROR(s->Migrate());
  return s;
}

Status Store::Exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return Status(Busy(rc) ? Code::kUnavailable : Code::kIo, fmt::format("{}: sqlite: {}", path_, msg));
  }
  return Status::Ok();
}

Status Store::WithRetry(const std::function<Status()>& fn) {
  for (int attempt = 0;; ++attempt) {
    Status s = fn();
    if (s.ok() || s.code() != Code::kUnavailable || attempt >= 50) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + 10 * attempt));
  }
}

int Store::schema_version() {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_, "PRAGMA user_version");
  return st.Step() == SQLITE_ROW ? static_cast<int>(st.Int(0)) : -1;
}

Status Store::Migrate() {
  return WithRetry([&]() -> Status {
    KILN_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    Stmt st(db_, "PRAGMA user_version");
    int v = st.Step() == SQLITE_ROW ? static_cast<int>(st.Int(0)) : 0;
    if (v > kSchemaVersion) {
      (void)Exec("ROLLBACK");
      return Status(Code::kInvalidArgument,
                    fmt::format("{}: the records database has schema version {}, newer than this kiln's {}; use "
                                "a newer kiln or another --db",
                                path_, v, kSchemaVersion));
    }
    for (; v < kSchemaVersion; ++v) {
      Status s = Exec(kMigrations[v]);
      if (!s.ok()) {
        (void)Exec("ROLLBACK");
        return s;
      }
      s = Exec(fmt::format("PRAGMA user_version = {}", v + 1));
      if (!s.ok()) {
        (void)Exec("ROLLBACK");
        return s;
      }
    }
    Status s = Exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    if (s.ok())
      s = Exec(fmt::format("INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', '{}')", kSchemaVersion));
    if (!s.ok()) {
      (void)Exec("ROLLBACK");
      return s;
    }
    return Exec("COMMIT");
  });
}

Status Store::PutDevice(const std::string& uuid, const json& info) {
  std::lock_guard<std::mutex> lock(mu_);
  return WithRetry([&]() -> Status {
    Stmt st(db_, fmt::format("INSERT INTO devices(uuid, name, info_json, first_seen, last_seen) "
                             "VALUES(?1, ?2, ?3, {0}, {0}) ON CONFLICT(uuid) DO UPDATE SET "
                             "name=excluded.name, info_json=excluded.info_json, last_seen=excluded.last_seen",
                             kNow)
                     .c_str());
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, uuid).Bind(2, info.value("name", std::string())).Bind(3, DumpJson(info));
    return StepDone(st);
  });
}

Status Store::PutTask(const std::string& hash, const std::string& name, const std::string& format, const json& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  return WithRetry([&]() -> Status {
    Stmt st(db_, fmt::format("INSERT OR IGNORE INTO tasks(hash, name, format, spec_json, created_at) "
                             "VALUES(?1, ?2, ?3, ?4, {})",
                             kNow)
                     .c_str());
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, hash).Bind(2, name).Bind(3, format).Bind(4, DumpJson(spec));
    return StepDone(st);
  });
}

Status Store::PutCandidate(const std::string& hash, const std::string& name, const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  return WithRetry([&]() -> Status {
    Stmt st(db_, fmt::format("INSERT OR IGNORE INTO candidates(hash, name, source, created_at) "
                             "VALUES(?1, ?2, ?3, {})",
                             kNow)
                     .c_str());
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, hash).Bind(2, name).Bind(3, source);
    return StepDone(st);
  });
}

Result<int64_t> Store::PutEvaluation(const EvaluationRecord& r) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t id = 0;
  Status s = WithRetry([&]() -> Status {
    Stmt st(db_, fmt::format("INSERT INTO evaluations(cache_key, task_hash, candidate_hash, device_uuid, "
                             "torch_version, triton_version, driver_version, params_hash, task_name, verdict, "
                             "mode, policy, speedup, candidate_ms, reference_ms, elapsed_s, response_json, "
                             "created_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                             "?15, ?16, ?17, {})",
                             kNow)
                     .c_str());
    if (!st.ok()) return IoError(st.Error());
    const CacheKey& k = r.key;
    st.Bind(1, k.Digest()).Bind(2, k.task_hash).Bind(3, k.candidate_hash).Bind(4, k.device_uuid);
    st.Bind(5, k.torch_version).Bind(6, k.triton_version).Bind(7, k.driver_version).Bind(8, k.params_hash);
    st.Bind(9, r.task_name).Bind(10, r.verdict).Bind(11, r.mode).Bind(12, r.policy);
    st.Bind(13, r.speedup).Bind(14, r.candidate_ms).Bind(15, r.reference_ms).BindD(16, r.elapsed_s);
    st.Bind(17, DumpJson(r.response));
    KILN_RETURN_IF_ERROR(StepDone(st));
    id = sqlite3_last_insert_rowid(db_);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return id;
}

namespace {

const char* kSelect =
    "SELECT id, cache_key, task_hash, candidate_hash, device_uuid, torch_version, triton_version, "
    "driver_version, params_hash, task_name, verdict, mode, policy, speedup, candidate_ms, reference_ms, "
    "elapsed_s, response_json, created_at FROM evaluations ";

EvaluationRecord Row(const Stmt& st) {
  EvaluationRecord r;
  r.id = st.Int(0);
  r.key.task_hash = st.Text(2);
  r.key.candidate_hash = st.Text(3);
  r.key.device_uuid = st.Text(4);
  r.key.torch_version = st.Text(5);
  r.key.triton_version = st.Text(6);
  r.key.driver_version = st.Text(7);
  r.key.params_hash = st.Text(8);
  r.task_name = st.Text(9);
  r.verdict = st.Text(10);
  r.mode = st.Text(11);
  r.policy = st.Text(12);
  r.speedup = st.Double(13);
  r.candidate_ms = st.Double(14);
  r.reference_ms = st.Double(15);
  r.elapsed_s = st.Double(16).value_or(0);
  r.response = ParseJson(st.Text(17));
  if (r.response.is_discarded()) r.response = json::object();
  r.created_at = st.Text(18);
  return r;
}

}  // namespace

Result<std::optional<EvaluationRecord>> Store::Lookup(const CacheKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<EvaluationRecord> out;
  Status s = WithRetry([&]() -> Status {
    Stmt st(db_, (std::string(kSelect) + "WHERE cache_key = ?1 ORDER BY id DESC LIMIT 1").c_str());
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, key.Digest());
    int rc = st.Step();
    if (rc == SQLITE_ROW) {
      out = Row(st);
      return Status::Ok();
    }
    if (rc == SQLITE_DONE) return Status::Ok();
    return StepError(rc, st);
  });
  if (!s.ok()) return s;
  return out;
}

Result<std::vector<EvaluationRecord>> Store::EvaluationsOf(const std::string& candidate_hash, int limit) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<EvaluationRecord> out;
  Stmt st(db_, (std::string(kSelect) + "WHERE candidate_hash = ?1 ORDER BY id DESC LIMIT ?2").c_str());
  if (!st.ok()) return IoError(st.Error());
  st.Bind(1, candidate_hash).Bind(2, static_cast<int64_t>(limit));
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) out.push_back(Row(st));
  if (rc != SQLITE_DONE) return IoError(st.Error());
  return out;
}

Result<int64_t> Store::CountEvaluations() {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_, "SELECT COUNT(*) FROM evaluations");
  if (st.Step() != SQLITE_ROW) return IoError(st.Error());
  return st.Int(0);
}

Result<std::optional<std::string>> Store::CandidateSource(const std::string& hash) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_, "SELECT source FROM candidates WHERE hash = ?1");
  st.Bind(1, hash);
  int rc = st.Step();
  if (rc == SQLITE_ROW) return std::optional<std::string>(st.Text(0));
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  return IoError(st.Error());
}

}  // namespace kiln::store

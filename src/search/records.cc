#include "search/records.h"

#include <sqlite3.h>

#include <filesystem>

namespace kiln::search {

namespace {

const char kSchema[] = R"(
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
)";

std::string S(const nlohmann::json& j, const char* k) {
  return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : "";
}

}  // namespace

Result<std::unique_ptr<SqliteRecorder>> SqliteRecorder::Open(const std::string& path) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::unique_ptr<SqliteRecorder> r(new SqliteRecorder());
  if (sqlite3_open(path.c_str(), &r->db_) != SQLITE_OK)
    return IoError("cannot open " + path + ": " + sqlite3_errmsg(r->db_));
  sqlite3_busy_timeout(r->db_, 5000);
  char* err = nullptr;
  if (sqlite3_exec(r->db_, "PRAGMA journal_mode=WAL;", nullptr, nullptr, &err) != SQLITE_OK) sqlite3_free(err);
  err = nullptr;
  if (sqlite3_exec(r->db_, kSchema, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "?";
    sqlite3_free(err);
    return IoError("cannot create the optimize tables in " + path + ": " + m);
  }
  return r;
}

SqliteRecorder::~SqliteRecorder() {
  if (db_) sqlite3_close(db_);
}

int64_t SqliteRecorder::BeginRun(const nlohmann::json& info) {
  std::lock_guard<std::mutex> l(mu_);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db_,
                     "INSERT INTO optimize_runs(task, task_hash, kernel, device, device_uuid, strategy, info_json) "
                     "VALUES(?,?,?,?,?,?,?)", -1, &st, nullptr);
  const std::string vals[] = {S(info, "task"),   S(info, "task_hash"),   S(info, "kernel"), S(info, "device"),
                              S(info, "device_uuid"), S(info, "strategy"), info.dump()};
  for (int i = 0; i < 7; ++i) sqlite3_bind_text(st, i + 1, vals[i].c_str(), -1, SQLITE_TRANSIENT);
  int64_t id = 0;
  if (sqlite3_step(st) == SQLITE_DONE) id = sqlite3_last_insert_rowid(db_);
  sqlite3_finalize(st);
  seq_ = 0;
  return id;
}

void SqliteRecorder::Step(int64_t run, const std::string& kind, const nlohmann::json& detail) {
  std::lock_guard<std::mutex> l(mu_);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db_,
                     "INSERT INTO optimize_steps(run_id, seq, kind, candidate_hash, verdict, score_ms, detail_json) "
                     "VALUES(?,?,?,?,?,?,?)", -1, &st, nullptr);
  sqlite3_bind_int64(st, 1, run);
  sqlite3_bind_int64(st, 2, ++seq_);
  sqlite3_bind_text(st, 3, kind.c_str(), -1, SQLITE_TRANSIENT);
  std::string h = S(detail, "source_hash"), v = S(detail, "verdict");
  if (v.empty()) v = S(detail, "outcome");
  sqlite3_bind_text(st, 4, h.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 5, v.c_str(), -1, SQLITE_TRANSIENT);
  if (detail.contains("score_ms") && detail["score_ms"].is_number())
    sqlite3_bind_double(st, 6, detail["score_ms"].get<double>());
  else
    sqlite3_bind_null(st, 6);
  std::string d = detail.dump();
  sqlite3_bind_text(st, 7, d.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_step(st);
  sqlite3_finalize(st);
}

void SqliteRecorder::EndRun(int64_t run, const std::string& status, const nlohmann::json& result) {
  std::lock_guard<std::mutex> l(mu_);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db_,
                     "UPDATE optimize_runs SET status=?, result_json=?, "
                     "finished_at=strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id=?", -1, &st, nullptr);
  std::string d = result.dump();
  sqlite3_bind_text(st, 1, status.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, d.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 3, run);
  sqlite3_step(st);
  sqlite3_finalize(st);
}

int64_t SqliteRecorder::CountRuns() {
  std::lock_guard<std::mutex> l(mu_);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM optimize_runs", -1, &st, nullptr);
  int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  return n;
}

int64_t SqliteRecorder::CountSteps(int64_t run) {
  std::lock_guard<std::mutex> l(mu_);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM optimize_steps WHERE run_id=?", -1, &st, nullptr);
  sqlite3_bind_int64(st, 1, run);
  int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  return n;
}

}  // namespace kiln::search

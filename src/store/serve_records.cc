// kiln/store: the journal of `kiln serve` (tables serve_jobs and serve_items, created by migration 4
// in store.cc).
#include <sqlite3.h>

#include <fmt/format.h>

#include "store/sqlite_stmt.h"
#include "common/json.h"
#include "store/store.h"

namespace kiln::store {

namespace {

using internal::StepDone;
using internal::StepError;
using internal::Stmt;
using nlohmann::json;

constexpr const char* kJobColumns = "id, COALESCE(idem_key, ''), state, request_json, response_json, created_at";

ServeJobRecord JobOf(const Stmt& st) {
  ServeJobRecord r;
  r.id = st.Text(0);
  r.idem_key = st.Text(1);
  r.state = st.Text(2);
  r.request = ParseJson(st.Text(3));
  std::string resp = st.Text(4);
  r.response = resp.empty() ? json(nullptr) : ParseJson(resp);
  r.created_at = st.Text(5);
  return r;
}

}  // namespace

Status Store::PutServeJob(const std::string& id, const std::string& idem_key, const json& request) {
  std::lock_guard<std::mutex> lock(mu_);
  return WithRetry([&]() -> Status {
    Stmt st(db_, "INSERT INTO serve_jobs(id, idem_key, request_json) VALUES(?1, NULLIF(?2, ''), ?3)");
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, id).Bind(2, idem_key).Bind(3, request.dump());
    int rc = st.Step();
    if (rc == SQLITE_DONE) return Status::Ok();
    if (rc == SQLITE_CONSTRAINT)
      return InvalidArgument(fmt::format("serve job {} or its idempotency key exists already", id));
    return StepError(rc, st);
  });
}

Result<std::optional<ServeJobRecord>> Store::ServeJob(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_, fmt::format("SELECT {} FROM serve_jobs WHERE id = ?1", kJobColumns).c_str());
  if (!st.ok()) return IoError(st.Error());
  st.Bind(1, id);
  if (st.Step() != SQLITE_ROW) return std::optional<ServeJobRecord>();
  return std::optional<ServeJobRecord>(JobOf(st));
}

Result<std::optional<ServeJobRecord>> Store::ServeJobByKey(const std::string& idem_key) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_, fmt::format("SELECT {} FROM serve_jobs WHERE idem_key = ?1", kJobColumns).c_str());
  if (!st.ok()) return IoError(st.Error());
  st.Bind(1, idem_key);
  if (st.Step() != SQLITE_ROW) return std::optional<ServeJobRecord>();
  return std::optional<ServeJobRecord>(JobOf(st));
}

Result<bool> Store::PutServeItem(const std::string& job, int64_t index, const json& result) {
  std::lock_guard<std::mutex> lock(mu_);
  bool inserted = false;
  Status s = WithRetry([&]() -> Status {
    Stmt st(db_, "INSERT OR IGNORE INTO serve_items(job_id, idx, result_json) VALUES(?1, ?2, ?3)");
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, job).Bind(2, index).Bind(3, result.dump());
    KILN_RETURN_IF_ERROR(StepDone(st));
    inserted = sqlite3_changes(db_) > 0;
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return inserted;
}

Result<std::map<int64_t, json>> Store::ServeItems(const std::string& job) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_, "SELECT idx, result_json FROM serve_items WHERE job_id = ?1 ORDER BY idx");
  if (!st.ok()) return IoError(st.Error());
  st.Bind(1, job);
  std::map<int64_t, json> out;
  while (st.Step() == SQLITE_ROW) out[st.Int(0)] = ParseJson(st.Text(1));
  return out;
}

Status Store::FinishServeJob(const std::string& id, const json& response) {
  std::lock_guard<std::mutex> lock(mu_);
  return WithRetry([&]() -> Status {
    Stmt st(db_, fmt::format("UPDATE serve_jobs SET state = 'done', response_json = ?1, finished_at = {} "
                             "WHERE id = ?2",
                             internal::kNow)
                     .c_str());
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, response.dump()).Bind(2, id);
    return StepDone(st);
  });
}

Result<std::vector<ServeJobRecord>> Store::UnfinishedServeJobs() {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_,
          fmt::format("SELECT {} FROM serve_jobs WHERE state != 'done' ORDER BY created_at, id", kJobColumns).c_str());
  if (!st.ok()) return IoError(st.Error());
  std::vector<ServeJobRecord> out;
  while (st.Step() == SQLITE_ROW) out.push_back(JobOf(st));
  return out;
}

}  // namespace kiln::store

// kiln/store: the records of `kiln optimize` runs (tables optimize_runs and optimize_steps, created by
// migration 3 in store.cc).
#include <sqlite3.h>

#include <fmt/format.h>

#include "common/json.h"
#include "common/json_dump.h"
#include "store/sqlite_stmt.h"
#include "store/store.h"

namespace kiln::store {

using internal::StepDone;
using internal::Stmt;

Result<int64_t> Store::BeginOptimizeRun(const nlohmann::json& info) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t id = 0;
  Status s = WithRetry([&]() -> Status {
    Stmt st(db_,
            "INSERT INTO optimize_runs(task, task_hash, kernel, device, device_uuid, strategy, info_json) "
            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, JsonString(info, "task")).Bind(2, JsonString(info, "task_hash")).Bind(3, JsonString(info, "kernel"));
    st.Bind(4, JsonString(info, "device"))
        .Bind(5, JsonString(info, "device_uuid"))
        .Bind(6, JsonString(info, "strategy"));
    st.Bind(7, DumpJson(info));
    KILN_RETURN_IF_ERROR(StepDone(st));
    id = sqlite3_last_insert_rowid(db_);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return id;
}

Status Store::AddOptimizeStep(int64_t run, const std::string& kind, const nlohmann::json& detail) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string verdict = JsonString(detail, "verdict");
  if (verdict.empty()) verdict = JsonString(detail, "outcome");
  const std::optional<double> score = JsonNumber(detail, "score_ms");
  return WithRetry([&]() -> Status {
    Stmt st(db_,
            "INSERT INTO optimize_steps(run_id, seq, kind, candidate_hash, verdict, score_ms, detail_json) "
            "VALUES(?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM optimize_steps WHERE run_id = ?1), ?2, ?3, ?4, "
            "?5, ?6)");
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, run).Bind(2, kind).Bind(3, JsonString(detail, "source_hash")).Bind(4, verdict).Bind(5, score);
    st.Bind(6, DumpJson(detail));
    return StepDone(st);
  });
}

Status Store::EndOptimizeRun(int64_t run, const std::string& status, const nlohmann::json& result) {
  std::lock_guard<std::mutex> lock(mu_);
  return WithRetry([&]() -> Status {
    Stmt st(db_, fmt::format("UPDATE optimize_runs SET status = ?1, result_json = ?2, finished_at = {} "
                             "WHERE id = ?3",
                             internal::kNow)
                     .c_str());
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, status).Bind(2, DumpJson(result)).Bind(3, run);
    return StepDone(st);
  });
}

Result<int64_t> Store::CountOptimizeRuns() {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_, "SELECT COUNT(*) FROM optimize_runs");
  if (st.Step() != SQLITE_ROW) return IoError(st.Error());
  return st.Int(0);
}

Result<int64_t> Store::CountOptimizeSteps(int64_t run) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_, "SELECT COUNT(*) FROM optimize_steps WHERE run_id = ?1");
  st.Bind(1, run);
  if (st.Step() != SQLITE_ROW) return IoError(st.Error());
  return st.Int(0);
}

}  // namespace kiln::store

// kiln/search: the optimize records, two tables in the store's SQLite file (own tables, created
// with IF NOT EXISTS so they coexist with the store's numbered migrations):
//
//   optimize_runs(id, started_at, finished_at, task, task_hash, kernel, device, device_uuid,
//                 strategy, status, info_json, result_json)
//   optimize_steps(run_id, seq, at, kind, candidate_hash, verdict, score_ms, detail_json)
//
// Kinds of steps: baseline, profile_before, candidate, rung, verify, profile_after, dry_run_check.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "search/interfaces.h"

struct sqlite3;

namespace kiln::search {

class SqliteRecorder : public Recorder {
 public:
  static Result<std::unique_ptr<SqliteRecorder>> Open(const std::string& path);
  ~SqliteRecorder() override;
  int64_t BeginRun(const nlohmann::json& info) override;
  void Step(int64_t run, const std::string& kind, const nlohmann::json& detail) override;
  void EndRun(int64_t run, const std::string& status, const nlohmann::json& result) override;
  // Tests and `kiln ci`: counts.
  int64_t CountRuns();
  int64_t CountSteps(int64_t run);

 private:
  SqliteRecorder() = default;
  sqlite3* db_ = nullptr;
  std::mutex mu_;
  int64_t seq_ = 0;
};

}  // namespace kiln::search

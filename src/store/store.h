// kiln/store: SQLite records and the result cache.
//
// Tables: devices (by UUID), tasks (by task hash), candidates (by source hash), evaluations (one row
// per evaluation: verdict, timings, compile facts, clocks, versions, the full response JSON),
// optimize_runs and optimize_steps (every step of a `kiln optimize` run: optimize_records.cc),
// serve_jobs and serve_items (the journal of `kiln serve`: serve_records.cc) and meta (schema version). Schema changes
// are numbered migrations applied in order at Open(); the store is the only owner of the schema.
//
// The cache key of an evaluation covers the task hash, the candidate hash, the device UUID, the
// torch/triton/driver versions and a hash of the protocol parameters (mode, policy, seed, trials,
// cases, tolerances, timing, limits, protocol version); CacheKey::Digest() is its single string.
//
// Roadmap: WAL journal and a busy timeout make concurrent writers (several kiln processes, or
// threads of one) safe; each Store owns one connection guarded by a mutex. The store depends only
// on common: results travel as JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

struct sqlite3;

namespace kiln::store {

inline constexpr int kSchemaVersion = 5;

// $XDG_CACHE_HOME/kiln/kiln.db, else ~/.cache/kiln/kiln.db (env KILN_DB overrides both).
std::string DefaultDbPath();

struct CacheKey {
  std::string task_hash;
  std::string candidate_hash;  // "" for the task's own code
  std::string device_uuid;
  std::string torch_version, triton_version, driver_version;
  std::string params_hash;     // protocol parameters
  std::string Digest() const;  // 16 hex digits over every field
};

struct EvaluationRecord {
  int64_t id = 0;
  CacheKey key;
  std::string task_name;
  std::string verdict;
  std::string mode, policy;
  std::optional<double> speedup;       // geometric mean over timed cases
  std::optional<double> candidate_ms;  // median of the first timed case
  std::optional<double> reference_ms;
  double elapsed_s = 0;
  nlohmann::json response = nlohmann::json::object();  // the full result JSON
  std::string created_at;                              // UTC, ISO 8601 (set by the store)
};

// One call of the LLM client (llm_calls): what it cost, whether the cache answered it.
struct LlmCallRecord {
  std::string endpoint, model, cache_key, purpose;
  std::string status;  // "ok", or the failure ("http 500", "timeout", ...)
  int attempts = 1;
  bool cached = false;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  double cost_usd = 0;
  double latency_s = 0;
};

struct LlmUsage {
  int64_t calls = 0, cached = 0, prompt_tokens = 0, completion_tokens = 0;
  double cost_usd = 0;
};

struct ServeJobRecord {
  std::string id, idem_key, state;  // state: accepted, done
  nlohmann::json request = nlohmann::json::object();
  nlohmann::json response;  // null until done
  std::string created_at;
};

class Store {
 public:
  // Opens (creating directories and the file when needed) and migrates to kSchemaVersion.
  static Result<std::unique_ptr<Store>> Open(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int schema_version();
  const std::string& path() const { return path_; }

  Status PutDevice(const std::string& uuid, const nlohmann::json& info);
  Status PutTask(const std::string& hash, const std::string& name, const std::string& format,
                 const nlohmann::json& spec);
  Status PutCandidate(const std::string& hash, const std::string& name, const std::string& source);
  // Inserts an evaluation; returns its id.
  Result<int64_t> PutEvaluation(const EvaluationRecord& rec);
  // The newest cached evaluation with this key, if any.
  Result<std::optional<EvaluationRecord>> Lookup(const CacheKey& key);
  // Evaluations of one candidate (newest first), for reports.
  Result<std::vector<EvaluationRecord>> EvaluationsOf(const std::string& candidate_hash, int limit = 100);
  Result<int64_t> CountEvaluations();
  Result<std::optional<std::string>> CandidateSource(const std::string& hash);

  // Optimize runs (optimize_records.cc). A run's row carries the info's task, task_hash, kernel,
  // device, device_uuid and strategy strings and the whole info JSON; steps are numbered 1, 2, ... per
  // run in the order they arrive. Step kinds: baseline, profile_before, candidate, rung, verify,
  // profile_after, dry_run_check; a step's candidate hash, verdict (else "outcome") and score_ms come
  // from its detail JSON.
  Result<int64_t> BeginOptimizeRun(const nlohmann::json& info);
  Status AddOptimizeStep(int64_t run, const std::string& kind, const nlohmann::json& detail);
  Status EndOptimizeRun(int64_t run, const std::string& status, const nlohmann::json& result);
  Result<int64_t> CountOptimizeRuns();
  Result<int64_t> CountOptimizeSteps(int64_t run);

  // The journal of `kiln serve` (serve_records.cc). A job is accepted with its whole request (and an
  // optional idempotency key, unique), its items' results arrive one by one (an item's first result
  // is kept: PutServeItem returns false for a second one), and it ends with its response.
  Status PutServeJob(const std::string& id, const std::string& idem_key, const nlohmann::json& request);
  Result<std::optional<ServeJobRecord>> ServeJob(const std::string& id);
  Result<std::optional<ServeJobRecord>> ServeJobByKey(const std::string& idem_key);
  Result<bool> PutServeItem(const std::string& job, int64_t index, const nlohmann::json& result);
  Result<std::map<int64_t, nlohmann::json>> ServeItems(const std::string& job);
  Status FinishServeJob(const std::string& id, const nlohmann::json& response);
  Result<std::vector<ServeJobRecord>> UnfinishedServeJobs();

  // The LLM client's response cache and accounting (llm_records.cc). A cached response is the whole
  // response JSON of a successful call under its key (llm::CacheKey: endpoint, model, messages, sampling).
  Result<std::optional<nlohmann::json>> LlmCached(const std::string& key);
  Status PutLlmCache(const std::string& key, const std::string& endpoint, const std::string& model,
                     const nlohmann::json& request, const nlohmann::json& response, int64_t prompt_tokens,
                     int64_t completion_tokens);
  Status AddLlmCall(const LlmCallRecord& call);
  // Totals over the calls whose purpose starts with `purpose_prefix` ("" : all).
  Result<LlmUsage> LlmUsageTotals(const std::string& purpose_prefix = "");

 private:
  Store() = default;
  Status Exec(const std::string& sql);
  Status Migrate();
  Status WithRetry(const std::function<Status()>& fn);

  sqlite3* db_ = nullptr;
  std::string path_;
  std::mutex mu_;
};

}  // namespace kiln::store

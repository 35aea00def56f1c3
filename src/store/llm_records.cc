// kiln/store: the LLM client's response cache and its calls (tables llm_cache and llm_calls, created by
// migration 5 in store.cc).
#include <sqlite3.h>

#include "store/sqlite_stmt.h"
#include "common/json.h"
#include "store/store.h"

namespace kiln::store {

using internal::StepDone;
using internal::Stmt;
using nlohmann::json;

Result<std::optional<json>> Store::LlmCached(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_, "SELECT response_json FROM llm_cache WHERE key = ?1");
  if (!st.ok()) return IoError(st.Error());
  st.Bind(1, key);
  if (st.Step() != SQLITE_ROW) return std::optional<json>();
  json j = ParseJson(st.Text(0));
  if (j.is_discarded()) return std::optional<json>();  // a damaged row is a miss; the next call replaces it
  return std::optional<json>(std::move(j));
}

Status Store::PutLlmCache(const std::string& key, const std::string& endpoint, const std::string& model,
                          const json& request, const json& response, int64_t prompt_tokens,
                          int64_t completion_tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  return WithRetry([&]() -> Status {
    Stmt st(db_,
            "INSERT OR REPLACE INTO llm_cache(key, endpoint, model, request_json, response_json, prompt_tokens, "
            "completion_tokens) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, key).Bind(2, endpoint).Bind(3, model).Bind(4, request.dump(-1, ' ', false, json::error_handler_t::replace));
    st.Bind(5, response.dump(-1, ' ', false, json::error_handler_t::replace)).Bind(6, prompt_tokens).Bind(7, completion_tokens);
    return StepDone(st);
  });
}

Status Store::AddLlmCall(const LlmCallRecord& c) {
  std::lock_guard<std::mutex> lock(mu_);
  return WithRetry([&]() -> Status {
    Stmt st(db_,
            "INSERT INTO llm_calls(endpoint, model, cache_key, purpose, status, attempts, cached, prompt_tokens, "
            "completion_tokens, cost_usd, latency_s) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    if (!st.ok()) return IoError(st.Error());
    st.Bind(1, c.endpoint).Bind(2, c.model).Bind(3, c.cache_key).Bind(4, c.purpose).Bind(5, c.status);
    st.Bind(6, static_cast<int64_t>(c.attempts)).Bind(7, static_cast<int64_t>(c.cached ? 1 : 0));
    st.Bind(8, c.prompt_tokens).Bind(9, c.completion_tokens).BindD(10, c.cost_usd).BindD(11, c.latency_s);
    return StepDone(st);
  });
}

Result<LlmUsage> Store::LlmUsageTotals(const std::string& purpose_prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt st(db_,
          "SELECT COUNT(*), COALESCE(SUM(cached), 0), COALESCE(SUM(prompt_tokens), 0), "
          "COALESCE(SUM(completion_tokens), 0), COALESCE(SUM(cost_usd), 0) FROM llm_calls "
          "WHERE status = 'ok' AND substr(COALESCE(purpose, ''), 1, length(?1)) = ?1");
  if (!st.ok()) return IoError(st.Error());
  st.Bind(1, purpose_prefix);
  LlmUsage u;
  if (st.Step() == SQLITE_ROW) {
    u.calls = st.Int(0);
    u.cached = st.Int(1);
    u.prompt_tokens = st.Int(2);
    u.completion_tokens = st.Int(3);
    u.cost_usd = st.Double(4).value_or(0);
  }
  return u;
}

}  // namespace kiln::store

// kiln/llm: a client of OpenAI-compatible chat APIs (`POST <base>/chat/completions`), over HTTP and
// HTTPS (docs/generate.md, "Model endpoints").
//
//   Config     endpoint, model and key from flags or KILN_LLM_URL, KILN_LLM_MODEL, KILN_LLM_API_KEY; the
//              timeouts, retries, concurrency limit and prices. The key is sent as a bearer token and
//              never appears in a message, a record or a log.
//   Transport  one HTTP POST (HttpTransport: cpp-httplib; tests use fakes).
//   Client     one chat completion: the response cache (the records database, keyed by endpoint, model,
//              messages and sampling, so a rerun costs nothing), retries with exponential backoff on
//              429, 5xx, timeouts and dropped connections (honouring Retry-After), at most
//              `concurrency` calls in flight across threads, and token and cost accounting (llm_calls).
//
// A call that fails after its retries, or whose answer is not a chat completion, is an error Status
// (the machinery failed); what the model wrote is the caller's business.
#pragma once

#include <atomic>
#include <condition_variable>
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
#include "store/store.h"

namespace kiln::llm {

struct Message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};
nlohmann::json ToJson(const std::vector<Message>& messages);

struct Sampling {
  double temperature = 0.7;
  double top_p = 1.0;
  int max_tokens = 4096;
  std::optional<int64_t> seed;  // sent when set; part of the cache key (independent samples differ in it)
  nlohmann::json ToJson() const;
};

struct Config {
  std::string url;      // base URL ("http://localhost:8000/v1") or the full .../chat/completions URL
  std::string model;
  std::string api_key;  // empty: no Authorization header
  double connect_timeout_s = 10;
  double timeout_s = 300;  // reading the response (a long completion on a slow server takes minutes)
  int retries = 4;         // after the first attempt
  double backoff_s = 1.0;  // first retry's wait; doubles each time (Retry-After wins when given)
  double max_backoff_s = 60;
  int concurrency = 4;            // calls in flight at once, across threads
  double price_in_per_mtok = 0;   // USD per million prompt tokens
  double price_out_per_mtok = 0;  // USD per million completion tokens
  double max_cost_usd = 0;        // > 0: no new (uncached) call once this much was spent by this client
  bool use_cache = true;

  // Fills url, model and api_key from KILN_LLM_URL, KILN_LLM_MODEL, KILN_LLM_API_KEY where empty, and
  // the prices from KILN_LLM_PRICE_IN / KILN_LLM_PRICE_OUT where zero.
  void FromEnvironment();
  // An error naming what is missing or malformed (no URL, no model, a scheme other than http/https).
  Status Validate() const;
};

struct Endpoint {
  std::string scheme, host, path;  // path: the full request path, e.g. /v1/chat/completions
  int port = 0;
  std::string Origin() const;  // scheme://host:port
};
Result<Endpoint> ParseEndpoint(const std::string& url);

struct HttpReply {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lowercase names
};

// One POST. An error Status for a transport failure: kTimeout for a timeout, kUnavailable for a
// connection that failed or dropped.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual Result<HttpReply> Post(const Endpoint& ep, const std::string& body,
                                 const std::map<std::string, std::string>& headers, double connect_timeout_s,
                                 double timeout_s) = 0;
};

class HttpTransport : public Transport {
 public:
  Result<HttpReply> Post(const Endpoint& ep, const std::string& body, const std::map<std::string, std::string>& headers,
                         double connect_timeout_s, double timeout_s) override;
};

struct ChatResult {
  std::string content;        // the first choice's message content (reasoning_content when empty)
  std::string finish_reason;  // "stop", "length", ...
  int64_t prompt_tokens = 0, completion_tokens = 0;
  double cost_usd = 0;  // 0 when cached
  bool cached = false;
  int attempts = 0;  // HTTP attempts (0 when cached)
  double latency_s = 0;
  std::string cache_key;
};

// Totals of one client's calls (this process).
struct Usage {
  int64_t calls = 0, cached = 0, failed = 0, prompt_tokens = 0, completion_tokens = 0;
  double cost_usd = 0;
  nlohmann::json ToJson() const;
};

// 16 hex digits over the endpoint, the model, the messages and the sampling parameters.
std::string CacheKey(const std::string& endpoint, const std::string& model, const std::vector<Message>& messages,
                     const Sampling& sampling);

// Seconds to wait before retry `attempt` (1-based): Retry-After (seconds or an HTTP date) when the reply
// gives one, else backoff_s * 2^(attempt-1); at most max_backoff_s.
double RetryDelay(const Config& c, int attempt, const std::map<std::string, std::string>& headers);

class Client {
 public:
  // `store` may be null (no cache, no records); `transport` null: HttpTransport. `sleep` (tests) replaces
  // the wait between retries.
  Client(Config config, store::Store* store, std::unique_ptr<Transport> transport = nullptr,
         std::function<void(double)> sleep = nullptr);

  // `purpose` labels the call in the records ("generate:<task>", "optimize:<kernel>").
  Result<ChatResult> Chat(const std::vector<Message>& messages, const Sampling& sampling,
                          const std::string& purpose = "");

  Usage usage() const;
  const Config& config() const { return config_; }

 private:
  Result<ChatResult> CallWithRetries(const std::string& body, const std::string& key);
  void Account(const ChatResult* r, const std::string& key, const std::string& purpose, const std::string& status);
  void Acquire();
  void Release();

  Config config_;
  Endpoint endpoint_;
  store::Store* store_;
  std::unique_ptr<Transport> transport_;
  std::function<void(double)> sleep_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0;
  Usage usage_;
};

// Parses a chat completion response body into `out` (content, finish_reason, tokens).
Status ParseCompletion(const nlohmann::json& response, ChatResult* out);
// A server-sent event stream of chunks (`data: {...}` lines up to `data: [DONE]`), as some servers send
// even with "stream": false: the deltas' content joined, the last finish_reason, the usage if given.
Status ParseEventStream(const std::string& body, ChatResult* out);

}  // namespace kiln::llm

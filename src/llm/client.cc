#include "llm/client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <fmt/format.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/strings.h"

namespace kiln::llm {

using nlohmann::json;

json ToJson(const std::vector<Message>& messages) {
  json a = json::array();
  for (const auto& m : messages) a.push_back({{"role", m.role}, {"content", m.content}});
  return a;
}

json Sampling::ToJson() const {
  json j = {{"temperature", temperature}, {"top_p", top_p}, {"max_tokens", max_tokens}};
  if (seed) j["seed"] = *seed;
  return j;
}

json Usage::ToJson() const {
  return {{"calls", calls},
          {"cached", cached},
          {"failed", failed},
          {"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"cost_usd", cost_usd}};
}

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

double EnvDouble(const char* name) {
  std::string v = Env(name);
  if (v.empty()) return 0;
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  return end && *end == '\0' && d >= 0 ? d : 0;
}

// The dumps in bodies and keys never throw on invalid UTF-8 in a model's text.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

bool Retryable(int status) { return status == 429 || status == 408 || status >= 500; }

}  // namespace

void Config::FromEnvironment() {
  if (url.empty()) url = Env("KILN_LLM_URL");
  if (model.empty()) model = Env("KILN_LLM_MODEL");
  if (api_key.empty()) api_key = Env("KILN_LLM_API_KEY");
  if (price_in_per_mtok == 0) price_in_per_mtok = EnvDouble("KILN_LLM_PRICE_IN");
  if (price_out_per_mtok == 0) price_out_per_mtok = EnvDouble("KILN_LLM_PRICE_OUT");
}

Status Config::Validate() const {
  if (url.empty()) return InvalidArgument("no model endpoint: give --llm-url or set KILN_LLM_URL");
  if (model.empty()) return InvalidArgument("no model name: give --llm-model or set KILN_LLM_MODEL");
  if (timeout_s <= 0 || connect_timeout_s <= 0) return InvalidArgument("--llm-timeout must be positive");
  if (retries < 0) return InvalidArgument("--llm-retries must be 0 or more");
  if (concurrency < 1) return InvalidArgument("--llm-concurrency must be 1 or more");
  return ParseEndpoint(url).status();
}

std::string Endpoint::Origin() const { return fmt::format("{}://{}:{}", scheme, host, port); }

Result<Endpoint> ParseEndpoint(const std::string& url) {
  Endpoint e;
  size_t sep = url.find("://");
  if (sep == std::string::npos) return InvalidArgument(fmt::format("{}: expected http://HOST[:PORT]/PATH", url));
  e.scheme = url.substr(0, sep);
  if (e.scheme != "http" && e.scheme != "https")
    return InvalidArgument(fmt::format("{}: the scheme must be http or https", url));
  std::string rest = url.substr(sep + 3);
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  if (authority.find('@') != std::string::npos)
    return InvalidArgument(fmt::format("{}: credentials in the URL are not supported; use KILN_LLM_API_KEY", url));
  e.port = e.scheme == "https" ? 443 : 80;
  size_t colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']', colon) == std::string::npos) {
    std::string p = authority.substr(colon + 1);
    if (p.empty() || p.size() > 5 || !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return InvalidArgument(fmt::format("{}: bad port '{}'", url, p));
    e.port = std::stoi(p);
    authority = authority.substr(0, colon);
  }
  if (authority.size() > 2 && authority.front() == '[' && authority.back() == ']')
    authority = authority.substr(1, authority.size() - 2);
  if (authority.empty()) return InvalidArgument(fmt::format("{}: no host", url));
  e.host = authority;
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (!EndsWith(path, "/chat/completions")) path += "/chat/completions";
  e.path = path;
  return e;
}

std::string CacheKey(const std::string& endpoint, const std::string& model, const std::vector<Message>& messages,
                     const Sampling& sampling) {
  json k = {{"endpoint", endpoint}, {"model", model}, {"messages", ToJson(messages)}, {"sampling", sampling.ToJson()}};
  return HashHex(Dump(k));
}

double RetryDelay(const Config& c, int attempt, const std::map<std::string, std::string>& headers) {
  auto it = headers.find("retry-after");
  if (it != headers.end()) {
    std::string v(Trim(it->second));
    char* end = nullptr;
    double s = std::strtod(v.c_str(), &end);
    if (!v.empty() && end && *end == '\0' && s >= 0) return std::min(s, c.max_backoff_s);
    std::tm tm{};  // an HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT"
    if (strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S", &tm)) {
      double d = std::difftime(timegm(&tm), std::time(nullptr));
      return std::clamp(d, 0.0, c.max_backoff_s);
    }
  }
  return std::min(c.backoff_s * std::pow(2.0, attempt - 1), c.max_backoff_s);
}

Status ParseCompletion(const json& r, ChatResult* out) {
  if (!r.is_object()) return InvalidArgument("the answer is not a JSON object");
  if (r.contains("error")) {
    const json& e = r["error"];
    std::string m = e.is_object() && e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>()
                                                                                       : Dump(e);
    return InvalidArgument("the server answered an error: " + m);
  }
  if (!r.contains("choices") || !r["choices"].is_array() || r["choices"].empty())
    return InvalidArgument("the answer has no choices (not a chat completion)");
  const json& c = r["choices"][0];
  if (!c.is_object() || !c.contains("message") || !c["message"].is_object())
    return InvalidArgument("the answer's first choice has no message");
  const json& m = c["message"];
  out->content = m.contains("content") && m["content"].is_string() ? m["content"].get<std::string>() : "";
  if (out->content.empty() && m.contains("reasoning_content") && m["reasoning_content"].is_string())
    out->content = m["reasoning_content"].get<std::string>();
  out->finish_reason = c.contains("finish_reason") && c["finish_reason"].is_string() ? c["finish_reason"].get<std::string>() : "";
  if (r.contains("usage") && r["usage"].is_object()) {
    const json& u = r["usage"];
    if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_integer()) out->prompt_tokens = u["prompt_tokens"];
    if (u.contains("completion_tokens") && u["completion_tokens"].is_number_integer())
      out->completion_tokens = u["completion_tokens"];
  }
  return Status::Ok();
}

Status ParseEventStream(const std::string& body, ChatResult* out) {
  bool any = false;
  for (std::string_view line : SplitLines(body)) {
    line = Trim(line);
    if (!StartsWith(line, "data:")) continue;
    std::string_view data = Trim(line.substr(5));
    if (data == "[DONE]") break;
    json j = ParseJson(data);
    if (j.is_discarded() || !j.is_object()) return InvalidArgument("an event of the stream is not JSON");
    if (j.contains("error")) return ParseCompletion(j, out);
    any = true;
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
      const json& c = j["choices"][0];
      for (const char* k : {"delta", "message"})
        if (c.contains(k) && c[k].is_object() && c[k].contains("content") && c[k]["content"].is_string())
          out->content += c[k]["content"].get<std::string>();
      if (c.contains("finish_reason") && c["finish_reason"].is_string()) out->finish_reason = c["finish_reason"];
    }
    if (j.contains("usage") && j["usage"].is_object()) {
      const json& u = j["usage"];
      if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_integer()) out->prompt_tokens = u["prompt_tokens"];
      if (u.contains("completion_tokens") && u["completion_tokens"].is_number_integer())
        out->completion_tokens = u["completion_tokens"];
    }
  }
  return any ? Status::Ok() : InvalidArgument("the answer is neither JSON nor an event stream");
}

// A chat completion as JSON, or as an event stream from a server that streams even when asked not to
// (-> the completion's JSON, for the cache).
Result<json> CompletionJson(const std::string& body, ChatResult* r) {
  json j = ParseJson(body);
  if (!j.is_discarded()) {
    KILN_RETURN_IF_ERROR(ParseCompletion(j, r));
    return j;
  }
  if (!Contains(body, "data:")) return InvalidArgument("the answer is not JSON: " + body.substr(0, 200));
  KILN_RETURN_IF_ERROR(ParseEventStream(body, r));
  return json{{"choices", {{{"message", {{"role", "assistant"}, {"content", r->content}}}, {"finish_reason", r->finish_reason}}}},
              {"usage", {{"prompt_tokens", r->prompt_tokens}, {"completion_tokens", r->completion_tokens}}}};
}

Client::Client(Config config, store::Store* store, std::unique_ptr<Transport> transport,
               std::function<void(double)> sleep)
    : config_(std::move(config)), store_(store), transport_(std::move(transport)), sleep_(std::move(sleep)) {
  if (!transport_) transport_ = std::make_unique<HttpTransport>();
  if (!sleep_) sleep_ = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  if (auto e = ParseEndpoint(config_.url); e.ok()) endpoint_ = *e;
}

Usage Client::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return usage_;
}

void Client::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return in_flight_ < std::max(1, config_.concurrency); });
  ++in_flight_;
}

void Client::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  cv_.notify_one();
}

void Client::Account(const ChatResult* r, const std::string& key, const std::string& purpose,
                     const std::string& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!r) {
      ++usage_.failed;
    } else {
      ++usage_.calls;
      usage_.cached += r->cached ? 1 : 0;
      if (!r->cached) {  // a cached answer spends no tokens
        usage_.prompt_tokens += r->prompt_tokens;
        usage_.completion_tokens += r->completion_tokens;
        usage_.cost_usd += r->cost_usd;
      }
    }
  }
  if (!store_) return;
  store::LlmCallRecord c;
  c.endpoint = endpoint_.Origin() + endpoint_.path;
  c.model = config_.model;
  c.cache_key = key;
  c.purpose = purpose;
  c.status = status;
  if (r) {
    c.attempts = r->attempts;
    c.cached = r->cached;
    c.prompt_tokens = r->cached ? 0 : r->prompt_tokens;
    c.completion_tokens = r->cached ? 0 : r->completion_tokens;
    c.cost_usd = r->cost_usd;
    c.latency_s = r->latency_s;
  }
  (void)store_->AddLlmCall(c);  // accounting never fails a call that succeeded
}

Result<ChatResult> Client::CallWithRetries(const std::string& body, const std::string& key) {
  std::map<std::string, std::string> headers = {{"Content-Type", "application/json"}};
  if (!config_.api_key.empty()) headers["Authorization"] = "Bearer " + config_.api_key;
  std::string last;
  for (int attempt = 1;; ++attempt) {
    const auto t0 = std::chrono::steady_clock::now();
    auto reply = transport_->Post(endpoint_, body, headers, config_.connect_timeout_s, config_.timeout_s);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::map<std::string, std::string> reply_headers;
    bool retry = false;
    if (!reply.ok()) {
      last = reply.status().message();
      retry = reply.status().code() == Code::kTimeout || reply.status().code() == Code::kUnavailable;
    } else if (reply->status != 200) {
      reply_headers = reply->headers;
      last = fmt::format("HTTP {}: {}", reply->status, std::string(Trim(reply->body.substr(0, 300))));
      retry = Retryable(reply->status);
    } else {
      ChatResult r;
      KILN_ASSIGN_OR_RETURN(json j, CompletionJson(reply->body, &r));
      r.attempts = attempt;
      r.latency_s = took;
      r.cache_key = key;
      r.cost_usd = (r.prompt_tokens * config_.price_in_per_mtok + r.completion_tokens * config_.price_out_per_mtok) / 1e6;
      if (store_ && config_.use_cache)
        (void)store_->PutLlmCache(key, endpoint_.Origin() + endpoint_.path, config_.model, json::parse(body), j,
                                  r.prompt_tokens, r.completion_tokens);
      return r;
    }
    if (!retry || attempt > config_.retries)
      return Unavailable(fmt::format("{}: {} (after {} attempt{})", endpoint_.Origin() + endpoint_.path, last, attempt,
                                     attempt == 1 ? "" : "s"));
    sleep_(RetryDelay(config_, attempt, reply_headers));
  }
}

Result<ChatResult> Client::Chat(const std::vector<Message>& messages, const Sampling& sampling,
                                const std::string& purpose) {
  if (endpoint_.host.empty()) return InvalidArgument(fmt::format("{}: not a usable endpoint URL", config_.url));
  const std::string key = CacheKey(endpoint_.Origin() + endpoint_.path, config_.model, messages, sampling);
  if (store_ && config_.use_cache) {
    auto hit = store_->LlmCached(key);
    ChatResult r;
    if (hit.ok() && hit->has_value() && ParseCompletion(**hit, &r).ok()) {
      r.cached = true;
      r.cache_key = key;
      Account(&r, key, purpose, "ok");
      return r;
    }
  }
  if (config_.max_cost_usd > 0 && usage().cost_usd >= config_.max_cost_usd)
    return Unavailable(fmt::format("the cost limit of ${:.4f} is spent (${:.4f}); no new model calls",
                                         config_.max_cost_usd, usage().cost_usd));
  json body = {{"model", config_.model}, {"messages", ToJson(messages)}, {"stream", false}};
  body.update(sampling.ToJson());
  Acquire();
  auto r = CallWithRetries(Dump(body), key);
  Release();
  if (!r.ok()) {
    Account(nullptr, key, purpose, r.status().message().substr(0, 200));
    return r.status();
  }
  Account(&*r, key, purpose, "ok");
  return r;
}

}  // namespace kiln::llm

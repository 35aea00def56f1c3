#include "llm/client.h"

#include <gtest/gtest.h>

#include <deque>

namespace kiln::llm {
namespace {

using nlohmann::json;

std::string Completion(const std::string& content, int in = 100, int out = 50) {
  return json({{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", "stop"}}}},
               {"usage", {{"prompt_tokens", in}, {"completion_tokens", out}}}})
      .dump();
}

// Answers from a queue; keeps every request.
class FakeTransport : public Transport {
 public:
  struct Step {
    Status error;  // not ok: a transport failure
    HttpReply reply;
  };
  std::deque<Step> steps;
  std::vector<std::string> bodies;
  std::vector<std::map<std::string, std::string>> headers;
  Result<HttpReply> Post(const Endpoint& ep, const std::string& body, const std::map<std::string, std::string>& h,
                         double, double) override {
    bodies.push_back(body);
    headers.push_back(h);
    EXPECT_FALSE(steps.empty()) << "unexpected call";
    if (steps.empty()) return Unavailable("no more steps");
    Step s = steps.front();
    steps.pop_front();
    if (!s.error.ok()) return s.error;
    return s.reply;
  }
};

FakeTransport::Step Reply(int status, std::string body, std::map<std::string, std::string> h = {}) {
  return {Status::Ok(), HttpReply{status, std::move(body), std::move(h)}};
}

Config TestConfig() {
  Config c;
  c.url = "http://127.0.0.1:9/v1";
  c.model = "m";
  c.api_key = "sk-secret-key";
  c.retries = 3;
  c.backoff_s = 0.5;
  c.price_in_per_mtok = 2;
  c.price_out_per_mtok = 10;
  return c;
}

struct Fixture {
  FakeTransport* t = nullptr;
  std::vector<double> sleeps;
  std::unique_ptr<Client> client;
  explicit Fixture(Config c = TestConfig(), store::Store* st = nullptr) {
    auto tp = std::make_unique<FakeTransport>();
    t = tp.get();
    client = std::make_unique<Client>(c, st, std::move(tp), [this](double s) { sleeps.push_back(s); });
  }
};

const std::vector<Message> kMsgs = {{"system", "be brief"}, {"user", "write a kernel"}};

TEST(LlmEndpoint, ParsesBaseAndFullUrls) {
  auto e = ParseEndpoint("http://localhost:8000/v1");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "localhost");
  EXPECT_EQ(e->port, 8000);
  EXPECT_EQ(e->path, "/v1/chat/completions");
  e = ParseEndpoint("https://api.example.com/v1/chat/completions/");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->port, 443);
  EXPECT_EQ(e->path, "/v1/chat/completions");
  EXPECT_EQ(e->Origin(), "https://api.example.com:443");
  EXPECT_FALSE(ParseEndpoint("ftp://x/v1").ok());
  EXPECT_FALSE(ParseEndpoint("localhost:8000").ok());
  EXPECT_FALSE(ParseEndpoint("http://h:80x/v1").ok());
  EXPECT_FALSE(ParseEndpoint("http://user:pw@h/v1").ok());
}

TEST(LlmClient, SendsTheRequestAndCountsTokensAndCost) {
  Fixture f;
  f.t->steps.push_back(Reply(200, Completion("hello", 1000, 500)));
  Sampling s;
  s.seed = 7;
  auto r = f.client->Chat(kMsgs, s, "test");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->content, "hello");
  EXPECT_EQ(r->prompt_tokens, 1000);
  EXPECT_DOUBLE_EQ(r->cost_usd, (1000 * 2 + 500 * 10) / 1e6);
  json body = json::parse(f.t->bodies.at(0));
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["messages"][1]["content"], "write a kernel");
  EXPECT_EQ(body["seed"], 7);
  EXPECT_EQ(f.t->headers.at(0).at("Authorization"), "Bearer sk-secret-key");
  EXPECT_EQ(f.client->usage().completion_tokens, 500);
}

TEST(LlmClient, RetriesOn429HonouringRetryAfterAnd5xxWithBackoff) {
  Fixture f;
  f.t->steps.push_back(Reply(429, "slow down", {{"retry-after", "3"}}));
  f.t->steps.push_back(Reply(503, "busy"));
  f.t->steps.push_back({Timeout("no answer within 300 s"), {}});
  f.t->steps.push_back(Reply(200, Completion("ok")));
  auto r = f.client->Chat(kMsgs, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->attempts, 4);
  EXPECT_EQ(f.sleeps, (std::vector<double>{3.0, 1.0, 2.0}));  // Retry-After, then 0.5 * 2^(n-1)
}

TEST(LlmClient, GivesUpAfterTheRetriesAndNeverOn4xx) {
  Fixture f;
  for (int i = 0; i < 4; ++i) f.t->steps.push_back(Reply(500, "boom"));
  auto r = f.client->Chat(kMsgs, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("HTTP 500: boom (after 4 attempts)"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(f.client->usage().failed, 1);
  Fixture g;
  g.t->steps.push_back(Reply(401, "{\"error\": {\"message\": \"bad key\"}}"));
  r = g.client->Chat(kMsgs, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(g.t->bodies.size(), 1u);
  // The key is never part of a message.
  EXPECT_EQ(r.status().message().find("sk-secret-key"), std::string::npos);
}

TEST(LlmClient, RejectsAnswersThatAreNotCompletions) {
  Fixture f;
  f.t->steps.push_back(Reply(200, "<html>proxy</html>"));
  EXPECT_FALSE(f.client->Chat(kMsgs, {}).ok());
  f.t->steps.push_back(Reply(200, "{\"choices\": []}"));
  EXPECT_FALSE(f.client->Chat(kMsgs, {}).ok());
}

// Some servers (tinyq4, a llama.cpp-style server) stream even when asked not to.
TEST(LlmClient, ReadsAnEventStreamAnswer) {
  auto st = store::Store::Open(":memory:");
  ASSERT_TRUE(st.ok());
  Fixture f(TestConfig(), st->get());
  f.t->steps.push_back(Reply(200,
                             "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"
                             "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n"
                             "data: [DONE]\n\n"));
  auto r = f.client->Chat(kMsgs, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->content, "Hello");
  EXPECT_EQ(r->finish_reason, "stop");
  auto again = f.client->Chat(kMsgs, {});  // cached as a completion
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cached);
  EXPECT_EQ(again->content, "Hello");
  ChatResult bad;
  EXPECT_FALSE(ParseEventStream("data: {not json}\n", &bad).ok());
  EXPECT_FALSE(ParseEventStream("hello\n", &bad).ok());
}

TEST(LlmClient, RetryDelayReadsAnHttpDateAndCapsTheBackoff) {
  Config c = TestConfig();
  c.max_backoff_s = 5;
  EXPECT_DOUBLE_EQ(RetryDelay(c, 10, {}), 5.0);
  EXPECT_DOUBLE_EQ(RetryDelay(c, 1, {{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}}), 0.0);  // in the past
  EXPECT_DOUBLE_EQ(RetryDelay(c, 2, {{"retry-after", "junk"}}), 1.0);
}

TEST(LlmClient, CachesByEndpointModelMessagesAndSampling) {
  auto st = store::Store::Open(":memory:");
  ASSERT_TRUE(st.ok());
  Fixture f(TestConfig(), st->get());
  f.t->steps.push_back(Reply(200, Completion("first")));
  f.t->steps.push_back(Reply(200, Completion("second")));
  Sampling s;
  ASSERT_EQ(f.client->Chat(kMsgs, s)->content, "first");
  auto again = f.client->Chat(kMsgs, s);  // from the cache: no call
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cached);
  EXPECT_EQ(again->content, "first");
  EXPECT_EQ(again->cost_usd, 0);
  EXPECT_EQ(f.client->usage().prompt_tokens, 100);  // a cached answer spends no tokens
  s.seed = 2;  // another sample: another key
  EXPECT_EQ(f.client->Chat(kMsgs, s)->content, "second");
  EXPECT_EQ(f.t->bodies.size(), 2u);
  auto u = (*st)->LlmUsageTotals();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->calls, 3);
  EXPECT_EQ(u->cached, 1);
  EXPECT_EQ(u->prompt_tokens, 200);
  EXPECT_NE(CacheKey("a", "m", kMsgs, {}), CacheKey("b", "m", kMsgs, {}));
  EXPECT_NE(CacheKey("a", "m", kMsgs, {}), CacheKey("a", "m2", kMsgs, {}));
}

TEST(LlmClient, StopsCallingOnceTheCostLimitIsSpent) {
  Config c = TestConfig();
  c.max_cost_usd = 0.001;
  Fixture f(c);
  f.t->steps.push_back(Reply(200, Completion("a", 1000, 1000)));  // $0.012
  ASSERT_TRUE(f.client->Chat(kMsgs, {}).ok());
  auto r = f.client->Chat({{"user", "again"}}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cost limit"), std::string::npos);
}

TEST(LlmConfig, ValidatesAndReadsTheEnvironment) {
  Config c;
  EXPECT_FALSE(c.Validate().ok());
  setenv("KILN_LLM_URL", "http://127.0.0.1:1/v1", 1);
  setenv("KILN_LLM_MODEL", "qwen", 1);
  setenv("KILN_LLM_PRICE_IN", "0.5", 1);
  c.FromEnvironment();
  EXPECT_TRUE(c.Validate().ok()) << c.Validate().message();
  EXPECT_EQ(c.model, "qwen");
  EXPECT_DOUBLE_EQ(c.price_in_per_mtok, 0.5);
  Config explicit_flags;
  explicit_flags.model = "flag";
  explicit_flags.FromEnvironment();
  EXPECT_EQ(explicit_flags.model, "flag");  // flags win
  unsetenv("KILN_LLM_URL");
  unsetenv("KILN_LLM_MODEL");
  unsetenv("KILN_LLM_PRICE_IN");
}

}  // namespace
}  // namespace kiln::llm

#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <fstream>

#include "common/file.h"
#include "gen/chain.h"
#include "gen/feedback.h"
#include "gen/prompt.h"

namespace kiln::gen {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kGolden = std::string(KILN_SOURCE_DIR) + "/tests/gen/golden";

// tests/gen/golden/<case>.json (an attempt: source, the verdict as `kiln eval --json` prints it, timing
// target, findings) -> <case>.txt, the feedback text. KILN_UPDATE_GOLDEN=1 rewrites the .txt files.
TEST(GenFeedback, MatchesTheGoldenTexts) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kGolden)) {
    if (e.path().extension() != ".json") continue;
    ++n;
    json j = json::parse(*ReadFile(e.path().string()));
    Attempt a;
    a.has_code = j.value("has_code", true);
    a.source = j.value("source", "");
    a.gate_reason = j.value("gate_reason", "");
    a.timed = j.value("timed", false);
    a.target_speedup = j.value("target", 1.0);
    if (j.contains("response")) {
      auto r = exec::EvalResult::FromResponse(j["response"]);
      ASSERT_TRUE(r.ok()) << e.path() << ": " << r.status().message();
      a.result = *r;
    }
    for (const auto& f : j.value("findings", json::array())) a.findings.push_back({f["rule"], f["severity"], f["message"]});
    ASSERT_FALSE(a.Done()) << e.path();
    std::string text = Feedback(a) + "\n";
    fs::path want = e.path();
    want.replace_extension(".txt");
    if (std::getenv("KILN_UPDATE_GOLDEN")) ASSERT_TRUE(WriteFile(want.string(), text).ok());
    auto golden = ReadFile(want.string());
    ASSERT_TRUE(golden.ok()) << want << " missing (KILN_UPDATE_GOLDEN=1 writes it)";
    EXPECT_EQ(text, *golden) << e.path();
  }
  EXPECT_GE(n, 7);
}

TEST(GenFeedback, DoneNeedsAVerdictOkAndTheTargetWhenTimed) {
  Attempt a;
  a.has_code = true;
  a.result = exec::EvalResult::Make(exec::Verdict::kOk, "", "");
  EXPECT_TRUE(a.Done());
  a.timed = true;  // no speedup measured
  EXPECT_FALSE(a.Done());
  exec::CaseResult c;
  c.speedup = 1.2;
  a.result->cases.push_back(c);
  EXPECT_TRUE(a.Done());
  a.target_speedup = 1.5;
  EXPECT_FALSE(a.Done());
  EXPECT_EQ(a.Outcome(), "ok");
}

TEST(GenPrompt, ParsesSectionsAndRejectsUnknownPlaceholders) {
  auto t = ParseTemplate("=== system ===\nsys {{task_name}}\n=== user ===\nline\n  write {{reference}}\n", "t.txt");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->system, "sys {{task_name}}");
  auto m = Render(*t, {{"task_name", "relu"}, {"reference", "code"}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].content, "sys relu");
  EXPECT_EQ(m[1].content, "line\n  write code");
  auto bad = ParseTemplate("=== user ===\nfine\n  see {{referense}}\n", "t.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().substr(0, 53), "t.txt:3:7: error: unknown placeholder '{{referense}}'");
  auto plain = ParseTemplate("\nno markers {{entry}}\n", "p.txt");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->system, "");
  EXPECT_EQ(Render(*plain, {{"entry", "f"}}).size(), 1u);
  EXPECT_FALSE(ParseTemplate("=== system ===\nonly\n", "s.txt").ok());
}

TEST(GenPrompt, DefaultsRenderAKernelBenchTask) {
  task::TaskSpec t;
  t.format = task::Format::kKernelBench;
  t.name = "relu";
  t.path = std::string(KILN_SOURCE_DIR) + "/tests/candidates/tasks/relu.py";
  auto f = TaskFields(t);
  ASSERT_TRUE(f.ok()) << f.status().message();
  auto m = Render(DefaultGenerateTemplate(), *f);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NE(m[1].content.find("return torch.relu(x)"), std::string::npos);
  EXPECT_NE(m[1].content.find("class ModelNew(nn.Module)"), std::string::npos);
  EXPECT_NE(m[1].content.find("libdevice"), std::string::npos);
  EXPECT_EQ(m[1].content.find("{{"), std::string::npos);
  EXPECT_EQ(Render(DefaultOptimizeTemplate(), *f)[1].content.find("{{"), std::string::npos);
}

// The model's answers from a queue, through the real client.
class ScriptTransport : public llm::Transport {
 public:
  std::deque<std::string> answers;
  std::vector<json> requests;
  Result<llm::HttpReply> Post(const llm::Endpoint&, const std::string& body, const std::map<std::string, std::string>&,
                              double, double) override {
    requests.push_back(json::parse(body));
    if (answers.empty()) return Unavailable("connection refused");
    std::string a = answers.front();
    answers.pop_front();
    json r = {{"choices", {{{"message", {{"role", "assistant"}, {"content", a}}}, {"finish_reason", "stop"}}}},
              {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 20}}}};
    return llm::HttpReply{200, r.dump(), {}};
  }
};

// Verdicts by a marker in the code: "#bad" mismatch, else ok.
class MarkerVerifier : public Verifier {
 public:
  int calls = 0;
  Result<exec::EvalResult> Verify(const task::TaskSpec&, const std::string& source) override {
    ++calls;
    if (source.find("#bad") != std::string::npos) return exec::EvalResult::Make(exec::Verdict::kMismatch, "value_mismatch", "off");
    return exec::EvalResult::Make(exec::Verdict::kOk, "", "");
  }
  bool timed() const override { return false; }
};

std::string Answer(const std::string& marker) {
  return "plan\n```python\nimport triton\n@triton.jit\ndef k(x):\n    pass\nk[(1,)](0)  " + marker + "\n```\n";
}

struct ChainFixture {
  ScriptTransport* t = nullptr;
  std::unique_ptr<llm::Client> client;
  MarkerVerifier verifier;
  std::vector<json> lines;
  ChainSpec spec;
  ChainFixture() {
    auto tp = std::make_unique<ScriptTransport>();
    t = tp.get();
    llm::Config c;
    c.url = "http://127.0.0.1:9/v1";
    c.model = "m";
    c.retries = 0;
    client = std::make_unique<llm::Client>(c, nullptr, std::move(tp), [](double) {});
    spec.turns = 3;
    spec.prompt = {{"user", "write relu"}};
  }
  LineSink Sink() {
    return [this](const json& l) {
      lines.push_back(l);
      return Status::Ok();
    };
  }
};

TEST(GenChain, FeedsBackUntilVerifiedAndStops) {
  ChainFixture f;
  f.t->answers = {"no code here", Answer("#bad"), Answer(""), Answer("")};
  auto r = RunChain(f.spec, {}, f.client.get(), &f.verifier, f.Sink());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, "verified");
  EXPECT_EQ(r->best_turn, 3);
  EXPECT_EQ(f.verifier.calls, 2);  // the answer without code is not evaluated
  ASSERT_EQ(f.lines.size(), 3u);
  EXPECT_EQ(f.lines[0]["outcome"], "no_code");
  EXPECT_EQ(f.lines[1]["outcome"], "mismatch");
  EXPECT_TRUE(f.lines[2]["done"].get<bool>());
  // Turn 3's request carries the whole conversation: prompt, answer, feedback, answer, feedback.
  ASSERT_EQ(f.t->requests.size(), 3u);
  const json& msgs = f.t->requests[2]["messages"];
  ASSERT_EQ(msgs.size(), 5u);
  EXPECT_EQ(msgs[1]["content"], "no code here");
  EXPECT_EQ(msgs[2]["content"].get<std::string>().substr(0, 40), "Your answer contained no Python code blo");
  EXPECT_NE(msgs[4]["content"].get<std::string>().find("(mismatch)"), std::string::npos);
}

TEST(GenChain, ResumesFromTheTranscriptWithoutRepeatingCalls) {
  ChainFixture first;
  first.t->answers = {Answer("#bad")};
  first.spec.turns = 1;
  ASSERT_EQ(RunChain(first.spec, {}, first.client.get(), &first.verifier, first.Sink())->status, "failed");
  std::vector<TurnRecord> done = {TurnRecord::FromJson(first.lines.at(0))};
  ChainFixture again;
  again.t->answers = {Answer("")};
  auto r = RunChain(again.spec, done, again.client.get(), &again.verifier, again.Sink());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, "verified");
  EXPECT_EQ(r->turns, 2);
  ASSERT_EQ(again.t->requests.size(), 1u);
  EXPECT_EQ(again.t->requests[0]["messages"].size(), 3u);  // prompt, the resumed answer, its feedback
  EXPECT_EQ(again.lines.at(0)["turn"], 2);
}

TEST(GenChain, AModelThatCannotBeReachedEndsTheChainWithAnErrorLine) {
  ChainFixture f;
  f.t->answers = {Answer("#bad")};
  auto r = RunChain(f.spec, {}, f.client.get(), &f.verifier, f.Sink());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, "llm_error");
  EXPECT_NE(r->error.find("connection refused"), std::string::npos);
  ASSERT_EQ(f.lines.size(), 2u);
  EXPECT_TRUE(f.lines[1].contains("error"));
}

}  // namespace
}  // namespace kiln::gen

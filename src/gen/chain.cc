#include "gen/chain.h"

#include <fmt/format.h>

#include "common/hash.h"
#include "common/strings.h"
#include "response/extract.h"

namespace kiln::gen {

using nlohmann::json;

json TurnRecord::ToJson() const {
  json j = {{"turn", turn},
            {"response", response},
            {"finish_reason", finish_reason},
            {"extracted", extracted},
            {"code_hash", code_hash.empty() ? json(nullptr) : json(code_hash)},
            {"outcome", outcome},
            {"reasons", reasons},
            {"speedup", speedup ? json(*speedup) : json(nullptr)},
            {"done", done},
            {"feedback", feedback.empty() ? json(nullptr) : json(feedback)},
            {"llm", llm}};
  return j;
}

TurnRecord TurnRecord::FromJson(const json& j) {
  TurnRecord t;
  auto str = [&](const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : ""; };
  t.turn = j.value("turn", 0);
  t.response = str("response");
  t.finish_reason = str("finish_reason");
  t.extracted = str("extracted");
  t.code_hash = str("code_hash");
  t.outcome = str("outcome");
  if (j.contains("reasons") && j["reasons"].is_array()) t.reasons = j["reasons"];
  if (j.contains("speedup") && j["speedup"].is_number()) t.speedup = j["speedup"].get<double>();
  t.done = j.value("done", false);
  t.feedback = str("feedback");
  if (j.contains("llm") && j["llm"].is_object()) t.llm = j["llm"];
  return t;
}

std::string CodeOf(const std::string& response) {
  response::Extracted e = response::ExtractCode(response);
  return e.has_code ? e.code : "";
}

std::vector<llm::Message> Conversation(const ChainSpec& spec, const std::vector<TurnRecord>& done) {
  std::vector<llm::Message> m = spec.prompt;
  for (const auto& t : done) {
    m.push_back({"assistant", t.response});
    if (!t.feedback.empty()) m.push_back({"user", t.feedback});
  }
  return m;
}

ChainResult Summarize(const ChainSpec& spec, const std::vector<TurnRecord>& turns) {
  ChainResult r;
  r.turns = static_cast<int>(turns.size());
  const TurnRecord* best = nullptr;
  for (const auto& t : turns) {
    if (!t.ok()) continue;
    if (!best || (t.speedup && (!best->speedup || *t.speedup > *best->speedup))) best = &t;
  }
  if (!best) {
    r.status = "failed";
    return r;
  }
  r.best_turn = best->turn;
  r.best_source = CodeOf(best->response);
  r.best_speedup = best->speedup;
  bool met = false;
  for (const auto& t : turns) met = met || t.done;
  r.status = met ? "verified" : "correct";
  return r;
}

namespace {

json LlmJson(const llm::ChatResult& c) {
  return {{"prompt_tokens", c.prompt_tokens}, {"completion_tokens", c.completion_tokens},
          {"cost_usd", c.cost_usd},           {"cached", c.cached},
          {"latency_s", c.latency_s},         {"attempts", c.attempts}};
}

// Evaluates the answer of one turn into `t` (outcome, reasons, speedup, done, feedback).
Status Judge(const ChainSpec& spec, Verifier* verifier, TurnRecord* t) {
  response::Extracted e = response::ExtractCode(t->response);
  t->extracted = e.how;
  Attempt a;
  a.has_code = e.has_code && !Trim(e.code).empty();
  a.timed = verifier->timed();
  a.target_speedup = spec.target_speedup;
  if (a.has_code) {
    a.source = e.code;
    t->code_hash = HashHex(e.code);
    response::Gate g = response::TritonGate(e.code);
    if (!g.pass) {
      a.gate_reason = g.reason;
    } else {
      KILN_ASSIGN_OR_RETURN(exec::EvalResult r, verifier->Verify(spec.task, e.code));
      a.result = std::move(r);
    }
  }
  t->outcome = a.Outcome();
  if (a.result) {
    for (const auto& reason : a.result->reasons)
      t->reasons.push_back({{"code", reason.code}, {"message", reason.message}, {"line", reason.line}});
    t->speedup = a.speedup();
    if (a.ok() && !a.Done()) a.findings = verifier->Diagnose(spec.task, a.source, *a.result);
  }
  t->done = a.Done();
  if (!t->done) t->feedback = Feedback(a);
  return Status::Ok();
}

}  // namespace

Result<ChainResult> RunChain(const ChainSpec& spec, std::vector<TurnRecord> done, llm::Client* client,
                             Verifier* verifier, const LineSink& sink) {
  auto finished = [&] {
    for (const auto& t : done)
      if (t.done) return true;
    return static_cast<int>(done.size()) >= spec.turns;
  };
  while (!finished()) {
    TurnRecord t;
    t.turn = static_cast<int>(done.size()) + 1;
    auto reply = client->Chat(Conversation(spec, done), spec.sampling, spec.purpose);
    if (!reply.ok()) {
      KILN_RETURN_IF_ERROR(sink({{"turn", t.turn}, {"error", reply.status().message()}}));
      ChainResult r = Summarize(spec, done);
      if (r.status != "verified") {
        r.status = "llm_error";
        r.error = reply.status().message();
      }
      return r;
    }
    t.response = reply->content;
    t.finish_reason = reply->finish_reason;
    t.llm = LlmJson(*reply);
    KILN_RETURN_IF_ERROR(Judge(spec, verifier, &t));
    KILN_RETURN_IF_ERROR(sink(t.ToJson()));
    done.push_back(std::move(t));
  }
  return Summarize(spec, done);
}

}  // namespace kiln::gen

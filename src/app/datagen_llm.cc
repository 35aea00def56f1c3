// `kiln datagen --llm`: the LLM route (docs/datagen.md, "The LLM route"). For each program, one question to
// the model (the prompt template, default prompts/datagen.txt: an AutoTriton-style instruction with Triton
// knowledge asking for step-by-step reasoning, then the module); its code (response::ExtractCode, the rules
// of kiln serve and generate) and reasoning (the answer without the code) become a candidate that is
// verified like the compiler route's. Answers are kept in llm.jsonl, so a rerun asks nothing again.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "app/datagen_internal.h"
#include "common/file.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"
#include "datagen/dataset.h"
#include "gen/prompt.h"
#include "llm/client.h"
#include "response/extract.h"
#include "store/store.h"
#include "task/task.h"

namespace kiln::app {

namespace fs = std::filesystem;

namespace {

// One program's answer as llm.jsonl keeps it.
struct Answer {
  std::string response, finish_reason;
  nlohmann::json llm = nlohmann::json::object();  // tokens, cost, cached, latency_s, attempts
  std::string error;                              // the model could not be reached (not written to llm.jsonl)
};

std::map<std::string, Answer> ReadAnswers(const std::string& path) {
  std::map<std::string, Answer> out;
  auto text = ReadFile(path);
  if (!text.ok()) return out;
  for (std::string_view l : SplitLines(*text)) {
    if (IsBlankLine(l)) continue;
    try {
      nlohmann::json j = nlohmann::json::parse(l);
      if (!j.contains("id") || !j["id"].is_string() || !j.contains("response") || !j["response"].is_string()) continue;
      Answer a;
      a.response = j["response"].get<std::string>();
      a.finish_reason = JsonString(j, "finish_reason");
      a.llm = JsonObject(j, "llm");
      out[j["id"].get<std::string>()] = std::move(a);
    } catch (const nlohmann::json::exception&) {
      // a line cut off by a stopped run: that program is asked again
    }
  }
  return out;
}

Status AppendLine(const std::string& path, const std::string& line) {
  std::ofstream f(path, std::ios::app | std::ios::binary);
  f << line;
  f.flush();
  return f ? Status::Ok() : Unavailable(path + ": cannot append");
}

Result<gen::PromptTemplate> Template(const DatagenOptions& o) {
  if (!o.prompt_template.empty()) return gen::LoadTemplate(o.prompt_template);
  return gen::ParseTemplate(datagen::DefaultLlmPromptText(), "<builtin:datagen>");
}

// What is asked for one program (the template over the program as a KernelBench task).
Result<std::vector<llm::Message>> Question(const gen::PromptTemplate& t, const datagen::Program& p) {
  task::LoadOptions lo;
  lo.format = "kernelbench";
  KILN_ASSIGN_OR_RETURN(task::TaskSpec spec, task::LoadTask(p.path, lo));
  KILN_ASSIGN_OR_RETURN(auto fields, gen::TaskFields(spec));
  return gen::Render(t, fields);
}

Answer Ask(llm::Client* client, const std::vector<llm::Message>& q, const llm::Sampling& sampling,
           const std::string& id) {
  Answer a;
  auto r = client->Chat(q, sampling, "datagen:" + id);
  if (!r.ok()) {
    a.error = r.status().message();
    return a;
  }
  a.response = r->content;
  a.finish_reason = r->finish_reason;
  a.llm = {{"prompt_tokens", r->prompt_tokens}, {"completion_tokens", r->completion_tokens},
           {"cost_usd", r->cost_usd},           {"cached", r->cached},
           {"latency_s", r->latency_s},         {"attempts", r->attempts}};
  return a;
}

// Asks about every program without an answer in `answers`, `threads` at a time; new answers are appended
// to llm.jsonl as they come.
Status AskAll(const DatagenOptions& o, const gen::PromptTemplate& t, const std::vector<datagen::Program>& programs,
              llm::Client* client, std::map<std::string, Answer>* answers, DatagenRun* run) {
  std::vector<const datagen::Program*> todo;
  for (const auto& p : programs)
    if (!answers->count(p.id)) todo.push_back(&p);
  if (todo.empty()) return Status::Ok();
  const std::string path = (fs::path(o.out) / "llm.jsonl").string();
  std::mutex mu;
  Status failure = Status::Ok();
  std::atomic<size_t> next{0};
  std::atomic<int> done{0};
  auto work = [&]() {
    for (size_t i; (i = next.fetch_add(1)) < todo.size();) {
      const datagen::Program& p = *todo[i];
      Answer a;
      auto q = Question(t, p);
      if (!q.ok()) {
        a.error = "cannot build the question: " + q.status().message();
      } else {
        a = Ask(client, *q, o.llm.sampling, p.id);
      }
      std::lock_guard<std::mutex> lock(mu);
      if (a.error.empty()) {
        nlohmann::json line = {
            {"id", p.id}, {"response", a.response}, {"finish_reason", a.finish_reason}, {"llm", a.llm}};
        Status st = AppendLine(path, DumpJson(line) + "\n");
        if (!st.ok() && failure.ok()) failure = st;
      }
      (*answers)[p.id] = std::move(a);
      int n = ++done;
      if (n % 50 == 0 || n == static_cast<int>(todo.size()))
        run->Note(fmt::format("llm: {} of {} programs answered", n, todo.size()));
    }
  };
  const int threads = std::max(1, std::min<int>(client->config().concurrency, static_cast<int>(todo.size())));
  std::vector<std::thread> pool;
  for (int j = 1; j < threads; ++j) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  return failure;
}

// The candidate of an answer, or a reject.
std::optional<Candidate> FromAnswer(const DatagenOptions& o, const datagen::Program& p, const Answer& a,
                                    const std::string& model, DatagenRun* run) {
  auto reject = [&](const std::string& code, const std::string& message) {
    run->Reject(p, "llm", code, message, nullptr, "llm");
    return std::nullopt;
  };
  if (!a.error.empty()) return reject("llm_error", a.error);
  response::Extracted ex = response::ExtractCode(a.response);
  if (!ex.has_code) return reject("no_code", "the answer has no Python code block");
  response::Gate gate = response::TritonGate(ex.code);
  if (!gate.pass) return reject("not_a_kernel", gate.reason);
  std::string reasoning = datagen::ReasoningOf(a.response, ex.code);
  if (reasoning.empty()) return reject("no_reasoning", "the answer holds code but no reasoning");
  std::string path = fs::absolute(fs::path(o.out) / "candidates_llm" / (FileStem(p.id) + ".py")).string();
  std::string code = EndsWith(ex.code, "\n") ? ex.code : ex.code + "\n";
  auto old = ReadFile(path);
  if (!old.ok() || *old != code) {
    if (Status st = WriteFile(path, code); !st.ok()) return reject("write_failed", st.message());
  }
  Candidate c;
  c.program = p;
  c.route = "llm";
  c.path = path;
  c.source = code;
  c.reasoning = reasoning;
  c.meta = {{"model", model}, {"finish_reason", a.finish_reason}, {"extracted", ex.how}};
  return c;
}

}  // namespace

Result<std::vector<Candidate>> LlmStage(const DatagenOptions& o, const std::vector<datagen::Program>& programs,
                                        DatagenRun* run) {
  KILN_ASSIGN_OR_RETURN(gen::PromptTemplate tmpl, Template(o));
  llm::Config cfg = o.llm.Resolved();
  if (Status s = cfg.Validate(); !s.ok() && !o.finish) return InvalidArgument("--llm: " + s.message());
  std::vector<datagen::Program> askable;
  for (const auto& p : programs) {
    if (p.origin == "tritonbench_t") {
      run->Reject(p, "llm", "route_unsupported", "verification needs a KernelBench-format program (class Model)",
                  nullptr, "llm");
    } else {
      askable.push_back(p);
    }
  }
  fs::create_directories(fs::path(o.out) / "candidates_llm");
  auto answers = ReadAnswers((fs::path(o.out) / "llm.jsonl").string());
  if (!o.finish) {
    std::unique_ptr<store::Store> store;
    if (!o.records.no_db && o.worker.replay.empty()) {
      KILN_ASSIGN_OR_RETURN(store, store::Store::Open(o.records.Path()));
    }
    if (!store) cfg.use_cache = false;
    llm::Client client(cfg, store.get());
    KILN_RETURN_IF_ERROR(AskAll(o, tmpl, askable, &client, &answers, run));
    llm::Usage u = client.usage();
    run->Note(fmt::format("llm: {} call(s), {} cached, {} failed, {} prompt + {} completion tokens, {:.4f} USD",
                          u.calls, u.cached, u.failed, u.prompt_tokens, u.completion_tokens, u.cost_usd));
  }
  std::vector<Candidate> out;
  for (const auto& p : askable) {
    run->counts.Add("llm_asked", p.origin);
    auto it = answers.find(p.id);
    if (it == answers.end()) {
      run->Reject(p, "llm", "not_asked", "no answer recorded for this program", nullptr, "llm");
      continue;
    }
    auto c = FromAnswer(o, p, it->second, cfg.model, run);
    if (!c) continue;
    run->counts.Add("llm_answered", p.origin);
    out.push_back(std::move(*c));
  }
  return out;
}

}  // namespace kiln::app

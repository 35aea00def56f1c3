#include "app/generate_job.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "app/generate_verifier.h"
#include "common/file.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"
#include "gen/chain.h"
#include "gen/prompt.h"
#include "store/store.h"

namespace kiln::app {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int Usage(const std::string& m) {
  std::fprintf(stderr, "kiln generate: %s\n", m.c_str());
  return 2;
}

// A formatted diagnostic ("file:line:col: error: ..."), printed as it is.
int Diag(const std::string& m) {
  std::fputs(m.c_str(), stderr);
  if (m.empty() || m.back() != '\n') std::fputs("\n", stderr);
  return 2;
}

// The task paths: --task, then the lines of --tasks (relative to that file).
Result<std::vector<std::string>> TaskPaths(const GenerateOptions& o) {
  std::vector<std::string> paths = o.tasks;
  if (o.tasks_file.empty()) return paths;
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(o.tasks_file));
  fs::path dir = fs::path(o.tasks_file).parent_path();
  for (std::string_view l : SplitLines(text)) {
    std::string_view s = Trim(l);
    if (s.empty() || s.front() == '#') continue;
    fs::path p(s);
    paths.push_back(p.is_absolute() ? p.string() : (dir / p).string());
  }
  return paths;
}

// A file name from a task name ("level1/19_ReLU" -> "level1_19_ReLU").
std::string SafeName(const std::string& name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return s.empty() ? "task" : s;
}

struct TaskEntry {
  task::TaskSpec spec;
  std::string file;  // OUT/<file>.py
  std::map<std::string, std::string> fields;
};

Result<std::vector<TaskEntry>> LoadTasks(const GenerateOptions& o) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> paths, TaskPaths(o));
  if (paths.empty()) return InvalidArgument("no task: give --task (repeatable) or --tasks FILE");
  std::vector<TaskEntry> out;
  std::set<std::string> files, hashes;
  for (const auto& p : paths) {
    TaskEntry e;
    KILN_ASSIGN_OR_RETURN(e.spec, task::LoadTask(p, o.task_options.ToLoadOptions()));
    if (!hashes.insert(e.spec.hash).second) continue;  // the same task twice
    e.file = SafeName(e.spec.name);
    if (!files.insert(e.file).second) e.file += "_" + e.spec.hash.substr(0, 8);
    files.insert(e.file);
    KILN_ASSIGN_OR_RETURN(e.fields, gen::TaskFields(e.spec));
    out.push_back(std::move(e));
  }
  return out;
}

std::string ChainKey(const std::string& task_hash, int sample) { return task_hash + "/" + std::to_string(sample); }

// What an earlier run's transcript holds: turns per chain, and the chains it finished.
struct Resumed {
  std::map<std::string, std::vector<gen::TurnRecord>> turns;
  std::set<std::string> finished;
};

Result<Resumed> ReadTranscript(const std::string& path) {
  Resumed r;
  if (!fs::exists(path)) return r;
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  int line = 0;
  for (std::string_view l : SplitLines(text)) {
    ++line;
    if (IsBlankLine(l)) continue;
    json j = ParseJson(l);
    if (j.is_discarded() || !j.is_object() || !j.contains("task_hash") || !j["task_hash"].is_string() ||
        !j.contains("sample") || !j["sample"].is_number_integer()) {
      std::fprintf(stderr, "%s:%d: warning: not a transcript line; ignored\n", path.c_str(), line);
      continue;
    }
    std::string key = ChainKey(j["task_hash"].get<std::string>(), j["sample"].get<int>());
    try {  // a hand-edited or truncated line of the wrong types is skipped, never a crash
      if (j.value("final", false))
        r.finished.insert(key);
      else if (j.contains("outcome"))
        r.turns[key].push_back(gen::TurnRecord::FromJson(j));
    } catch (const json::exception&) {
      std::fprintf(stderr, "%s:%d: warning: a transcript line with fields of the wrong type; ignored\n", path.c_str(),
                   line);
    }
  }
  return r;
}

struct ChainJob {
  size_t task = 0;
  int sample = 0;
  std::vector<gen::TurnRecord> done;
  bool finished = false;  // by an earlier run
  gen::ChainResult result;
};

// Appends transcript lines (one writer for all threads).
class Transcript {
 public:
  explicit Transcript(const std::string& path) : out_(path, std::ios::app), path_(path) {}
  Status Write(json line) {
    std::lock_guard<std::mutex> lock(mu_);
    line["at"] = NowIsoUtc();
    out_ << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
    out_.flush();
    return out_ ? Status::Ok() : IoError(path_ + ": cannot append to the transcript");
  }
  bool ok() const { return static_cast<bool>(out_); }

 private:
  std::mutex mu_;
  std::ofstream out_;
  std::string path_;
};

exec::EvalRequest BaseRequest(const GenerateOptions& o) {
  exec::EvalRequest r;
  r.mode = o.mode == "time" ? exec::Mode::kTime : exec::Mode::kCheck;
  r.policy = exec::Policy::kStrict;  // a model's code is untrusted
  r.seed = o.seed;
  r.trials = o.trials;
  r.timeout_s = o.timeout_s;
  return r;
}

struct Shared {
  const GenerateOptions& o;
  const std::vector<TaskEntry>& tasks;
  gen::PromptTemplate tmpl;
  llm::Client* client;
  store::Store* store;
  Transcript* transcript;
  std::vector<ChainJob>* chains;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::string machinery_error;
};

gen::ChainSpec SpecOf(const Shared& s, const ChainJob& c) {
  const TaskEntry& t = s.tasks[c.task];
  gen::ChainSpec spec;
  spec.task = t.spec;
  spec.sample = c.sample;
  spec.turns = s.o.turns;
  spec.prompt = gen::Render(s.tmpl, t.fields);
  spec.sampling = s.o.llm.sampling;
  spec.sampling.seed = static_cast<int64_t>(s.o.seed) + c.sample;
  spec.target_speedup = s.o.target_speedup;
  spec.purpose = "generate:" + t.spec.name;
  return spec;
}

void Worker(Shared* s, int job) {
  std::unique_ptr<EvalVerifier> verifier;
  for (size_t i; !s->stop && (i = s->next++) < s->chains->size();) {
    ChainJob& c = (*s->chains)[i];
    gen::ChainSpec spec = SpecOf(*s, c);
    if (c.finished) {
      c.result = gen::Summarize(spec, c.done);
      continue;
    }
    if (!verifier) {
      RunnerSpec rs = s->o.worker.Spec(exec::ParseIsolation(s->o.isolation).value());
      if (s->o.gpus > 0) rs.device = job % s->o.gpus;
      auto runner = MakeRunner(rs);
      if (!runner.ok()) {
        std::lock_guard<std::mutex> lock(s->mu);
        s->machinery_error = runner.status().message();
        s->stop = true;
        return;
      }
      verifier = std::make_unique<EvalVerifier>(std::move(*runner), s->store, BaseRequest(s->o));
      if (s->o.profile && s->o.mode == "time")
        if (auto note = verifier->EnableProfiler(exec::ResolvePython(s->o.worker.python)); note && job == 0)
          std::fprintf(stderr, "kiln generate: note: %s\n", note->c_str());
    }
    const std::string name = spec.task.name, hash = spec.task.hash;
    gen::LineSink sink = [&](json line) {
      json l = {{"task", name}, {"task_hash", hash}, {"sample", c.sample}};
      l.update(line);
      if (!s->o.quiet && line.contains("outcome"))
        std::fprintf(stderr, "kiln generate: %s sample %d turn %d: %s\n", name.c_str(), c.sample, line.value("turn", 0),
                     line.value("outcome", "").c_str());
      return s->transcript->Write(std::move(l));
    };
    auto r = gen::RunChain(spec, c.done, s->client, verifier.get(), sink);
    if (!r.ok()) {
      std::lock_guard<std::mutex> lock(s->mu);
      s->machinery_error = r.status().message();
      s->stop = true;
      return;
    }
    c.result = *r;
    if (r->status != "llm_error")  // a chain cut short by the model's endpoint resumes later
      (void)s->transcript->Write({{"task", name},
                                  {"task_hash", hash},
                                  {"sample", c.sample},
                                  {"final", true},
                                  {"status", r->status},
                                  {"turns", r->turns},
                                  {"best_turn", r->best_turn},
                                  {"speedup", r->best_speedup ? json(*r->best_speedup) : json(nullptr)}});
  }
}

// The best chain of each task: verified before correct, then the fastest, then the earliest.
const ChainJob* BestOf(const std::vector<ChainJob>& chains, size_t task) {
  const ChainJob* best = nullptr;
  auto rank = [](const gen::ChainResult& r) { return r.status == "verified" ? 2 : r.best_turn > 0 ? 1 : 0; };
  for (const auto& c : chains) {
    if (c.task != task || c.result.best_turn == 0) continue;
    if (!best || rank(c.result) > rank(best->result) ||
        (rank(c.result) == rank(best->result) && c.result.best_speedup &&
         (!best->result.best_speedup || *c.result.best_speedup > *best->result.best_speedup)))
      best = &c;
  }
  return best;
}

// OUT/<task>.py for each task with a verified answer, OUT/summary.json, a line per task on stdout.
// -> whether every task got one.
Result<bool> WriteOutputs(const GenerateOptions& o, const std::vector<TaskEntry>& tasks,
                          const std::vector<ChainJob>& chains, const llm::Client& client, store::Store* store) {
  json summary = {{"schema_version", 1}, {"tasks", json::array()}};
  bool all = true;
  for (size_t t = 0; t < tasks.size(); ++t) {
    const TaskEntry& e = tasks[t];
    json tj = {{"name", e.spec.name},
               {"path", e.spec.path},
               {"hash", e.spec.hash},
               {"format", task::FormatName(e.spec.format)},
               {"chains", json::array()}};
    for (const auto& c : chains)
      if (c.task == t)
        tj["chains"].push_back({{"sample", c.sample},
                                {"status", c.result.status},
                                {"turns", c.result.turns},
                                {"best_turn", c.result.best_turn},
                                {"speedup", c.result.best_speedup ? json(*c.result.best_speedup) : json(nullptr)},
                                {"error", c.result.error.empty() ? json(nullptr) : json(c.result.error)}});
    const ChainJob* best = BestOf(chains, t);
    if (best) {
      std::string path = (fs::path(o.out) / (e.file + ".py")).string();
      KILN_RETURN_IF_ERROR(WriteFile(path, best->result.best_source));
      tj["status"] = best->result.status;
      tj["best"] = {{"sample", best->sample},
                    {"turn", best->result.best_turn},
                    {"file", path},
                    {"speedup", best->result.best_speedup ? json(*best->result.best_speedup) : json(nullptr)}};
      std::printf("%s: %s (sample %d, turn %d%s) -> %s\n", e.spec.name.c_str(), best->result.status.c_str(),
                  best->sample, best->result.best_turn,
                  best->result.best_speedup ? fmt::format(", {:.2f}x", *best->result.best_speedup).c_str() : "",
                  path.c_str());
    } else {
      all = false;
      tj["status"] = "failed";
      std::printf("%s: no verified answer in %d sample(s) of up to %d turn(s)\n", e.spec.name.c_str(), o.samples,
                  o.turns);
    }
    summary["tasks"].push_back(tj);
  }
  llm::Usage u = client.usage();
  summary["llm"] = u.ToJson();
  summary["llm"]["model"] = client.config().model;
  if (store)
    if (auto tot = store->LlmUsageTotals("generate:"); tot.ok())
      summary["llm"]["all_runs"] = {{"calls", tot->calls}, {"cost_usd", tot->cost_usd}};
  KILN_RETURN_IF_ERROR(WriteFile((fs::path(o.out) / "summary.json").string(), DumpJson(summary, 2) + "\n"));
  std::printf("model calls: %lld (%lld from the cache, %lld failed), tokens %lld in / %lld out, cost $%.4f\n",
              static_cast<long long>(u.calls), static_cast<long long>(u.cached), static_cast<long long>(u.failed),
              static_cast<long long>(u.prompt_tokens), static_cast<long long>(u.completion_tokens), u.cost_usd);
  return all;
}

std::optional<int> CheckOptions(const GenerateOptions& o) {
  if (o.out.empty()) return Usage("--out DIR is required");
  if (o.turns < 1) return Usage("--turns must be 1 or more");
  if (o.samples < 1) return Usage("--samples must be 1 or more");
  if (o.jobs < 1) return Usage("--jobs must be 1 or more");
  if (o.mode != "check" && o.mode != "time") return Usage("--mode " + o.mode + ": expected check or time");
  if (!exec::ParseIsolation(o.isolation).ok())
    return Usage("--isolation " + o.isolation + ": expected shared, fork or fresh");
  return std::nullopt;
}

std::vector<ChainJob> MakeChains(const GenerateOptions& o, const std::vector<TaskEntry>& tasks, Resumed& resumed) {
  std::vector<ChainJob> chains;
  for (size_t t = 0; t < tasks.size(); ++t)
    for (int s = 0; s < o.samples; ++s) {
      ChainJob c;
      c.task = t;
      c.sample = s;
      std::string key = ChainKey(tasks[t].spec.hash, s);
      c.done = std::move(resumed.turns[key]);
      c.finished = resumed.finished.count(key) > 0;
      chains.push_back(std::move(c));
    }
  return chains;
}

}  // namespace

int RunGenerate(const GenerateOptions& o) {
  if (auto rc = CheckOptions(o)) return *rc;
  auto tmpl = gen::LoadTemplate(o.prompt_template);
  if (!tmpl.ok()) return Diag(tmpl.status().message());
  auto tasks = LoadTasks(o);
  if (!tasks.ok()) return Diag(tasks.status().message());
  llm::Config cfg = o.llm.Resolved();
  if (Status s = cfg.Validate(); !s.ok()) return Usage(s.message());
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) return Usage(fmt::format("{}: cannot create the folder: {}", o.out, ec.message()));
  const std::string tpath = (fs::path(o.out) / "transcript.jsonl").string();
  if (!o.resume && fs::exists(tpath) && fs::file_size(tpath) > 0)
    return Usage(tpath + " exists: continue it with --resume, or choose another --out");
  auto resumed = ReadTranscript(tpath);
  if (!resumed.ok()) return Usage(resumed.status().message());
  std::unique_ptr<store::Store> store;
  if (!o.records.no_db && o.worker.replay.empty()) {
    auto st = store::Store::Open(o.records.Path());
    if (!st.ok()) return Usage(st.status().message());
    store = std::move(*st);
  }
  if (!store) cfg.use_cache = false;
  llm::Client client(cfg, store.get());
  Transcript transcript(tpath);
  if (!transcript.ok()) return Usage(tpath + ": cannot write the transcript");
  std::vector<ChainJob> chains = MakeChains(o, *tasks, *resumed);
  Shared shared{o, *tasks, *tmpl, &client, store.get(), &transcript, &chains, {}, {}, {}, {}};
  std::vector<std::thread> threads;
  const int jobs = std::min<int>(o.jobs, static_cast<int>(chains.size()));
  for (int j = 1; j < jobs; ++j) threads.emplace_back(Worker, &shared, j);
  Worker(&shared, 0);
  for (auto& t : threads) t.join();
  if (!shared.machinery_error.empty()) return Usage("error: " + shared.machinery_error);
  auto all = WriteOutputs(o, *tasks, chains, client, store.get());
  if (!all.ok()) return Usage("error: " + all.status().message());
  bool llm_errors = false;
  for (const auto& c : chains) llm_errors = llm_errors || c.result.status == "llm_error";
  if (llm_errors)
    std::fprintf(stderr, "kiln generate: some chains could not reach the model; --resume continues them\n");
  return *all && !llm_errors ? 0 : 1;
}

}  // namespace kiln::app

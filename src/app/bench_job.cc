// kiln/app: `kiln bench` (docs/bench.md): samples -> the pairs of a batch (out/pairs.jsonl) -> the batch
// pipeline (RunEval with --batch, --resume on out/results.jsonl, the records database as cache) -> outcomes
// per sample -> the metrics and reports of src/bench.
#include "app/bench_job.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/eval_internal.h"
#include "bench/baseline.h"
#include "bench/dataset.h"
#include "bench/report.h"
#include "bench/samples.h"
#include "common/file.h"
#include "common/json.h"
#include "common/strings.h"

namespace kiln::app {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int Fail(const std::string& message) {
  std::fprintf(stderr, "kiln bench: %s\n", message.c_str());
  return 2;
}

// A sample with its task resolved against the dataset.
struct Item {
  bench::Sample s;
  std::string task_name, task_path;
  std::string id;  // "<task>#<sample>": the pair's id in the batch
};

// --gold: one sample per task, the channel's own reference (TritonBench-G: the gold module under the strict
// policy; TritonBench-T and KernelBench: the torch reference under the trusted policy).
std::vector<bench::Sample> GoldSamples(const bench::Channel& c, const std::string& dir) {
  std::vector<bench::Sample> out;
  for (const auto& t : bench::ListTasks(c, dir)) {
    bench::Sample s;
    s.task = t;
    s.sample = "gold";
    s.has_code = true;
    s.how = "gold";
    s.origin = "gold";
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<Item>> Resolve(const BenchOptions& o, const bench::Channel& c, const std::string& dir,
                                  std::vector<bench::Sample> samples) {
  std::set<std::string> only(o.tasks.begin(), o.tasks.end()), used;
  std::vector<Item> out;
  std::map<std::string, std::string> path_of;  // given name -> resolved path
  for (auto& s : samples) {
    auto it = path_of.find(s.task);
    if (it == path_of.end()) {
      auto p = bench::ResolveTask(c, dir, s.task);
      if (!p.ok()) return NotFound(fmt::format("{}: {}", s.origin, p.status().message()));
      it = path_of.emplace(s.task, *p).first;
    }
    Item item;
    item.task_path = it->second;
    item.task_name = fs::path(item.task_path).stem().string();
    if (!only.empty() && !only.count(item.task_name) && !only.count(s.task)) continue;
    used.insert(item.task_name);
    used.insert(s.task);
    item.id = item.task_name + "#" + s.sample;
    item.s = std::move(s);
    out.push_back(std::move(item));
  }
  for (const auto& t : only)
    if (!used.count(t))
      return NotFound(fmt::format("--task {}: no sample of this task (or no such task in {})", t, dir));
  return out;
}

// The batch line of a sample with code.
// The evaluation's parameters are written into every line, so that --resume (matching lines by their hash)
// re-runs the pairs whose mode, protocol, trials, timeout or sizes changed.
json PairLine(const BenchOptions& o, const bench::Channel& c, const Item& it, const json& sizes) {
  json p = {{"id", it.id},         {"task", it.task_path},         {"mode", o.eval.mode}, {"trials", o.eval.trials},
            {"seed", o.eval.seed}, {"timeout_s", o.eval.timeout_s}};
  if (!o.eval.protocol.empty()) p["protocol"] = o.eval.protocol;
  if (c.IsTritonBench()) p["legacy_stdout"] = true;  // TritonBench's own stdout check, beside kiln's
  json all = sizes;
  all.update(it.s.sizes);
  if (!all.empty()) p["sizes"] = all;
  if (o.gold) {
    if (c.benchmark == bench::Benchmark::kKernelBench) {
      auto text = ReadFile(it.task_path);  // the reference module as ModelNew (it was just listed)
      p["source"] = (text.ok() ? *text : std::string()) + "\n\nModelNew = Model\n";
      p["name"] = it.task_name + "_gold.py";
    } else {
      p["candidate"] = nullptr;  // the task's own code
    }
    if (c.benchmark != bench::Benchmark::kTritonBenchG) p["policy"] = "trusted";
    return p;
  }
  p["source"] = it.s.code;
  p["name"] = fmt::format("{}_sample_{}.py", it.task_name, it.s.sample);
  return p;
}

// --baseline compile|both (measured): one pair per task, the reference under torch.compile as the candidate
// (policy trusted), timed against the eager reference. Tolerance protocol legacy (1e-2, KernelBench's own
// check): inductor's reassociated reductions are not a reason to lose the baseline. A longer limit: the
// compile runs in the check trials.
json CompilePairLine(const BenchOptions& o, const Item& it, const json& sizes) {
  auto text = ReadFile(it.task_path);
  json p = {{"id", bench::CompileBaselineId(it.task_name)},
            {"task", it.task_path},
            {"mode", "time"},
            {"trials", 1},
            {"seed", o.eval.seed},
            {"timeout_s", std::max(o.eval.timeout_s, 300.0)},
            {"protocol", "legacy"},
            {"policy", "trusted"},
            {"source", bench::CompileBaselineSource(text.ok() ? *text : std::string())},
            {"name", it.task_name + "_torch_compile.py"}};
  if (!sizes.empty()) p["sizes"] = sizes;
  return p;
}

bool MeasureCompile(const BenchOptions& o) { return o.baseline != "eager" && o.baseline_file.empty(); }

// The speedup of a correct result line (`result` of a batch line) as the channel's benchmark defines it:
// the median times of the cases timed for both sides.
std::optional<double> SpeedupOf(const bench::Channel& c, const json& result) {
  std::vector<bench::CaseTime> times;
  const json cases = result.contains("cases") && result["cases"].is_array() ? result["cases"] : json::array();
  for (const auto& cs : cases) {
    auto cand = JsonNumber(JsonObject(cs, "candidate_ms"), "median");
    auto ref = JsonNumber(JsonObject(cs, "reference_ms"), "median");
    if (cand && ref) times.push_back({JsonString(cs, "name"), *ref, *cand});
  }
  return c.IsTritonBench() ? bench::TritonBenchSpeedup(times) : bench::KernelBenchSpeedup(times);
}

// The verdict, error reasons, speedup and device of one result line.
void ReadResult(const bench::Channel& c, const json& line, bench::SampleOutcome* so, std::set<std::string>* devices) {
  const json result = JsonObject(line, "result");
  so->verdict = JsonString(line, "verdict");
  if (so->verdict.empty()) so->verdict = "error";
  const json reasons = result.contains("reasons") && result["reasons"].is_array() ? result["reasons"] : json::array();
  for (const auto& reason : reasons)
    if (JsonString(reason, "severity") != "warning" && !JsonString(reason, "code").empty())
      so->reasons.push_back(JsonString(reason, "code"));
  if (so->verdict == "ok") so->speedup = SpeedupOf(c, result);
  const json legacy = JsonObject(result, "legacy_stdout");
  if (legacy.contains("passed") && legacy["passed"].is_boolean()) so->legacy_pass = legacy["passed"].get<bool>();
  const std::string device = JsonString(JsonObject(result, "device"), "name");
  if (!device.empty()) devices->insert(device);
}

// The batch's result lines by id (the last line of an id wins).
std::map<std::string, json> ResultsById(const std::string& results) {
  std::map<std::string, json> by_id;
  for (auto line : SplitLines(results)) {
    json j = ParseJson(line);
    const std::string id = JsonString(j, "id");
    if (!id.empty()) by_id[id] = std::move(j);
  }
  return by_id;
}

// The outcome of every sample from the batch's result lines.
std::vector<bench::SampleOutcome> Outcomes(const bench::Channel& c, const std::vector<Item>& items,
                                           const std::map<std::string, json>& by_id, std::set<std::string>* devices) {
  std::vector<bench::SampleOutcome> out;
  for (const auto& it : items) {
    bench::SampleOutcome so;
    so.task = it.task_name;
    so.sample = it.s.sample;
    auto line = by_id.find(it.id);
    if (!it.s.has_code) {
      so.verdict = "no_code";
    } else if (line == by_id.end() || line->second.contains("error") || !line->second.contains("result")) {
      so.verdict = "error";
      so.reasons = {line == by_id.end() ? "no_result" : "kiln_error"};
    } else {
      ReadResult(c, line->second, &so, devices);
    }
    so.outcome = bench::OutcomeOfVerdict(so.verdict);
    out.push_back(std::move(so));
  }
  return out;
}

// Runs the pairs of the samples with code through `kiln eval --batch` (resuming from results.jsonl).
// Returns the batch's exit code (2: it could not start).
int RunPairs(const BenchOptions& o, const bench::Channel& c, const std::vector<Item>& items) {
  auto sizes = eval_internal::ParseSizes(o.eval.sizes);
  if (!sizes.ok()) return Fail(sizes.status().message());
  std::string pairs;
  std::set<std::string> compiled;
  for (const auto& it : items) {
    if (it.s.has_code) pairs += PairLine(o, c, it, *sizes).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    if (MeasureCompile(o) && compiled.insert(it.task_name).second) {
      json task_sizes = *sizes;
      task_sizes.update(it.s.sizes);
      pairs += CompilePairLine(o, it, task_sizes).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    }
  }
  const std::string pairs_path = (fs::path(o.out) / "pairs.jsonl").string();
  const std::string results_path = (fs::path(o.out) / "results.jsonl").string();
  if (Status s = WriteFile(pairs_path, pairs); !s.ok()) return Fail(s.message());
  EvalOptions e = o.eval;
  e.batch = pairs_path;
  e.out = results_path;
  std::error_code ec;
  e.resume = fs::exists(results_path, ec);  // a rerun evaluates only what has no result yet
  if (pairs.empty()) return WriteFile(results_path, "").ok() ? 0 : 2;
  return RunEval(e);
}

// The candidate's own time of a timed result line: its cases' median ms (several: their geometric mean).
std::optional<double> CandidateMs(const json& line) {
  std::vector<double> ms;
  const json result = JsonObject(line, "result");
  if (result.contains("cases") && result["cases"].is_array())
    for (const auto& cs : result["cases"])
      if (auto m = JsonNumber(JsonObject(cs, "candidate_ms"), "median"); m && *m > 0) ms.push_back(*m);
  return bench::GeoMean(ms);
}

// Why a task's compile pair gave no eager/compile ratio ("" when it did).
std::string CompileMissing(const std::map<std::string, json>& by_id, const std::string& task, std::optional<double>* ratio) {
  auto it = by_id.find(bench::CompileBaselineId(task));
  if (it == by_id.end() || !it->second.contains("result")) return "no result";
  const json& line = it->second;
  const std::string verdict = JsonString(line, "verdict");
  if (verdict != "ok") return "the torch.compile reference's verdict " + (verdict.empty() ? "error" : verdict);
  bench::Channel kb;
  kb.benchmark = bench::Benchmark::kKernelBench;
  *ratio = SpeedupOf(kb, JsonObject(line, "result"));
  return *ratio ? "" : "not timed (no timing under Triton's interpreter)";
}

// --baseline compile|both, --baseline-file: each sample's speedup over torch.compile and the report's
// compile fields (which tasks have a torch.compile time, and why the others have none).
void AddCompileBaseline(const BenchOptions& o, const std::vector<Item>& items, const std::map<std::string, json>& by_id,
                        const std::map<std::string, double>* file_ms, bench::Report* r) {
  r->compile_source = file_ms ? "file " + o.baseline_file : "measured";
  std::map<std::string, std::optional<double>> ratio;  // measured: task -> eager ms / compile ms
  std::map<std::string, int> missing;                  // why -> tasks
  for (const auto& it : items) {
    if (ratio.count(it.task_name)) continue;
    auto& v = ratio[it.task_name];
    std::string why;
    if (file_ms) {
      if (!file_ms->count(it.task_name)) why = "not in the baseline file";
    } else {
      why = CompileMissing(by_id, it.task_name, &v);
    }
    if (why.empty()) ++r->compile_tasks;
    else ++missing[why];
  }
  for (const auto& [why, n] : missing)
    r->compile_note += fmt::format("{}{} task(s) without one: {}", r->compile_note.empty() ? "" : "; ", n, why);
  for (size_t i = 0; i < items.size(); ++i) {
    bench::SampleOutcome& so = r->samples[i];
    if (!so.speedup) continue;
    if (!file_ms) {
      so.speedup_compile = bench::SpeedupVsCompile(so.speedup, ratio[items[i].task_name]);
      continue;
    }
    auto ms = file_ms->find(items[i].task_name);
    auto line = by_id.find(items[i].id);
    if (ms == file_ms->end() || line == by_id.end()) continue;
    if (auto cand = CandidateMs(line->second)) so.speedup_compile = ms->second / *cand;
  }
}

}  // namespace

int RunBench(const BenchOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  auto channel = bench::ParseChannel(o.channel, o.level);
  if (!channel.ok()) return Fail(channel.status().message());
  auto dir = bench::TaskDir(*channel, o.dataset);
  if (!dir.ok()) return Fail(dir.status().message());
  if (o.gold == !o.samples.empty()) return Fail("give either --samples FILE|DIR or --gold");
  std::optional<std::map<std::string, double>> file_ms;
  if (o.baseline != "eager" || !o.baseline_file.empty()) {
    if (channel->IsTritonBench())
      return Fail("--baseline compile|both and --baseline-file are KernelBench's (TritonBench's reference is fixed)");
    if (o.eval.mode != "time") return Fail("--baseline compile|both and --baseline-file need --mode time");
    if (!o.baseline_file.empty()) {
      auto f = bench::ReadBaselineFile(o.baseline_file, o.level);
      if (!f.ok()) return Fail(f.status().message());
      file_ms = std::move(*f);
    }
  }
  auto samples =
      o.gold ? Result<std::vector<bench::Sample>>(GoldSamples(*channel, *dir)) : bench::ReadSamples(o.samples, o.level);
  if (!samples.ok()) return Fail(samples.status().message());
  auto items = Resolve(o, *channel, *dir, std::move(*samples));
  if (!items.ok()) return Fail(items.status().message());
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) return Fail(fmt::format("{}: cannot create the output folder: {}", o.out, ec.message()));
  if (!o.report_only && RunPairs(o, *channel, *items) == 2) return 2;  // the batch said why
  auto results = ReadFile((fs::path(o.out) / "results.jsonl").string());
  if (!results.ok()) return Fail(results.status().message());
  std::set<std::string> devices;
  bench::Report r;
  r.channel = *channel;
  const auto by_id = ResultsById(*results);
  r.samples = Outcomes(*channel, *items, by_id, &devices);
  r.label = !o.label.empty() ? o.label : o.gold ? "gold" : fs::path(o.samples).filename().string();
  r.mode = o.eval.mode;
  r.protocol = o.eval.protocol.empty() ? "kernelbench" : o.eval.protocol;
  r.gold = o.gold;
  for (const auto& d : devices) r.device += (r.device.empty() ? "" : ", ") + d;
  if (r.device.empty()) r.device = "none";
  r.ks = o.ks;
  r.ps = {0, 1, 1.2, 2};
  if (o.baseline != "eager" || !o.baseline_file.empty())
    AddCompileBaseline(o, *items, by_id, file_ms ? &*file_ms : nullptr, &r);
  bench::Compute(&r);
  if (!o.report_only) r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (Status s = bench::WriteReports(r, o.out); !s.ok()) return Fail(s.message());
  if (o.json)
    std::printf("%s\n", bench::SummaryJson(r).dump(2).c_str());
  else
    std::printf("%s\nreports in %s (summary.md, summary.json, tasks.jsonl, tasks.csv, report.html)\n",
                bench::SummaryMarkdown(r).c_str(), o.out.c_str());
  const auto errors = r.metrics.outcomes.find(bench::Outcome::kError);
  return errors != r.metrics.outcomes.end() && errors->second > 0 ? 1 : 0;
}

}  // namespace kiln::app

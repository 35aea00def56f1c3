// `kiln datagen`'s driver: the stages over one output folder (datagen_job.h). The programs and capture
// stages are here; conversion, verification and output in datagen_stages.cc.
#include "app/datagen_job.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "app/datagen_internal.h"
#include "common/file.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "datagen/composer.h"
#include "datagen/normalize.h"
#include "exec/runner.h"

namespace kiln::app {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kStages = {"programs", "capture", "convert", "verify"};

Status CheckOptions(const DatagenOptions& o) {
  if (o.out.empty()) return InvalidArgument("--out is required");
  if (o.from.empty() && o.compose <= 0) return InvalidArgument("nothing to do: give --from PATH and/or --compose N");
  if (!o.stop_after.empty() && std::find(kStages.begin(), kStages.end(), o.stop_after) == kStages.end())
    return InvalidArgument("--stop-after: expected one of programs, capture, convert, verify, got " + o.stop_after);
  if (!o.format.empty() && o.format != "kernelbench" && o.format != "tritonbench_t")
    return InvalidArgument("--format: expected kernelbench or tritonbench_t, got " + o.format);
  if (o.compose < 0) return InvalidArgument("--compose must not be negative");
  if (o.llm_only && !o.use_llm) return InvalidArgument("--llm-only needs --llm");
  if (o.llm_only && !o.captures.empty()) return InvalidArgument("--llm-only runs no compiler route: drop --captures");
  return Status::Ok();
}

std::string BenchmarkRoot(const DatagenOptions& o) {
  if (!o.benchmarks.empty()) return o.benchmarks;
  if (const char* e = std::getenv("KILN_CORPUS_DIR"); e && *e) return e;
  return "";
}

// Harvested and composed programs; benchmark tasks become rejects unless allowed.
Result<std::vector<datagen::Program>> ProgramsStage(const DatagenOptions& o, DatagenRun* run) {
  std::vector<datagen::Program> all;
  for (const auto& from : o.from) {
    KILN_ASSIGN_OR_RETURN(auto ps, datagen::ReadPrograms(from, o.format));
    all.insert(all.end(), ps.begin(), ps.end());
  }
  fs::create_directories(fs::path(o.out) / "programs");
  datagen::ComposeOptions co;
  co.small = o.compose_small;
  for (int i = 0; i < o.compose; ++i) {
    datagen::ComposedProgram c = datagen::Compose(o.seed, i, co);
    datagen::Program p;
    p.id = c.name;
    p.origin = "composed";
    p.path = fs::absolute(fs::path(o.out) / "programs" / (c.name + ".py")).string();
    p.text = c.source;
    p.families = c.families;
    p.ops = c.ops;
    p.dtype = c.dtype;
    p.licence = "generated (kiln datagen)";
    auto old = ReadFile(p.path);
    if (!old.ok() || *old != p.text) KILN_RETURN_IF_ERROR(WriteFile(p.path, p.text));
    all.push_back(std::move(p));
  }
  datagen::BenchmarkIndex index;
  std::string root = BenchmarkRoot(o);
  if (!o.allow_benchmark && !root.empty()) {
    int n = index.AddTree(root);
    run->Note(fmt::format("benchmark exclusion: {} task(s) indexed under {}", n, root));
  }
  std::set<std::string> ids;
  std::vector<datagen::Program> kept;
  std::string lines;
  for (auto& p : all) {
    if (!ids.insert(p.id).second) return InvalidArgument("two programs share the id " + p.id + " (" + p.path + ")");
    run->counts.Add("programs", p.origin);
    std::string match = o.allow_benchmark ? "" : index.Match(p.text);
    if (!match.empty()) {
      run->Reject(p, "programs", "benchmark_task", "matches the benchmark task " + match + " (--allow-benchmark keeps it)");
      continue;
    }
    lines += DumpJson(p.ToJson()) + "\n";
    kept.push_back(std::move(p));
  }
  KILN_RETURN_IF_ERROR(WriteFile((fs::path(o.out) / "programs.jsonl").string(), lines));
  return kept;
}

// Runs kiln_worker.inductor_capture over the programs not yet in captures.jsonl (it appends and resumes).
Status RunCaptureWorker(const DatagenOptions& o, const std::vector<datagen::Program>& programs,
                        const std::string& captures) {
  std::string list;
  for (const auto& p : programs) list += DumpJson({{"id", p.id}, {"path", p.path}}) + "\n";
  std::string list_path = (fs::path(o.out) / "capture_list.jsonl").string();
  KILN_RETURN_IF_ERROR(WriteFile(list_path, list));
  KILN_ASSIGN_OR_RETURN(std::string wdir, exec::FindWorkerDir());
  SpawnOptions so;
  int jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  so.argv = {exec::ResolvePython(o.worker.python), "-m", "kiln_worker.inductor_capture", "--list", list_path,
             "--out", captures, "--jobs", std::to_string(jobs), "--timeout", fmt::format("{}", o.capture_timeout_s),
             "--deadline", fmt::format("{}", o.capture_deadline_s), "--gpus", std::to_string(std::max(0, o.gpus))};
  if (o.dynamic_shapes) so.argv.push_back("--dynamic");
  const char* pp = std::getenv("PYTHONPATH");
  so.env_set["PYTHONPATH"] = pp && *pp ? wdir + ":" + pp : wdir;
  so.pipe_stdin = false;
  so.stderr_mode = o.quiet ? SpawnOptions::Stderr::kDiscard : SpawnOptions::Stderr::kInherit;
  auto hours = std::chrono::hours(48);
  KILN_ASSIGN_OR_RETURN(RunResult r, RunCommand(so, std::chrono::duration_cast<std::chrono::milliseconds>(hours)));
  // the worker's progress (a line per program, the out-of-memory retries), for the run's record
  (void)WriteFile((fs::path(o.out) / "capture.log").string(), r.err);
  if (!r.exit.exited || r.exit.code != 0)
    return Unavailable("the capture worker failed (" + r.exit.Describe() + "): " + r.err);
  return Status::Ok();
}

Result<std::map<std::string, nlohmann::json>> ReadCaptures(const std::string& path) {
  std::map<std::string, nlohmann::json> out;
  auto text = ReadFile(path);
  if (!text.ok()) return out;
  int line = 0;
  for (std::string_view l : SplitLines(*text)) {
    ++line;
    if (IsBlankLine(l)) continue;
    try {
      nlohmann::json j = nlohmann::json::parse(l);
      std::string id = j.at("id").get<std::string>();
      out[id] = std::move(j);
    } catch (const nlohmann::json::exception&) {
      // a line cut off by a stopped run: that program is captured again
    }
  }
  return out;
}

// Eager check and capture: the programs that ran in eager torch and compiled.
Result<std::vector<Captured>> CaptureStage(const DatagenOptions& o, const std::vector<datagen::Program>& programs,
                                           DatagenRun* run) {
  std::string captures = o.captures.empty() ? (fs::path(o.out) / "captures.jsonl").string() : o.captures;
  // The compiler route runs a Model on its get_inputs(); a TritonBench-T operator has no fixed inputs (its
  // test function calls it many ways), so it is read for benchmark exclusion and dropped here with a reason.
  std::vector<datagen::Program> runnable;
  for (const auto& p : programs) {
    if (p.origin == "tritonbench_t") {
      run->Reject(p, "capture", "route_unsupported",
                  "the compiler route needs a KernelBench-format program (class Model, get_inputs)", nullptr,
                  "inductor");
    } else {
      runnable.push_back(p);
    }
  }
  if (o.captures.empty() && !o.finish) KILN_RETURN_IF_ERROR(RunCaptureWorker(o, runnable, captures));
  KILN_ASSIGN_OR_RETURN(auto by_id, ReadCaptures(captures));
  std::vector<Captured> out;
  for (const auto& p : runnable) {
    auto it = by_id.find(p.id);
    if (it == by_id.end()) {
      run->Reject(p, "capture", "not_captured", "no capture recorded for this program", nullptr, "inductor");
      continue;
    }
    const nlohmann::json& c = it->second;
    if (!JsonBool(c, "ok")) {
      std::string stage = JsonString(c, "stage");
      std::string code = JsonBool(c, "out_of_memory")          ? "out_of_memory"
                         : stage == "eager" || stage == "load" ? "eager_failed"
                         : stage == "no_gpu"                  ? "no_gpu"
                                                              : "compile_failed";
      bool eager = stage == "eager" || stage == "load";  // the program itself failed: both routes lose it
      run->Reject(p, eager ? "eager" : "capture", code, JsonString(c, "error"), nullptr, eager ? "" : "inductor");
      continue;
    }
    run->counts.Add("captured", p.origin);
    out.push_back({p, c});
  }
  return out;
}

}  // namespace

void DatagenRun::Reject(const datagen::Program& p, const std::string& stage, const std::string& code,
                        const std::string& message, const nlohmann::json& verdict, const std::string& route) {
  nlohmann::json j = {{"id", p.id}, {"origin", p.origin}, {"path", p.path}, {"stage", stage},
                      {"reason", code}, {"message", message}};
  if (!route.empty()) j["route"] = route;
  if (!verdict.is_null()) j["verdict"] = verdict;
  rejects.push_back(std::move(j));
  counts.Add("rejected:" + stage, p.origin);
}

void DatagenRun::Note(const std::string& text) {
  if (!quiet) std::fprintf(stderr, "kiln datagen: %s\n", text.c_str());
}

int RunDatagen(const DatagenOptions& o) {
  Status st = CheckOptions(o);
  if (!st.ok()) {
    std::fprintf(stderr, "kiln datagen: error: %s\n", st.message().c_str());
    return 2;
  }
  DatagenRun run;
  run.quiet = o.quiet;
  std::error_code ec;
  fs::create_directories(o.out, ec);
  auto fail = [](const Status& s) {
    // located diagnostics ("file:line:col: error: ...") are printed as they are
    if (s.message().find(": error: ") != std::string::npos) {
      std::fprintf(stderr, "%s%s", s.message().c_str(), EndsWith(s.message(), "\n") ? "" : "\n");
    } else {
      std::fprintf(stderr, "kiln datagen: error: %s\n", s.message().c_str());
    }
    return 2;
  };
  auto programs = ProgramsStage(o, &run);
  if (!programs.ok()) return fail(programs.status());
  run.Note(fmt::format("programs: {} kept", programs->size()));
  if (o.stop_after == "programs") return FinishRun(o, &run, {});
  std::vector<Candidate> candidates;
  std::map<std::string, int64_t> captured_peaks;  // program id -> its GPU peak in the capture
  if (!o.llm_only) {
    auto captured = CaptureStage(o, *programs, &run);
    if (!captured.ok()) return fail(captured.status());
    for (const auto& c : *captured) captured_peaks[c.program.id] = CapturePeakBytes(c.capture);
    run.Note(fmt::format("capture: {} of {} compiled", captured->size(), programs->size()));
    if (o.stop_after == "capture") return FinishRun(o, &run, {});
    candidates = ConvertStage(o, *captured, &run);
    run.Note(fmt::format("convert: {} of {} standalone", candidates.size(), captured->size()));
  }
  if (o.use_llm) {
    // programs whose eager run failed in the capture are rejects already: no model is asked about them
    std::set<std::string> failed;
    for (const auto& r : run.rejects)
      if (r.value("stage", "") == "eager") failed.insert(r.value("id", ""));
    std::vector<datagen::Program> ask;
    for (const auto& p : *programs)
      if (!failed.count(p.id)) ask.push_back(p);
    auto answered = LlmStage(o, ask, &run);
    if (!answered.ok()) return fail(answered.status());
    run.Note(fmt::format("llm: {} of {} answers hold a Triton module and reasoning", answered->size(), ask.size()));
    for (auto& c : *answered) {
      // the model's module computes what the captured program does: the capture's peak is its memory hint too
      if (auto it = captured_peaks.find(c.program.id); it != captured_peaks.end()) c.capture_peak_bytes = it->second;
      candidates.push_back(std::move(c));
    }
  }
  if (o.stop_after == "convert" || (o.llm_only && o.stop_after == "capture")) return FinishRun(o, &run, {});
  return VerifyOutput(o, std::move(candidates), &run);
}

}  // namespace kiln::app

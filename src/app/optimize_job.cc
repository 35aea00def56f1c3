#include "app/optimize_job.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/candidate_runner.h"
#include "app/llm_proposer.h"
#include "app/ncu_profiler.h"
#include "app/prepare_input.h"
#include "app/progress.h"
#include "app/rewrite_proposer.h"
#include "app/rewrite_renderer.h"
#include "app/store_recorder.h"
#include "common/file.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"
#include "profile/device.h"
#include "search/report.h"
#include "store/store.h"

namespace kiln::app {

namespace {

// An exit code with its message (printed by the caller).
struct Exit {
  int code;
  std::string message;
};

// The task, the kernel and its space (restricted to --grid).
Result<search::OptimizeInput> LoadInput(const OptimizeJobOptions& o, std::optional<Exit>* exit) {
  auto spec = task::LoadTask(o.task, o.task_options.ToLoadOptions());
  if (!spec.ok()) {
    *exit = Exit{2, spec.status().message()};
    return spec.status();
  }
  auto in = PrepareInput(*spec, o.kernel);
  if (!in.ok()) {
    *exit = Exit{2, "kiln optimize: error: " + in.status().message()};
    return in.status();
  }
  if (o.grid.empty()) return in;
  auto fail = [&](const std::string& m) -> Status {
    *exit = Exit{2, m};
    return InvalidArgument(m);
  };
  auto text = ReadFile(o.grid);
  if (!text.ok()) return fail("kiln optimize: error: " + text.status().message());
  auto g = ParseJson(*text);
  if (g.is_discarded()) return fail(o.grid + ": error: not valid JSON");
  if (Status st = search::Space::RestrictToGrid(g, in->baseline, &in->space); !st.ok())
    return fail(o.grid + ": error: " + st.message());
  in->space_given = true;
  return in;
}

// The loop's options from the command's; notes what it chose for the user.
search::OptimizeOptions LoopOptions(const OptimizeJobOptions& o, int compile_jobs, search::OptimizeInput* in) {
  search::OptimizeOptions lo;
  lo.strategy = o.strategy;
  lo.budget_seconds = o.budget;
  lo.budget_is_search = o.budget_scope == "search";
  lo.hard_end_s = o.hard_end >= 0 ? o.hard_end : o.budget + 150;
  lo.slow_factor = o.slow_factor;
  lo.timeout_s = o.timeout;
  lo.max_evals = o.max_evals;
  lo.patience = o.patience;
  lo.min_speedup = o.min_speedup;
  lo.compile_jobs = compile_jobs;
  lo.seed = o.seed;
  lo.emit_autotune = o.emit_autotune;
  lo.profile_winner_always = o.profile_winner;
  lo.per_shape_fallback = !o.no_per_shape;
  lo.dry_run = o.dry_run;
  if (o.cases != "all") lo.cases = SplitComma(o.cases);
  if (o.cases.empty() && !o.dry_run && in->task.format == task::Format::kTritonBenchG && !in->task.perf_path.empty()) {
    // A perf harness sweeps 10-30 sizes; checking and timing all of them in every evaluation took most
    // of a minute per kernel on an H200. Tune for the largest sizes by default.
    lo.cases = {"@largest:3"};
    in->notes.push_back("cases: the 3 largest sizes of the perf harness (--cases all for every size)");
  }
  if (o.search_cases == "largest")
    lo.largest_case_only = true;
  else if (o.search_cases != "all")
    lo.search_cases = SplitComma(o.search_cases);
  return lo;
}

// The loop's machinery: workers, records, profiler. Lives for the job.
struct Machinery {
  std::unique_ptr<exec::Runner> measure;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<StoreRecorder> recorder;
  std::unique_ptr<CandidateRunner> runner;
  std::unique_ptr<NcuProfiler> profiler;
  std::optional<profile::DeviceRecord> device;  // the profiler's roofs (a profiler for another kernel reuses them)
  int compile_jobs = 0;
};

Status StartMachinery(const OptimizeJobOptions& o, const search::OptimizeInput& in, nlohmann::json* startup,
                      Machinery* m) {
  RunnerSpec spec = o.worker.Spec(o.isolation == "fork" ? exec::Isolation::kFork : exec::Isolation::kShared);
  KILN_ASSIGN_OR_RETURN(m->measure, MakeRunner(spec));
  std::function<std::unique_ptr<exec::Runner>()> make_compile;
  if (o.worker.replay.empty()) {
    int jobs =
        o.compile_jobs >= 0 ? o.compile_jobs : std::max(0, static_cast<int>(std::thread::hardware_concurrency()) - 1);
    m->compile_jobs = std::min(jobs, 8);
    RunnerSpec c = spec;
    c.isolation = exec::Isolation::kShared;  // our own rewrites: trusted, faster
    c.record.clear();                        // compile exchanges are not recorded
    if (m->compile_jobs > 0) make_compile = [c] { return std::move(MakeRunner(c)).value(); };
  }
  if (!o.records.no_db && o.worker.replay.empty()) {
    auto s = store::Store::Open(o.records.Path());
    if (s.ok()) {
      m->store = std::move(*s);
      m->recorder = std::make_unique<StoreRecorder>(m->store.get());
    } else {
      std::fprintf(stderr, "kiln optimize: warning: no records: %s\n", s.status().message().c_str());
    }
  }
  m->runner = std::make_unique<CandidateRunner>(m->measure.get(), m->store.get(), false, make_compile, m->compile_jobs);
  if (!o.dry_run) m->runner->Prewarm();  // compile workers start while the baseline runs
  if (!o.no_profile && !o.dry_run && o.worker.replay.empty()) {
    profile::JsonDeviceStore ds;
    const double t_dev = search::SteadySeconds();
    auto d = profile::CharacterizeDevice(*Unrecorded(m->measure.get()), {}, ds);
    (*startup)["device_and_worker_start_s"] = search::SteadySeconds() - t_dev;
    if (d.ok()) m->device = *d;
    m->profiler = std::make_unique<NcuProfiler>(in.kernel, m->device, exec::ResolvePython(o.worker.python), o.ncu);
  }
  return Status::Ok();
}

// --llm: the model's client (records and cache in the store, when there is one) and the proposer.
Result<std::unique_ptr<LlmProposer>> MakeProposer(const OptimizeJobOptions& o, const search::OptimizeInput& in,
                                                  store::Store* store, std::unique_ptr<llm::Client>* client) {
  llm::Config cfg = o.llm_flags.Resolved();
  KILN_RETURN_IF_ERROR(cfg.Validate());
  if (!store) cfg.use_cache = false;
  gen::PromptTemplate tmpl = gen::DefaultOptimizeTemplate();
  if (!o.prompt_template.empty()) {
    KILN_ASSIGN_OR_RETURN(tmpl, gen::LoadTemplate(o.prompt_template));
  }
  KILN_ASSIGN_OR_RETURN(auto fields, gen::TaskFields(in.task));
  *client = std::make_unique<llm::Client>(cfg, store);
  LlmProposerOptions po;
  po.samples = o.llm_samples;
  po.rounds = o.llm_rounds;
  po.sampling = o.llm_flags.sampling;
  po.seed = o.seed;
  po.purpose = "optimize:" + in.task.name;
  po.task = in.task;  // a winning proposal is analysed and tuned further
  po.kernel = in.kernel;
  return std::make_unique<LlmProposer>(client->get(), std::move(tmpl), std::move(fields), po);
}

// --out, --json, --html. -> an exit code when writing --out failed.
std::optional<Exit> WriteOutputs(const OptimizeJobOptions& o, const search::OptimizeResult& res) {
  // --json -: stdout carries the JSON alone; the text report and notes go to stderr
  std::FILE* text_out = o.json_out == "-" ? stderr : stdout;
  std::fputs(search::FormatReportText(res).c_str(), text_out);
  if (!o.out.empty()) {  // a dry run writes what it verified too (the original: nothing wins untimed)
    const std::string& text = !res.autotune_source.empty() ? res.autotune_source : res.best_source;
    if (auto s = WriteFile(o.out, text); !s.ok()) return Exit{1, "kiln optimize: error: " + s.message()};
    std::fprintf(text_out, "wrote %s (%s)\n", o.out.c_str(),
                 res.improved ? (res.autotune_source.empty() ? "optimized" : "optimized, @triton.autotune")
                              : "the original, unchanged");
  }
  if (!o.json_out.empty()) {
    std::string j = DumpJson(res.ToJson(), 2) + "\n";
    if (o.json_out == "-")
      std::fputs(j.c_str(), stdout);
    else if (auto s = WriteFile(o.json_out, j); !s.ok())
      std::fprintf(stderr, "kiln optimize: %s\n", s.message().c_str());
  }
  if (!o.html_out.empty())
    if (auto s = WriteFile(o.html_out, search::FormatReportHtml(res)); !s.ok())
      std::fprintf(stderr, "kiln optimize: %s\n", s.message().c_str());
  return std::nullopt;
}

// Workers shut down now (in parallel), and say so when it is slow.
void StopMachinery(Machinery* m) {
  const auto t_down = std::chrono::steady_clock::now();
  m->runner.reset();
  m->measure.reset();
  const double down_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_down).count();
  if (down_s > 3.0) std::fprintf(stderr, "kiln optimize: note: stopping the workers took %.1f s\n", down_s);
}

int Print(const Exit& e) {
  std::fprintf(stderr, "%s\n", e.message.c_str());
  return e.code;
}

// The loop over one input, with its renderer and proposer (the diagnosis's source rewrites, or --llm's
// model). Sets `exit` when the proposer cannot be made.
Result<search::OptimizeResult> RunLoop(const OptimizeJobOptions& o, Machinery* m, const search::OptimizeInput& in,
                                       const search::OptimizeOptions& lo, search::Progress* progress,
                                       std::optional<Exit>* exit) {
  search::Deps deps{m->runner.get(), nullptr, m->profiler.get(), m->recorder.get(), progress};
  RewriteRenderer renderer(in.render_source.empty() ? in.original_source : in.render_source, in.task.path, in.kernel);
  deps.renderer = &renderer;
  std::unique_ptr<llm::Client> llm_client;
  std::unique_ptr<search::Proposer> proposer;
  if (o.llm) {
    auto p = MakeProposer(o, in, m->store.get(), &llm_client);
    if (!p.ok()) {
      *exit = Exit{2, "kiln optimize: " + p.status().message()};
      return p.status();
    }
    proposer = std::move(*p);
  } else {
    // The diagnosis's source rewrites (a persistent grid, split-K) are proposed like a model's.
    proposer = std::make_unique<RewriteProposer>(in.task, in.kernel);
  }
  deps.proposer = proposer.get();
  return search::Optimize(in, lo, deps);
}

}  // namespace

int RunOptimize(const OptimizeJobOptions& o) {
  const double started_at = search::SteadySeconds();
  nlohmann::json startup = nlohmann::json::object();  // seconds spent before the loop, by step
  std::optional<Exit> exit;
  auto in = LoadInput(o, &exit);
  if (!in.ok()) return Print(*exit);
  Machinery m;
  if (Status s = StartMachinery(o, *in, &startup, &m); !s.ok())
    return Print({2, "kiln optimize: error: " + s.message()});
  const int jobs = o.worker.replay.empty() ? m.compile_jobs : 0;
  search::OptimizeOptions lo = LoopOptions(o, jobs, &*in);
  // Chosen by its tunables among several launched kernels: the original's run shows whether it runs at all.
  lo.kernel_chosen = o.kernel.empty() && o.grid.empty() && in->launched_kernels.size() > 1;
  StderrProgress progress;
  search::Progress* shown = o.quiet ? nullptr : &progress;
  startup["before_search_loop_s"] = search::SteadySeconds() - started_at;
  lo.started_at = started_at;
  lo.startup = startup;
  auto res = RunLoop(o, &m, *in, lo, shown, &exit);
  if (!res.ok() && exit) return Print(*exit);
  if (res.ok() && res->tuned_kernel_not_run) {
    // The kernel with the most tunables among those that ran; the hard end still counts from the start.
    auto again = PrepareInput(in->task, "", {}, res->kernels_ran);
    if (again.ok()) {
      again->notes.insert(again->notes.begin(),
                          fmt::format("'{}' (the kernel with the most tunables) did not run when the original "
                                      "ran the cases; tuning '{}', of the kernels that ran ({})",
                                      in->kernel, again->kernel, fmt::join(res->kernels_ran, ", ")));
      search::OptimizeOptions lo2 = LoopOptions(o, jobs, &*again);
      lo2.started_at = started_at;
      lo2.startup = startup;
      if (m.profiler)
        m.profiler =
            std::make_unique<NcuProfiler>(again->kernel, m.device, exec::ResolvePython(o.worker.python), o.ncu);
      res = RunLoop(o, &m, *again, lo2, shown, &exit);
      if (!res.ok() && exit) return Print(*exit);
    } else {
      res->notes.push_back("no kernel that ran could be tuned instead: " + again.status().message());
    }
  }
  if (!res.ok()) {
    // A machinery failure (a worker that cannot start, ...) is an infrastructure error, never a verdict.
    const bool machinery = m.runner->machinery_error().has_value();
    const int code = machinery ? 2 : res.status().code() == Code::kUnavailable ? 3 : 1;
    return Print({code, "kiln optimize: error: " + res.status().message()});
  }
  if (auto e = WriteOutputs(o, *res)) return Print(*e);
  StopMachinery(&m);
  return 0;
}

}  // namespace kiln::app

// `kiln optimize TASK --out FILE`: the profile -> diagnose -> rewrite -> measure loop (src/search).
#include <chrono>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "common/file.h"
#include "exec/runner.h"
#include "profile/device.h"
#include "search/adapters.h"
#include "search/loop.h"
#include "search/progress.h"
#include "search/records.h"
#include "search/report.h"
#include "store/store.h"
#include "task/task.h"

namespace kiln::cli {

namespace {

struct OptFlags {
  std::string task, out, entry, bench, format, kernel;
  std::string json_out, html_out, db, python, replay, record, ncu;
  std::string strategy = "auto";
  std::string search_cases = "all";
  std::string cases;
  std::string grid;
  std::string isolation = "shared";
  double budget = 60;
  int max_evals = 0;
  int compile_jobs = -1;
  int patience = 2;
  double min_speedup = 1.01;
  uint64_t seed = 1234;
  bool emit_autotune = false, dry_run = false, no_profile = false, no_db = false, json = false, quiet = false;
  bool profile_winner = false, no_per_shape = false;
  bool interpret = false;
};

// "a,b,,c" -> {a, b, c}
std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  for (size_t a = 0; a < s.size();) {
    size_t b = s.find(',', a);
    if (b == std::string::npos) b = s.size();
    if (b > a) out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

Command RegisterOptimize(CLI::App& app) {
  auto* sub = app.add_subcommand("optimize", "Find a faster verified variant of a Triton kernel (needs a GPU)");
  auto f = std::make_shared<OptFlags>();
  sub->add_option("task", f->task, "Task file (kiln module or TritonBench-G file)")->required();
  sub->add_option("--out,-o", f->out, "Write the optimized module here (the original when nothing wins)");
  sub->add_option("--entry", f->entry, "Entry function (kiln format)");
  sub->add_option("--bench", f->bench, "Bench file (kiln format)");
  sub->add_option("--format", f->format, "Task format (auto-detected)");
  sub->add_option("--kernel", f->kernel, "Kernel to tune (default: the launched kernel with the most tunables)");
  sub->add_option("--strategy", f->strategy, "rules | coordinate | bayes | auto (exhaustive: every config, for benchmarks)")
      ->check(CLI::IsMember({"rules", "coordinate", "bayes", "auto", "exhaustive"}));
  sub->add_option("--budget-seconds", f->budget, "Wall-clock budget (env KILN_BUDGET_SECONDS)")->envname("KILN_BUDGET_SECONDS");
  sub->add_option("--max-evals", f->max_evals, "Maximum timed measurements while searching (0: no limit)");
  sub->add_option("--patience", f->patience, "Stop after this many rounds without a 1% gain");
  sub->add_option("--min-speedup", f->min_speedup, "A winner must be at least this much faster (geomean)");
  sub->add_option("--compile-jobs", f->compile_jobs, "Parallel CPU compile workers (-1: cores - 1, 0: none)");
  sub->add_option("--cases", f->cases,
                  "Cases used at all (baseline, search, verification): NAME,NAME, @largest:K (the K perf-harness "
                  "cases with the most input bytes) or all; default @largest:3 for a TritonBench-G task with a "
                  "perf harness, else all");
  sub->add_option("--grid", f->grid,
                  "JSON file {\"PARAM\": [values...]}: search exactly this grid (unlisted tunables stay as "
                  "they are), e.g. to compare with Triton's autotuner on the same configs");
  sub->add_option("--search-cases", f->search_cases, "Cases timed while searching: all | largest | NAME,NAME");
  sub->add_option("--seed", f->seed, "Seed of inputs and strategies");
  sub->add_option("--isolation", f->isolation,
                  "Measuring worker: shared (default: your kernel and kiln's rewrites of it, one warm CUDA "
                  "process, restarted after a fault) or fork (a child per candidate)")
      ->check(CLI::IsMember({"shared", "fork"}));
  sub->add_flag("--emit-autotune", f->emit_autotune, "Write @triton.autotune with the best configs (portable)");
  sub->add_flag("--dry-run", f->dry_run, "No GPU: check candidates' correctness in the interpreter, time nothing");
  sub->add_flag("--no-profile", f->no_profile, "Skip ncu (measure only)");
  sub->add_flag("--no-per-shape", f->no_per_shape,
                "Do not try @triton.autotune over a finalist and the original when the finalist is faster "
                "on some input cases and slower on others");
  sub->add_flag("--profile-winner", f->profile_winner,
                "Profile the winner even when the budget has no room left for it (default: its roofline "
                "position is then estimated from the profiled case's speedup)");
  sub->add_option("--ncu", f->ncu, "Nsight Compute executable (default: $KILN_NCU, PATH, the CUDA install)");
  sub->add_option("--json", f->json_out, "Write the JSON report here ('-' for stdout)");
  sub->add_option("--html", f->html_out, "Write the HTML report here");
  sub->add_option("--db", f->db, "Records database (default: the store's)");
  sub->add_flag("--no-db", f->no_db, "Do not record");
  sub->add_option("--python", f->python, "Python with torch+triton (env KILN_PYTHON)");
  sub->add_option("--replay", f->replay, "Answer from a recorded transcript instead of a worker");
  sub->add_option("--record", f->record, "Append every worker exchange to this transcript");
  sub->add_flag("--interpret", f->interpret, "Force Triton's interpreter in the worker");
  sub->add_flag("--quiet,-q", f->quiet, "No progress display");
  return {sub, [f]() -> int {
            const double started_at = search::SteadySeconds();
            nlohmann::json startup = nlohmann::json::object();  // seconds spent before the loop, by step
            task::LoadOptions lo;
            lo.format = f->format;
            lo.entry = f->entry;
            lo.bench = f->bench;
            auto spec = task::LoadTask(f->task, lo);
            if (!spec.ok()) {
              std::fprintf(stderr, "%s\n", spec.status().message().c_str());
              return 2;
            }
            auto in = search::PrepareInput(*spec, f->kernel);
            if (!in.ok()) {
              std::fprintf(stderr, "kiln optimize: error: %s\n", in.status().message().c_str());
              return 2;
            }
            if (!f->grid.empty()) {
              auto text = ReadFile(f->grid);
              if (!text.ok()) {
                std::fprintf(stderr, "kiln optimize: error: %s\n", text.status().message().c_str());
                return 2;
              }
              auto g = nlohmann::json::parse(*text, nullptr, false);
              if (g.is_discarded()) {
                std::fprintf(stderr, "%s: error: not valid JSON\n", f->grid.c_str());
                return 2;
              }
              if (auto err = search::Space::RestrictToGrid(g, in->baseline, &in->space)) {
                std::fprintf(stderr, "%s: error: %s\n", f->grid.c_str(), err->c_str());
                return 2;
              }
            }
            // Runners.
            std::unique_ptr<exec::Runner> measure, recording;
            std::function<std::unique_ptr<exec::Runner>()> make_compile;
            exec::WorkerOptions wo;
            wo.python = f->python;
            wo.isolation = f->isolation == "fork" ? exec::Isolation::kFork : exec::Isolation::kShared;
            wo.interpret = f->interpret;
            if (!f->replay.empty()) {
              auto rr = exec::ReplayRunner::Open(f->replay);
              if (!rr.ok()) {
                std::fprintf(stderr, "kiln optimize: error: %s\n", rr.status().message().c_str());
                return 2;
              }
              measure = std::move(*rr);
            } else {
              measure = std::make_unique<exec::WorkerRunner>(wo);
              if (!f->record.empty()) recording = std::make_unique<exec::RecordingRunner>(measure.get(), f->record);
              int jobs = f->compile_jobs >= 0 ? f->compile_jobs
                                              : std::max(0, static_cast<int>(std::thread::hardware_concurrency()) - 1);
              jobs = std::min(jobs, 8);
              f->compile_jobs = jobs;
              if (jobs > 0) {
                make_compile = [wo]() -> std::unique_ptr<exec::Runner> {
                  exec::WorkerOptions c = wo;
                  c.isolation = exec::Isolation::kShared;  // our own rewrites: trusted, faster
                  c.cuda_visible_devices = "";            // compile mode launches nothing
                  return std::make_unique<exec::WorkerRunner>(c);
                };
              }
            }
            std::unique_ptr<store::Store> st;
            std::unique_ptr<search::SqliteRecorder> rec;
            if (!f->no_db && f->replay.empty()) {
              std::string path = f->db.empty() ? store::DefaultDbPath() : f->db;
              auto s = store::Store::Open(path);
              if (s.ok()) st = std::move(*s);
              auto r = search::SqliteRecorder::Open(path);
              if (r.ok()) rec = std::move(*r);
              else std::fprintf(stderr, "kiln optimize: warning: no records: %s\n", r.status().message().c_str());
            }
            exec::Runner* m = recording ? recording.get() : measure.get();
            auto ev = std::make_unique<search::RunnerEvaluator>(m, st.get(), false, make_compile,
                                                                std::max(0, f->compile_jobs));
            if (!f->dry_run) ev->Prewarm();  // compile workers start while the baseline runs
            search::RewriteRenderer renderer(in->original_source, spec->path, in->kernel);
            // Profiler: ncu + device peaks when available.
            std::unique_ptr<search::NcuProfiler> prof;
            if (!f->no_profile && !f->dry_run && f->replay.empty()) {
              std::optional<profile::DeviceRecord> dev;
              profile::JsonDeviceStore ds;
              const double t_dev = search::SteadySeconds();
              auto d = profile::CharacterizeDevice(*measure, {}, ds);
              startup["device_and_worker_start_s"] = search::SteadySeconds() - t_dev;
              if (d.ok()) dev = *d;
              prof = std::make_unique<search::NcuProfiler>(in->kernel, dev, exec::ResolvePython(f->python), f->ncu);
            }
            search::OptimizeOptions o;
            o.strategy = f->strategy;
            o.budget_seconds = f->budget;
            o.started_at = started_at;
            o.max_evals = f->max_evals;
            o.patience = f->patience;
            o.min_speedup = f->min_speedup;
            o.compile_jobs = f->replay.empty() ? std::max(0, f->compile_jobs) : 0;
            o.seed = f->seed;
            o.emit_autotune = f->emit_autotune;
            o.profile_winner_always = f->profile_winner;
            o.per_shape_fallback = !f->no_per_shape;
            o.dry_run = f->dry_run;
            if (f->cases != "all") o.cases = SplitComma(f->cases);
            if (f->cases.empty() && !f->dry_run && spec->format == task::Format::kTritonBenchG &&
                !spec->perf_path.empty()) {
              // A perf harness sweeps 10-30 sizes; checking and timing all of them in every evaluation
              // took most of a minute per kernel on an H200. Tune for the largest sizes by default.
              o.cases = {"@largest:3"};
              in->notes.push_back("cases: the 3 largest sizes of the perf harness (--cases all for every size)");
            }
            if (f->search_cases == "largest") o.largest_case_only = true;
            else if (f->search_cases != "all") o.search_cases = SplitComma(f->search_cases);
            search::StderrProgress progress;
            search::Deps deps{ev.get(), &renderer, prof.get(), rec.get(), f->quiet ? nullptr : &progress};
            startup["before_search_loop_s"] = search::SteadySeconds() - started_at;
            o.startup = startup;
            auto res = search::Optimize(*in, o, deps);
            if (!res.ok()) {
              std::fprintf(stderr, "kiln optimize: error: %s\n", res.status().message().c_str());
              return res.status().code() == Code::kUnavailable ? 3 : 1;
            }
            std::fputs(search::FormatReportText(*res).c_str(), stdout);
            if (!f->out.empty() && !f->dry_run) {
              const std::string& text = !res->autotune_source.empty() ? res->autotune_source : res->best_source;
              auto s = WriteFile(f->out, text);
              if (!s.ok()) {
                std::fprintf(stderr, "kiln optimize: error: %s\n", s.message().c_str());
                return 1;
              }
              std::printf("wrote %s (%s)\n", f->out.c_str(),
                          res->improved ? (res->autotune_source.empty() ? "optimized" : "optimized, @triton.autotune")
                                        : "the original, unchanged");
            }
            if (!f->json_out.empty()) {
              std::string j = res->ToJson().dump(2) + "\n";
              if (f->json_out == "-") std::fputs(j.c_str(), stdout);
              else if (auto s = WriteFile(f->json_out, j); !s.ok()) std::fprintf(stderr, "kiln optimize: %s\n", s.message().c_str());
            }
            if (!f->html_out.empty())
              if (auto s = WriteFile(f->html_out, search::FormatReportHtml(*res)); !s.ok())
                std::fprintf(stderr, "kiln optimize: %s\n", s.message().c_str());
            // Workers: shut down now (in parallel), and say so when it is slow.
            const auto t_down = std::chrono::steady_clock::now();
            ev.reset();
            recording.reset();
            measure.reset();
            const double down_s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t_down).count();
            if (down_s > 3.0)
              std::fprintf(stderr, "kiln optimize: note: stopping the workers took %.1f s\n", down_s);
            return 0;
          }};
}

Registrar reg(50, RegisterOptimize);

}  // namespace

}  // namespace kiln::cli

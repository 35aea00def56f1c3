// `kiln optimize TASK --out FILE`: the profile -> diagnose -> rewrite -> measure loop
// (src/app/optimize_job.h). Exit codes: 0 done, 1 the loop failed, 2 usage or infrastructure error,
// 3 no GPU.
#include "app/optimize_job.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

namespace {

void AddSearchFlags(CLI::App* sub, app::OptimizeJobOptions* o) {
  sub->add_option("--kernel", o->kernel, "Kernel to tune (default: the launched kernel with the most tunables)");
  sub->add_option("--strategy", o->strategy,
                  "rules | coordinate | bayes | auto (exhaustive: every config, for benchmarks)")
      ->check(CLI::IsMember({"rules", "coordinate", "bayes", "auto", "exhaustive"}));
  sub->add_option("--budget-seconds", o->budget, "Wall-clock budget (env KILN_BUDGET_SECONDS)")
      ->envname("KILN_BUDGET_SECONDS")
      ->check(FiniteRange(1, 1e7))
      ->capture_default_str();
  sub->add_option("--budget-scope", o->budget_scope,
                  "search: the budget is the search's own (baseline, profile and verification counted apart); "
                  "run: it counts from the command's start and includes verification")
      ->check(CLI::IsMember({"search", "run"}))
      ->capture_default_str();
  sub->add_option("--hard-end-seconds", o->hard_end,
                  "The whole run ends by then, from the command's start, measurements in flight cut (default: "
                  "budget + 150; 0: none)")
      ->check(FiniteRange(0, 1e7));
  sub->add_option("--timeout", o->timeout,
                  "One measurement's limit in seconds (an @triton.autotune original's first timed run, which tunes "
                  "every config at each size, may take until the hard end)")
      ->check(FiniteRange(1, 1e7))
      ->capture_default_str();
  sub->add_option("--slow-factor", o->slow_factor,
                  "A search candidate taking longer than this many times the original's measurement is pruned, "
                  "not waited for (0: off)")
      ->check(FiniteRange(0, 1e6))
      ->capture_default_str();
  sub->add_option("--max-evals", o->max_evals, "Maximum timed measurements while searching (0: no limit)");
  sub->add_option("--patience", o->patience, "Stop after this many rounds without a 1% gain");
  sub->add_option("--min-speedup", o->min_speedup, "A winner must be at least this much faster (geomean)")
      ->check(FiniteRange(0, 1e6));
  sub->add_option("--compile-jobs", o->compile_jobs, "Parallel CPU compile workers (-1: cores - 1, 0: none)");
  sub->add_option("--cases", o->cases,
                  "Cases used at all (baseline, search, verification): NAME,NAME, @largest:K (the K perf-harness "
                  "cases with the most input bytes) or all; default @largest:3 for a TritonBench-G task with a "
                  "perf harness, else all");
  sub->add_option("--grid", o->grid,
                  "JSON file {\"PARAM\": [values...]}: search exactly this grid (unlisted tunables stay as "
                  "they are), e.g. to compare with Triton's autotuner on the same configs");
  sub->add_option("--search-cases", o->search_cases, "Cases timed while searching: all | largest | NAME,NAME");
  sub->add_option("--seed", o->seed, "Seed of inputs and strategies");
  sub->add_option("--isolation", o->isolation,
                  "Measuring worker: shared (default: your kernel and kiln's rewrites of it, one warm CUDA "
                  "process, restarted after a fault) or fork (a child per candidate)")
      ->check(CLI::IsMember({"shared", "fork"}));
  sub->add_flag("--emit-autotune", o->emit_autotune, "Write @triton.autotune with the best configs (portable)");
  sub->add_flag("--dry-run", o->dry_run, "No GPU: check candidates' correctness in the interpreter, time nothing");
  sub->add_flag("--no-profile", o->no_profile, "Skip ncu (measure only)");
  sub->add_flag("--no-per-shape", o->no_per_shape,
                "Do not try @triton.autotune over a finalist and the original when the finalist is faster "
                "on some input cases and slower on others");
  sub->add_flag("--profile-winner", o->profile_winner,
                "Profile the winner even when the budget has no room left for it (default: its roofline "
                "position is then estimated from the profiled case's speedup)");
  sub->add_option("--ncu", o->ncu, "Nsight Compute executable (default: $KILN_NCU, PATH, the CUDA install)");
}

Command RegisterOptimize(CLI::App& app) {
  auto* sub = app.add_subcommand("optimize", "Find a faster verified variant of a Triton kernel (needs a GPU)");
  auto o = std::make_shared<app::OptimizeJobOptions>();
  sub->add_option("task", o->task, "Task file (kiln module or TritonBench-G file)")->required();
  sub->add_option("--out,-o", o->out, "Write the optimized module here (the original when nothing wins)");
  AddTaskFlags(sub, &o->task_options);
  AddSearchFlags(sub, o.get());
  sub->add_option("--json", o->json_out, "Write the JSON report here ('-' for stdout)");
  sub->add_option("--html", o->html_out, "Write the HTML report here");
  sub->add_flag("--llm", o->llm,
                "After the profile, a model behind an OpenAI-compatible API proposes rewritten modules, each "
                "checked and verified like any candidate (--llm-url, --llm-model; docs/generate.md)");
  sub->add_option("--llm-samples", o->llm_samples, "--llm: proposals per round (independent conversations)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  sub->add_option("--llm-rounds", o->llm_rounds, "--llm: rounds of proposals; each round is told how the last fared")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  sub->add_option("--prompt-template", o->prompt_template, "--llm: prompt template (default: prompts/optimize.txt, built in)");
  AddLlmFlags(sub, &o->llm_flags);
  AddRecordsFlags(sub, &o->records);
  AddWorkerFlags(sub, &o->worker);
  sub->add_flag("--quiet,-q", o->quiet, "No progress display");
  return {sub, [o]() { return app::RunOptimize(*o); }};
}

Registrar reg(50, RegisterOptimize);

}  // namespace

}  // namespace kiln::cli

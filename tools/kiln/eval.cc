// `kiln eval`: verified execution of a candidate against a task (docs/eval.md).
//
//   kiln eval --task T [--candidate C] [--json] [--mode check|time] [--policy strict|trusted] ...
//   kiln eval --batch pairs.jsonl --out results.jsonl ...
//
// Exit codes: see src/app/eval_job.h (0 ok, 1 the candidate failed, 2 usage or infrastructure error).
#include "app/eval_job.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

namespace {

void AddBatchFlags(CLI::App* sub, app::EvalOptions* o) {
  sub->add_option("--batch", o->batch, "JSON-lines file of {\"task\", \"candidate\", ...} pairs");
  sub->add_option("--out", o->out, "Batch results (JSON lines; default stdout)");
  sub->add_option("--compile-workers", o->compile_workers, "Batch: compile workers (default automatic; 0: none)");
  sub->add_option("--check-workers", o->check_workers,
                  "Batch on GPUs: check workers per GPU, sharing it for correctness before exclusive timing "
                  "(default min(8, cores / (2 * GPUs)); 0: no pipeline)")
      ->check(CLI::Range(0, 64));
  sub->add_option("--time-isolation", o->time_isolation,
                  "Batch with check workers: isolation of the timing stage (shared (default), fork or fresh)");
  sub->add_option("--workers", o->workers, "Batch without a GPU: parallel interpreter workers")
      ->check(CLI::Range(1, 256));
  sub->add_option("--gpus", o->gpus, "Batch: use at most this many GPUs");
  sub->add_flag("--quiet", o->quiet, "Batch: no progress on stderr");
  sub->add_flag("--resume", o->resume,
                "Batch: keep the results already in --out (matched by a hash of each pair), evaluate the rest, "
                "append");
}

Command RegisterEval(CLI::App& app) {
  auto* sub = app.add_subcommand("eval", "Verified execution of a candidate against a task (docs/eval.md)");
  auto o = std::make_shared<app::EvalOptions>();
  sub->add_option("--task", o->task,
                  "Task file: KernelBench, TritonBench-G/T module, or kiln module (with --entry/--bench)");
  sub->add_option("--candidate", o->candidate, "Candidate source file (omit: the task's own code)");
  sub->add_option("--baseline", o->baseline,
                  "Mode time: time the candidate against this version of the code instead of the reference "
                  "(interleaved, same process; correctness is still checked against the reference)");
  AddTaskFlags(sub, &o->task_options, true, true);
  sub->add_option("--size", o->sizes, "Override a size constant of the task, NAME=VALUE (repeatable)");
  sub->add_flag("--json", o->json, "Print the result as JSON");
  sub->add_option("--mode", o->mode, "check (correctness) or time (correctness, then timing)")->capture_default_str();
  sub->add_option("--policy", o->policy, "strict (untrusted code) or trusted (your own kernel)")->capture_default_str();
  sub->add_option("--isolation", o->isolation, "shared, fork (default) or fresh");
  sub->add_option("--protocol", o->protocol,
                  "Tolerances: kernelbench (per dtype, default) or legacy (1e-2 everywhere)");
  sub->add_option("--seed", o->seed, "Seed of the input trials");
  sub->add_option("--trials", o->trials, "Correctness trials per case (fresh inputs each)")->check(CLI::Range(1, 1000));
  sub->add_option("--case", o->cases, "Run only these cases (repeatable)");
  sub->add_option("--timeout", o->timeout_s, "Per-evaluation limit in seconds (the runner adds a grace)")
      ->check(FiniteRange(0.1, 86400.0))
      ->capture_default_str();
  AddRecordsFlags(sub, &o->records);
  sub->add_flag("--no-cache", o->no_cache, "Evaluate even when a cached result exists (still recorded)");
  AddWorkerFlags(sub, &o->worker);
  AddBatchFlags(sub, o.get());
  return {sub, [o]() { return app::RunEval(*o); }};
}

Registrar reg(30, RegisterEval);

}  // namespace

}  // namespace kiln::cli

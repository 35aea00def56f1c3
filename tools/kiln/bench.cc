// `kiln bench`: a benchmark channel over model samples, with honest metrics (docs/bench.md).
//
//   kiln bench tritonbench-g|tritonbench-t|kernelbench [--level 1|2|3] --samples S|--gold --dataset DIR
//              [--out DIR] [--k 1,5,10] [--json] [evaluation options]
//
// Exit codes: see src/app/bench_job.h.
#include "app/bench_job.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

namespace {

Command RegisterBench(CLI::App& app) {
  auto* sub =
      app.add_subcommand("bench", "A benchmark channel over model samples, with honest metrics (docs/bench.md)");
  auto o = std::make_shared<app::BenchOptions>();
  o->eval.mode = "time";
  sub->add_option("channel", o->channel, "tritonbench-g, tritonbench-t or kernelbench")
      ->required()
      ->check(CLI::IsMember({"tritonbench-g", "tritonbench-t", "kernelbench"}));
  sub->add_option("--level", o->level, "KernelBench level (1, 2 or 3)")->check(CLI::Range(1, 3));
  sub->add_option("--samples", o->samples,
                  "JSON lines of {task, sample, response|code}, or a KernelBench generation folder");
  sub->add_option("--dataset", o->dataset, "The TritonBench or KernelBench checkout holding the tasks");
  sub->add_option("--out", o->out, "Report folder (pairs, results, summary, tables, HTML)")->capture_default_str();
  sub->add_flag("--gold", o->gold, "Run the channel's own reference as the samples (the ceiling of this installation)");
  sub->add_option("--task", o->tasks, "Only these tasks (file stems; repeatable)");
  sub->add_option("--k", o->ks, "pass@k for these k (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sub->add_option("--label", o->label, "The model's name in the table (default: the samples' file name)");
  sub->add_flag("--json", o->json, "Print summary.json instead of the table");
  sub->add_option("--baseline", o->baseline,
                  "KernelBench: eager (default), or compile|both: also the speedups over torch.compile(reference), "
                  "measured on the same GPU")
      ->check(CLI::IsMember({"eager", "compile", "both"}))
      ->capture_default_str();
  sub->add_option("--baseline-file", o->baseline_file,
                  "KernelBench: torch.compile times from KernelBench's baseline JSON instead of measuring them");
  sub->add_flag("--report-only", o->report_only,
                "Evaluate nothing: report the results already in --out (samples without one count as errors)");
  app::EvalOptions& e = o->eval;
  sub->add_option("--mode", e.mode, "check (correctness) or time (correctness, then timing)")
      ->check(CLI::IsMember({"check", "time"}))
      ->capture_default_str();
  sub->add_option("--protocol", e.protocol, "Tolerances: kernelbench (per dtype, default) or legacy (1e-2 everywhere)")
      ->check(CLI::IsMember({"kernelbench", "legacy"}));
  sub->add_option("--size", e.sizes, "Override a size constant of every task, NAME=VALUE (repeatable)");
  sub->add_option("--timeout", e.timeout_s, "Per-evaluation limit in seconds")
      ->check(FiniteRange(0.1, 86400.0))
      ->capture_default_str();
  sub->add_option("--trials", e.trials, "Correctness trials per case")->check(CLI::Range(1, 1000));
  sub->add_option("--gpus", e.gpus, "Use at most this many GPUs");
  sub->add_option("--check-workers", e.check_workers, "Check workers per GPU (default automatic)")
      ->check(CLI::Range(0, 64));
  sub->add_option("--workers", e.workers, "Without a GPU: parallel interpreter workers")->check(CLI::Range(1, 256));
  sub->add_flag("--quiet", e.quiet, "No progress on stderr");
  sub->add_flag("--no-cache", e.no_cache, "Evaluate even when a cached result exists (still recorded)");
  AddRecordsFlags(sub, &e.records);
  AddWorkerFlags(sub, &e.worker, kPython | kInterpret);
  return {sub, [o]() { return app::RunBench(*o); }};
}

Registrar reg(35, RegisterBench);

}  // namespace

}  // namespace kiln::cli

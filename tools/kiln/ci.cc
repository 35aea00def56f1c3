// `kiln ci --baseline FILE [--update-baseline] [--threshold 5] [--junit FILE] TASKS...`: the
// performance-regression gate (src/app/ci_job.h). Exit: 0 pass, 1 regression/failure, 2 refused/error.
#include "app/ci_job.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

namespace {

Command RegisterCi(CLI::App& app) {
  auto* sub = app.add_subcommand("ci", "Performance-regression gate against a stored baseline (needs a GPU)");
  auto o = std::make_shared<app::CiJobOptions>();
  sub->add_option("tasks", o->tasks, "Task files")->required();
  sub->add_option("--baseline", o->baseline, "Baseline JSON file")->required();
  sub->add_flag("--update-baseline", o->update, "Measure and write the baseline instead of comparing");
  sub->add_option("--threshold", o->threshold, "Regression threshold in percent")
      ->check(FiniteRange(0, 1000))
      ->capture_default_str();
  sub->add_option("--junit", o->junit, "Write JUnit XML here");
  sub->add_flag("--no-remeasure", o->no_remeasure, "Fail on the first measurement (no confirmation run)");
  sub->add_flag("--allow-different-gpu", o->allow_gpu, "Compare with a baseline from another GPU model (warn)");
  sub->add_option("--format", o->format, "Task format (default: detect)");
  AddWorkerFlags(sub, &o->worker, kPython | kReplay);
  sub->add_flag("--json", o->json, "Print the rows as JSON");
  return {sub, [o]() { return app::RunCiJob(*o); }};
}

Registrar reg(60, RegisterCi);

}  // namespace

}  // namespace kiln::cli

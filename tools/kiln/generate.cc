// `kiln generate --task T --out DIR`: a model writes Triton for the tasks; kiln verifies each answer and
// feeds failures back (src/app/generate_job.h, docs/generate.md). Exit codes: 0 every task got a verified
// module, 1 some did not, 2 usage or infrastructure error.
#include "app/generate_job.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

namespace {

Command RegisterGenerate(CLI::App& app) {
  auto* sub = app.add_subcommand("generate", "Have a language model write verified Triton kernels for tasks");
  auto o = std::make_shared<app::GenerateOptions>();
  sub->add_option("--task", o->tasks, "Task file (KernelBench, TritonBench-G/-T or kiln); repeatable");
  sub->add_option("--tasks", o->tasks_file, "File listing task files, one a line (relative to it; # comments)");
  sub->add_option("--out,-o", o->out, "Folder for <task>.py (the best verified module), transcript.jsonl, summary.json")
      ->required();
  sub->add_option("--turns", o->turns, "Rounds per chain: answer, verification, feedback")->check(CLI::Range(1, 1000))->capture_default_str();
  sub->add_option("--samples", o->samples, "Independent chains per task (sample i sends seed + i)")->check(CLI::Range(1, 100000))->capture_default_str();
  sub->add_option("--prompt-template", o->prompt_template, "Prompt template file (default: prompts/autotriton.txt, built in)");
  sub->add_option("--mode", o->mode, "check: the first verified answer ends a chain; time: it must also reach --target-speedup")
      ->check(CLI::IsMember({"check", "time"}))
      ->capture_default_str();
  sub->add_option("--target-speedup", o->target_speedup, "Speedup over the reference that ends a chain (--mode time)")
      ->check(FiniteRange(0, 1e6))
      ->capture_default_str();
  sub->add_option("--jobs", o->jobs, "Chains verified at once, each with its own worker")->check(CLI::Range(1, 1024));
  sub->add_option("--gpus", o->gpus, "Spread the jobs over this many GPUs (job j on GPU j % N; 0: the worker's default)")
      ->check(CLI::Range(0, 1024));
  sub->add_option("--isolation", o->isolation, "Worker isolation of the answers: fork (default), fresh or shared")
      ->check(CLI::IsMember({"shared", "fork", "fresh"}));
  sub->add_option("--timeout", o->timeout_s, "Seconds per evaluation")->check(FiniteRange(0.1, 1e6));
  sub->add_option("--trials", o->trials, "Fresh-input trials per check")->check(CLI::Range(1, 1000));
  sub->add_option("--seed", o->seed, "Seed of inputs and of the model's sampling");
  sub->add_flag("--profile", o->profile, "With --mode time on a GPU: ncu's diagnosis of slow answers goes into the feedback");
  sub->add_flag("--resume", o->resume, "Continue the chains of OUT/transcript.jsonl (finished ones are kept)");
  sub->add_flag("--quiet,-q", o->quiet, "No line per turn on stderr");
  AddTaskFlags(sub, &o->task_options, /*files=*/true, /*check_format=*/true);
  AddLlmFlags(sub, &o->llm);
  AddRecordsFlags(sub, &o->records);
  AddWorkerFlags(sub, &o->worker, kPython | kInterpret | kReplay | kRecord);
  return {sub, [o]() { return app::RunGenerate(*o); }};
}

Registrar reg(55, RegisterGenerate);

}  // namespace

}  // namespace kiln::cli

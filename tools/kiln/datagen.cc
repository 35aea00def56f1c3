// `kiln datagen`: execution-verified SFT data, PyTorch program -> Triton (docs/datagen.md).
//
//   kiln datagen --out DIR [--from PATH]... [--compose N --seed S] [--captures FILE] [--allow-benchmark] ...
//
// Exit codes: see src/app/datagen_job.h (0 the run finished, 2 usage or infrastructure error).
#include "app/datagen_job.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

namespace {

Command RegisterDatagen(CLI::App& app) {
  auto* sub = app.add_subcommand("datagen", "Execution-verified SFT data: PyTorch programs -> Triton (docs/datagen.md)");
  auto o = std::make_shared<app::DatagenOptions>();
  sub->add_option("--out", o->out, "The run's folder (stage files, samples, card); a second run resumes")->required();
  sub->add_option("--from", o->from, "KernelBench module or TritonBench-T operator, or a folder of them (repeatable)");
  sub->add_option("--format", o->format, "Format of --from files: kernelbench or tritonbench_t (default: detect)");
  sub->add_option("--compose", o->compose, "Composed programs to add")->check(CLI::Range(0, 10000000));
  sub->add_option("--seed", o->seed, "Seed of the composer")->capture_default_str();
  sub->add_flag("--compose-small", o->compose_small, "Composed programs with tiny shapes (interpreter runs)");
  sub->add_option("--captures", o->captures,
                  "Recorded Inductor captures (JSON lines of kiln_worker.inductor_capture) instead of compiling");
  sub->add_flag("--dynamic-shapes", o->dynamic_shapes,
                "Capture with torch.compile(dynamic=True): candidates take any size of the dims Inductor kept "
                "symbolic and composed ones are verified at --shapes batch sizes");
  sub->add_option("--stop-after", o->stop_after, "Stop after a stage: programs, capture, convert or verify");
  sub->add_flag("--allow-benchmark", o->allow_benchmark, "Keep programs that match benchmark tasks");
  sub->add_option("--benchmarks", o->benchmarks,
                  "Benchmark corpus for the exclusion (default $KILN_CORPUS_DIR; none when unset)");
  sub->add_option("--jobs", o->jobs, "Capture: parallel compile processes (default: cores)")->check(CLI::Range(1, 1024));
  sub->add_option("--gpus", o->gpus, "GPUs to use: the capture processes and the verification spread over them (default: all)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--capture-timeout", o->capture_timeout_s, "Capture: seconds per program")
      ->check(FiniteRange(1, 86400))
      ->capture_default_str();
  sub->add_option("--capture-deadline", o->capture_deadline_s,
                  "Capture: start no program after this many seconds (the rest is captured by a later run)")
      ->check(FiniteRange(0, 1e7));
  sub->add_flag("--finish", o->finish,
                "Capture and verify nothing new: write the outputs from what earlier runs recorded in --out");
  sub->add_option("--protocol", o->protocol, "Verification tolerances: kernelbench (default) or legacy");
  sub->add_option("--trials", o->trials, "Verification: fresh-input trials per case")->check(CLI::Range(1, 1000));
  sub->add_option("--verify-limit", o->verify_limit,
                  "Verification: evaluate at most N candidates not verified before (the rest: a later run)")
      ->check(CLI::Range(0, 100000000));
  sub->add_option("--timeout", o->timeout_s, "Verification: seconds per candidate")
      ->check(FiniteRange(0.1, 86400.0))
      ->capture_default_str();
  sub->add_option("--check-workers", o->check_workers, "Verification on GPUs: check workers per GPU")
      ->check(CLI::Range(0, 64));
  sub->add_option("--workers", o->workers, "Verification without a GPU: parallel interpreter workers")
      ->check(CLI::Range(1, 256));
  sub->add_option("--shapes", o->shapes,
                  "Composed programs: shapes to verify (the program's, then other batch sizes): the LLM route's "
                  "and the compiler route's dynamic captures")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  sub->add_flag("--llm", o->use_llm, "Also ask a model (--llm-url, --llm-model) for each program's Triton with reasoning");
  sub->add_flag("--llm-only", o->llm_only, "Only the LLM route: no capture, no conversion");
  sub->add_option("--prompt-template", o->prompt_template,
                  "LLM route: the prompt template (default: prompts/datagen.txt, built in)");
  AddLlmFlags(sub, &o->llm);
  sub->add_flag("--quiet", o->quiet, "No progress on stderr");
  AddRecordsFlags(sub, &o->records);
  AddWorkerFlags(sub, &o->worker, kPython | kInterpret);
  return {sub, [o]() { return app::RunDatagen(*o); }};
}

Registrar reg(47, RegisterDatagen);

}  // namespace

}  // namespace kiln::cli

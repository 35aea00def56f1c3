// `kiln serve`: the reward service for RL training (docs/serve.md).
//
//   kiln serve [--tasks DIR|MANIFEST] [--host H --token-file F] [--port P] [--reward NAME|FILE.json] ...
#include "app/serve_job.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

namespace {

Command RegisterServe(CLI::App& app) {
  auto* sub = app.add_subcommand("serve", "Reward service for RL training over the worker pool (docs/serve.md)");
  auto o = std::make_shared<app::ServeOptions>();
  sub->add_option("--host", o->host, "Address to bind (default 127.0.0.1; any other needs --token-file)");
  sub->add_option("--port", o->port, "Port (default 8080; 0: any free port, see --port-file)")
      ->check(CLI::Range(0, 65535));
  sub->add_option("--port-file", o->port_file, "Write the bound port to this file once listening");
  sub->add_option("--token-file", o->token_file, "File holding the bearer token every request must carry");
  sub->add_option("--tasks", o->tasks,
                  "Task set: a directory of task files, a {\"tasks\": [...]} manifest, or one file");
  sub->add_option("--reward", o->reward, "Default reward formula: autotriton, kevin, drkernel, or a JSON config file");
  sub->add_option("--mode", o->mode, "check (correctness) or time (correctness, then timing: speedup terms)");
  sub->add_option("--policy", o->policy, "strict (default: untrusted model output) or trusted");
  sub->add_option("--isolation", o->isolation, "Worker isolation: shared, fork (default) or fresh");
  sub->add_option("--seed", o->seed, "Seed of the input trials");
  sub->add_option("--trials", o->trials, "Correctness trials per case")->check(CLI::Range(1, 1000));
  sub->add_option("--timeout", o->timeout_s, "Per-item evaluation limit in seconds")->check(CLI::Range(0.1, 86400.0));
  sub->add_option("--wait", o->wait_s, "Default deadline of a synchronous request in seconds (then 202 + job id)")
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_option("--queue-limit", o->queue_limit, "Items waiting or running before 429 (default 1024)");
  sub->add_option("--max-items", o->max_items, "Items per request (default 256; more: 413)");
  sub->add_option("--max-body-bytes", o->max_body_bytes, "Request body limit (default 16 MiB; more: 413)");
  sub->add_option("--max-response-bytes", o->max_response_bytes, "Response limit (default 64 MiB; more: 413)");
  sub->add_option("--batch-max", o->batch_max, "Items per pool run (default 64)");
  sub->add_option("--workers", o->workers, "Interpreter workers without a GPU")->check(CLI::Range(1, 256));
  sub->add_option("--check-workers", o->check_workers, "Check workers per GPU (default automatic)")
      ->check(CLI::Range(0, 64));
  sub->add_option("--gpus", o->gpus, "Use at most this many GPUs");
  AddRecordsFlags(sub, &o->records);
  sub->add_flag("--no-cache", o->no_cache, "Evaluate even when a cached result exists");
  AddWorkerFlags(sub, &o->worker, kPython | kInterpret);
  return {sub, [o]() { return app::RunServe(*o); }};
}

Registrar reg(35, RegisterServe);

}  // namespace

}  // namespace kiln::cli

// kiln/app: option groups shared by the commands (tools/kiln/flags.h registers each group's flags on
// a command, with the same names and help everywhere).
#pragma once

#include <string>

#include "app/runner_factory.h"
#include "llm/client.h"
#include "task/task.h"

namespace kiln::app {

// --format, --entry, --bench: how a task file is read.
struct TaskOptions {
  std::string format, entry, bench;
  task::LoadOptions ToLoadOptions() const {
    task::LoadOptions lo;
    lo.format = format;
    lo.entry = entry;
    lo.bench = bench;
    return lo;
  }
};

// --python, --interpret, --replay, --record: where requests go.
struct WorkerFlags {
  std::string python, replay, record;
  bool interpret = false;
  RunnerSpec Spec(exec::Isolation isolation) const {
    RunnerSpec s;
    s.python = python;
    s.isolation = isolation;
    s.interpret = interpret;
    s.replay = replay;
    s.record = record;
    return s;
  }
};

// --db, --no-db: the records database.
struct RecordsOptions {
  std::string db;
  bool no_db = false;
  std::string Path() const;  // --db, else store::DefaultDbPath()
};

// --llm-url, --llm-model, ...: the model endpoint and its limits (docs/generate.md); the sampling.
struct LlmFlags {
  llm::Config config;  // url, model, api_key, timeouts, retries, concurrency, prices, max cost, cache
  llm::Sampling sampling;
  // The config with KILN_LLM_* filling what the flags left empty.
  llm::Config Resolved() const {
    llm::Config c = config;
    c.FromEnvironment();
    return c;
  }
};

}  // namespace kiln::app

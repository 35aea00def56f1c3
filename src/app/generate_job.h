// kiln/app: `kiln generate`: a model writes Triton for tasks, kiln verifies every answer as `kiln eval`
// does and feeds the failures back (docs/generate.md). Per task, `samples` independent chains of up to
// `turns` rounds (gen/chain.h), spread over `jobs` workers (one per GPU with --gpus); the best verified
// module per task is written to OUT/<task>.py, every turn to OUT/transcript.jsonl, the outcome to
// OUT/summary.json. --resume continues the chains of an earlier run from its transcript.
//
// Exit codes: 0 every task got a verified module, 1 some did not (or the model could not be reached for
// some chain), 2 usage or infrastructure error (bad flags, an unreadable task or template, no endpoint,
// a worker that cannot start).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/options.h"

namespace kiln::app {

struct GenerateOptions {
  std::vector<std::string> tasks;
  std::string tasks_file;  // one task path a line (relative to the file; '#' comments)
  TaskOptions task_options;
  std::string out, prompt_template;
  int turns = 4, samples = 1;
  std::string mode = "check";  // check: the first verified answer ends a chain; time: also the target speedup
  double target_speedup = 1.0;
  LlmFlags llm;
  RecordsOptions records;
  WorkerFlags worker;
  std::string isolation = "fork";
  double timeout_s = 60;  // per evaluation
  int trials = 3;
  uint64_t seed = 1234;  // sample i sends seed + i (and the cache keys differ)
  int jobs = 1;          // chains evaluated at once, each with its own worker
  int gpus = 0;          // > 0: job j uses GPU j % gpus
  bool profile = false;  // ncu diagnosis of correct but slow answers (GPU)
  bool resume = false, quiet = false;
};

int RunGenerate(const GenerateOptions& o);

}  // namespace kiln::app

// kiln/app: `kiln optimize TASK --out FILE`: the profile -> diagnose -> rewrite -> measure loop
// (search::Optimize) over the real machinery: the task's input (app/prepare_input.h), the workers
// (CandidateRunner), the rewrites (RewriteRenderer), ncu (NcuProfiler), the records (StoreRecorder).
//
// Exit codes: 0 done (improved or the original kept), 1 the loop failed (the original fails its own
// check, no timings) or an output could not be written, 2 usage or infrastructure error (bad task,
// bad --grid, a worker that cannot start), 3 no GPU (use --dry-run).
#pragma once

#include <cstdint>
#include <string>

#include "app/options.h"

namespace kiln::app {

struct OptimizeJobOptions {
  std::string task, out, kernel;
  TaskOptions task_options;
  std::string json_out, html_out, ncu;
  RecordsOptions records;
  WorkerFlags worker;
  std::string strategy = "auto";
  std::string search_cases = "all";
  std::string cases;
  std::string grid;
  std::string isolation = "shared";
  double budget = 60;
  std::string budget_scope = "search";  // --budget-scope search|run
  double hard_end = -1;                 // --hard-end-seconds (< 0: budget + 150; 0: none)
  double slow_factor = 5;               // --slow-factor
  double timeout = 120;  // --timeout: one measurement's limit (an autotuned original's first: the hard end)
  int max_evals = 0;
  int compile_jobs = -1;
  int patience = 2;
  double min_speedup = 1.01;
  uint64_t seed = 1234;
  bool emit_autotune = false, dry_run = false, no_profile = false, quiet = false;
  bool profile_winner = false, no_per_shape = false;
  // --llm: a model proposes rewritten modules after the profile (app/llm_proposer.h, docs/generate.md).
  bool llm = false;
  LlmFlags llm_flags;
  int llm_samples = 2, llm_rounds = 2;
  std::string prompt_template;  // "" : prompts/optimize.txt (built in)
};

int RunOptimize(const OptimizeJobOptions& o);

}  // namespace kiln::app

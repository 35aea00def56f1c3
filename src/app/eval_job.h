// kiln/app: `kiln eval`: one verified evaluation of a candidate against a task, or a batch of them
// over a pool of workers (docs/eval.md).
//
// Exit codes: 0 the verdict is ok (batch: every pair got a result line), 1 the candidate failed
// (batch: some pairs could not be evaluated: bad task file, machinery error; their lines carry
// "error"), 2 usage or infrastructure error (bad flags, unreadable task, no worker).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/options.h"

namespace kiln::app {

struct EvalOptions {
  std::string task, candidate;
  std::string baseline;  // mode time: timed in the reference's place (an A/B of two versions)
  TaskOptions task_options;
  std::vector<std::string> sizes;  // NAME=VALUE
  bool json = false;
  std::string mode = "check", policy = "strict", isolation = "fork";
  std::string protocol;                   // tolerance protocol: kernelbench (worker default) or legacy
  std::string time_isolation = "shared";  // batch: the timing stage after check workers
  uint64_t seed = 1234;
  int trials = 3;
  std::vector<std::string> cases;
  double timeout_s = 60;
  RecordsOptions records;
  bool no_cache = false;
  WorkerFlags worker;
  std::string batch, out;
  int compile_workers = -1;  // -1: automatic
  int check_workers = -1;    // per GPU; -1: automatic
  int workers = 1;           // measuring workers when there is no GPU
  int gpus = -1;             // -1: all
  bool quiet = false;
  bool resume = false;
};

int RunEval(const EvalOptions& o);

}  // namespace kiln::app

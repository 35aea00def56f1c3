// kiln/app: `kiln ci --baseline FILE [--update-baseline] TASKS...`: the performance-regression gate
// (app/ci.h) over the worker. Exit: 0 pass, 1 regression/failure, 2 refused/error (a worker that
// cannot start included).
#pragma once

#include <string>
#include <vector>

#include "app/options.h"

namespace kiln::app {

struct CiJobOptions {
  std::string baseline, junit, format;
  WorkerFlags worker;  // --python, --replay
  std::vector<std::string> tasks;
  double threshold = 5;
  bool update = false, no_remeasure = false, allow_gpu = false, json = false;
};

int RunCiJob(const CiJobOptions& o);

}  // namespace kiln::app

// kiln/app: the one place a command's exec::Runner is made. A RunnerSpec says which: a transcript
// replay, or a worker process (python, isolation, device, interpreter), optionally recording every
// exchange to a transcript.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "exec/runner.h"

namespace kiln::app {

struct RunnerSpec {
  std::string python;  // empty: $KILN_PYTHON, else python3
  exec::Isolation isolation = exec::Isolation::kFork;
  bool interpret = false;            // force Triton's interpreter
  int device = -1;                   // CUDA device index; -1: the worker's default
  std::string cuda_visible_devices;  // non-empty: the worker sees only this GPU (as device 0)
  std::string replay;                // non-empty: answer from this transcript, run no worker
  std::string record;                // non-empty: append every worker exchange to this transcript
};

exec::WorkerOptions ToWorkerOptions(const RunnerSpec& spec);

// Errors: an unreadable or malformed transcript (replay). A worker starts on its first request.
Result<std::unique_ptr<exec::Runner>> MakeRunner(const RunnerSpec& spec);

// The worker under a recording runner made by MakeRunner (its exchanges are not recorded), else `r`.
exec::Runner* Unrecorded(exec::Runner* r);

}  // namespace kiln::app

// kiln/app: how profiled kernels get the facts the diagnosis rules read beyond the counters: the
// static facts of the profiled module's source (diagnose::StaticFacts: a tl.dot that runs fp32 on CUDA
// cores, ...) and hand-given facts, joined by kernel name onto each kernel's compile facts. One
// function, used by `kiln profile` (profile_job.cc) and by the optimizer's profiler
// (ncu_profiler.cc), so a rule that fires in one fires in the other.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "exec/kernel_facts.h"
#include "profile/profile.h"

namespace kiln::app {

struct SourceText {
  std::string text;
  std::string path;  // for messages
};

// Joins onto each kernel of `run`: the static facts of `source` (when given), merged into `given`
// (fields set in `given` win; static flags OR), then onto the kernel's own compile facts. Returns
// the static analysis' error when `source` cannot be analysed (the join goes on without its facts).
Status JoinFacts(profile::ProfileRun* run, const std::optional<SourceText>& source,
                 std::vector<exec::KernelFacts> given = {});

}  // namespace kiln::app

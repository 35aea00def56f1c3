// kiln/app: the optimizer's input from a task: the module text a candidate replaces (TritonBench: the
// part above the separator line), the analysed kernel (`kernel` or, when empty, the launched kernel
// with the most tunables), and its search space and baseline config from its tunables.
#pragma once

#include <string>
#include <vector>

#include "search/loop.h"
#include "search/space.h"
#include "task/task.h"

namespace kiln::app {

// Errors: unreadable or unparsable module, no launched kernel, unsupported format. `among` (with no
// `kernel`): choose only among these launched kernels (those that ran when the original ran the cases).
Result<search::OptimizeInput> PrepareInput(const task::TaskSpec& spec, const std::string& kernel,
                                           const search::SpaceOptions& so = {},
                                           const std::vector<std::string>& among = {});
// The same over a module's text (`path` names it in messages): a proposer's rewritten module, which
// kiln optimize --llm tunes further when it wins.
Result<search::OptimizeInput> PrepareInputFromSource(const task::TaskSpec& spec, const std::string& source,
                                                     const std::string& path, const std::string& kernel,
                                                     const search::SpaceOptions& so = {},
                                                     const std::vector<std::string>& among = {});

}  // namespace kiln::app

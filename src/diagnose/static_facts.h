// kiln/diagnose: static facts from the analysis model, in the form the rules read
// (exec::KernelFacts: has_dot, fp32_dot_without_tensor_cores).
//
// fp32_dot_without_tensor_cores is set for a kernel with a tl.dot whose input_precision is "ieee"
// or allow_tf32=False: on fp32 inputs that dot runs on CUDA cores. The inputs' dtype is a runtime
// fact, so the rule also requires the tensor pipe to be idle in the counters.
#pragma once

#include <string>
#include <vector>

#include "analysis/model.h"
#include "common/status.h"
#include "exec/kernel_facts.h"

namespace kiln::diagnose {

std::vector<exec::KernelFacts> StaticFacts(const analysis::ModuleModel& model);
Result<std::vector<exec::KernelFacts>> StaticFactsFromFile(const std::string& path);

}  // namespace kiln::diagnose

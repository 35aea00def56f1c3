// kiln/exec: what is known about one compiled kernel without counters, the one type every module uses.
//
// Compile facts come from the worker (an eval or profile response's "kernels": name, launches, n_regs,
// n_spills, shared_bytes, num_warps, num_stages, grid, constexprs; docs/worker-protocol.md) or a facts file
// of the same shape; static facts (has_dot, fp32_dot_without_tensor_cores) from the analysis model
// (diagnose/static_facts.h) or the same file as booleans. JSON is read and written only here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace kiln::exec {

struct KernelFacts {
  std::string name;
  int64_t launches = 0;  // 0: not reported
  std::optional<int64_t> n_regs, n_spills, shared_bytes, num_warps, num_stages;
  std::vector<int64_t> grid;
  nlohmann::json constexprs = nlohmann::json::object();
  // Static facts (analysis). fp32_dot_without_tensor_cores: a tl.dot whose inputs are fp32 and whose
  // input_precision keeps it off the tensor cores ("ieee", or allow_tf32=False); it implies has_dot.
  bool has_dot = false;
  bool fp32_dot_without_tensor_cores = false;
};

// One kernel object, leniently: missing or mistyped fields keep their defaults (a grid entry that is not a
// number reads as 0, keeping the axes in place).
KernelFacts KernelFactsFromObject(const nlohmann::json& k);

// A facts file or response: {"kernels": [...]} (the worker's response works as is) or a bare array. Each
// entry must be an object with a string "name"; unknown fields are ignored.
Result<std::vector<KernelFacts>> KernelFactsFromJson(const nlohmann::json& j);

// name, launches (when reported), the compile facts that are known, grid and constexprs (when not empty),
// and both static flags.
nlohmann::json ToJson(const KernelFacts& f);

// Merges facts by kernel name: fields set in `extra` fill the ones unset in `base` (constexprs key by
// key); static flags OR; kernels only in `extra` are appended.
std::vector<KernelFacts> MergeFacts(std::vector<KernelFacts> base, const std::vector<KernelFacts>& extra);

}  // namespace kiln::exec

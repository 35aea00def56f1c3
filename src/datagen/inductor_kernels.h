// kiln/datagen (internal): the readability pass over one Inductor kernel (inductor.h has the whole
// conversion). Separate so that its golden tests can call it on one kernel at a time.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::datagen {

// One kernel as Inductor wrote it inside `async_compile.triton('name', '''...''')`.
struct RawKernel {
  std::string name;    // e.g. triton_poi_fused_add_relu_0
  std::string source;  // the module text of the string (imports, decorators, the function)
  std::string aten;    // Inductor's "Original ATen: [...]" note above it, when present
};

// What the launch site tells about a kernel's pointer parameters: parameter name -> a readable stem
// ("x", "linear0_weight", "out"), for `in_ptr0` style names.
using PointerNames = std::map<std::string, std::string>;

struct ReadableKernel {
  std::string name;        // the new name (Inductor's minus its "triton_" prefix)
  std::string kind;        // pointwise, persistent reduction, reduction, template (GEMM), ...
  std::string text;        // `@triton.jit\ndef name(...):\n ...` with helpers lowered and names renamed
  std::vector<std::string> params;            // parameter names in order (after renaming)
  std::vector<std::string> constexpr_params;  // those annotated tl.constexpr
  bool uses_libdevice = false;
  std::vector<std::string> helpers;  // names of the helper functions it calls (HelperSource gives their text)
};

// The text of a helper function the lowered kernels may call (welford_update, softmax_merge_block, ...):
// kiln's own @triton.jit implementations of what inductor's triton_helpers provide.
std::string HelperSource(const std::string& name);

// The kernel's parameter names and which are constexpr, before any renaming.
Status KernelSignature(const RawKernel& k, std::vector<std::string>* params, std::vector<std::string>* constexprs);

// Lowers inductor helpers (triton_helpers.*, tl_math.*) to tl, drops inductor decorators and module lines,
// renames pointers by `pointers` and temporaries by what they compute. Unknown helpers are an error
// naming them (the sample is dropped with reason `helper_not_lowered`).
Result<ReadableKernel> MakeReadable(const RawKernel& k, const PointerNames& pointers);

// The kernel's name in the candidate: Inductor's minus "triton_", long fused-op lists cut at a word
// ("triton_poi_fused_add_relu_0" -> "poi_fused_add_relu_0").
std::string ReadableName(const std::string& inductor_name);

// "persistent reduction" etc. from Inductor's name prefix (triton_poi_, triton_per_, triton_red_, ...).
std::string KernelKind(const std::string& inductor_name);

}  // namespace kiln::datagen

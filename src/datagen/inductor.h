// kiln/datagen: Inductor's output -> a standalone KernelBench candidate (the readability pass).
//
// Input: a program (KernelBench format) and the worker's capture of torch.compile on it
// (kiln_worker/inductor_capture.py): the output module Inductor wrote (`async_compile.triton(...)`
// kernels and `call`), every launch with the autotuner's chosen config and grid, what each argument of
// `call` is (a forward input, a parameter or buffer, a scalar) and which `call` output the forward returns.
//
// Output: a module with `class ModelNew` (the program's __init__, so weights are the reference's) whose
// forward allocates buffers with torch and launches plain `@triton.jit` kernels with explicit grids,
// num_warps and num_stages: no inductor imports, decorators or runtime; inductor's helpers lowered to `tl`
// (and `libdevice` from triton.language.extra); pointer and temporary names renamed where their meaning
// is known (`in_ptr0` -> `x_ptr`, `tmp5` -> `erf_5`); a comment per kernel saying what it computes.
// A dynamic-shape capture (`kiln datagen --dynamic-shapes`, inductor_dynamic.h) gives a forward that binds
// Inductor's size symbols from its inputs' shapes, computes buffers, numels and grids from them, and guards
// only the dims Inductor specialised.
// What cannot be made standalone is a reject with a reason code (docs/datagen.md lists them), e.g. a GEMM
// that went to `extern_kernels` instead of a Triton template.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace kiln::datagen {

struct KernelSummary {
  std::string name;      // the kernel's name in the candidate
  std::string original;  // Inductor's name
  std::string kind;      // pointwise, persistent reduction, reduction, template (GEMM), ...
  std::string comment;   // the comment written above it
};

struct Conversion {
  bool ok = false;
  std::string reason;   // reject code when !ok
  std::string message;  // details when !ok
  std::string source;   // the candidate module when ok
  std::vector<KernelSummary> kernels;
  // A dynamic-shape capture (capture["dynamic"]): the candidate binds these size symbols from its inputs
  // ("s77 = x.size(0)") and runs at any size of those dims.
  bool dynamic = false;
  std::vector<std::string> symbols;
};

// The program's text and its capture record. Never throws; malformed captures are rejects.
Conversion ConvertCapture(const std::string& program_text, const nlohmann::json& capture);

}  // namespace kiln::datagen

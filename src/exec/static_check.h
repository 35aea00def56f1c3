// kiln/exec: static anti-hacking checks on a candidate's syntax tree.
//
// Rules; the ids are reason codes, shared with the worker's where they mean the same thing
// (docs/verdicts.md), and each finding carries a span and a message:
//   missing_entry          the required entry point (ModelNew for KernelBench, the entry function
//                          otherwise) is not defined at the top level (verdict compile_error)
//   no_triton_kernel       no function decorated with @triton.jit
//   swallowed_kernel_error a try/except that catches broad failures (Exception, RuntimeError, bare
//                          except, Triton's errors, or anything around a kernel launch) and does not
//                          re-raise or retry with another launch: a fallback hides a failing kernel
//   process_spawn          threads, processes, subprocess, signals, os.system/fork/exec/kill
//   ctypes, native_code    ctypes/cffi; C++ extensions, CuPy, PyCUDA, Numba instead of Triton
//   network                socket, http, urllib, requests
//   dynamic_code           exec, eval, compile, __import__, importlib, getattr(os, <computed>)
//   file_write             open() for writing, os.remove/rename/mkdir, Path.write_*, torch.save, shutil
//   patched_torch, patched_triton, patched_timer, patched_builtins, patched_worker,
//   patched_environment, patched_module
//                          assignment to / setattr / delattr on attributes of torch, triton, time,
//                          builtins, the harness, os.environ, sys/numpy/random/math...; torch.library,
//                          dispatch overrides, triton.knobs (where the launch hooks live)
//   global_state           reseeding inside functions, set_float32_matmul_precision,
//                          set_default_dtype, ... (process-wide numerics)
//   introspection          inspect, gc, traceback, builtins, sys._getframe, sys.modules, __builtins__,
//                          frame and function internals (f_back, __globals__, __subclasses__, ...)
//
// Roadmap: the checker judges constructs, not words; names are resolved through the module's
// import aliases (import torch.nn.functional as F), so honest code that allocates with torch,
// reshapes, calls .contiguous() or uses F for helpers passes.
#pragma once

#include <string>
#include <vector>

#include "common/diag.h"
#include "pyast/pyast.h"

namespace kiln::exec {

struct StaticFinding {
  std::string rule;
  pyast::Span span;
  std::string message;
};

struct StaticCheckOptions {
  std::string entry;  // required top-level name; empty: none required
  bool require_triton_kernel = true;
};

std::vector<StaticFinding> StaticCheck(const pyast::Tree& tree, const StaticCheckOptions& opts);

// The required entry for a task format: "ModelNew" for kernelbench, else the task's entry.
std::string RequiredEntry(const std::string& format, const std::string& task_entry);

}  // namespace kiln::exec

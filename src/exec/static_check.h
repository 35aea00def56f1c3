// kiln/exec: static anti-hacking checks on a candidate's syntax tree.
//
// Rules (ids are stable; each finding carries a span and a message):
//   missing_entry        the required entry point (ModelNew for KernelBench, the entry function
//                        otherwise) is not defined at the top level
//   no_triton_kernel     no function decorated with @triton.jit
//   exception_fallback   a try/except that catches broad failures (Exception, RuntimeError, bare
//                        except, Triton's errors, or anything around a kernel launch) and does not
//                        re-raise: a fallback that hides a failing kernel
//   forbidden_import     threading, multiprocessing, subprocess, ctypes, socket, signal, ... or the
//                        kiln harness itself
//   forbidden_call       process/thread/exec calls (os.system, os.fork, exec, eval, __import__, ...)
//   file_write           open() for writing, os.remove/rename, Path.write_*, torch.save, ...
//   patch_module         assignment to / setattr / delattr on attributes of torch, triton, time, the
//                        harness, builtins, sys, os (os.environ included), numpy, random, math
//   global_state         calls that change process-wide numerics or seeds (torch.manual_seed,
//                        set_float32_matmul_precision, set_default_dtype, ...)
//   introspection        inspect, gc, traceback, sys._getframe, sys.modules, __builtins__, frame and
//                        function internals (f_back, __globals__, __closure__, __subclasses__, ...)
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
  std::string entry;          // required top-level name; empty: none required
  bool require_triton_kernel = true;
};

std::vector<StaticFinding> StaticCheck(const pyast::Tree& tree, const StaticCheckOptions& opts);

// The required entry for a task format: "ModelNew" for kernelbench, else the task's entry.
std::string RequiredEntry(const std::string& format, const std::string& task_entry);

}  // namespace kiln::exec

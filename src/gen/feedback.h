// kiln/gen: what the model is told about its last answer (docs/generate.md, "Feedback"), and when a
// chain is done. The text is plain and deterministic (golden-tested: tests/gen/golden/).
//
//   no code         the answer had no Python code block
//   not a kernel    the code defines no @triton.jit function or launches none (serve::TritonGate)
//   compile_error   the first error with its location and the source line it points at
//   mismatch        per failing case: the error maxima and the trials that failed
//   rejected        each reason (code, location, message): the anti-hacking checks' findings
//   runtime_error, timeout, crash
//                   the verdict's message and first reason
//   ok but slow     per case: candidate and reference times and the speedup, against the target;
//                   the diagnosis's top findings when a profile was taken
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exec/result.h"

namespace kiln::gen {

struct Finding {
  std::string rule, severity, message;
};

struct Attempt {
  bool has_code = false;
  std::string gate_reason;  // non-empty: the code was not evaluated (not a Triton kernel)
  std::optional<exec::EvalResult> result;
  std::string source;  // the module evaluated (for the source line of an error)
  bool timed = false;  // mode time: the result carries speedups
  double target_speedup = 1.0;
  std::vector<Finding> findings;  // at most a few, most severe first

  bool ok() const { return result && result->ok(); }
  std::optional<double> speedup() const { return timed && result ? result->GeomeanSpeedup() : std::nullopt; }
  // Verified, and (timed) at least the target speedup.
  bool Done() const;
  // "no_code", "not_a_kernel" or the verdict's name.
  std::string Outcome() const;
};

// The feedback message for an attempt that is not done.
std::string Feedback(const Attempt& a);

}  // namespace kiln::gen

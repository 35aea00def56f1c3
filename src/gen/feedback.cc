#include "gen/feedback.h"

#include <cmath>

#include <fmt/format.h>

#include "common/strings.h"

namespace kiln::gen {

namespace {

using exec::Verdict;

constexpr const char* kReply = "Reply with the complete corrected module in one ```python block.";

std::string Where(const exec::Reason& r) {
  if (r.line <= 0) return "";
  return r.column > 0 ? fmt::format("{}:{}:{}", r.file.empty() ? "candidate.py" : r.file, r.line, r.column)
                      : fmt::format("{}:{}", r.file.empty() ? "candidate.py" : r.file, r.line);
}

// "   19 | source line" for a reason pointing into the candidate, else "".
std::string SourceLine(const std::string& source, int line) {
  if (line <= 0) return "";
  auto lines = SplitLines(source);
  if (static_cast<size_t>(line) > lines.size()) return "";
  std::string_view l = lines[line - 1];
  while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.remove_suffix(1);
  return fmt::format("{:>5} | {}\n", line, l);
}

// The first line of a message, at most `max` characters.
std::string Short(std::string_view m, size_t max = 400) {
  m = Trim(m);
  std::string s(m.substr(0, std::min(m.size(), max)));
  if (m.size() > max) s += " ...";
  return s;
}

std::string ReasonLines(const exec::EvalResult& r, const std::string& source, size_t max_reasons) {
  std::string out;
  size_t n = 0;
  for (const auto& reason : r.reasons) {
    if (n++ == max_reasons) break;
    std::string w = Where(reason);
    out += fmt::format("  - {}{}: {}\n", reason.code, w.empty() ? "" : " at " + w, Short(reason.message));
    out += SourceLine(source, reason.line);
  }
  if (r.reasons.size() > max_reasons) out += fmt::format("  ({} more)\n", r.reasons.size() - max_reasons);
  return out;
}

std::string Num(const std::optional<double>& v) { return v ? fmt::format("{:.4g}", *v) : "?"; }

std::string CompileError(const Attempt& a) {
  const auto& r = *a.result;
  std::string out = "Your module failed to compile or load (compile_error).\n";
  if (!r.reasons.empty()) {
    const auto& first = r.reasons.front();
    std::string w = Where(first);
    out += fmt::format("{}{}: {}\n", w.empty() ? "" : w + ": ", first.code, Short(first.message, 1200));
    out += SourceLine(a.source, first.line);
  } else if (!r.message.empty()) {
    out += Short(r.message, 1200) + "\n";
  }
  return out + "Fix the error. " + kReply;
}

std::string Mismatch(const Attempt& a) {
  const auto& r = *a.result;
  std::string out = "Your module ran, but its outputs do not match the reference (mismatch).\n";
  out += ReasonLines(r, a.source, 3);
  for (const auto& c : r.cases) {  // the error maxima, where the worker measured them
    if (c.passed || (!c.max_abs_err && !c.rel_l2_err && c.error.empty())) continue;
    out += fmt::format("  case {}: max_abs_err {}, rel_l2_err {}", c.name, Num(c.max_abs_err), Num(c.rel_l2_err));
    if (!c.error.empty()) out += ": " + Short(c.error, 300);
    out += "\n";
  }
  if (r.reasons.empty() && !r.message.empty()) out += Short(r.message, 600) + "\n";
  return out + "Find the bug (indexing, masks, strides, dtypes, reductions). " + kReply;
}

std::string Rejected(const Attempt& a) {
  std::string out = "Your module was rejected by the anti-cheating checks (rejected):\n";
  out += ReasonLines(*a.result, a.source, 5);
  return out +
         "The whole computation must run in your Triton kernels: no torch operations computing the result, no "
         "calls to the reference, no cached or precomputed outputs, no patching. " +
         kReply;
}

std::string Failed(const Attempt& a) {
  const auto& r = *a.result;
  std::string what = r.verdict == Verdict::kTimeout ? "did not finish in time"
                     : r.verdict == Verdict::kCrash ? "crashed the process"
                                                    : "raised an error while running";
  std::string out = fmt::format("Your module {} ({}).\n", what, exec::VerdictName(r.verdict));
  if (!r.reasons.empty())
    out += ReasonLines(r, a.source, 1);
  else if (!r.message.empty())
    out += Short(r.message, 1200) + "\n";
  return out + "Fix it. " + kReply;
}

std::string Slow(const Attempt& a) {
  const auto& r = *a.result;
  auto s = a.speedup();
  std::string out = fmt::format("Your module is correct, but its speedup over the reference is {} (the target is {:.2f}x).\n",
                                s ? fmt::format("{:.2f}x", *s) : std::string("unknown"), a.target_speedup);
  for (const auto& c : r.cases) {
    if (!c.candidate_ms || !c.reference_ms) continue;
    out += fmt::format("  case {}: yours {:.4g} ms, reference {:.4g} ms", c.name, c.candidate_ms->median,
                       c.reference_ms->median);
    if (c.speedup) out += fmt::format(" ({:.2f}x)", *c.speedup);
    out += "\n";
  }
  if (!a.findings.empty()) {
    out += "The profiler's diagnosis of your kernel:\n";
    for (const auto& f : a.findings) out += fmt::format("  - [{}] {}: {}\n", f.severity, f.rule, Short(f.message));
  }
  return out + "Make it faster without changing the results. Reply with the complete module in one ```python block.";
}

}  // namespace

bool Attempt::Done() const {
  if (!ok()) return false;
  if (!timed) return true;
  auto s = speedup();
  return s && *s >= target_speedup;
}

std::string Attempt::Outcome() const {
  if (!has_code) return "no_code";
  if (!gate_reason.empty()) return "not_a_kernel";
  return result ? exec::VerdictName(result->verdict) : "none";
}

std::string Feedback(const Attempt& a) {
  if (!a.has_code)
    return "Your answer contained no Python code block. Reply with the complete module (imports, kernels and the "
           "required definitions) in one ```python block.";
  if (!a.gate_reason.empty())
    return fmt::format("Your code was not evaluated: {}. The computation must be a @triton.jit kernel launched as "
                       "`kernel[grid](...)`. {}",
                       a.gate_reason, kReply);
  if (!a.result) return "";
  switch (a.result->verdict) {
    case Verdict::kOk: return Slow(a);
    case Verdict::kCompileError: return CompileError(a);
    case Verdict::kMismatch: return Mismatch(a);
    case Verdict::kRejected: return Rejected(a);
    default: return Failed(a);
  }
}

}  // namespace kiln::gen

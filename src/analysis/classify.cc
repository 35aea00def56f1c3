// kiln/analysis: kernel classes from the facts of a kernel and the jit functions it calls (Analyzer, see analyzer.h).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/analyzer.h"

namespace kiln::analysis::internal {

void Analyzer::Gather(size_t ki, Features& f, std::set<size_t>& seen, const std::string& via) {
  if (!seen.insert(ki).second) return;
  const Kernel& k = model_.kernels[ki];
  const KernelWork& w = work_[ki];
  auto at = [&](const std::string& what, const Span& s) {
    return what + " at line " + std::to_string(s.begin.line) + via;
  };
  for (const auto& d : k.dots) {
    (d.loop >= 0 ? f.dots_loop : f.dots_flat).push_back(at(d.form, d.span));
  }
  for (const auto& e : w.exps) f.exps.push_back(at(e.first, e.second));
  for (const auto& e : w.maxes) f.maxes.push_back(at(e.first, e.second));
  for (const auto& r : k.reductions) {
    std::string what = (r.form == "method" ? "." : "tl.") + r.op;
    if (r.op == "sum")
      f.sums.push_back(at(what, r.span));
    else if (r.op != "max")
      f.other_red.push_back(at(what, r.span));
  }
  for (const auto& r : k.scans) f.scans.push_back(at((r.form == "method" ? "." : "tl.") + r.op, r.span));
  for (const auto& e : w.sqrts) f.sqrts.push_back(at(e.first, e.second));
  for (const auto& e : w.divs) f.divs.push_back(at(e.first, e.second));
  for (const auto& a : k.atomics) f.atomics.push_back(at("tl.atomic_" + a.op, a.span));
  for (const auto& m : k.memops) (m.kind == MemOp::Kind::kLoad ? f.loads : f.stores)++;
  for (const auto& b : k.block_ptrs) {
    if (b.op == "descriptor_load" || b.op == "_experimental_descriptor_load" || b.op == "load_tensor_descriptor")
      f.loads++;
    if (b.op == "descriptor_store" || b.op == "_experimental_descriptor_store" || b.op == "store_tensor_descriptor")
      f.stores++;
  }
  for (const auto& c : k.calls) {
    Gather(jit_index_.at(c.callee), f, seen, " (in " + c.callee + ")");
  }
}

void Analyzer::Classify() {
  std::set<std::string> called;
  for (const auto& k : model_.kernels) {
    for (const auto& c : k.calls) called.insert(c.callee);
  }
  for (size_t ki = 0; ki < model_.kernels.size(); ++ki) {
    Kernel& k = model_.kernels[ki];
    k.is_helper = !k.launched && called.count(k.name) > 0;
    Features f;
    std::set<size_t> seen;
    Gather(ki, f, seen, "");
    auto& ev = k.class_evidence;
    auto first = [](const std::vector<std::string>& v) { return v.empty() ? std::string() : v.front(); };
    bool has_max = !f.maxes.empty();
    size_t ndots = f.dots_loop.size() + f.dots_flat.size();
    if (ndots >= 2 && !f.exps.empty()) {
      k.cls = KernelClass::kAttention;
      std::vector<std::string> all = f.dots_loop;
      all.insert(all.end(), f.dots_flat.begin(), f.dots_flat.end());
      ev.push_back(all[0]);
      ev.push_back(all[1]);
      ev.push_back(f.exps[0]);
      if (has_max)
        ev.push_back("max (online softmax): " + f.maxes[0]);
      else
        ev.push_back("no max reduction: exp-weighted (linear/retention-style) attention");
    } else if (ndots >= 1) {
      k.cls = KernelClass::kGemm;
      if (!f.dots_loop.empty())
        ev.push_back(f.dots_loop[0] + " inside a loop (reduction over K)");
      else
        ev.push_back(f.dots_flat[0] + " outside any loop (single K tile)");
    } else if (!f.scans.empty()) {
      k.cls = KernelClass::kScan;
      ev.push_back(f.scans[0]);
    } else if (has_max && !f.exps.empty() && !f.sums.empty()) {
      k.cls = KernelClass::kSoftmax;
      ev.push_back(f.maxes[0]);
      ev.push_back(f.exps[0]);
      ev.push_back(f.sums[0]);
      if (!f.divs.empty()) ev.push_back("division " + f.divs[0]);
    } else if (!f.sums.empty() || !f.other_red.empty() ||
               std::any_of(k.reductions.begin(), k.reductions.end(),
                           [](const Reduction& r) { return r.op == "max"; }) ||
               HasMaxReduction(ki)) {
      k.cls = KernelClass::kReduction;
      if (!f.sums.empty()) ev.push_back(f.sums[0]);
      if (!f.other_red.empty()) ev.push_back(f.other_red[0]);
      if (ev.empty()) ev.push_back(MaxReductionEvidence(ki));
      if (!f.sqrts.empty()) ev.push_back("normalization: " + f.sqrts[0]);
    } else if (f.loads + f.stores > 0 && f.atomics.empty()) {
      k.cls = KernelClass::kElementwise;
      ev.push_back(std::to_string(f.loads) + " load(s), " + std::to_string(f.stores) +
                   " store(s), no dot, reduction or scan");
    } else {
      k.cls = KernelClass::kOther;
      if (!f.atomics.empty())
        ev.push_back("atomics without reductions: " + first(f.atomics));
      else if (f.loads + f.stores == 0)
        ev.push_back("no memory operations (helper or compute-only function)");
    }
  }
}

bool Analyzer::HasMaxReduction(size_t ki) {
  std::set<size_t> seen;
  return !MaxReductionEvidence(ki).empty();
}

std::string Analyzer::MaxReductionEvidence(size_t ki) {
  std::vector<size_t> stack{ki};
  std::set<size_t> seen;
  while (!stack.empty()) {
    size_t i = stack.back();
    stack.pop_back();
    if (!seen.insert(i).second) continue;
    for (const auto& r : model_.kernels[i].reductions) {
      if (r.op == "max")
        return std::string(r.form == "method" ? "." : "tl.") + "max at line " + std::to_string(r.span.begin.line);
    }
    for (const auto& c : model_.kernels[i].calls) stack.push_back(jit_index_.at(c.callee));
  }
  return "";
}

}  // namespace kiln::analysis::internal

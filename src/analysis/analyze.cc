// kiln/analysis: AnalyzeModule, the static model of a Triton module (see model.h).
//
// Structure (analyzer.h): Analyzer::Run() (1) reads imports to learn the module's names for triton, tl and
// libdevice, (2) finds every jit function and reads its decorators and parameters, (3) walks each
// kernel body for facts, (4) infers pointer parameters from usage (with one propagation step
// through calls to other jit functions), (5) finds launch sites and resolves the origin of every
// constexpr and launch option, (6) classifies kernels.
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
#include "analysis/model.h"

namespace kiln::analysis {

using pyast::Node;

const char* ParamKindName(ParamKind k) {
  switch (k) {
    case ParamKind::kPointer: return "pointer";
    case ParamKind::kScalar: return "scalar";
    case ParamKind::kConstexpr: return "constexpr";
    case ParamKind::kDescriptor: return "descriptor";
  }
  return "?";
}
const char* ParamEvidenceName(ParamEvidence e) {
  switch (e) {
    case ParamEvidence::kAnnotation: return "annotation";
    case ParamEvidence::kUsage: return "usage";
    case ParamEvidence::kNameSuffix: return "name_suffix";
    case ParamEvidence::kDefault: return "default";
  }
  return "?";
}
const char* KernelClassName(KernelClass c) {
  switch (c) {
    case KernelClass::kElementwise: return "elementwise";
    case KernelClass::kReduction: return "reduction";
    case KernelClass::kSoftmax: return "softmax";
    case KernelClass::kGemm: return "gemm";
    case KernelClass::kAttention: return "attention";
    case KernelClass::kScan: return "scan";
    case KernelClass::kOther: return "other";
  }
  return "?";
}
const char* OriginKindName(OriginKind k) {
  switch (k) {
    case OriginKind::kLiteral: return "literal";
    case OriginKind::kVariable: return "variable";
    case OriginKind::kComputed: return "computed";
    case OriginKind::kFunctionParam: return "function_param";
    case OriginKind::kAutotune: return "autotune";
    case OriginKind::kHeuristics: return "heuristics";
    case OriginKind::kDefault: return "default";
    case OriginKind::kMissing: return "missing";
  }
  return "?";
}
const char* GridKindName(GridKind k) {
  switch (k) {
    case GridKind::kTuple: return "tuple";
    case GridKind::kLambda: return "lambda";
    case GridKind::kVariable: return "variable";
    case GridKind::kCall: return "call";
    case GridKind::kOther: return "other";
  }
  return "?";
}

namespace internal {

Result<ModuleModel> Analyzer::Run() {
  model_.path = tree_.path();
  ReadImports();
  FindJitFunctions();
  if (model_.kernels.empty()) {
    return InvalidArgument("no @triton.jit function found");
  }
  for (size_t i = 0; i < model_.kernels.size(); ++i) AnalyzeBody(i);
  InferPointers();
  CollectAssigns(tree_.root(), module_assigns_);
  FindLaunches();
  Classify();
  return std::move(model_);
}

void Analyzer::ReadImports() {
  tree_.root().Walk([&](const Node& n) {
    auto t = n.type();
    if (t == "import_statement") {
      for (const Node& c : n.named_children()) {
        if (c.type() == "dotted_name") {
          std::string full(c.text());
          std::string first = SplitDots(full)[0];
          alias_[first] = first;
        } else if (c.type() == "aliased_import") {
          alias_[std::string(c.field("alias").text())] = std::string(c.field("name").text());
        }
      }
      return false;
    }
    if (t == "import_from_statement") {
      std::string mod(n.field("module_name").text());
      // The imported names: the named children after the module name (tree-sitter's field name of a child is off
      // past an anonymous `,`: `from triton import cdiv, jit` lost `jit`).
      std::vector<Node> names = n.named_children();
      bool past_module = false;
      for (const Node& c : names) {
        if (!past_module) {
          past_module = c == n.field("module_name");
          continue;
        }
        if (c.type() == "dotted_name") {
          std::string name(c.text());
          alias_[name] = mod + "." + name;
        } else if (c.type() == "aliased_import") {
          alias_[std::string(c.field("alias").text())] = mod + "." + std::string(c.field("name").text());
        }
      }
      return false;
    }
    return true;
  });
  if (!alias_.count("tl")) alias_["tl"] = "triton.language";
  if (!alias_.count("triton")) alias_["triton"] = "triton";
  for (const auto& [a, full] : alias_) {
    std::string c = CanonFull(full);
    if (c == "triton")
      model_.triton_aliases.push_back(a);
    else if (c == "tl")
      model_.tl_aliases.push_back(a);
    else if (IsLibdeviceModule(c))
      model_.libdevice_aliases.push_back(a);
  }
}

bool Analyzer::IsLibdeviceModule(const std::string& c) {
  auto parts = SplitDots(c);
  return !parts.empty() && parts.back() == "libdevice";
}

std::string Analyzer::CanonFull(std::string s) {
  if (s == "triton.language" || StartsWith(s, "triton.language.")) s = "tl" + s.substr(15);
  if (StartsWith(s, "tl.core.")) s = "tl." + s.substr(8);
  if (StartsWith(s, "triton.runtime.jit.") || StartsWith(s, "triton.runtime.autotuner.")) {
    s = "triton." + s.substr(s.rfind('.') + 1);
  }
  return s;
}

std::string Analyzer::Canon(const std::string& dotted) const {
  if (dotted.empty()) return "";
  size_t dot = dotted.find('.');
  std::string first = dotted.substr(0, dot);
  std::string rest = dot == std::string::npos ? "" : dotted.substr(dot);
  auto it = alias_.find(first);
  std::string full = (it == alias_.end() ? first : it->second) + rest;
  std::string c = CanonFull(full);
  auto parts = SplitDots(c);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i] == "libdevice") {
      std::string out = "libdevice";
      for (size_t j = i + 1; j < parts.size(); ++j) out += "." + parts[j];
      return out;
    }
  }
  return c;
}

std::string Analyzer::CanonCallee(const Node& call) const { return Canon(Dotted(call.field("function"))); }

bool Analyzer::IsModuleName(std::string_view name) const {
  if (kModuleNames.count(name)) return true;
  auto it = alias_.find(std::string(name));
  return it != alias_.end();
}

}  // namespace internal

Result<ModuleModel> AnalyzeModule(const pyast::Tree& tree) {
  internal::Analyzer a(tree);
  return a.Run();
}

}  // namespace kiln::analysis

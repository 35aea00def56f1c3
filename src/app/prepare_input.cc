#include "app/prepare_input.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/model.h"
#include "analysis/tunables.h"
#include "common/file.h"
#include "common/source_text.h"
#include "pyast/pyast.h"
#include "rewrite/rewrite.h"

namespace kiln::app {

namespace {

struct KernelSpaceResult {
  search::SpaceBuild build;
  bool autotuned = false;
  std::string render_source;            // the lifted module when it is used; empty: the original
  std::vector<std::string> lift_notes;  // "literal 1024 (line 14) -> ...", "literal 64 stays fixed: ..."
};

// The literal each lifted parameter stands for, from LiftLiterals' notes ("literal 1024 (line 14) ->
// constexpr KILN_BLOCK0 = 1024").
std::map<std::string, std::string> LiftedNames(const std::vector<std::string>& notes) {
  std::map<std::string, std::string> out;
  for (const auto& n : notes) {
    auto at = n.find("-> constexpr ");
    if (n.rfind("literal ", 0) != 0 || at == std::string::npos) continue;
    std::string rest = n.substr(at + 13);
    out[rest.substr(0, rest.find(' '))] = n.substr(8, n.find(' ', 8) - 8);
  }
  return out;
}

// The streaming-load hint as a searched knob (search::kEvictFirstParam, 0 = the original's loads) where
// rewrite::EvictionHints applies to the module candidates are rendered from; a note says so.
void AddEvictionKnob(const pyast::Tree& tree, const analysis::ModuleModel& model, const std::string& n,
                     KernelSpaceResult* r) {
  rewrite::EvictionHints h;
  h.eviction_policy = "evict_first";
  if (!rewrite::Check(tree, model, {n, {}}, rewrite::Request(h))) return;
  std::vector<search::Param> params = r->build.space.params();
  params.push_back({search::kEvictFirstParam, search::Role::kOther, {0, 1}, false, {}});
  r->build.space = search::Space(std::move(params));
  r->build.baseline[search::kEvictFirstParam] = 0;
  r->lift_notes.push_back(std::string("searched: ") + search::kEvictFirstParam +
                          " (1: the loads each program reads once get eviction_policy='evict_first')");
}

// One kernel's space. Literal tile sizes in its body (rewrite::LiftLiterals) are lifted to constexpr
// parameters when at least one of them is then editable: candidates are rendered from the lifted module
// (the same program at the literals' values); each lifted size that stays fixed gets a note with why.
Result<KernelSpaceResult> KernelSpace(const pyast::Tree& tree, const analysis::ModuleModel& model,
                                      const std::string& path, const std::string& n,
                                      const search::SpaceOptions& so) {
  KILN_ASSIGN_OR_RETURN(auto t, analysis::ExtractTunables(tree, model, {n, {}}));
  KernelSpaceResult r;
  r.build = search::SpaceFromTunables(t, so);
  r.autotuned = t.autotuned;
  auto original = [&]() -> Result<KernelSpaceResult> {  // candidates rendered from the original
    if (!r.build.space.empty()) AddEvictionKnob(tree, model, n, &r);
    return r;
  };
  auto lifted = rewrite::Apply(tree, model, {n, {}}, rewrite::LiftLiterals{});
  if (!lifted.ok()) {
    const std::string& why = lifted.status().message();
    if (why.find("stays fixed") != std::string::npos) r.lift_notes.push_back(why);
    return original();
  }
  auto ltree = pyast::Tree::Parse(lifted->source, path);
  if (!ltree.ok()) return original();
  auto lmodel = analysis::AnalyzeModule(**ltree);
  if (!lmodel.ok()) return original();
  auto lt = analysis::ExtractTunables(**ltree, *lmodel, {n, {}});
  if (!lt.ok()) return original();
  const auto names = LiftedNames(lifted->notes);
  std::vector<std::string> notes;
  int editable = 0;
  for (const auto& u : lt->items) {
    auto it = names.find(u.name);
    if (it == names.end()) continue;
    if (u.editable)
      ++editable;
    else
      notes.push_back(fmt::format("literal {} stays fixed: lifted as {} for the analysis, {}", it->second, u.name,
                                  u.reason));
  }
  for (const auto& note : lifted->notes)
    if (note.rfind("literal ", 0) == 0 && (editable > 0 || note.find("stays fixed") != std::string::npos))
      notes.push_back(note);
  r.lift_notes = notes;
  if (editable == 0) return original();
  r.build = search::SpaceFromTunables(*lt, so);
  r.render_source = lifted->source;
  if (!r.build.space.empty()) AddEvictionKnob(**ltree, *lmodel, n, &r);
  return r;
}

}  // namespace

Result<search::OptimizeInput> PrepareInput(const task::TaskSpec& spec, const std::string& kernel,
                                           const search::SpaceOptions& so, const std::vector<std::string>& among) {
  if (spec.format != task::Format::kTritonBenchG && spec.format != task::Format::kKiln)
    return InvalidArgument(
        fmt::format("kiln optimize tunes Triton modules: tasks in kiln or TritonBench-G format (this one is {}); "
                    "for other formats, evaluate a candidate with kiln eval",
                    task::FormatName(spec.format)));
  KILN_ASSIGN_OR_RETURN(std::string text, ReadPythonSource(spec.path));
  return PrepareInputFromSource(spec,
                                spec.format == task::Format::kTritonBenchG ? task::StripTritonBenchTest(text) : text,
                                spec.path, kernel, so, among);
}

Result<search::OptimizeInput> PrepareInputFromSource(const task::TaskSpec& spec, const std::string& source,
                                                     const std::string& path, const std::string& kernel,
                                                     const search::SpaceOptions& so,
                                                     const std::vector<std::string>& among) {
  search::OptimizeInput in;
  in.task = spec;
  in.original_source = source;
  KILN_ASSIGN_OR_RETURN(auto tree, pyast::Tree::Parse(in.original_source, path));
  if (!tree->errors().empty()) return ParseError(path + ": syntax error; fix the module first");
  KILN_ASSIGN_OR_RETURN(auto model, analysis::AnalyzeModule(*tree));
  // Candidates: launched kernels.
  std::vector<std::string> names;
  if (!kernel.empty()) {
    if (!model.FindKernel(kernel)) return NotFound("no @triton.jit kernel named '" + kernel + "' in " + path);
    names.push_back(kernel);
  } else {
    for (const auto& k : model.kernels)
      if (k.launched && (among.empty() || std::find(among.begin(), among.end(), k.name) != among.end()))
        names.push_back(k.name);
  }
  if (names.empty() && !among.empty())
    return NotFound(
        fmt::format("{}: none of the kernels that ran ({}) is launched from the module", path, fmt::join(among, ", ")));
  if (names.empty()) return NotFound(path + ": no kernel is launched from the module; nothing to tune");
  int best_n = -1;
  for (const auto& n : names) {
    auto ks = KernelSpace(*tree, model, spec.path, n, so);
    if (!ks.ok()) {
      in.notes.push_back(n + ": " + ks.status().message());
      continue;
    }
    int n_params = static_cast<int>(ks->build.space.params().size()) -
                   (ks->build.space.Find(search::kEvictFirstParam) ? 1 : 0);  // (the kernel with the most values)
    if (n_params > best_n) {
      best_n = n_params;
      in.kernel = n;
      in.space = ks->build.space;
      in.baseline = ks->build.baseline;
      in.autotuned = ks->autotuned;
      in.runtime_valued = ks->build.runtime_valued;
      in.render_source = ks->render_source;
      in.notes.erase(std::remove_if(in.notes.begin(), in.notes.end(),
                                    [](const std::string& s) {
                                      return s.rfind("skipped ", 0) == 0 || s.rfind("literal ", 0) == 0 ||
                                             s.rfind("searched: ", 0) == 0;
                                    }),
                     in.notes.end());
      for (const auto& s : ks->build.skipped) in.notes.push_back("skipped " + s);
      for (const auto& s : ks->lift_notes) in.notes.push_back(s);
    }
  }
  if (best_n < 0) return InvalidArgument(path + ": no kernel's tunables could be extracted");
  if (kernel.empty()) in.launched_kernels = names;
  if (names.size() > 1)
    in.notes.push_back(
        fmt::format("{} kernels are launched; tuning '{}' (use --kernel to choose)", names.size(), in.kernel));
  return in;
}

}  // namespace kiln::app

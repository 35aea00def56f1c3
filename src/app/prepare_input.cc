#include "app/prepare_input.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/model.h"
#include "analysis/tunables.h"
#include "common/file.h"
#include "common/source_text.h"
#include "pyast/pyast.h"
#include "rewrite/rewrite.h"

namespace kiln::app {

Result<search::OptimizeInput> PrepareInput(const task::TaskSpec& spec, const std::string& kernel,
                                           const search::SpaceOptions& so) {
  if (spec.format != task::Format::kTritonBenchG && spec.format != task::Format::kKiln)
    return InvalidArgument(
        fmt::format("kiln optimize tunes Triton modules: tasks in kiln or TritonBench-G format (this one is {}); "
                    "for other formats, evaluate a candidate with kiln eval",
                    task::FormatName(spec.format)));
  KILN_ASSIGN_OR_RETURN(std::string text, ReadPythonSource(spec.path));
  return PrepareInputFromSource(spec, spec.format == task::Format::kTritonBenchG ? task::StripTritonBenchTest(text) : text,
                                spec.path, kernel, so);
}

Result<search::OptimizeInput> PrepareInputFromSource(const task::TaskSpec& spec, const std::string& source,
                                                     const std::string& path, const std::string& kernel,
                                                     const search::SpaceOptions& so) {
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
      if (k.launched) names.push_back(k.name);
  }
  if (names.empty()) return NotFound(path + ": no kernel is launched from the module; nothing to tune");
  int best_n = -1;
  for (const auto& n : names) {
    auto t = analysis::ExtractTunables(*tree, model, {n, {}});
    if (!t.ok()) {
      in.notes.push_back(n + ": " + t.status().message());
      continue;
    }
    auto b = search::SpaceFromTunables(*t, so);
    int n_params = static_cast<int>(b.space.params().size());
    if (n_params > best_n) {
      best_n = n_params;
      in.kernel = n;
      in.space = b.space;
      in.baseline = b.baseline;
      in.autotuned = t->autotuned;
      in.runtime_valued = b.runtime_valued;
      in.notes.erase(std::remove_if(in.notes.begin(), in.notes.end(),
                                    [](const std::string& s) { return s.rfind("skipped ", 0) == 0; }),
                     in.notes.end());
      for (const auto& s : b.skipped) in.notes.push_back("skipped " + s);
    }
  }
  if (best_n < 0) return InvalidArgument(path + ": no kernel's tunables could be extracted");
  if (names.size() > 1)
    in.notes.push_back(
        fmt::format("{} kernels are launched; tuning '{}' (use --kernel to choose)", names.size(), in.kernel));
  return in;
}

}  // namespace kiln::app

#include "diagnose/static_facts.h"

#include "common/strings.h"
#include "pyast/pyast.h"

namespace kiln::diagnose {

std::vector<exec::KernelFacts> StaticFacts(const analysis::ModuleModel& model) {
  std::vector<exec::KernelFacts> out;
  for (const auto& k : model.kernels) {
    exec::KernelFacts f;
    f.name = k.name;
    f.has_dot = !k.dots.empty();
    for (const auto& d : k.dots) {
      if (Contains(d.input_precision.text, "ieee") || d.allow_tf32.text == "False") {
        f.fp32_dot_without_tensor_cores = true;
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

Result<std::vector<exec::KernelFacts>> StaticFactsFromFile(const std::string& path) {
  auto tree = pyast::Tree::ParseFile(path);
  if (!tree.ok()) return tree.status();
  auto model = analysis::AnalyzeModule(**tree);
  if (!model.ok()) return model.status();
  return StaticFacts(*model);
}

}  // namespace kiln::diagnose

#include "diagnose/static_facts.h"

#include "pyast/pyast.h"

namespace kiln::diagnose {

namespace {

bool Contains(const std::string& s, const char* n) { return s.find(n) != std::string::npos; }

}  // namespace

std::vector<profile::KernelFacts> StaticFacts(const analysis::ModuleModel& model) {
  std::vector<profile::KernelFacts> out;
  for (const auto& k : model.kernels) {
    profile::KernelFacts f;
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

Result<std::vector<profile::KernelFacts>> StaticFactsFromFile(const std::string& path) {
  auto tree = pyast::Tree::ParseFile(path);
  if (!tree.ok()) return tree.status();
  auto model = analysis::AnalyzeModule(**tree);
  if (!model.ok()) return model.status();
  return StaticFacts(*model);
}

}  // namespace kiln::diagnose

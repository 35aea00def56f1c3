#include "exec/kernel_facts.h"

#include "common/json.h"

namespace kiln::exec {

using nlohmann::json;

KernelFacts KernelFactsFromObject(const json& k) {
  KernelFacts f;
  f.name = JsonString(k, "name");
  f.launches = JsonInt(k, "launches").value_or(0);
  f.n_regs = JsonInt(k, "n_regs");
  f.n_spills = JsonInt(k, "n_spills");
  f.shared_bytes = JsonInt(k, "shared_bytes");
  f.num_warps = JsonInt(k, "num_warps");
  f.num_stages = JsonInt(k, "num_stages");
  if (auto g = k.find("grid"); k.is_object() && g != k.end() && g->is_array()) {
    for (const auto& x : *g) f.grid.push_back(x.is_number() ? static_cast<int64_t>(x.get<double>()) : 0);
  }
  f.constexprs = JsonObject(k, "constexprs");
  f.fp32_dot_without_tensor_cores = JsonBool(k, "fp32_dot_without_tensor_cores");
  f.has_dot = JsonBool(k, "has_dot") || f.fp32_dot_without_tensor_cores;
  return f;
}

Result<std::vector<KernelFacts>> KernelFactsFromJson(const json& j) {
  const json* arr = &j;
  if (j.is_object()) {
    auto it = j.find("kernels");
    if (it == j.end()) return ParseError("facts JSON has no \"kernels\" array");
    arr = &*it;
  }
  if (!arr->is_array()) return ParseError("facts \"kernels\" is not an array");
  std::vector<KernelFacts> out;
  for (const auto& k : *arr) {
    if (!k.is_object() || !k.contains("name") || !k["name"].is_string()) {
      return ParseError("each kernel fact needs a string \"name\"");
    }
    out.push_back(KernelFactsFromObject(k));
  }
  return out;
}

json ToJson(const KernelFacts& f) {
  json j{{"name", f.name}};
  if (f.launches > 0) j["launches"] = f.launches;
  auto put = [&](const char* k, const std::optional<int64_t>& v) {
    if (v) j[k] = *v;
  };
  put("n_regs", f.n_regs);
  put("n_spills", f.n_spills);
  put("shared_bytes", f.shared_bytes);
  put("num_warps", f.num_warps);
  put("num_stages", f.num_stages);
  if (!f.grid.empty()) j["grid"] = f.grid;
  if (f.constexprs.is_object() && !f.constexprs.empty()) j["constexprs"] = f.constexprs;
  j["has_dot"] = f.has_dot;
  j["fp32_dot_without_tensor_cores"] = f.fp32_dot_without_tensor_cores;
  return j;
}

std::vector<KernelFacts> MergeFacts(std::vector<KernelFacts> base, const std::vector<KernelFacts>& extra) {
  for (const auto& e : extra) {
    KernelFacts* b = nullptr;
    for (auto& x : base) {
      if (x.name == e.name) b = &x;
    }
    if (!b) {
      base.push_back(e);
      continue;
    }
    auto fill = [](std::optional<int64_t>& a, const std::optional<int64_t>& v) {
      if (!a && v) a = v;
    };
    fill(b->n_regs, e.n_regs);
    fill(b->n_spills, e.n_spills);
    fill(b->shared_bytes, e.shared_bytes);
    fill(b->num_warps, e.num_warps);
    fill(b->num_stages, e.num_stages);
    if (b->grid.empty()) b->grid = e.grid;
    if (b->launches == 0) b->launches = e.launches;
    if (!b->constexprs.is_object()) b->constexprs = json::object();
    if (e.constexprs.is_object()) {
      for (const auto& [k, v] : e.constexprs.items()) {
        if (!b->constexprs.contains(k)) b->constexprs[k] = v;
      }
    }
    b->has_dot = b->has_dot || e.has_dot;
    b->fp32_dot_without_tensor_cores = b->fp32_dot_without_tensor_cores || e.fp32_dot_without_tensor_cores;
  }
  return base;
}

}  // namespace kiln::exec

#include "bench/baseline.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/file.h"
#include "common/json.h"

namespace kiln::bench {

std::string CompileBaselineSource(const std::string& reference_text) {
  return reference_text + R"PY(


# --- kiln bench --baseline compile: the reference under torch.compile ---
import os as _kiln_os


class ModelNew(Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._kiln_compiled = None
        self._kiln_graphs = False
        if _kiln_os.environ.get("TRITON_INTERPRET") != "1":  # no timing there: no compile either
            self._kiln_compiled = torch.compile(super().forward)

    def forward(self, *args, **kwargs):
        if self._kiln_compiled is None:
            return super().forward(*args, **kwargs)
        # Dynamo runs the module eagerly while a TorchDispatchMode is active (the worker's aten-op count is
        # one): the compiled module runs outside those modes. A call that compiled no graph is an error,
        # never an eager time reported as torch.compile's.
        if torch._C._len_torch_dispatch_stack() > 0:
            from torch.utils._python_dispatch import _disable_current_modes
            with _disable_current_modes():
                out = self._kiln_compiled(*args, **kwargs)
        else:
            out = self._kiln_compiled(*args, **kwargs)
        if not self._kiln_graphs:
            from torch._dynamo.utils import counters
            if counters["stats"]["unique_graphs"] == 0:
                raise RuntimeError("torch.compile compiled no graph (the module ran eagerly): no torch.compile baseline")
            self._kiln_graphs = True
        return out
)PY";
}

std::string CompileBaselineId(const std::string& task) { return task + "#@compile"; }

Result<std::map<std::string, double>> ReadBaselineFile(const std::string& path, int level) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  nlohmann::json j = ParseJson(text);
  if (!j.is_object())
    return InvalidArgument(fmt::format("{}: error: not a JSON object (KernelBench's baseline layout: "
                                       "{{\"level1\": {{\"19_ReLU.py\": {{\"mean\": MS}}}}}})",
                                       path));
  const std::string key = fmt::format("level{}", level);
  auto lv = j.find(key);
  if (lv == j.end() || !lv->is_object())
    return InvalidArgument(fmt::format("{}: error: no \"{}\" object (KernelBench's baseline layout)", path, key));
  std::map<std::string, double> out;
  for (const auto& [file, v] : lv->items()) {
    auto mean = v.is_object() ? v.find("mean") : v.end();
    if (mean == v.end() || !mean->is_number() || mean->get<double>() <= 0)
      return InvalidArgument(fmt::format("{}: error: {}.{}: expected {{\"mean\": MS > 0, ...}}", path, key, file));
    std::string stem = file.size() > 3 && file.substr(file.size() - 3) == ".py" ? file.substr(0, file.size() - 3) : file;
    out[stem] = mean->get<double>();
  }
  return out;
}

std::optional<double> SpeedupVsCompile(std::optional<double> speedup_eager, std::optional<double> eager_over_compile) {
  if (!speedup_eager || !eager_over_compile || *eager_over_compile <= 0) return std::nullopt;
  return *speedup_eager / *eager_over_compile;
}

}  // namespace kiln::bench

#include "bench/dataset.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "common/file.h"
#include "common/strings.h"

namespace kiln::bench {

namespace fs = std::filesystem;

std::string Channel::Name() const {
  switch (benchmark) {
    case Benchmark::kTritonBenchG: return "tritonbench-g";
    case Benchmark::kTritonBenchT: return "tritonbench-t";
    case Benchmark::kKernelBench: return fmt::format("kernelbench-level{}", level);
  }
  return "";
}

Result<Channel> ParseChannel(const std::string& name, int level) {
  Channel c;
  if (name == "tritonbench-g" || name == "tritonbench-t") {
    if (level != 0) return InvalidArgument("--level is only for kernelbench");
    c.benchmark = name == "tritonbench-g" ? Benchmark::kTritonBenchG : Benchmark::kTritonBenchT;
    return c;
  }
  if (name == "kernelbench") {
    if (level < 1 || level > 3) return InvalidArgument("kernelbench needs --level 1, 2 or 3");
    c.benchmark = Benchmark::kKernelBench;
    c.level = level;
    return c;
  }
  return InvalidArgument(
      fmt::format("unknown channel '{}' (expected tritonbench-g, tritonbench-t or kernelbench)", name));
}

Result<std::string> TaskDir(const Channel& c, const std::string& dataset) {
  if (dataset.empty())
    return InvalidArgument("--dataset DIR is required: the TritonBench or KernelBench checkout holding the tasks");
  std::error_code ec;
  if (!fs::is_directory(dataset, ec)) return NotFound(fmt::format("{}: dataset folder not found", dataset));
  std::vector<fs::path> tries;
  fs::path d(dataset);
  if (c.benchmark == Benchmark::kKernelBench) {
    std::string lv = fmt::format("level{}", c.level);
    tries = {d / lv, d / "KernelBench" / lv};
    if (d.filename() == lv) tries.push_back(d);
  } else {
    const char* g = c.benchmark == Benchmark::kTritonBenchG ? "G" : "T";
    tries = {d / g / "kernels", d / "data" / fmt::format("TritonBench_{}_v1", g), d / "kernels"};
    if (d.filename() == "kernels" || EndsWith(d.filename().string(), "_v1")) tries.push_back(d);
  }
  std::string tried;
  for (const auto& t : tries) {
    if (fs::is_directory(t, ec)) return t.lexically_normal().string();
    tried += (tried.empty() ? "" : ", ") + t.string();
  }
  return NotFound(fmt::format("{}: no {} tasks there (looked for {})", dataset, c.Name(), tried));
}

namespace {

bool IsTask(const Channel& c, const fs::path& p) {
  if (p.extension() != ".py") return false;
  auto text = ReadFile(p.string());
  if (!text.ok()) return false;
  if (c.benchmark == Benchmark::kKernelBench) return Contains(*text, "class Model");
  return Contains(*text, std::string(146, '#'));
}

std::string ProblemNumber(const std::string& stem) {
  size_t i = 0;
  while (i < stem.size() && std::isdigit(static_cast<unsigned char>(stem[i]))) ++i;
  return i > 0 && i < stem.size() && stem[i] == '_' ? stem.substr(0, i) : "";
}

}  // namespace

Result<std::string> ResolveTask(const Channel& c, const std::string& dir, const std::string& task) {
  std::string stem = EndsWith(task, ".py") ? task.substr(0, task.size() - 3) : task;
  std::error_code ec;
  if (!stem.empty() && stem.find('/') == std::string::npos) {
    fs::path p = fs::path(dir) / (stem + ".py");
    if (fs::is_regular_file(p, ec)) return p.string();
    if (c.benchmark == Benchmark::kKernelBench &&
        std::all_of(stem.begin(), stem.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
      for (const auto& e : fs::directory_iterator(dir, ec))
        if (ProblemNumber(e.path().stem().string()) == stem && e.path().extension() == ".py") return e.path().string();
  }
  return NotFound(fmt::format("task '{}' not found in {} ({})", task, dir, c.Name()));
}

std::vector<std::string> ListTasks(const Channel& c, const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && IsTask(c, e.path())) out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kiln::bench

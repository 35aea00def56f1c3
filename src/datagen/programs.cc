// Reading harvested programs (KernelBench modules, TritonBench-T operators) through src/task.
#include "datagen/programs.h"

#include <algorithm>
#include <filesystem>

#include "common/file.h"
#include "common/strings.h"
#include "task/task.h"

namespace kiln::datagen {

namespace fs = std::filesystem;

namespace {

std::string LicenceAbove(const fs::path& file) {
  fs::path dir = file.parent_path();
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    for (const char* name : {"LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING"}) {
      auto text = ReadFile((dir / name).string());
      if (!text.ok()) continue;
      for (std::string_view line : SplitLines(*text)) {
        if (!IsBlankLine(line)) return std::string(Trim(line));
      }
    }
    if (dir == dir.parent_path()) break;
  }
  return "unknown";
}

std::vector<std::string> SplitList(std::string_view s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t c = s.find(',', pos);
    std::string_view item = Trim(s.substr(pos, c == std::string_view::npos ? std::string_view::npos : c - pos));
    if (!item.empty()) out.emplace_back(item);
    if (c == std::string_view::npos) break;
    pos = c + 1;
  }
  return out;
}

// A program the composer wrote (an earlier run's programs/ folder) is read back as composed: its header
// "# Composed by kiln datagen (NAME): op, op\n# families: f, f; dtype: D" gives its id, operators, families.
void ReadComposedHeader(Program* p) {
  static constexpr std::string_view kHead = "# Composed by kiln datagen (";
  auto lines = SplitLines(p->text);
  if (lines.size() < 2 || !StartsWith(lines[0], kHead) || !StartsWith(lines[1], "# families: ")) return;
  std::string_view first = lines[0].substr(kHead.size());
  size_t close = first.find("): ");
  if (close == std::string_view::npos) return;
  std::string_view fam = lines[1].substr(12);
  size_t semi = fam.find("; dtype: ");
  if (semi == std::string_view::npos) return;
  p->origin = "composed";
  p->id = std::string(first.substr(0, close));
  p->ops = SplitList(first.substr(close + 3));
  p->families = SplitList(fam.substr(0, semi));
  p->dtype = std::string(Trim(fam.substr(semi + 9)));
  p->licence = "generated (kiln datagen)";
}

Result<Program> ReadOne(const fs::path& file, const std::string& format) {
  task::LoadOptions lo;
  lo.format = format;
  lo.find_perf = false;
  auto spec = task::LoadTask(file.string(), lo);
  if (!spec.ok()) return spec.status();
  Program p;
  if (spec->format == task::Format::kKernelBench) {
    p.origin = "kernelbench";
    p.id = "kb/" + file.parent_path().filename().string() + "/" + file.stem().string();
  } else if (spec->format == task::Format::kTritonBenchT) {
    p.origin = "tritonbench_t";
    p.id = "tbt/" + file.stem().string();
    p.entry = spec->entry;
  } else {
    return InvalidArgument(file.string() + ":1:1: error: a " + task::FormatName(spec->format) +
                           " task is not a program datagen reads (KernelBench or TritonBench-T)");
  }
  p.path = spec->path;
  KILN_ASSIGN_OR_RETURN(p.text, ReadFile(file.string()));
  p.families = InferFamilies(p.origin == "tritonbench_t" ? task::StripTritonBenchTest(p.text) : p.text);
  p.licence = LicenceAbove(fs::absolute(file));
  ReadComposedHeader(&p);
  return p;
}

}  // namespace

nlohmann::json Program::ToJson() const {
  nlohmann::json j = {{"id", id},     {"origin", origin}, {"path", path},       {"families", families},
                      {"ops", ops},   {"dtype", dtype},   {"licence", licence}};
  if (!entry.empty()) j["entry"] = entry;
  return j;
}

Result<Program> Program::FromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("id") || !j.contains("path")) return InvalidArgument("program: needs id and path");
  Program p;
  try {
    p.id = j.at("id").get<std::string>();
    p.path = j.at("path").get<std::string>();
    p.origin = j.value("origin", "kernelbench");
    p.entry = j.value("entry", "");
    p.families = j.value("families", std::vector<std::string>{});
    p.ops = j.value("ops", std::vector<std::string>{});
    p.dtype = j.value("dtype", "");
    p.licence = j.value("licence", "");
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("program: ") + e.what());
  }
  return p;
}

Result<std::vector<Program>> ReadPrograms(const std::string& path, const std::string& format) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec)) {
      if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(path, ec)) {
    files.push_back(path);
  } else {
    return NotFound(path + ": no such file or directory");
  }
  std::vector<Program> out;
  for (const auto& f : files) {
    KILN_ASSIGN_OR_RETURN(Program p, ReadOne(f, format));
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> InferFamilies(const std::string& text) {
  struct Rule {
    const char* family;
    std::vector<const char*> needles;
  };
  static const std::vector<Rule> kRules = {
      {"matmul", {"matmul", "nn.Linear", "bmm", "mm(", "einsum", "addmm", "Conv", "conv"}},
      {"normalization", {"softmax", "Norm", "norm(", "normalize"}},
      {"reduction", {".sum(", ".mean(", "amax", "amin", "argmax", "argmin", "cumsum", "cumprod", "logsumexp",
                     "torch.sum", "torch.mean", "torch.max", "torch.min", "prod("}},
      {"activation", {"relu", "gelu", "silu", "sigmoid", "tanh", "elu", "softplus", "hardswish", "mish",
                      "ReLU", "GELU", "Sigmoid", "Tanh"}},
      {"indexing", {"gather", "index_select", "scatter", "transpose", "permute", "flip", "roll", "cat(", "[:",
                    "narrow", "view(", "reshape("}},
      {"elementwise", {" + ", " * ", " - ", " / ", "torch.add", "torch.mul", "clamp", "abs", "exp", "sqrt"}},
  };
  std::vector<std::string> out;
  for (const auto& r : kRules) {
    for (const char* n : r.needles) {
      if (Contains(text, n)) {
        out.push_back(r.family);
        break;
      }
    }
  }
  return out;
}

}  // namespace kiln::datagen

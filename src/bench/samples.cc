#include "bench/samples.h"

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "common/file.h"
#include "common/json.h"
#include "common/strings.h"
#include "response/extract.h"

namespace kiln::bench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Status LineError(const std::string& name, size_t line, const std::string& what) {
  return InvalidArgument(fmt::format("{}:{}:1: error: {}", name, line, what));
}

// The code of a sample line: "code" as given, else extracted from "response"; neither (or not a string):
// no code.
void TakeCode(const json& in, Sample* s) {
  if (in.contains("code") && in["code"].is_string()) {
    s->code = in["code"].get<std::string>();
    s->has_code = !Trim(s->code).empty();
    s->how = s->has_code ? "code" : "none";
    return;
  }
  if (in.contains("response") && in["response"].is_string()) {
    response::Extracted e = response::ExtractCode(in["response"].get<std::string>());
    s->has_code = e.has_code;
    s->code = e.code;
    s->how = e.how;
    return;
  }
  s->how = "none";
}

}  // namespace

Result<std::vector<Sample>> ParseSampleLines(const std::string& name, const std::string& text) {
  std::vector<Sample> out;
  std::map<std::string, int> rank;
  std::set<std::pair<std::string, std::string>> seen;
  auto lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (IsBlankLine(lines[i])) continue;
    const size_t no = i + 1;
    json in = ParseJson(lines[i]);
    if (in.is_discarded() || !in.is_object()) return LineError(name, no, "not a JSON object");
    if (!in.contains("task") || !in["task"].is_string() || in["task"].get<std::string>().empty())
      return LineError(name, no, "key 'task': expected a non-empty string");
    Sample s;
    s.task = in["task"].get<std::string>();
    const int r = rank[s.task]++;
    if (!in.contains("sample")) {
      s.sample = std::to_string(r);
    } else if (in["sample"].is_string()) {
      s.sample = in["sample"].get<std::string>();
    } else if (in["sample"].is_number_integer()) {
      s.sample = std::to_string(in["sample"].get<int64_t>());
    } else {
      return LineError(name, no, "key 'sample': expected a string or an integer");
    }
    if (!s.sample.empty() && s.sample[0] == '@') {  // '@' names kiln's own pairs (bench/baseline.h)
      return LineError(name, no, fmt::format("key 'sample': '{}': a sample name cannot start with '@'", s.sample));
    }
    if (in.contains("sizes")) {
      if (!in["sizes"].is_object()) return LineError(name, no, "key 'sizes': expected an object");
      s.sizes = in["sizes"];
    }
    if (!seen.insert({s.task, s.sample}).second)
      return LineError(name, no, fmt::format("sample '{}' of task '{}' given twice", s.sample, s.task));
    TakeCode(in, &s);
    s.origin = fmt::format("{}:{}", name, no);
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<Sample>> ReadGenerationDir(const std::string& dir, int level) {
  static const std::regex kName(R"(level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py)");
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file()) files.push_back(e.path());
  if (ec) return IoError(fmt::format("{}: cannot read the samples folder: {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<Sample> out;
  for (const auto& p : files) {
    std::smatch m;
    const std::string base = p.filename().string();
    if (!std::regex_match(base, m, kName) || ParseDecimal(m[1].str()) != level) continue;
    auto task = ParseDecimal(m[2].str()), sample = ParseDecimal(m[3].str());
    if (!task || !sample) continue;  // digits past int64: not a sample name
    auto text = ReadFile(p.string());
    if (!text.ok()) return IoError("cannot read the sample: " + text.status().message());
    Sample s;
    s.task = std::to_string(*task);
    s.sample = std::to_string(*sample);
    s.code = *text;
    s.has_code = !Trim(s.code).empty();
    s.how = s.has_code ? "code" : "none";
    s.origin = p.string();
    out.push_back(std::move(s));
  }
  if (out.empty())
    return NotFound(fmt::format("{}: no samples of level {} (expected files level_{}_problem_P_sample_S_kernel.py)",
                                dir, level, level));
  return out;
}

Result<std::vector<Sample>> ReadSamples(const std::string& path, int level) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (level < 1)
      return InvalidArgument(fmt::format("{}: a samples folder is KernelBench's layout: give --level", path));
    return ReadGenerationDir(path, level);
  }
  auto text = ReadFile(path);
  if (!text.ok()) return IoError("cannot read the samples file: " + text.status().message());
  return ParseSampleLines(path, *text);
}

}  // namespace kiln::bench

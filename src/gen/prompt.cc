#include "gen/prompt.h"

#include <set>

#include <fmt/format.h>

#include "common/file.h"
#include "common/strings.h"

namespace kiln::gen {

const char* DefaultGenerateText();  // default_prompts.cc (generated)
const char* DefaultOptimizeText();

namespace {

const std::set<std::string> kFields = {"task_name", "task_format", "entry", "reference", "requirements", "profile"};

// Checks every {{name}} of `text` (which starts on file line `first_line`).
Status CheckPlaceholders(const std::string& text, const std::string& file, int first_line) {
  int line = first_line;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
      continue;
    }
    if (text.compare(i, 2, "{{") != 0) continue;
    size_t end = text.find("}}", i + 2);
    std::string name = end == std::string::npos ? "" : text.substr(i + 2, end - i - 2);
    if (kFields.count(name) == 0) {
      std::string known;
      for (const auto& f : kFields) known += (known.empty() ? "" : ", ") + f;
      return InvalidArgument(fmt::format("{}:{}:{}: error: unknown placeholder '{{{{{}}}}}' (known: {})", file, line,
                                         i - line_start + 1, name, known));
    }
    i = end + 1;
  }
  return Status::Ok();
}

std::string Requirements(const task::TaskSpec& t) {
  switch (t.format) {
    case task::Format::kKernelBench:
      return "- Define `class ModelNew(nn.Module)` with the same `__init__` arguments and `forward` signature as\n"
             "  `Model`: it is built with `get_init_inputs()` and called with `get_inputs()`, and its outputs are\n"
             "  compared with `Model`'s.\n"
             "- The module is complete on its own: all imports, kernels and helpers in it.";
    default:
      return fmt::format(
          "- Define `{}` with the same signature and return values as in the reference: the task's tests call\n"
          "  it and compare its results with the reference's.\n"
          "- The module is complete on its own: all imports, kernels and helpers in it; no tests.",
          t.entry.empty() ? "the reference's entry function" : t.entry);
  }
}

}  // namespace

Result<PromptTemplate> ParseTemplate(const std::string& text, const std::string& name) {
  PromptTemplate t;
  t.name = name;
  std::string system_text, user_text;
  int system_line = 1, user_line = 1, line = 0;
  std::string* cur = nullptr;  // the section being read
  for (std::string_view l : SplitLines(text)) {
    ++line;
    std::string_view s = Trim(l);
    if (s == "=== system ===" || s == "=== user ===") {
      cur = s == "=== system ===" ? &system_text : &user_text;
      (s == "=== system ===" ? system_line : user_line) = line + 1;
      continue;
    }
    if (!cur) {  // text before any marker: the user message (a file without markers)
      if (s.empty()) continue;
      cur = &user_text;
      user_line = line;
    }
    *cur += std::string(l) + "\n";
  }
  KILN_RETURN_IF_ERROR(CheckPlaceholders(system_text, name, system_line));
  KILN_RETURN_IF_ERROR(CheckPlaceholders(user_text, name, user_line));
  t.system = std::string(Trim(system_text));
  t.user = std::string(Trim(user_text));
  if (t.user.empty()) return InvalidArgument(fmt::format("{}:1:1: error: the template has no user message", name));
  return t;
}

Result<PromptTemplate> LoadTemplate(const std::string& path) {
  if (path.empty()) return DefaultGenerateTemplate();
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseTemplate(text, path);
}

PromptTemplate DefaultGenerateTemplate() {
  return std::move(ParseTemplate(DefaultGenerateText(), "<builtin:autotriton>")).value();
}

PromptTemplate DefaultOptimizeTemplate() {
  return std::move(ParseTemplate(DefaultOptimizeText(), "<builtin:optimize>")).value();
}

Result<std::map<std::string, std::string>> TaskFields(const task::TaskSpec& t) {
  KILN_ASSIGN_OR_RETURN(std::string src, ReadFile(t.path));
  if (t.format == task::Format::kTritonBenchG || t.format == task::Format::kTritonBenchT)
    src = task::StripTritonBenchTest(src);
  std::map<std::string, std::string> f;
  f["task_name"] = t.name;
  f["task_format"] = task::FormatName(t.format);
  f["entry"] = t.format == task::Format::kKernelBench ? "ModelNew" : t.entry;
  f["reference"] = std::string(Trim(src));
  f["requirements"] = Requirements(t);
  f["profile"] = "";
  return f;
}

namespace {

std::string Substitute(const std::string& text, const std::map<std::string, std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t open = text.find("{{", i);
    if (open == std::string::npos) {
      out += text.substr(i);
      break;
    }
    size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) {
      out += text.substr(i);
      break;
    }
    out += text.substr(i, open - i);
    auto it = fields.find(text.substr(open + 2, close - open - 2));
    out += it != fields.end() ? it->second : "";
    i = close + 2;
  }
  return out;
}

}  // namespace

std::vector<llm::Message> Render(const PromptTemplate& t, const std::map<std::string, std::string>& fields) {
  std::vector<llm::Message> m;
  if (!t.system.empty()) m.push_back({"system", Substitute(t.system, fields)});
  m.push_back({"user", Substitute(t.user, fields)});
  return m;
}

}  // namespace kiln::gen

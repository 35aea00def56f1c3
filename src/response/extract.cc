#include "response/extract.h"

#include <regex>
#include <vector>

namespace kiln::response {

namespace {

std::string StripThink(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find("<think>", pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, open - pos));
    size_t close = text.find("</think>", open);
    if (close == std::string_view::npos) break;  // an unclosed <think> hides the rest
    pos = close + 8;
  }
  return out;
}

struct Block {
  std::string lang, body;
  bool closed = false;
};

// The fence of a line: the text after ``` when the line opens with it (at most three spaces first).
bool FenceLine(std::string_view line, std::string* info) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (line.substr(i, 3) != "```") return false;
  std::string_view rest = line.substr(i + 3);
  while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '`')) rest.remove_prefix(1);
  *info = std::string(rest);
  return true;
}

std::vector<Block> Blocks(const std::string& text) {
  std::vector<Block> out;
  Block* open = nullptr;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + pos, nl - pos);
    std::string info;
    if (FenceLine(line, &info)) {
      if (open && info.empty()) {
        open->closed = true;
        open = nullptr;
      } else if (!open) {
        size_t sp = info.find_first_of(" \t{");
        out.push_back({info.substr(0, sp), "", false});
        open = &out.back();
      } else {
        open->body.append(line).append("\n");  // a fence with a language inside a block: text
      }
    } else if (open) {
      open->body.append(line).append("\n");
    }
    pos = nl + 1;
  }
  return out;
}

bool PythonLang(std::string lang) {
  for (auto& c : lang) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lang.empty() || lang == "python" || lang == "py" || lang == "python3" || lang == "triton";
}

}  // namespace

Extracted ExtractCode(std::string_view response) {
  Extracted e;
  const std::string text = StripThink(response);
  std::vector<Block> blocks = Blocks(text);
  const Block* pick = nullptr;
  for (const auto& b : blocks) {
    if (!PythonLang(b.lang)) continue;
    if (!pick || b.body.find("@triton.jit") != std::string::npos || pick->body.find("@triton.jit") == std::string::npos)
      pick = &b;
  }
  if (pick) {
    e.has_code = pick->body.find_first_not_of(" \t\r\n") != std::string::npos;
    e.code = pick->body;
    e.format_ok = pick->closed && e.has_code;
    e.how = pick->closed ? "fenced" : "unterminated_fence";
    return e;
  }
  if (blocks.empty()) {
    static const std::regex kImport(R"((^|\n)\s*(import|from)\s+\w)");
    if (text.find("@triton.jit") != std::string::npos || std::regex_search(text, kImport)) {
      e.has_code = true;
      e.code = text;
      e.how = "unfenced";
      return e;
    }
  }
  e.how = "none";
  return e;
}

Gate TritonGate(std::string_view code) {
  static const std::regex kJit(R"(@triton\.jit[^\n]*\n(\s*@[^\n]*\n)*\s*def\s+(\w+))");
  std::string s(code);
  std::vector<std::string> kernels;
  for (auto it = std::sregex_iterator(s.begin(), s.end(), kJit); it != std::sregex_iterator(); ++it)
    kernels.push_back((*it)[2]);
  if (kernels.empty()) return {false, "no @triton.jit function"};
  for (const auto& k : kernels) {
    std::regex launch("\\b" + k + R"(\s*\[)");
    auto it = std::sregex_iterator(s.begin(), s.end(), launch);
    if (it != std::sregex_iterator()) return {true, ""};
  }
  return {false, "no @triton.jit function is launched (name[grid](...))"};
}

}  // namespace kiln::response

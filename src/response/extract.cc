#include "response/extract.h"

#include <cctype>
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

// Linear scans instead of std::regex: libstdc++'s regex executor recurses once per character a `\s*` or
// `[^\n]*` consumes, so a response of 30 KB of spaces overflowed the stack and killed `kiln serve`.
bool Space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool Word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size() && Space(s[i])) ++i;
  return i;
}

// A line that starts (after blank space) with `import x` or `from x` (as `(^|\n)\s*(import|from)\s+\w`).
bool HasImportLine(std::string_view s) {
  for (size_t line = 0; line <= s.size();) {
    size_t i = SkipSpace(s, line);
    for (std::string_view kw : {"import", "from"})
      if (s.substr(i, kw.size()) == kw) {
        size_t j = i + kw.size();
        if (j < s.size() && Space(s[j])) {
          j = SkipSpace(s, j);
          if (j < s.size() && Word(s[j])) return true;
        }
      }
    size_t nl = s.find('\n', i);
    if (nl == std::string_view::npos) break;
    line = nl + 1;
  }
  return false;
}

// The names of the functions `@triton.jit` decorates (as `@triton\.jit[^\n]*\n(\s*@[^\n]*\n)*\s*def\s+(\w+)`).
std::vector<std::string> JitFunctions(std::string_view s) {
  std::vector<std::string> out;
  for (size_t at = s.find("@triton.jit"); at != std::string_view::npos; at = s.find("@triton.jit", at + 1)) {
    size_t i = s.find('\n', at);
    if (i == std::string_view::npos) break;
    i = SkipSpace(s, i + 1);
    bool ok = true;
    while (i < s.size() && s[i] == '@') {  // further decorators
      size_t nl = s.find('\n', i);
      if (nl == std::string_view::npos) {
        ok = false;
        break;
      }
      i = SkipSpace(s, nl + 1);
    }
    if (!ok || s.substr(i, 3) != "def" || i + 3 >= s.size() || !Space(s[i + 3])) continue;
    size_t b = SkipSpace(s, i + 3), e = b;
    while (e < s.size() && Word(s[e])) ++e;
    if (e > b) out.emplace_back(s.substr(b, e - b));
  }
  return out;
}

// `name[` (spaces allowed before the bracket) where `name` starts a word (as `\bname\s*\[`).
bool Launched(std::string_view s, const std::string& name) {
  for (size_t at = s.find(name); at != std::string_view::npos; at = s.find(name, at + 1)) {
    if (at > 0 && Word(s[at - 1])) continue;
    size_t i = SkipSpace(s, at + name.size());
    if (i < s.size() && s[i] == '[') return true;
  }
  return false;
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
    if (text.find("@triton.jit") != std::string::npos || HasImportLine(text)) {
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
  std::vector<std::string> kernels = JitFunctions(code);
  if (kernels.empty()) return {false, "no @triton.jit function"};
  for (const auto& k : kernels)
    if (Launched(code, k)) return {true, ""};
  return {false, "no @triton.jit function is launched (name[grid](...))"};
}

}  // namespace kiln::response

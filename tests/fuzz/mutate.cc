#include "mutate.h"

#include <vector>

namespace kiln::fuzz {
namespace {

// Offset of the start of a random line.
size_t LineStartAt(const std::string& s, Rng& rng) {
  if (s.empty()) return 0;
  size_t at = rng.Below(s.size());
  while (at > 0 && s[at - 1] != '\n') --at;
  return at;
}

std::string Indent(const std::string& s, size_t at) {
  size_t e = at;
  while (e < s.size() && (s[e] == ' ' || s[e] == '\t')) ++e;
  return s.substr(at, e - at);
}

std::string Repeat(const std::string& unit, size_t n) {
  std::string out;
  out.reserve(unit.size() * n);
  for (size_t i = 0; i < n; ++i) out += unit;
  return out;
}

std::string InsertLine(const std::string& s, Rng& rng, const std::string& stmt) {
  size_t at = LineStartAt(s, rng);
  return s.substr(0, at) + Indent(s, at) + stmt + "\n" + s.substr(at);
}

std::string Encoding(const std::string& s, Rng& rng, std::string* kind) {
  switch (rng.Below(6)) {
    case 0: {  // a real latin-1 file: declaration plus high bytes in a comment and a string
      *kind = "encoding_latin1";
      return "# -*- coding: latin-1 -*-\n" + InsertLine(s, rng, "s = 'caf\xE9 \xFF\xA0' # \xE0 la");
    }
    case 1:
      *kind = "encoding_cp1252";
      return "#!/usr/bin/env python\n# coding=cp1252\n" + InsertLine(s, rng, "# \x80\x81\x8D\x9F");
    case 2: *kind = "encoding_unknown"; return "# coding: x-no-such-codec\n" + s;
    case 3:
      *kind = "encoding_bom";
      return "\xEF\xBB\xBF" + (rng.Below(2) ? std::string("# coding: latin-1\n") : std::string()) + s;
    case 4: {  // UTF-16 without a declaration
      *kind = "encoding_utf16";
      std::string out = "\xFF\xFE";
      for (char c : s.substr(0, 4000)) out += c, out += '\0';
      return out;
    }
    default:
      *kind = "encoding_declared_utf8_bad_bytes";
      return "# coding: utf-8\n" + InsertLine(s, rng, "x = '\xC3\x28'");
  }
}

}  // namespace

std::string Mutate(const std::string& seed, const std::string& other, Rng& rng, std::string* kind) {
  std::string s = seed;
  switch (rng.Below(16)) {
    case 0:
      *kind = "flip";
      for (size_t i = 0, n = 1 + rng.Below(8); i < n && !s.empty(); ++i) s[rng.Below(s.size())] = char(rng.Next());
      return s;
    case 1:
      *kind = "insert_bytes";
      for (size_t i = 0, n = 1 + rng.Below(16); i < n; ++i)
        s.insert(s.begin() + rng.Below(s.size() + 1), char(rng.Next()));
      return s;
    case 2: *kind = "truncate"; return s.substr(0, rng.Below(s.size() + 1));
    case 3: {
      *kind = "deep_parens";
      static const size_t kDepth[] = {150, 999, 1001, 5000, 50000};
      size_t n = kDepth[rng.Below(5)];
      if (rng.Below(3) == 0) return InsertLine(s, rng, "y = " + std::string(n, '(') + "x");  // never closed
      if (rng.Below(2) == 0) return InsertLine(s, rng, "y = " + Repeat("[", n) + Repeat("]", n));
      return InsertLine(s, rng, "y = " + std::string(n, '(') + "x" + std::string(n, ')'));
    }
    case 4: {
      *kind = "chain";
      static const size_t kTerms[] = {300, 2000, 10000};
      size_t n = kTerms[rng.Below(3)];
      std::string ops[] = {" + ", " * ", " and ", " if x else "};
      return InsertLine(s, rng, "y = x" + Repeat(ops[rng.Below(4)] + "x", n - 1));
    }
    case 5:
      *kind = "huge_literal";
      if (rng.Below(2)) return InsertLine(s, rng, "BIG = " + std::string(1 << 20, '9'));
      return InsertLine(s, rng, "S = '" + std::string(1 << 20, 'a') + "'");
    case 6: return Encoding(s, rng, kind);
    case 7:
      *kind = "nul";
      s.insert(s.begin() + rng.Below(s.size() + 1), '\0');
      return s;
    case 8: {
      *kind = "invalid_utf8";
      static const char* kBad[] = {"\xC0\xAF", "\xED\xA0\x80", "\xE2\x82", "\xF5\x80\x80\x80", "\x80", "\xFE"};
      s.insert(rng.Below(s.size() + 1), kBad[rng.Below(6)]);
      return s;
    }
    case 9: {
      *kind = "tabs";
      for (size_t i = 0, n = 1 + rng.Below(4); i < n; ++i) {
        size_t at = LineStartAt(s, rng);
        if (s.compare(at, 4, "    ") == 0) s.replace(at, 4, rng.Below(2) ? "\t" : "  \t");
      }
      return s;
    }
    case 10: *kind = "splice"; return s.substr(0, rng.Below(s.size() + 1)) + other.substr(rng.Below(other.size() + 1));
    case 11: {
      *kind = "lines";
      size_t a = LineStartAt(s, rng), b = s.find('\n', a);
      std::string line = s.substr(a, b == std::string::npos ? std::string::npos : b - a + 1);
      return rng.Below(2) ? s.erase(a, line.size()) : s.insert(a, Repeat(line, 1 + rng.Below(50)));
    }
    case 12: {
      *kind = "brackets";
      static const char kB[] = "()[]{}:,'\"\\";
      for (size_t i = 0, n = 1 + rng.Below(4); i < n; ++i) {
        size_t at = rng.Below(s.size() + 1);
        if (rng.Below(2) && at < s.size())
          s.erase(at, 1);
        else
          s.insert(s.begin() + at, kB[rng.Below(sizeof(kB) - 1)]);
      }
      return s;
    }
    case 13: {  // integers past int64 where the analysis reads a number (std::stoi threw out_of_range)
      *kind = "huge_int";
      const std::string big = "9" + std::string(19 + rng.Below(10), '9');
      for (size_t i = 0, n = 1 + rng.Below(6); i < n && !s.empty(); ++i) {
        size_t at = s.find_first_of("0123456789", rng.Below(s.size()));
        if (at == std::string::npos) break;
        size_t e = s.find_first_not_of("0123456789", at);
        s.replace(at, (e == std::string::npos ? s.size() : e) - at, big);
      }
      return rng.Below(2) ? s : InsertLine(s, rng, "p = tl.program_id(" + big + ")");
    }
    case 14: {  // past tree-sitter 0.20.7's 16-bit counters (65535 tokens or comments in one place)
      *kind = "many_tokens";
      if (rng.Below(2)) return Repeat("# c\n", 66000 + rng.Below(8000)) + s;
      return InsertLine(s, rng, "y = " + std::string(65530 + rng.Below(8000), rng.Below(2) ? '*' : '-') + "x");
    }
    default: *kind = "indent"; return InsertLine(s, rng, Repeat(" ", 1 + rng.Below(12)) + "pass");
  }
}

}  // namespace kiln::fuzz

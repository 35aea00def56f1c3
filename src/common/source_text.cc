#include "common/source_text.h"

#include <iconv.h>

#include <fmt/format.h>
#include <cctype>
#include <cerrno>

#include "common/file.h"

namespace kiln {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// A PEP 263 declaration: the encoding name and where it is in the text.
struct Declaration {
  bool found = false;
  std::string name;
  size_t name_begin = 0;  // byte offset of the name in the text
  size_t name_end = 0;
  int line = 0;
};

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

// `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)` on one line (no newline in it).
bool MatchCookie(std::string_view line, size_t* name_begin, size_t* name_end) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f')) ++i;
  if (i >= line.size() || line[i] != '#') return false;
  for (size_t at = line.find("coding", i); at != std::string_view::npos; at = line.find("coding", at + 1)) {
    size_t j = at + 6;
    if (j >= line.size() || (line[j] != ':' && line[j] != '=')) continue;
    ++j;
    while (j < line.size() && (line[j] == ' ' || line[j] == '\t')) ++j;
    size_t b = j;
    while (j < line.size() && IsNameChar(line[j])) ++j;
    if (j == b) continue;
    *name_begin = b;
    *name_end = j;
    return true;
  }
  return false;
}

// `^[ \t\f]*(?:[#\r\n]|$)`: a line that may precede the declaration.
bool BlankOrComment(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f')) ++i;
  return i == line.size() || line[i] == '#' || line[i] == '\r';
}

// The declaration on line 1, or on line 2 when line 1 is blank or a comment (tokenize.detect_encoding).
Declaration FindDeclaration(std::string_view text) {
  Declaration d;
  size_t start = 0;
  for (int line = 1; line <= 2 && start <= text.size(); ++line) {
    size_t nl = text.find('\n', start);
    std::string_view l = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    size_t b = 0, e = 0;
    if (MatchCookie(l, &b, &e)) {
      d.found = true;
      d.name = std::string(l.substr(b, e - b));
      d.name_begin = start + b;
      d.name_end = start + e;
      d.line = line;
      return d;
    }
    if (!BlankOrComment(l) || nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return d;
}

// Python's tokenize._get_normal_name, then the codec aliases of UTF-8 and latin-1.
std::string NormalName(const std::string& name) {
  std::string e;
  for (size_t i = 0; i < name.size() && i < 12; ++i) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
    e += c == '_' ? '-' : c;
  }
  auto starts = [&](std::string_view p) { return e.rfind(p, 0) == 0; };
  if (e == "utf-8" || starts("utf-8-") || e == "utf8") return "utf-8";
  for (std::string_view l1 : {"latin-1", "iso-8859-1", "iso-latin-1"})
    if (e == l1 || starts(std::string(l1) + "-")) return "iso-8859-1";
  if (e == "latin1" || e == "l1") return "iso-8859-1";
  return name;
}

// 1-based line and byte column of `offset` in `text`.
void LineCol(std::string_view text, size_t offset, int* line, int* col) {
  *line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n') ++*line, line_start = i + 1;
  *col = static_cast<int>(offset - line_start) + 1;
}

DecodedSource Fail(std::string_view text, size_t offset, std::string message) {
  DecodedSource d;
  LineCol(text, offset, &d.line, &d.column);
  d.error = std::move(message);
  return d;
}

iconv_t OpenIconv(const std::string& name) {
  std::string variants[3] = {name, name, name};
  for (char& c : variants[1]) c = c == '-' ? '_' : c;
  variants[2].clear();
  for (char c : name)
    if (c != '-' && c != '_') variants[2] += c;
  for (const std::string& v : variants) {
    iconv_t cd = iconv_open("UTF-8", v.c_str());
    if (cd != reinterpret_cast<iconv_t>(-1)) return cd;
  }
  return reinterpret_cast<iconv_t>(-1);
}

// Converts `in` to UTF-8; on failure `*bad` is the offset of the byte that could not be converted.
bool Convert(iconv_t cd, std::string_view in, std::string* out, size_t* bad) {
  out->assign(in.size() * 2 + 16, '\0');
  char* src = const_cast<char*>(in.data());
  size_t src_left = in.size();
  size_t done = 0;
  while (src_left > 0) {
    char* dst = out->data() + done;
    size_t dst_left = out->size() - done;
    size_t r = iconv(cd, &src, &src_left, &dst, &dst_left);
    done = out->size() - dst_left;
    if (r != static_cast<size_t>(-1)) break;
    if (errno == E2BIG) {
      out->resize(out->size() * 2);
      continue;
    }
    *bad = in.size() - src_left;  // EILSEQ or EINVAL (incomplete sequence at the end)
    return false;
  }
  out->resize(done);
  return true;
}

}  // namespace

bool IsCleanUtf8(std::string_view s, size_t* offset) {
  size_t i = 0, n = s.size();
  auto cont = [&](size_t k) { return k < n && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80; };
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    if (c == 0)
      len = 0;
    else if (c < 0x80)
      len = 1;
    else if (c >= 0xC2 && c <= 0xDF)
      len = 2;
    else if (c >= 0xE0 && c <= 0xEF)
      len = 3;
    else if (c >= 0xF0 && c <= 0xF4)
      len = 4;
    bool ok = len > 0;
    for (size_t k = 1; ok && k < len; ++k) ok = cont(i + k);
    if (ok && len >= 3) {  // overlong forms, surrogates, beyond U+10FFFF
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if (c == 0xE0 && c1 < 0xA0) ok = false;
      if (c == 0xED && c1 >= 0xA0) ok = false;
      if (c == 0xF0 && c1 < 0x90) ok = false;
      if (c == 0xF4 && c1 >= 0x90) ok = false;
    }
    if (!ok) {
      if (offset) *offset = i;
      return false;
    }
    i += len;
  }
  return true;
}

DecodedSource DecodePythonSourceDetailed(std::string_view bytes) {
  bool bom = bytes.substr(0, kBom.size()) == kBom;
  std::string_view body = bom ? bytes.substr(kBom.size()) : bytes;
  Declaration decl = FindDeclaration(body);
  size_t shift = bom ? kBom.size() : 0;  // offsets below are reported in the bytes as given
  std::string encoding = decl.found ? NormalName(decl.name) : "utf-8";
  if (bom && encoding != "utf-8")
    return Fail(bytes, shift + decl.name_begin, "encoding problem: " + decl.name + " with a UTF-8 byte-order mark");
  // Python refuses NUL bytes in source; in the ASCII-compatible encodings it reads, a NUL byte is one.
  if (size_t nul = body.find('\0'); nul != std::string_view::npos)
    return Fail(bytes, shift + nul, "source contains a NUL byte (not a Python source file)");
  DecodedSource d;
  if (encoding == "utf-8") {
    d.text = std::string(body);
  } else {
    iconv_t cd = OpenIconv(encoding);
    if (cd == reinterpret_cast<iconv_t>(-1))
      return Fail(bytes, shift + decl.name_begin, "unknown encoding '" + decl.name + "' in the coding declaration");
    size_t bad = 0;
    bool converted = Convert(cd, body, &d.text, &bad);
    iconv_close(cd);
    if (!converted)
      return Fail(bytes, shift + bad,
                  fmt::format("cannot decode byte 0x{:02x} as {} (the encoding the file declares)",
                              static_cast<unsigned char>(body[bad]), decl.name));
    // The text is UTF-8 now: say so where Python looks, so that it decodes it the same way.
    Declaration again = FindDeclaration(d.text);
    if (again.found) d.text.replace(again.name_begin, again.name_end - again.name_begin, "utf-8");
  }
  size_t bad = 0;
  if (!IsCleanUtf8(d.text, &bad)) {  // (only UTF-8 input can fail here: NUL bytes were refused above)
    return Fail(bytes, shift + bad,
                fmt::format("cannot decode byte 0x{:02x} as utf-8 (the file declares no other encoding; "
                            "declare it on line 1 or 2, e.g. '# -*- coding: latin-1 -*-', PEP 263)",
                            static_cast<unsigned char>(d.text[bad])));
  }
  d.ok = true;
  d.encoding = encoding;
  return d;
}

Result<std::string> DecodePythonSource(std::string_view bytes, const std::string& path) {
  DecodedSource d = DecodePythonSourceDetailed(bytes);
  if (d.ok) return std::move(d.text);
  std::string where = d.line > 0 ? fmt::format("{}:{}:{}", path, d.line, d.column) : path;
  return InvalidArgument(where + ": error: " + d.error);
}

Result<std::string> ReadPythonSource(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return DecodePythonSource(bytes, path);
}

}  // namespace kiln

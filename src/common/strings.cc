#include "common/strings.h"

#include <charconv>

#include <cctype>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace kiln {

std::optional<int64_t> ParseDecimal(std::string_view s) {
  int64_t v = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b == e || (*b == '-' ? e - b == 1 : *b < '0' || *b > '9')) return std::nullopt;
  auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e) return std::nullopt;
  return v;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

bool IsBlankLine(std::string_view s) { return s.find_first_not_of(" \t\r") == std::string_view::npos; }

std::string HtmlEscape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string FormatDuration(double value, TimeUnit unit, const DurationStyle& style) {
  if (std::isnan(value) || (style.positive_only && (value <= 0 || std::isinf(value)))) {
    return std::string(style.unknown);
  }
  const bool seconds = unit == TimeUnit::kSeconds;
  const double ms = seconds ? value * 1e3 : value;
  if (ms < style.us_below_ms) return fmt::format("{:.{}f} us", seconds ? value * 1e6 : value * 1e3, style.us_decimals);
  return fmt::format("{:.{}f} ms", ms, style.ms_decimals);
}

std::string NowIsoUtc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  for (size_t a = 0; a < s.size();) {
    size_t b = s.find(',', a);
    if (b == std::string::npos) b = s.size();
    if (b > a) out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

}  // namespace kiln

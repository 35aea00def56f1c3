// kiln/common: small string helpers every module shares (one copy each, tested in strings_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

inline bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
inline bool Contains(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }

// `s` without leading and trailing whitespace (std::isspace: blank, tab, CR, LF, VT, FF).
std::string_view Trim(std::string_view s);

// A decimal integer (an optional '-', then digits; nothing else), or nullopt, also when it does not fit
// int64 (std::stoi would throw out_of_range and end the process on `level_99999999999_...`).
std::optional<int64_t> ParseDecimal(std::string_view s);

// The lines of `text` without their '\n' (line N is element N-1); a final '\n' ends the last line
// rather than starting an empty one. A '\r' before the '\n' is kept.
std::vector<std::string_view> SplitLines(std::string_view text);
// "a,b,,c" -> {a, b, c}: the non-empty pieces between commas.
std::vector<std::string> SplitComma(const std::string& s);
// Whether `s` holds nothing but blanks, tabs and CRs.
bool IsBlankLine(std::string_view s);

// Text for HTML element content and attribute values (quoted with " or '): & < > " ' escaped.
std::string HtmlEscape(std::string_view s);

// A duration as "12.3 us" or "1.234 ms"; how each report writes it is its style.
struct DurationStyle {
  double us_below_ms = 1.0;  // durations under this many milliseconds are written in microseconds
  int us_decimals = 1;
  int ms_decimals = 3;
  std::string_view unknown = "?";  // written for NaN, and for values <= 0 or infinite when positive_only
  bool positive_only = false;
};
enum class TimeUnit { kSeconds, kMilliseconds };
std::string FormatDuration(double value, TimeUnit unit, const DurationStyle& style = {});

// The current UTC time as ISO 8601 to the second: "2026-11-24T21:40:22Z".
std::string NowIsoUtc();

}  // namespace kiln

// kiln/common: lenient reads of a JSON object's fields (worker responses, facts files, records): a
// missing key, a value of another type, or `j` not being an object gives "absent".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln {

std::optional<double> JsonNumber(const nlohmann::json& j, const char* key);
// A number, truncated toward zero (integers are read exactly; a float outside int64 is absent).
std::optional<int64_t> JsonInt(const nlohmann::json& j, const char* key);
std::string JsonString(const nlohmann::json& j, const char* key);     // "" when absent
nlohmann::json JsonObject(const nlohmann::json& j, const char* key);  // {} when absent
bool JsonBool(const nlohmann::json& j, const char* key, bool fallback = false);

// Parsing untrusted JSON (serve's request bodies, the worker's answers, batch pairs, model servers' replies,
// files): nlohmann parses iteratively, but copying or dumping a value recurses once per level, so a body of
// 400000 nested brackets killed `kiln serve`. kiln's own JSON nests under 20 levels.
inline constexpr int kMaxJsonDepth = 256;
// The deepest nesting of arrays and objects in `text` (a linear scan; brackets inside strings do not count).
int JsonDepth(std::string_view text);
// json::parse(text, nullptr, false), and discarded as well when nested deeper than kMaxJsonDepth.
nlohmann::json ParseJson(std::string_view text);

}  // namespace kiln

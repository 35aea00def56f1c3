// kiln/common: lenient reads of a JSON object's fields (worker responses, facts files, records): a
// missing key, a value of another type, or `j` not being an object gives "absent".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kiln {

std::optional<double> JsonNumber(const nlohmann::json& j, const char* key);
// A number, truncated toward zero (integers are read exactly; a float outside int64 is absent).
std::optional<int64_t> JsonInt(const nlohmann::json& j, const char* key);
std::string JsonString(const nlohmann::json& j, const char* key);     // "" when absent
nlohmann::json JsonObject(const nlohmann::json& j, const char* key);  // {} when absent
bool JsonBool(const nlohmann::json& j, const char* key, bool fallback = false);

}  // namespace kiln

#include "common/json.h"

#include <algorithm>

namespace kiln {

using nlohmann::json;

namespace {

const json* Field(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

}  // namespace

std::optional<double> JsonNumber(const json& j, const char* key) {
  const json* v = Field(j, key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

std::optional<int64_t> JsonInt(const json& j, const char* key) {
  const json* v = Field(j, key);
  if (!v || !v->is_number()) return std::nullopt;
  if (v->is_number_integer()) return v->get<int64_t>();
  const double d = v->get<double>();
  if (!(d > -9.2e18 && d < 9.2e18)) return std::nullopt;  // outside int64: no value rather than UB
  return static_cast<int64_t>(d);
}

std::string JsonString(const json& j, const char* key) {
  const json* v = Field(j, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

json JsonObject(const json& j, const char* key) {
  const json* v = Field(j, key);
  return v && v->is_object() ? *v : json::object();
}

bool JsonBool(const json& j, const char* key, bool fallback) {
  const json* v = Field(j, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

int JsonDepth(std::string_view text) {
  int depth = 0, most = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      most = std::max(most, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return most;
}

json ParseJson(std::string_view text) {
  if (JsonDepth(text) > kMaxJsonDepth) return json(json::value_t::discarded);
  return json::parse(text, nullptr, false);
}

}  // namespace kiln

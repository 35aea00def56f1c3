#include "common/json.h"

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

}  // namespace kiln

// kiln/common: JSON text of values that may hold text from input (source, messages, model output).
//
// nlohmann::json::dump throws type_error.316 on a string that is not valid UTF-8; text that came from
// a file or a process is not trusted to be. DumpJson replaces invalid bytes with U+FFFD instead, so a
// report or a record is always written. Use it for every dump of such values.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kiln {

// j.dump(indent) with invalid UTF-8 replaced by U+FFFD (never throws for bad text).
inline std::string DumpJson(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kiln

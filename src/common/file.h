// kiln/common: whole-file reads and writes with clear errors.
#pragma once

#include <string>

#include "common/status.h"

namespace kiln {

Result<std::string> ReadFile(const std::string& path);
Status WriteFile(const std::string& path, const std::string& content);  // atomic: temp + rename

}  // namespace kiln

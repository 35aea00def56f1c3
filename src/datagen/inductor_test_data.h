// kiln/datagen (tests): the recorded Inductor captures under tests/datagen, read by the conversion's tests
// (inductor_test.cc, inductor_dynamic_test.cc).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/file.h"
#include "common/strings.h"

namespace kiln::datagen::test_data {

inline const std::filesystem::path kData = std::filesystem::path(KILN_SOURCE_DIR) / "tests" / "datagen";

// The capture records of tests/datagen/FILE (JSON lines), by id.
inline std::map<std::string, nlohmann::json> Captures(const std::string& file) {
  std::map<std::string, nlohmann::json> out;
  auto text = ReadFile((kData / file).string());
  EXPECT_TRUE(text.ok()) << text.status().message();
  if (!text.ok()) return out;
  for (std::string_view l : SplitLines(*text)) {
    if (IsBlankLine(l)) continue;
    nlohmann::json j = nlohmann::json::parse(l);
    std::string id = j["id"];
    out[id] = std::move(j);
  }
  return out;
}

}  // namespace kiln::datagen::test_data

// kiln/common: stable content hashing (xxHash3 64-bit) for cache keys and record ids.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln {

uint64_t Hash64(std::string_view data, uint64_t seed = 0);
// 16 lowercase hex digits of Hash64.
std::string HashHex(std::string_view data, uint64_t seed = 0);

}  // namespace kiln

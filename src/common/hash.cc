#include "common/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fmt/format.h>

namespace kiln {

uint64_t Hash64(std::string_view data, uint64_t seed) { return XXH3_64bits_withSeed(data.data(), data.size(), seed); }

std::string HashHex(std::string_view data, uint64_t seed) { return fmt::format("{:016x}", Hash64(data, seed)); }

}  // namespace kiln

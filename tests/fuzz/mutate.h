// kiln tests: seeded mutations of Python sources for the front-end fuzz tests (deterministic per seed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::fuzz {

// splitmix64: small, fast, the same sequence on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

 private:
  uint64_t s_;
};

// One mutation of `seed` (`other`: a second source for splices); `*kind` names it ("flip", "truncate",
// "deep_parens", "chain", "huge_literal", "huge_int", "many_tokens", "encoding", "nul", "invalid_utf8", "tabs", "splice", ...).
std::string Mutate(const std::string& seed, const std::string& other, Rng& rng, std::string* kind);

}  // namespace kiln::fuzz

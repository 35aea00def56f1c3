// kiln/datagen: the composer. Writes new KernelBench-format programs (class Model, get_inputs,
// get_init_inputs) by chaining basic operators drawn from a fixed vocabulary with seeded shapes and
// dtypes. Deterministic: the same (seed, index, options) gives the same text on every platform (own
// PRNG, no <random> distributions). A composed program is only a proposal: datagen runs it in eager torch
// (worker, kiln_worker.inductor_capture --eager-only) before it is used. Vocabulary: docs/datagen.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::datagen {

// Operator families (the dataset card counts programs per family).
inline constexpr const char* kFamilies[] = {"elementwise", "activation",    "reduction",
                                            "normalization", "matmul", "indexing"};

struct OpInfo {
  std::string name;    // e.g. "softmax"
  std::string family;  // one of kFamilies
};

// Every operator the composer may draw, in a fixed order.
std::vector<OpInfo> Vocabulary();

struct ComposeOptions {
  int min_ops = 2;
  int max_ops = 5;
  bool small = false;  // tiny shapes (CPU tests and interpreter verification)
  bool allow_half = true;  // float16/bfloat16 programs besides float32
};

struct ComposedProgram {
  std::string name;                   // "comp_<seed>_<index>"
  std::string source;                 // the program's Python text
  std::vector<std::string> ops;       // operator names, in order
  std::vector<std::string> families;  // distinct families, in first-use order
  std::string dtype;                  // "float32", "float16" or "bfloat16"
};

// The index-th program of the stream `seed`.
ComposedProgram Compose(uint64_t seed, int index, const ComposeOptions& opts = {});

}  // namespace kiln::datagen

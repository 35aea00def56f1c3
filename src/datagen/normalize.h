// kiln/datagen: a hash of a Python module's syntax tree that ignores what does not change the program:
// comments, docstrings, formatting, and the spelling of names it defines (identifiers renamed in order of
// first use; attribute names and the modules kiln knows (torch, nn, F, triton, tl, libdevice, math) kept).
// Used to deduplicate samples and to recognise benchmark tasks in disguise.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace kiln::datagen {

// 16 hex digits; an unparsable text is an error naming its first syntax error.
Result<std::string> NormalizedHash(const std::string& text, const std::string& path = "<input>");

// Benchmark tasks (KernelBench, TritonBench) by normalised hash of their reference code, for exclusion.
class BenchmarkIndex {
 public:
  // Adds every KernelBench or TritonBench-T/-G module under `root` (recursively); files that do not
  // parse are skipped. Returns how many were added.
  int AddTree(const std::string& root);
  // Adds one text as the benchmark task `name`.
  Status Add(const std::string& name, const std::string& text);
  // The benchmark task a program's text matches, or "" when none.
  std::string Match(const std::string& text) const;
  size_t size() const { return by_hash_.size(); }

 private:
  std::map<std::string, std::string> by_hash_;  // hash -> task name
};

}  // namespace kiln::datagen

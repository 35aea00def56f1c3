// `kiln eval --batch`: the pairs file, read and validated in one place (docs/eval.md "Batch").
//
// Every line is a JSON object with known keys of known types; anything else is an error naming the file, the
// line and the key (`pairs.jsonl:3:1: error: key 'mode': expected one of check, time, got "turbo"`), and that
// line gets an error result instead of a verdict. Each valid pair carries a hash of its own content (the
// object with sorted keys, less `memory_hint_bytes`, which only schedules it), which is what --resume matches
// results on.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::app {

struct Pair {
  size_t line = 0;    // 1-based line in the pairs file
  std::string hash;   // 16 hex digits of the canonical JSON of the object
  nlohmann::json in;  // the validated object
};

struct PairError {
  size_t line = 0;
  std::string message;                             // "FILE:LINE:1: error: ..."
  nlohmann::json echo = nlohmann::json::object();  // what the line asked for, when it parsed ({"id", "task", ...})
};

struct PairsFile {
  std::vector<Pair> pairs;
  std::vector<PairError> errors;
  size_t lines = 0;      // non-blank lines
  size_t last_line = 0;  // the number of the last line
};

// Parses and validates `text` (the content of `path`, named in the messages).
PairsFile ParsePairs(const std::string& path, const std::string& text);

// --resume: what a results file already holds. Lines with a result are kept (matched on their pair's hash;
// results written before pair hashes existed, by line number); error lines and a torn last line are dropped
// (evaluated again).
struct PreviousResults {
  std::set<std::string> hashes;
  std::set<size_t> legacy_lines;  // results without "pair_hash"
  std::string kept;               // the lines to keep, newline-terminated
  size_t next_index = 0;          // new results continue the "index" numbering after the kept ones
  bool Done(const Pair& p) const { return hashes.count(p.hash) || legacy_lines.count(p.line); }
};
PreviousResults ReadPreviousResults(const std::string& text);

}  // namespace kiln::app

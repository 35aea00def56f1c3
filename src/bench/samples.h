// kiln/bench: reading the samples to evaluate (docs/bench.md, "Samples").
//
//   JSON lines   one object per line: "task" (string, required), "sample" (string or integer; default: the
//                line's rank among the task's lines, from 0), "response" (a raw model response: kiln
//                extracts the code, src/response/extract.h) or "code" (the code itself), optional "sizes"
//                (an object of NAME: VALUE overrides, as `kiln eval --size`). Blank lines are skipped.
//   directory    KernelBench's generation layout: level_<L>_problem_<P>_sample_<S>_kernel.py holds the code of
//                sample S for problem P of level L (files of other levels are skipped, other files ignored).
//
// An unreadable file, a line that is not a JSON object with a string "task", or a (task, sample) given
// twice is an error naming the file and line. A sample whose response holds no code is a sample (outcome
// no_code), never an error.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace kiln::bench {

struct Sample {
  std::string task;    // as given (resolved against the dataset later)
  std::string sample;  // its id within the task
  bool has_code = false;
  std::string code;
  std::string how;  // extraction: "code", "fenced", "unterminated_fence", "unfenced", "none"
  nlohmann::json sizes = nlohmann::json::object();
  std::string origin;  // "file:line" or the file's path
};

Result<std::vector<Sample>> ReadSamples(const std::string& path, int level);
// JSON lines from text (`name` is the file named in errors).
Result<std::vector<Sample>> ParseSampleLines(const std::string& name, const std::string& text);
// The samples of a KernelBench generation folder for `level`.
Result<std::vector<Sample>> ReadGenerationDir(const std::string& dir, int level);

}  // namespace kiln::bench

// kiln/task: task files -> one TaskSpec (the JSON object of docs/worker-protocol.md).
//
// Formats: KernelBench (class Model + get_inputs + get_init_inputs), TritonBench-G (Triton module, a
// line of 146 '#', a test_* function; perf harness <corpus>/tritonbench/G/perf/<stem>_perf.py),
// TritonBench-T (torch reference, separator, test_* function), and kiln's own format (a module, its
// entry function and a bench file; given as a JSON manifest or as --entry/--bench).
//
// Roadmap: detection looks at the syntax tree only (never imports anything); bad task files give
// `file:line:col: error:` diagnostics; the hash covers the spec and the contents of every file the
// worker will read, so it is a sound cache key.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace kiln::task {

enum class Format { kKernelBench, kTritonBenchG, kTritonBenchT, kKiln };

const char* FormatName(Format f);  // "kernelbench", "tritonbench_g", ...
Result<Format> ParseFormat(const std::string& name);

struct TaskSpec {
  Format format = Format::kKernelBench;
  std::string name;                                 // e.g. "level1/19_ReLU"
  std::string path;                                 // absolute path of the reference module
  std::string perf_path;                            // tritonbench: perf harness, optional
  std::string bench_path;                           // kiln: bench file
  std::string entry;                                // kiln and tritonbench: entry function
  nlohmann::json sizes = nlohmann::json::object();  // kernelbench: module constants to override
  std::string hash;                                 // 16 hex digits over the fields above and the files' contents

  nlohmann::json ToJson() const;
  static Result<TaskSpec> FromJson(const nlohmann::json& j);
};

struct LoadOptions {
  std::string format;  // "" or "auto": detect
  std::string entry;   // kiln (and override for tritonbench)
  std::string bench;   // kiln bench file
  std::string name;    // override the derived name
  nlohmann::json sizes = nlohmann::json::object();
  bool find_perf = true;  // look for the TritonBench perf harness
};

// Loads a task file. Errors carry formatted diagnostics ("file:line:col: error: ...").
Result<TaskSpec> LoadTask(const std::string& path, const LoadOptions& opts = {});

// Recomputes spec.hash from the spec fields and the current contents of its files.
Status ComputeHash(TaskSpec* spec);

// TritonBench's separator: the first line made of exactly 146 '#' (trailing spaces, tabs or CR allowed)
// splits the module (above) from its test part (below). Every TritonBench-G/-T file uses it; a shorter or
// longer run of '#' is an ordinary comment. The worker applies the same rule (kiln_worker/tasks.py,
// find_separator). FindSeparator returns the line's byte offset, or npos.
inline constexpr size_t kTritonBenchSeparatorWidth = 146;
size_t FindSeparator(std::string_view text);

// Module-level integer/float constants of a KernelBench file (what `sizes` may override).
Result<nlohmann::json> ModuleConstants(const std::string& path);

// For candidates of TritonBench tasks: the part of a file above the separator line (the whole
// text when there is none).
std::string StripTritonBenchTest(std::string_view text);

}  // namespace kiln::task

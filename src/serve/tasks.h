// kiln/serve: the task set a server loads at start (`--tasks DIR|MANIFEST|FILE`), and tasks whose
// reference source comes inline in a request (KernelBench style), written once per content hash into
// the server's own folder and loaded like a file.
//
//   DIR        every *.py below it (recursively) that loads as a task (format detected); a file that
//              does not is skipped with a warning. Names: the path below DIR without ".py"
//              ("level1/19_ReLU"), and the task's own name when it differs.
//   MANIFEST   a .json file {"tasks": [{"name", "path", "format"?, "entry"?, "bench"?, "sizes"?}, ...]},
//              paths relative to the manifest; "sizes" overrides a KernelBench module's constants (as
//              `kiln eval --size`); any entry that does not load is an error.
//   FILE       one task file.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "task/task.h"

namespace kiln::serve {

class TaskSet {
 public:
  // `inline_dir`: where inline references are written (created when needed).
  explicit TaskSet(std::string inline_dir) : inline_dir_(std::move(inline_dir)) {}
  // Loads `path`; `warnings` gets one line per skipped file.
  Status Load(const std::string& path, std::vector<std::string>* warnings);
  // A task by name; errors name it and say how many tasks there are.
  Result<task::TaskSpec> Find(const std::string& name) const;
  // An inline task: {"reference": SOURCE, "format"?: kernelbench|tritonbench_g|tritonbench_t, "name"?}.
  Result<task::TaskSpec> Inline(const nlohmann::json& t);
  nlohmann::json List() const;  // [{"name", "format", "hash"}]
  size_t size() const;

 private:
  Status Add(const std::string& name, const task::TaskSpec& spec);
  std::string inline_dir_;
  mutable std::mutex mu_;
  std::map<std::string, task::TaskSpec> by_name_;
};

}  // namespace kiln::serve

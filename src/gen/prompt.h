// kiln/gen: prompt templates (docs/generate.md, "Prompt templates").
//
// A template is a text file: a line `=== system ===` starts the system message, a line `=== user ===` the
// user message (a file without them is the user message alone). `{{name}}` is replaced by a field of the
// task; an unknown name is an error at its file:line:col. Fields: task_name, task_format, entry,
// reference (the reference module; TritonBench: the part above the test separator), requirements (what
// the answer must define, by task format), profile (kiln optimize --llm: the diagnosis of the kernel).
// The defaults are prompts/autotriton.txt (kiln generate) and prompts/optimize.txt (kiln optimize --llm),
// built into the binary.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "llm/client.h"
#include "task/task.h"

namespace kiln::gen {

struct PromptTemplate {
  std::string name;  // the file, for diagnostics ("<builtin:autotriton>" for a default)
  std::string system, user;
};

// Parses a template; errors name the file, line and column of an unknown placeholder.
Result<PromptTemplate> ParseTemplate(const std::string& text, const std::string& name);
Result<PromptTemplate> LoadTemplate(const std::string& path);  // "" : the autotriton default
PromptTemplate DefaultGenerateTemplate();
PromptTemplate DefaultOptimizeTemplate();

// The fields of a task: task_name, task_format, entry, reference, requirements.
Result<std::map<std::string, std::string>> TaskFields(const task::TaskSpec& task);

// The system and user messages with every placeholder replaced (system omitted when empty).
std::vector<llm::Message> Render(const PromptTemplate& t, const std::map<std::string, std::string>& fields);

}  // namespace kiln::gen

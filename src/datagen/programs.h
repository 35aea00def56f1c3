// kiln/datagen: the programs datagen starts from. Harvested ones are read from KernelBench-format modules
// (class Model, get_inputs, get_init_inputs) and TritonBench-T operators (a torch function, the 146-'#'
// separator, a test_* function), detected by src/task; composed ones come from the composer. Each program
// carries the operator families it uses (the dataset card counts them) and, for harvested ones, the
// licence of the folder it came from.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace kiln::datagen {

struct Program {
  std::string id;      // unique in a run: "kb/<parent>/<stem>", "tbt/<stem>" or the composed name
  std::string origin;  // "kernelbench", "tritonbench_t" or "composed"
  std::string path;    // the module on disk
  std::string entry;   // tritonbench_t: the operator function
  std::string text;    // the module's text
  std::vector<std::string> families;
  std::vector<std::string> ops;  // composed: the chain; harvested: empty
  std::string dtype;             // composed: its dtype
  std::string licence;           // harvested: first line of the nearest LICENSE file above it

  nlohmann::json ToJson() const;  // without the text
  static Result<Program> FromJson(const nlohmann::json& j);
};

// Reads FILE or every *.py of DIR (sorted, not recursive). `format` is "" (detect), "kernelbench" or
// "tritonbench_t"; a file of another format is an error naming it ("file:line:col: error: ..." where the
// task reader has a location).
Result<std::vector<Program>> ReadPrograms(const std::string& path, const std::string& format = "");

// The operator families a module's text uses, by the torch calls it makes (for harvested programs).
std::vector<std::string> InferFamilies(const std::string& text);

}  // namespace kiln::datagen

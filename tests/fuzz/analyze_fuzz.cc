// libFuzzer target: parse arbitrary bytes as Python and run the whole analysis and both output
// formats on them. Built only with the `fuzz` preset (clang, KILN_BUILD_FUZZERS=ON):
//   cmake --preset fuzz && cmake --build build/fuzz --target kiln_analyze_fuzz
//   build/fuzz/tests/fuzz/kiln_analyze_fuzz -max_total_time=60 tests/fuzz/corpus tests/analyze/extra
//   (the second folder seeds it with the tutorial-style kernels of the analyze tests)
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/driver.h"
#include "analysis/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  kiln::analysis::FileReport r = kiln::analysis::AnalyzeText(std::move(text), "fuzz.py");
  if (r.model) {
    (void)kiln::analysis::FormatSummary(*r.model);
    (void)kiln::analysis::ModuleToJson(*r.model).dump();
  }
  return 0;
}

// libFuzzer target: parse arbitrary bytes as Python and run the whole static front end on them:
// decoding, analysis and both output formats (the JSON must dump without replacement: all its text is
// valid UTF-8), the static anti-hacking checks, the tunables and every rewrite's applicability check.
// Built only with the `fuzz` preset (clang, KILN_BUILD_FUZZERS=ON):
//   cmake --preset fuzz && cmake --build build/fuzz --target kiln_analyze_fuzz
//   build/fuzz/tests/fuzz/kiln_analyze_fuzz -max_total_time=60 tests/fuzz/corpus tests/analyze/extra
//   (the second folder seeds it with the tutorial-style kernels of the analyze tests)
// The seeded, time-bounded variant that runs in CI is frontend_fuzz_test.cc (CTest `frontend_fuzz`).
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/driver.h"
#include "analysis/json.h"
#include "analysis/tunables.h"
#include "exec/static_check.h"
#include "pyast/pyast.h"
#include "rewrite/rewrite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  kiln::analysis::FileReport r = kiln::analysis::AnalyzeText(text, "fuzz.py");
  (void)kiln::analysis::ReportsToJson({r}).dump();
  if (!r.model) return 0;
  (void)kiln::analysis::FormatSummary(*r.model);
  auto tree = kiln::pyast::Tree::Parse(text, "fuzz.py");
  if (!tree.ok() || (*tree)->has_errors()) return 0;
  (void)kiln::exec::StaticCheck(**tree, kiln::exec::StaticCheckOptions{});
  for (const auto& k : r.model->kernels) {
    kiln::analysis::Target target{k.name, {}};
    (void)kiln::analysis::ExtractTunables(**tree, *r.model, target);
    (void)kiln::rewrite::CheckAll(**tree, *r.model, target);
  }
  return 0;
}

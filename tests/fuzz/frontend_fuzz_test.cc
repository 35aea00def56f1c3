// kiln tests: seeded fuzz of the static front end, run by CTest (label "fuzz", bounded in time).
//
//   kiln_frontend_fuzz_test --seed N --seconds S [--kiln BINARY] [--save FILE] SEED_DIR...
//
// --save FILE: each mutant is written to FILE before it runs, so that a crash leaves its input there, and
// a mutant that fails otherwise (too slow, an empty report) to FILE.failN (N: its number).
//
// Mutates the Python files under the seed folders (tests/fuzz/mutate.h: random bytes, truncation, deep
// nesting, long chains, huge literals, declared and undeclared encodings, NUL bytes, invalid UTF-8,
// tabs, splices) and runs each mutant in process through the whole front end: decoding and parsing,
// AnalyzeModule with both output formats (the JSON must dump without a replacement: every text in it
// is valid UTF-8), the static anti-hacking checks, the tunables and every rewrite's applicability
// check. A crash fails the test by its signal; an input that takes longer than two parses may (the parser
// gives up after Tree::kParseSeconds, then a second try without comments) or a report with
// neither a model nor a diagnostic fails it with the mutant's seed and kind. With --kiln, a sample of
// the mutants also goes through the `kiln analyze` binary (for at most 20 s more): it must exit 0 or 1
// (never by a signal), within 20 s, with "error:" on stderr when it exits 1. Exit 0 when every check held.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/driver.h"
#include "analysis/tunables.h"
#include "common/file.h"
#include "exec/static_check.h"
#include "mutate.h"
#include "pyast/pyast.h"
#include "rewrite/rewrite.h"

namespace fs = std::filesystem;
using namespace kiln;  // NOLINT
using Clock = std::chrono::steady_clock;

namespace {

int failures = 0;

void Fail(const std::string& what, uint64_t seed, size_t i, const std::string& kind) {
  std::fprintf(stderr, "FAIL %s (seed %llu, mutant %zu, %s)\n", what.c_str(), static_cast<unsigned long long>(seed), i,
               kind.c_str());
  ++failures;
}

// The whole front end on one text, in process. Returns false when the report is empty.
bool RunInProcess(const std::string& text) {
  analysis::FileReport r = analysis::AnalyzeText(text, "mutant.py");
  for (const auto& d : r.diagnostics)
    if (d.message.empty()) return false;
  if (r.model) {
    (void)analysis::FormatSummary(*r.model);
    (void)analysis::ReportsToJson({r}).dump();  // throws (and fails the test) on invalid UTF-8
  } else if (r.diagnostics.empty()) {
    return false;
  } else {
    (void)analysis::ReportsToJson({r}).dump();
  }
  auto tree = pyast::Tree::Parse(text, "mutant.py");
  if (!tree.ok() || (*tree)->has_errors()) return true;
  exec::StaticCheckOptions opts;
  opts.entry = "ModelNew";
  for (const auto& f : exec::StaticCheck(**tree, opts))
    if (f.message.empty()) return false;
  if (!r.model) return true;
  for (const auto& k : r.model->kernels) {
    analysis::Target target{k.name, {}};
    (void)analysis::ExtractTunables(**tree, *r.model, target);
    (void)rewrite::CheckAll(**tree, *r.model, target);
  }
  return true;
}

// `kiln analyze FILE` in a child with a time limit: "" when it behaved, else what went wrong.
std::string RunBinary(const std::string& kiln, const std::string& file, const std::string& err_file) {
  std::fflush(nullptr);  // the child must not write our buffered output again
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen(err_file.c_str(), "w", stderr)) _exit(120);
    alarm(20);  // SIGALRM: reported as a hang below
    execl(kiln.c_str(), kiln.c_str(), "analyze", file.c_str(), static_cast<char*>(nullptr));
    _exit(121);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return "could not run kiln";
  if (WIFSIGNALED(status))
    return WTERMSIG(status) == SIGALRM ? "kiln analyze hung (20 s)"
                                       : "kiln analyze died of signal " + std::to_string(WTERMSIG(status));
  int rc = WEXITSTATUS(status);
  if (rc != 0 && rc != 1) return "kiln analyze exited " + std::to_string(rc);
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  if (rc == 1 && ss.str().find("error:") == std::string::npos) return "exit 1 without an error message";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  double seconds = 20;
  std::string kiln, save;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (a == "--kiln" && i + 1 < argc)
      kiln = argv[++i];
    else if (a == "--save" && i + 1 < argc)
      save = argv[++i];
    else
      dirs.push_back(a);
  }
  std::vector<std::string> seeds;
  for (const auto& d : dirs)
    for (const auto& e : fs::recursive_directory_iterator(d))
      if (e.path().extension() == ".py")
        if (auto t = ReadFile(e.path().string()); t.ok()) seeds.push_back(*t);
  if (seeds.empty()) {
    std::fprintf(stderr, "no seed files\n");
    return 1;
  }
  fuzz::Rng rng(seed);
  auto start = Clock::now();
  auto budget = std::chrono::duration<double>(seconds);
  size_t n = 0;
  std::vector<std::pair<std::string, std::string>> sample;  // (kind, text) for the binary
  while (Clock::now() - start < budget) {
    std::string kind;
    const std::string& a = seeds[rng.Below(seeds.size())];
    std::string text = fuzz::Mutate(a, seeds[rng.Below(seeds.size())], rng, &kind);
    if (rng.Below(4) == 0) text = fuzz::Mutate(text, a, rng, &kind);  // sometimes two mutations
    if (!save.empty() && !WriteFile(save, text).ok()) return 1;
    auto t0 = Clock::now();
    int before = failures;
    if (!RunInProcess(text)) Fail("empty report", seed, n, kind);
    double took = std::chrono::duration<double>(Clock::now() - t0).count();
    if (took > 2 * pyast::Tree::kParseSeconds + 5) Fail("took " + std::to_string(took) + " s", seed, n, kind);
    if (failures > before && !save.empty()) (void)WriteFile(save + ".fail" + std::to_string(n), text);
    if (n % 8 == 0 && sample.size() < 48) sample.push_back({kind, text});
    ++n;
  }
  std::printf("%zu mutants through the front end in process (seed %llu)\n", n, static_cast<unsigned long long>(seed));
  if (!kiln.empty()) {
    auto dir = TempDir::Make("kiln_fuzz");
    if (!dir.ok()) return 1;
    // Bounded too: the sample stops 20 s after the in-process budget (a slow, loaded machine runs fewer).
    size_t ran = 0;
    for (size_t i = 0; i < sample.size() && Clock::now() - start < budget + std::chrono::seconds(20); ++i, ++ran) {
      std::string file = dir->path() + "/mutant.py";
      if (!WriteFile(file, sample[i].second).ok()) return 1;
      std::string why = RunBinary(kiln, file, dir->path() + "/err");
      if (!why.empty()) Fail(why, seed, i * 8, sample[i].first);
    }
    std::printf("%zu mutants through kiln analyze\n", ran);
  }
  if (failures) {
    std::printf("%d failure(s)\n", failures);
    return 1;
  }
  return 0;
}

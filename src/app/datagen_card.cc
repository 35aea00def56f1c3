// `kiln datagen`'s last step: rejects.jsonl, summary.json and the dataset card (card.md).
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "app/datagen_internal.h"
#include "common/file.h"
#include "common/json_dump.h"
#include "common/strings.h"

namespace kiln::app {

namespace fs = std::filesystem;

namespace {

// Stages in pipeline order with the count of what came out of each.
const std::vector<std::pair<std::string, std::string>> kYield = {
    {"programs", "programs read or composed"},
    {"eligible", "not a benchmark task"},
    {"captured", "ran in eager torch and compiled with torch.compile"},
    {"converted", "converted to a standalone Triton ModelNew"},
    {"verified", "passed kiln eval (strict policy)"},
    {"kept", "kept after deduplication"},
};

int Eligible(const DatagenRun& run) { return run.counts.Total("programs") - run.counts.Total("rejected:programs"); }

std::string Pct(int n, int of) { return of > 0 ? fmt::format("{:.1f}%", 100.0 * n / of) : "-"; }

std::string YieldTable(const DatagenRun& run) {
  std::string t = "| stage | count | of previous | of programs |\n|---|---:|---:|---:|\n";
  int prev = -1, first = run.counts.Total("programs");
  for (const auto& [stage, what] : kYield) {
    int n = stage == "eligible" ? Eligible(run) : run.counts.Total(stage);
    t += fmt::format("| {} ({}) | {} | {} | {} |\n", stage, what, n, prev < 0 ? "-" : Pct(n, prev), Pct(n, first));
    prev = n;
  }
  return t;
}

std::string OriginTable(const DatagenRun& run) {
  std::set<std::string> origins;
  for (const auto& [stage, m] : run.counts.by_stage) {
    if (stage == "family") continue;
    for (const auto& [o, _] : m) origins.insert(o);
  }
  std::string t = "| source | programs | captured | converted | verified | kept |\n|---|---:|---:|---:|---:|---:|\n";
  auto get = [&](const std::string& stage, const std::string& o) {
    auto it = run.counts.by_stage.find(stage);
    if (it == run.counts.by_stage.end()) return 0;
    auto jt = it->second.find(o);
    return jt == it->second.end() ? 0 : jt->second;
  };
  for (const auto& o : origins) {
    t += fmt::format("| {} | {} | {} | {} | {} | {} |\n", o, get("programs", o), get("captured", o), get("converted", o),
                     get("verified", o), get("kept", o));
  }
  return t;
}

std::string ReasonTable(const DatagenRun& run) {
  std::map<std::pair<std::string, std::string>, int> by;
  for (const auto& r : run.rejects) by[{r.value("stage", ""), r.value("reason", "")}]++;
  std::string t = "| stage | reason | count |\n|---|---|---:|\n";
  for (const auto& [k, n] : by) t += fmt::format("| {} | {} | {} |\n", k.first, k.second, n);
  return t;
}

std::string Card(const DatagenOptions& o, const DatagenRun& run, const std::vector<Sample>& samples) {
  std::string c = "# kiln datagen dataset card\n\n";
  c += fmt::format(
      "Pairs of (PyTorch program, Triton implementation with reasoning) for supervised fine-tuning, made by "
      "`kiln datagen` (docs/datagen.md). Route: TorchInductor (torch.compile) output made readable and "
      "standalone; every sample verified by `kiln eval` (strict policy, {} fresh-input trials{}). {} sample(s).\n\n",
      o.trials, o.protocol.empty() ? "" : ", protocol " + o.protocol, samples.size());
  c += "## Files\n\n- `sft_messages.jsonl`: TRL chat format (`messages`: system, user, assistant)\n"
       "- `sft_alpaca.jsonl`, `sft_sharegpt.jsonl`: LLaMA-Factory's alpaca and sharegpt formats\n"
       "- `rejects.jsonl`: every dropped program or candidate with its stage, reason and verdict\n"
       "- `programs/`, `candidates/`: composed programs and converted candidates\n\n";
  c += "## Yield per stage\n\n" + YieldTable(run) + "\n";
  c += "## Per source\n\n" + OriginTable(run) + "\n";
  c += "## Rejects\n\n" + ReasonTable(run) + "\n";
  c += "## Operator families (kept samples; a sample counts once per family it uses)\n\n| family | samples |\n|---|---:|\n";
  auto fam = run.counts.by_stage.find("family");
  if (fam != run.counts.by_stage.end())
    for (const auto& [f, n] : fam->second) c += fmt::format("| {} | {} |\n", f, n);
  std::map<std::string, std::set<std::string>> licences;
  for (const auto& s : samples) licences[s.program.licence].insert(s.program.origin);
  c += "\n## Licences of the sources\n\n";
  for (const auto& [l, origins] : licences) {
    std::string os;
    for (const auto& x : origins) os += (os.empty() ? "" : ", ") + x;
    c += fmt::format("- {}: {}\n", os, l);
  }
  c += fmt::format("\nBenchmark tasks were {}.\n", o.allow_benchmark ? "kept (--allow-benchmark)" : "excluded");
  return c;
}

}  // namespace

int FinishRun(const DatagenOptions& o, DatagenRun* run, const std::vector<Sample>& samples) {
  std::string lines;
  for (const auto& r : run->rejects) lines += DumpJson(r) + "\n";
  nlohmann::json summary = {{"samples", samples.size()}, {"rejects", run->rejects.size()}};
  for (const auto& [stage, m] : run->counts.by_stage) summary["counts"][stage] = m;
  Status st = WriteFile((fs::path(o.out) / "rejects.jsonl").string(), lines);
  if (st.ok()) st = WriteFile((fs::path(o.out) / "summary.json").string(), DumpJson(summary, 2) + "\n");
  if (st.ok()) st = WriteFile((fs::path(o.out) / "card.md").string(), Card(o, *run, samples));
  if (!st.ok()) {
    std::fprintf(stderr, "kiln datagen: error: %s\n", st.message().c_str());
    return 2;
  }
  run->Note(fmt::format("{} sample(s), {} reject(s); card: {}", samples.size(), run->rejects.size(),
                        (fs::path(o.out) / "card.md").string()));
  return 0;
}

}  // namespace kiln::app

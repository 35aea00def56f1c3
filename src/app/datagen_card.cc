// `kiln datagen`'s last step: rejects.jsonl, summary.json and the dataset card (card.md).
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

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

// The LLM route (--llm): questions asked, answers with a module and reasoning, verified, kept.
const std::vector<std::pair<std::string, std::string>> kYieldLlm = {
    {"llm_asked", "programs the model was asked about"},
    {"llm_answered", "answers holding a Triton module and reasoning"},
    {"llm_verified", "passed kiln eval (strict policy, every shape)"},
    {"llm_kept", "kept after deduplication"},
};

int Eligible(const DatagenRun& run) { return run.counts.Total("programs") - run.counts.Total("rejected:programs"); }

std::string Pct(int n, int of) { return of > 0 ? fmt::format("{:.1f}%", 100.0 * n / of) : "-"; }

std::string YieldTable(const DatagenRun& run, const std::vector<std::pair<std::string, std::string>>& stages) {
  std::string t = "| stage | count | of previous | of programs |\n|---|---:|---:|---:|\n";
  int prev = -1, first = run.counts.Total("programs");
  for (const auto& [stage, what] : stages) {
    int n = stage == "eligible" ? Eligible(run) : run.counts.Total(stage);
    t += fmt::format("| {} ({}) | {} | {} | {} |\n", stage, what, n, prev < 0 ? "-" : Pct(n, prev), Pct(n, first));
    prev = n;
  }
  return t;
}

std::string OriginTable(const DatagenRun& run, bool llm) {
  std::set<std::string> origins;
  for (const auto& [stage, m] : run.counts.by_stage) {
    if (stage == "family") continue;
    for (const auto& [o, _] : m) origins.insert(o);
  }
  std::string t = llm ? "| source | programs | captured | converted | verified | kept | LLM answered | LLM verified | "
                        "LLM kept |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
                      : "| source | programs | captured | converted | verified | kept |\n|---|---:|---:|---:|---:|---:|\n";
  auto get = [&](const std::string& stage, const std::string& o) {
    auto it = run.counts.by_stage.find(stage);
    if (it == run.counts.by_stage.end()) return 0;
    auto jt = it->second.find(o);
    return jt == it->second.end() ? 0 : jt->second;
  };
  for (const auto& o : origins) {
    t += fmt::format("| {} | {} | {} | {} | {} | {} |", o, get("programs", o), get("captured", o), get("converted", o),
                     get("verified", o), get("kept", o));
    if (llm) t += fmt::format(" {} | {} | {} |", get("llm_answered", o), get("llm_verified", o), get("llm_kept", o));
    t += "\n";
  }
  return t;
}

std::string ReasonTable(const DatagenRun& run) {
  std::map<std::tuple<std::string, std::string, std::string>, int> by;
  for (const auto& r : run.rejects) by[{r.value("route", "-"), r.value("stage", ""), r.value("reason", "")}]++;
  std::string t = "| route | stage | reason | count |\n|---|---|---|---:|\n";
  for (const auto& [k, n] : by)
    t += fmt::format("| {} | {} | {} | {} |\n", std::get<0>(k), std::get<1>(k), std::get<2>(k), n);
  return t;
}

std::string Routes(const DatagenOptions& o) {
  std::string r;
  if (!o.llm_only) r = "TorchInductor (torch.compile) output made readable and standalone";
  if (o.use_llm) {
    r += fmt::format("{}a model's answers (`--llm`{}) with their reasoning, composed programs verified at {} "
                     "batch sizes",
                     r.empty() ? "" : "; ", o.llm.config.model.empty() ? "" : ", " + o.llm.config.model, o.shapes);
  }
  return r;
}

std::string Card(const DatagenOptions& o, const DatagenRun& run, const std::vector<Sample>& samples) {
  std::string c = "# kiln datagen dataset card\n\n";
  c += fmt::format(
      "Pairs of (PyTorch program, Triton implementation with reasoning) for supervised fine-tuning, made by "
      "`kiln datagen` (docs/datagen.md). Routes: {}; every sample verified by `kiln eval` (strict policy, {} "
      "fresh-input trials{}). {} sample(s).\n\n",
      Routes(o), o.trials, o.protocol.empty() ? "" : ", protocol " + o.protocol, samples.size());
  c += "## Files\n\n- `sft_messages.jsonl`: TRL chat format (`messages`: system, user, assistant)\n"
       "- `sft_alpaca.jsonl`, `sft_sharegpt.jsonl`: LLaMA-Factory's alpaca and sharegpt formats\n"
       "- `rejects.jsonl`: every dropped program or candidate with its stage, reason and verdict\n"
       "- `programs/`, `candidates/`, `candidates_llm/`: composed programs, converted and model-written "
       "candidates; `llm.jsonl`: the model's answers\n\n";
  if (!o.llm_only) c += "## Yield per stage (compiler route)\n\n" + YieldTable(run, kYield) + "\n";
  if (o.use_llm) c += "## Yield per stage (LLM route)\n\n" + YieldTable(run, kYieldLlm) + "\n";
  c += "## Per source\n\n" + OriginTable(run, o.use_llm) + "\n";
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

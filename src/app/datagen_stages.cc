// `kiln datagen`'s later stages: conversion, verification (kiln eval's batch), output (datagen_job.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "app/datagen_internal.h"
#include "app/eval_job.h"
#include "common/file.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"
#include "datagen/dataset.h"
#include "datagen/inductor.h"
#include "datagen/normalize.h"

namespace kiln::app {

namespace fs = std::filesystem;

namespace {


Result<std::map<std::string, nlohmann::json>> ReadResults(const std::string& path) {
  std::map<std::string, nlohmann::json> out;
  auto text = ReadFile(path);
  if (!text.ok()) return out;
  for (std::string_view l : SplitLines(*text)) {
    if (IsBlankLine(l)) continue;
    try {
      nlohmann::json j = nlohmann::json::parse(l);
      if (!j.contains("id") || !j["id"].is_string()) continue;
      std::string id = j["id"].get<std::string>();
      out[id] = std::move(j);
    } catch (const nlohmann::json::exception&) {
    }
  }
  return out;
}

// A program's `batch_size = N` (0: none).
int64_t ProgramBatchSize(const datagen::Program& p) {
  static const std::regex kBatch(R"((^|\n)batch_size = (\d+)\n)");
  std::smatch m;
  return std::regex_search(p.text, m, kBatch) ? ParseDecimal(m[2].str()).value_or(0) : 0;
}

// The sizes a candidate is verified at besides the program's own: composed programs take other batch
// sizes (no composed operator depends on the leading dimension) on the LLM route, whose kernels must derive
// their sizes from the inputs, and on the compiler route when the capture was dynamic and the batch (an
// input's first dim) is a size symbol; a static capture's kernels are specialised to the captured shapes.
std::vector<int64_t> ExtraBatchSizes(const DatagenOptions& o, const Candidate& c) {
  std::vector<int64_t> out;
  if (c.program.origin != "composed") return out;
  if (c.route != "llm" && !(c.route == "inductor" && c.meta.value("batch_symbolic", false))) return out;
  int64_t b = ProgramBatchSize(c.program);
  if (b <= 0) return out;
  for (int k = 1; k < o.shapes; ++k) out.push_back(b + 2 * k - 1);  // odd sizes: the masks' tails
  return out;
}

std::string ShapeId(const std::string& id, int64_t batch) { return fmt::format("{}@batch_size={}", id, batch); }

// Every candidate of one route through kiln eval's batch (strict policy); returns the ones whose verdicts
// (one per shape) are all ok. Files: verify_pairs.jsonl / verify.jsonl (compiler route) and
// verify_llm_pairs.jsonl / verify_llm.jsonl (LLM route).
Result<std::vector<Candidate>> VerifyStage(const DatagenOptions& o, const std::string& route,
                                           std::vector<Candidate> cands, DatagenRun* run) {
  const std::string sfx = route == "inductor" ? "" : "_" + route;
  std::string pairs_path = (fs::path(o.out) / ("verify" + sfx + "_pairs.jsonl")).string();
  std::string results_path = (fs::path(o.out) / ("verify" + sfx + ".jsonl")).string();
  KILN_ASSIGN_OR_RETURN(auto before, ReadResults(results_path));
  std::string pairs;
  int fresh = 0;
  for (const auto& c : cands) {
    if (!before.count(c.program.id) && o.verify_limit >= 0 && fresh++ >= o.verify_limit) continue;
    nlohmann::json line = {{"id", c.program.id}, {"task", c.program.path}, {"candidate", c.path}, {"format", "kernelbench"}};
    // the capture's peak, so that admission knows each new task's memory from its first check on
    if (int64_t hint = VerifyMemoryHint(c.capture_peak_bytes); hint > 0) line["memory_hint_bytes"] = hint;
    pairs += DumpJson(line) + "\n";
    const int64_t batch = ProgramBatchSize(c.program);
    for (int64_t b : ExtraBatchSizes(o, c)) {
      line["id"] = ShapeId(c.program.id, b);
      line["sizes"] = {{"batch_size", b}};
      // the tensors grow with the batch size
      if (int64_t hint = VerifyMemoryHint(c.capture_peak_bytes, static_cast<double>(b) / std::max<int64_t>(1, batch));
          hint > 0)
        line["memory_hint_bytes"] = hint;
      pairs += DumpJson(line) + "\n";
    }
  }
  KILN_RETURN_IF_ERROR(WriteFile(pairs_path, pairs));
  if (!cands.empty() && !o.finish) {
    EvalOptions e;
    e.batch = pairs_path;
    e.out = results_path;
    e.resume = true;
    e.mode = "check";
    e.policy = "strict";
    e.protocol = o.protocol;
    e.trials = o.trials;
    e.timeout_s = o.timeout_s;
    e.check_workers = o.check_workers;
    e.workers = o.workers;
    e.gpus = o.gpus;
    e.worker = o.worker;
    e.records = o.records;
    e.quiet = o.quiet;
    int rc = RunEval(e);
    if (rc == 2) return Unavailable("verification could not run (kiln eval --batch exited 2)");
  }
  KILN_ASSIGN_OR_RETURN(auto results, ReadResults(results_path));
  std::vector<Candidate> kept;
  for (auto& c : cands) {
    std::vector<std::pair<std::string, std::string>> lines = {{c.program.id, "the program's shapes"}};
    for (int64_t b : ExtraBatchSizes(o, c)) lines.push_back({ShapeId(c.program.id, b), fmt::format("batch_size={}", b)});
    bool ok = true;
    for (const auto& [id, shape] : lines) {
      auto it = results.find(id);
      if (it == results.end()) {
        run->Reject(c.program, "verify", "not_verified", "no verification result (" + shape + ")", nullptr, route);
      } else if (it->second.contains("error")) {
        run->Reject(c.program, "verify", "verify_error", JsonString(it->second, "error") + " (" + shape + ")", nullptr,
                    route);
      } else if (std::string verdict = JsonString(it->second, "verdict"); verdict != "ok") {
        const nlohmann::json res = JsonObject(it->second, "result");
        nlohmann::json v = {{"verdict", verdict}, {"message", JsonString(res, "message")}, {"shape", shape},
                            {"reasons", res.value("reasons", nlohmann::json::array())}};
        run->Reject(c.program, "verify", "verdict_" + verdict, JsonString(res, "message"), v, route);
      } else {
        continue;
      }
      ok = false;
      break;
    }
    if (!ok) continue;
    c.meta["shapes_verified"] = lines.size();
    run->counts.Add(route == "inductor" ? "verified" : route + "_verified", c.program.origin);
    kept.push_back(std::move(c));
  }
  return kept;
}

datagen::SampleText ToSample(const Candidate& c) {
  datagen::SampleText s;
  s.id = c.route == "inductor" ? c.program.id : c.program.id + "#" + c.route;
  s.program = c.program.text;
  s.candidate = c.source;
  s.route = c.route;
  s.reasoning = c.reasoning;
  s.meta = {{"origin", c.program.origin}, {"route", c.route},       {"families", c.program.families},
            {"ops", c.program.ops},       {"dtype", c.program.dtype}, {"licence", c.program.licence},
            {"verified", "kiln eval, strict policy"}};
  for (const auto& [k, v] : c.meta.items()) s.meta[k] = v;
  return s;
}

Status WriteOutputs(const DatagenOptions& o, const std::vector<Candidate>& verified, DatagenRun* run,
                    std::vector<Sample>* samples) {
  std::set<std::string> seen_program, seen_candidate;  // a program once per route; a candidate once
  std::string messages, alpaca, sharegpt;
  for (const auto& c : verified) {
    auto hp = datagen::NormalizedHash(c.program.text);
    auto hc = datagen::NormalizedHash(c.source);
    std::string kp = c.route + ":" + (hp.ok() ? *hp : c.program.id), kc = hc.ok() ? *hc : c.path;
    if (!seen_program.insert(kp).second || !seen_candidate.insert(kc).second) {
      run->Reject(c.program, "dedupe", "duplicate", "same normalised syntax tree as an earlier sample", nullptr, c.route);
      continue;
    }
    datagen::SampleText s = ToSample(c);
    messages += DumpJson(datagen::MessagesRecord(s)) + "\n";
    alpaca += DumpJson(datagen::AlpacaRecord(s)) + "\n";
    sharegpt += DumpJson(datagen::SharegptRecord(s)) + "\n";
    run->counts.Add(c.route == "inductor" ? "kept" : c.route + "_kept", c.program.origin);
    for (const auto& f : c.program.families) run->counts.Add("family", f);
    samples->push_back({c.program, c.source, c.route, c.reasoning, c.kernels});
  }
  KILN_RETURN_IF_ERROR(WriteFile((fs::path(o.out) / "sft_messages.jsonl").string(), messages));
  KILN_RETURN_IF_ERROR(WriteFile((fs::path(o.out) / "sft_alpaca.jsonl").string(), alpaca));
  KILN_RETURN_IF_ERROR(WriteFile((fs::path(o.out) / "sft_sharegpt.jsonl").string(), sharegpt));
  return Status::Ok();
}

}  // namespace

std::vector<Candidate> ConvertStage(const DatagenOptions& o, const std::vector<Captured>& captured, DatagenRun* run) {
  fs::create_directories(fs::path(o.out) / "candidates");
  std::vector<Candidate> out;
  for (const auto& c : captured) {
    datagen::Conversion conv = datagen::ConvertCapture(c.program.text, c.capture);
    if (!conv.ok) {
      run->Reject(c.program, "convert", conv.reason, conv.message, nullptr, "inductor");
      continue;
    }
    std::string path = fs::absolute(fs::path(o.out) / "candidates" / (FileStem(c.program.id) + ".py")).string();
    auto old = ReadFile(path);
    if (!old.ok() || *old != conv.source) {
      Status st = WriteFile(path, conv.source);
      if (!st.ok()) {
        run->Reject(c.program, "convert", "write_failed", st.message(), nullptr, "inductor");
        continue;
      }
    }
    run->counts.Add("converted", c.program.origin);
    Candidate cand;
    cand.program = c.program;
    cand.route = "inductor";
    cand.path = path;
    cand.source = conv.source;
    std::vector<datagen::KernelNote> notes;
    for (const auto& k : conv.kernels) {
      notes.push_back({k.name, k.kind, k.comment});
      cand.kernels.push_back(k.name);
    }
    cand.reasoning = datagen::CompilerReasoning(c.program.families, notes, conv.symbols);
    cand.meta = {{"kernels", cand.kernels}};
    cand.capture_peak_bytes = CapturePeakBytes(c.capture);
    if (conv.dynamic) {
      cand.meta["dynamic"] = true;
      cand.meta["symbols"] = conv.symbols;  // "s77 = x.size(0)"
      bool batch = false;
      for (const auto& s : conv.symbols) batch |= EndsWith(s, ".size(0)");
      cand.meta["batch_symbolic"] = batch;
    }
    out.push_back(std::move(cand));
  }
  return out;
}

int64_t CapturePeakBytes(const nlohmann::json& capture) {
  auto it = capture.find("gpu_peak_bytes");
  return it != capture.end() && it->is_number_integer() ? std::max<int64_t>(0, it->get<int64_t>()) : 0;
}

int64_t VerifyMemoryHint(int64_t capture_peak_bytes, double scale) {
  if (capture_peak_bytes <= 0) return 0;
  return static_cast<int64_t>(std::ceil(kVerifyPeakFactor * scale * static_cast<double>(capture_peak_bytes))) +
         kVerifyPeakFixed;
}

std::string FileStem(const std::string& id) {
  std::string s = id;
  for (char& c : s) {
    if (c == '/') c = '_';
  }
  return s;
}

int VerifyOutput(const DatagenOptions& o, std::vector<Candidate> candidates, DatagenRun* run) {
  std::vector<Candidate> verified;
  for (const std::string route : {"inductor", "llm"}) {
    std::vector<Candidate> mine;
    for (auto& c : candidates)
      if (c.route == route) mine.push_back(std::move(c));
    if (mine.empty()) continue;
    auto v = VerifyStage(o, route, std::move(mine), run);
    if (!v.ok()) {
      std::fprintf(stderr, "kiln datagen: error: %s\n", v.status().message().c_str());
      return 2;
    }
    run->Note(fmt::format("verify ({} route): {} passed", route, v->size()));
    for (auto& c : *v) verified.push_back(std::move(c));
  }
  if (o.stop_after == "verify") return FinishRun(o, run, {});
  std::vector<Sample> samples;
  Status st = WriteOutputs(o, verified, run, &samples);
  if (!st.ok()) {
    std::fprintf(stderr, "kiln datagen: error: %s\n", st.message().c_str());
    return 2;
  }
  return FinishRun(o, run, samples);
}

}  // namespace kiln::app

// `kiln datagen`'s later stages: conversion, verification (kiln eval's batch), output (datagen_job.h).
#include <cstdio>
#include <filesystem>
#include <map>
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

std::string FileStem(const std::string& id) {
  std::string s = id;
  for (char& c : s) {
    if (c == '/') c = '_';
  }
  return s;
}

struct Converted {
  datagen::Program program;
  std::string path;  // the candidate file
  datagen::Conversion conversion;
};

std::vector<Converted> ConvertStage(const DatagenOptions& o, const std::vector<Captured>& captured, DatagenRun* run) {
  fs::create_directories(fs::path(o.out) / "candidates");
  std::vector<Converted> out;
  for (const auto& c : captured) {
    datagen::Conversion conv = datagen::ConvertCapture(c.program.text, c.capture);
    if (!conv.ok) {
      run->Reject(c.program, "convert", conv.reason, conv.message);
      continue;
    }
    std::string path = fs::absolute(fs::path(o.out) / "candidates" / (FileStem(c.program.id) + ".py")).string();
    auto old = ReadFile(path);
    if (!old.ok() || *old != conv.source) {
      Status st = WriteFile(path, conv.source);
      if (!st.ok()) {
        run->Reject(c.program, "convert", "write_failed", st.message());
        continue;
      }
    }
    run->counts.Add("converted", c.program.origin);
    out.push_back({c.program, path, std::move(conv)});
  }
  return out;
}

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

// Every candidate through kiln eval's batch (strict policy); returns the ones whose verdict is ok.
Result<std::vector<Converted>> VerifyStage(const DatagenOptions& o, std::vector<Converted> converted, DatagenRun* run) {
  std::string pairs_path = (fs::path(o.out) / "verify_pairs.jsonl").string();
  std::string results_path = (fs::path(o.out) / "verify.jsonl").string();
  KILN_ASSIGN_OR_RETURN(auto before, ReadResults(results_path));
  std::string pairs;
  int fresh = 0;
  for (const auto& c : converted) {
    if (!before.count(c.program.id) && o.verify_limit >= 0 && fresh++ >= o.verify_limit) continue;
    pairs += DumpJson({{"id", c.program.id}, {"task", c.program.path}, {"candidate", c.path}, {"format", "kernelbench"}}) + "\n";
  }
  KILN_RETURN_IF_ERROR(WriteFile(pairs_path, pairs));
  if (!converted.empty() && !o.finish) {
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
    e.worker = o.worker;
    e.records = o.records;
    e.quiet = o.quiet;
    int rc = RunEval(e);
    if (rc == 2) return Unavailable("verification could not run (kiln eval --batch exited 2)");
  }
  KILN_ASSIGN_OR_RETURN(auto results, ReadResults(results_path));
  std::vector<Converted> kept;
  for (auto& c : converted) {
    auto it = results.find(c.program.id);
    if (it == results.end()) {
      run->Reject(c.program, "verify", "not_verified", "no verification result");
      continue;
    }
    const nlohmann::json& r = it->second;
    if (r.contains("error")) {
      run->Reject(c.program, "verify", "verify_error", JsonString(r, "error"));
      continue;
    }
    std::string verdict = JsonString(r, "verdict");
    if (verdict != "ok") {
      const nlohmann::json res = JsonObject(r, "result");
      nlohmann::json v = {{"verdict", verdict}, {"message", JsonString(res, "message")},
                          {"reasons", res.value("reasons", nlohmann::json::array())}};
      run->Reject(c.program, "verify", "verdict_" + verdict, JsonString(res, "message"), v);
      continue;
    }
    run->counts.Add("verified", c.program.origin);
    kept.push_back(std::move(c));
  }
  return kept;
}

datagen::SampleText ToSample(const Converted& c) {
  datagen::SampleText s;
  s.id = c.program.id;
  s.program = c.program.text;
  s.candidate = c.conversion.source;
  s.route = "inductor";
  std::vector<datagen::KernelNote> notes;
  std::vector<std::string> kernels;
  for (const auto& k : c.conversion.kernels) {
    notes.push_back({k.name, k.kind, k.comment});
    kernels.push_back(k.name);
  }
  s.reasoning = datagen::CompilerReasoning(c.program.families, notes);
  s.meta = {{"origin", c.program.origin}, {"route", "inductor"}, {"families", c.program.families},
            {"ops", c.program.ops},       {"dtype", c.program.dtype}, {"kernels", kernels},
            {"licence", c.program.licence}, {"verified", "kiln eval, strict policy"}};
  return s;
}

Status WriteOutputs(const DatagenOptions& o, const std::vector<Converted>& verified, DatagenRun* run,
                    std::vector<Sample>* samples) {
  std::set<std::string> seen_program, seen_candidate;
  std::string messages, alpaca, sharegpt;
  for (const auto& c : verified) {
    auto hp = datagen::NormalizedHash(c.program.text);
    auto hc = datagen::NormalizedHash(c.conversion.source);
    std::string kp = hp.ok() ? *hp : c.program.id, kc = hc.ok() ? *hc : c.path;
    if (!seen_program.insert(kp).second || !seen_candidate.insert(kc).second) {
      run->Reject(c.program, "dedupe", "duplicate", "same normalised syntax tree as an earlier sample");
      continue;
    }
    datagen::SampleText s = ToSample(c);
    messages += DumpJson(datagen::MessagesRecord(s)) + "\n";
    alpaca += DumpJson(datagen::AlpacaRecord(s)) + "\n";
    sharegpt += DumpJson(datagen::SharegptRecord(s)) + "\n";
    run->counts.Add("kept", c.program.origin);
    for (const auto& f : c.program.families) run->counts.Add("family", f);
    samples->push_back({c.program, c.conversion.source, "inductor", s.reasoning, s.meta["kernels"].get<std::vector<std::string>>()});
  }
  KILN_RETURN_IF_ERROR(WriteFile((fs::path(o.out) / "sft_messages.jsonl").string(), messages));
  KILN_RETURN_IF_ERROR(WriteFile((fs::path(o.out) / "sft_alpaca.jsonl").string(), alpaca));
  KILN_RETURN_IF_ERROR(WriteFile((fs::path(o.out) / "sft_sharegpt.jsonl").string(), sharegpt));
  return Status::Ok();
}

}  // namespace

int ConvertVerifyOutput(const DatagenOptions& o, const std::vector<Captured>& captured, DatagenRun* run) {
  std::vector<Converted> converted = ConvertStage(o, captured, run);
  run->Note(fmt::format("convert: {} of {} standalone", converted.size(), captured.size()));
  if (o.stop_after == "convert") return FinishRun(o, run, {});
  auto verified = VerifyStage(o, std::move(converted), run);
  if (!verified.ok()) {
    std::fprintf(stderr, "kiln datagen: error: %s\n", verified.status().message().c_str());
    return 2;
  }
  run->Note(fmt::format("verify: {} passed", verified->size()));
  if (o.stop_after == "verify") return FinishRun(o, run, {});
  std::vector<Sample> samples;
  Status st = WriteOutputs(o, *verified, run, &samples);
  if (!st.ok()) {
    std::fprintf(stderr, "kiln datagen: error: %s\n", st.message().c_str());
    return 2;
  }
  return FinishRun(o, run, samples);
}

}  // namespace kiln::app

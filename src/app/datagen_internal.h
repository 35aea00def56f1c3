// kiln/app: what the stages of `kiln datagen` share (datagen_job.cc, datagen_stages.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/datagen_job.h"
#include "datagen/programs.h"

namespace kiln::app {

// Counts per stage and origin ("programs" x "composed" -> 500), for the dataset card.
struct StageCounts {
  std::map<std::string, std::map<std::string, int>> by_stage;
  void Add(const std::string& stage, const std::string& origin, int n = 1) { by_stage[stage][origin] += n; }
  int Total(const std::string& stage) const {
    auto it = by_stage.find(stage);
    int n = 0;
    if (it != by_stage.end())
      for (const auto& [_, v] : it->second) n += v;
    return n;
  }
};

struct DatagenRun {
  StageCounts counts;
  std::vector<nlohmann::json> rejects;  // one per dropped program or candidate, with the stage and reason
  std::vector<std::string> notes;
  bool quiet = false;
  // `route` ("inductor", "llm") for a candidate's reject; "" for a program's (before the routes split).
  void Reject(const datagen::Program& p, const std::string& stage, const std::string& code, const std::string& message,
              const nlohmann::json& verdict = nullptr, const std::string& route = "");
  void Note(const std::string& text);
};

// A program that ran in eager torch and compiled, with the worker's capture record.
struct Captured {
  datagen::Program program;
  nlohmann::json capture;
};

// A candidate of one route for a program: the module kiln eval verifies and what its sample keeps.
struct Candidate {
  datagen::Program program;
  std::string route;      // "inductor" or "llm"
  std::string path;       // the candidate file
  std::string source;     // its text
  std::string reasoning;  // compiler route: the template over its kernels; LLM route: the model's
  std::vector<std::string> kernels;  // inductor: kernel names in launch order
  nlohmann::json meta = nlohmann::json::object();  // route-specific facts for the sample's meta
  int64_t capture_peak_bytes = 0;  // the program's GPU peak in its capture (0: unknown): verification's memory hint
};

// A candidate that passed verification, ready for the output files.
struct Sample {
  datagen::Program program;
  std::string candidate;  // the ModelNew module's text
  std::string route;      // "inductor" (the LLM route: "llm")
  std::string reasoning;  // the response's reasoning part
  std::vector<std::string> kernels;  // kernel names, in launch order
};

// Writes rejects.jsonl and the dataset card for what the run did; returns the exit code (0).
int FinishRun(const DatagenOptions& o, DatagenRun* run, const std::vector<Sample>& samples);
// A program id as a file name ('/' -> '_').
std::string FileStem(const std::string& id);
// The GPU peak a capture record measured (`gpu_peak_bytes`; 0 when it holds none).
int64_t CapturePeakBytes(const nlohmann::json& capture);
// What verification is told to expect of a candidate's GPU peak (`memory_hint_bytes` of its pair) from its
// program's captured peak at `scale` times the captured batch size: kVerifyPeakFactor x + kVerifyPeakFixed
// (docs/datagen.md, "Verification"); 0 (no hint) when the peak is unknown.
inline constexpr double kVerifyPeakFactor = 1.25;
inline constexpr int64_t kVerifyPeakFixed = int64_t{256} << 20;
int64_t VerifyMemoryHint(int64_t capture_peak_bytes, double scale = 1.0);
// The compiler route's conversion: Inductor's output -> candidates/<id>.py.
std::vector<Candidate> ConvertStage(const DatagenOptions& o, const std::vector<Captured>& captured, DatagenRun* run);
// The LLM route (datagen_llm.cc): one answer per program (llm.jsonl; a rerun reuses it), its code and
// reasoning -> candidates_llm/<id>.py. Errors: a bad template or endpoint, records that cannot be written.
Result<std::vector<Candidate>> LlmStage(const DatagenOptions& o, const std::vector<datagen::Program>& programs,
                                        DatagenRun* run);
// Verification (kiln eval's batch, per route) and output of every route's candidates; the exit code.
int VerifyOutput(const DatagenOptions& o, std::vector<Candidate> candidates, DatagenRun* run);

}  // namespace kiln::app

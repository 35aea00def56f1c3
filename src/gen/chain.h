// kiln/gen: one chain of `kiln generate` (docs/generate.md): ask the model, take the code from its answer
// (response::ExtractCode), verify it (a Verifier: the same path as `kiln eval`), tell the model what went
// wrong (feedback.h), for up to `turns` rounds; the chain stops at the first verified answer that meets
// the target speedup (or, untimed, the first verified one). Every turn is one transcript line; a chain
// resumes from the lines of an earlier run (the messages are rebuilt from them, no call is repeated).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "exec/result.h"
#include "gen/feedback.h"
#include "llm/client.h"
#include "task/task.h"

namespace kiln::gen {

class Verifier {
 public:
  virtual ~Verifier() = default;
  // The verdict of `source` on `task`; an error Status only when kiln's machinery failed.
  virtual Result<exec::EvalResult> Verify(const task::TaskSpec& task, const std::string& source) = 0;
  // Whether results carry timings (mode time).
  virtual bool timed() const = 0;
  // The diagnosis's top findings for a correct but slow candidate (empty: no profiler here).
  virtual std::vector<Finding> Diagnose(const task::TaskSpec& task, const std::string& source,
                                        const exec::EvalResult& r) {
    return {};
  }
};

// One turn as the transcript keeps it (a JSON line).
struct TurnRecord {
  int turn = 0;
  std::string response, finish_reason;
  std::string extracted;  // response::Extracted::how
  std::string code_hash;  // "" without code
  std::string outcome;    // Attempt::Outcome
  nlohmann::json reasons = nlohmann::json::array();  // [{code, message, line}]
  std::optional<double> speedup;
  bool done = false;     // this turn ended the chain
  std::string feedback;  // what was sent back ("" when done)
  nlohmann::json llm = nlohmann::json::object();  // tokens, cost, cached, latency_s, attempts
  nlohmann::json ToJson() const;
  static TurnRecord FromJson(const nlohmann::json& j);
  bool ok() const { return outcome == "ok"; }
};

struct ChainSpec {
  task::TaskSpec task;
  int sample = 0;
  int turns = 4;
  std::vector<llm::Message> prompt;  // the system and user messages of the first turn
  llm::Sampling sampling;
  double target_speedup = 1.0;
  std::string purpose;  // the LLM records' label
};

struct ChainResult {
  std::string status;  // "verified", "correct" (verified, below the target), "failed", "llm_error"
  int turns = 0;       // turns taken (resumed ones included)
  int best_turn = 0;   // 0: no verified answer
  std::string best_source;
  std::optional<double> best_speedup;
  std::string error;  // llm_error: what failed
};

// Called with each transcript line (a turn, or an {"error"} line when the model could not be reached).
using LineSink = std::function<Status(const nlohmann::json& line)>;

// The candidate module of a model's answer ("" when it has none).
std::string CodeOf(const std::string& response);

// The messages of the next turn after `done` turns.
std::vector<llm::Message> Conversation(const ChainSpec& spec, const std::vector<TurnRecord>& done);

// The chain's result from its turns (best verified turn: the fastest when timed, else the first).
ChainResult Summarize(const ChainSpec& spec, const std::vector<TurnRecord>& turns);

// Runs the chain on from `done` (the turns of an earlier run). Errors: the Verifier's machinery
// failures and a sink that cannot write.
Result<ChainResult> RunChain(const ChainSpec& spec, std::vector<TurnRecord> done, llm::Client* client,
                             Verifier* verifier, const LineSink& sink);

}  // namespace kiln::gen

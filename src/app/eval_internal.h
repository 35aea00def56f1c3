// kiln/app: what the single and the batch evaluation share (internal to eval_job.cc, eval_batch.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/eval_job.h"
#include "exec/result.h"
#include "store/store.h"

namespace kiln::app::eval_internal {

Result<nlohmann::json> ParseSizes(const std::vector<std::string>& sizes);
// Everything of a request except the task and the candidate.
Result<exec::EvalRequest> BaseRequest(const EvalOptions& o);
// The candidate's module from a file (empty path: the task's own code).
Status LoadCandidate(const std::string& path, exec::EvalRequest* r);
// --baseline / a batch line's "baseline": another version of the code, timed interleaved with the
// candidate in the reference's place (mode time; correctness is still the reference's).
Status LoadBaseline(const std::string& path, exec::EvalRequest* r);
// A candidate source as the worker takes it (a TritonBench module without its test).
std::string WorkerModule(std::string source, const exec::EvalRequest& r);
Result<std::unique_ptr<store::Store>> OpenStore(const EvalOptions& o);
RunnerSpec SpecOf(const EvalOptions& o);
nlohmann::json ResultLine(const exec::EvalResult& r, const exec::EvalRequest& req);

int RunBatch(const EvalOptions& o);

}  // namespace kiln::app::eval_internal

#include "app/eval_job.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "app/eval_internal.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/source_text.h"
#include "exec/evaluator.h"
#include "task/task.h"

namespace kiln::app {

namespace eval_internal {

namespace fs = std::filesystem;
using nlohmann::json;

Result<json> ParseSizes(const std::vector<std::string>& sizes) {
  json out = json::object();
  for (const auto& s : sizes) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidArgument(fmt::format("--size {}: expected NAME=VALUE", s));
    json v = ParseJson(s.substr(eq + 1));
    if (v.is_discarded() || !(v.is_number() || v.is_string() || v.is_boolean())) v = s.substr(eq + 1);
    out[s.substr(0, eq)] = v;
  }
  return out;
}

Result<exec::EvalRequest> BaseRequest(const EvalOptions& o) {
  exec::EvalRequest r;
  KILN_ASSIGN_OR_RETURN(r.mode, exec::ParseMode(o.mode));
  KILN_ASSIGN_OR_RETURN(r.policy, exec::ParsePolicy(o.policy));
  r.protocol = o.protocol;
  r.seed = o.seed;
  r.trials = o.trials;
  r.cases = o.cases;
  r.timeout_s = o.timeout_s;
  return r;
}

std::string WorkerModule(std::string source, const exec::EvalRequest& r) {
  if (r.task.format == task::Format::kTritonBenchG || r.task.format == task::Format::kTritonBenchT)
    return task::StripTritonBenchTest(source);
  return source;
}

Status LoadCandidate(const std::string& path, exec::EvalRequest* r) {
  if (path.empty()) return Status::Ok();  // the task's own code
  KILN_ASSIGN_OR_RETURN(std::string src, ReadPythonSource(path));
  r->candidate_source = WorkerModule(std::move(src), *r);
  r->candidate_name = fs::path(path).filename().string();
  return Status::Ok();
}

Status LoadBaseline(const std::string& path, exec::EvalRequest* r) {
  if (path.empty()) return Status::Ok();
  if (r->mode != exec::Mode::kTime) return InvalidArgument("--baseline needs --mode time (it is a timing comparison)");
  KILN_ASSIGN_OR_RETURN(std::string src, ReadPythonSource(path));
  r->baseline_source = WorkerModule(std::move(src), *r);
  return Status::Ok();
}

Result<std::unique_ptr<store::Store>> OpenStore(const EvalOptions& o) {
  if (o.records.no_db || !o.worker.replay.empty()) return std::unique_ptr<store::Store>();  // replays are not records
  return store::Store::Open(o.records.Path());
}

RunnerSpec SpecOf(const EvalOptions& o) { return o.worker.Spec(exec::ParseIsolation(o.isolation).value()); }

json ResultLine(const exec::EvalResult& r, const exec::EvalRequest& req) {
  json j = r.ToJson();
  j["schema_version"] = 1;  // of this object (docs/eval.md "JSON output")
  j["task"] = {{"name", req.task.name},
               {"format", task::FormatName(req.task.format)},
               {"hash", req.task.hash},
               {"path", req.task.path}};
  j["candidate"] =
      req.candidate_source ? json{{"name", req.candidate_name}, {"hash", req.CandidateHash()}} : json(nullptr);
  if (req.baseline_source) j["baseline"] = {{"hash", HashHex(*req.baseline_source)}};
  j["mode"] = exec::ModeName(req.mode);
  j["policy"] = exec::PolicyName(req.policy);
  return j;
}

}  // namespace eval_internal

namespace {

using namespace eval_internal;

int Usage(const std::string& message) {
  std::fprintf(stderr, "kiln eval: %s\n", message.c_str());
  return 2;
}

// The request of a single evaluation of a loaded task (--candidate, --baseline, ...).
Result<exec::EvalRequest> SingleRequest(const EvalOptions& o, const task::TaskSpec& spec) {
  KILN_ASSIGN_OR_RETURN(exec::EvalRequest req, BaseRequest(o));
  req.task = spec;
  if (o.candidate.empty() && spec.format == task::Format::kKernelBench)
    return InvalidArgument("a KernelBench task needs --candidate (a module defining ModelNew)");
  KILN_RETURN_IF_ERROR(LoadCandidate(o.candidate, &req));
  KILN_RETURN_IF_ERROR(LoadBaseline(o.baseline, &req));
  return req;
}

int RunSingle(const EvalOptions& o) {
  task::LoadOptions lo = o.task_options.ToLoadOptions();
  auto sizes = ParseSizes(o.sizes);
  if (!sizes.ok()) return Usage(sizes.status().message());
  lo.sizes = *sizes;
  auto spec = task::LoadTask(o.task, lo);
  if (!spec.ok()) {  // formatted diagnostics, printed as they are
    const std::string& m = spec.status().message();
    std::fputs(m.c_str(), stderr);
    if (m.empty() || m.back() != '\n') std::fputs("\n", stderr);
    return 2;
  }
  auto req = SingleRequest(o, *spec);
  if (!req.ok()) return Usage(req.status().message());
  auto st = OpenStore(o);
  if (!st.ok()) return Usage(st.status().message());
  auto runner = MakeRunner(SpecOf(o));
  if (!runner.ok()) return Usage(runner.status().message());
  exec::Evaluator ev(runner->get(), st->get(), !o.no_cache);
  auto r = ev.Evaluate(*req);
  if (!r.ok()) return Usage(r.status().message());
  if (o.json) {
    std::printf("%s\n", ResultLine(*r, *req).dump(2, ' ', false, json::error_handler_t::replace).c_str());
  } else {
    std::fputs(exec::FormatSummary(*r, &*req).c_str(), stdout);
  }
  return r->ok() ? 0 : 1;
}

// Usage errors exit 2 (CLI11's own parse errors keep its codes).
std::optional<int> CheckChoices(const EvalOptions& o) {
  for (auto [flag, value, allowed] :
       {std::tuple<const char*, std::string, std::vector<std::string>>{"--mode", o.mode, {"check", "time"}},
        {"--policy", o.policy, {"strict", "trusted"}},
        {"--isolation", o.isolation, {"shared", "fork", "fresh"}},
        {"--protocol", o.protocol.empty() ? std::string("kernelbench") : o.protocol, {"kernelbench", "legacy"}},
        {"--time-isolation", o.time_isolation, {"shared", "fork", "fresh"}}}) {
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Usage(fmt::format("{} {}: expected one of {}", flag, value, list));
    }
  }
  if (o.batch.empty() == o.task.empty()) return Usage("give either --task (one evaluation) or --batch (many)");
  return std::nullopt;
}

}  // namespace

int RunEval(const EvalOptions& o) {
  if (auto rc = CheckChoices(o)) return *rc;
  return o.batch.empty() ? RunSingle(o) : RunBatch(o);
}

}  // namespace kiln::app

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "common/file.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"
#include "exec/runner.h"

namespace kiln::exec {

using nlohmann::json;

std::string ReplayRunner::KeyOf(const json& req, bool by_name) {
  std::string op = req.value("op", "");
  if (op != "eval") return op;
  std::string task_key;
  if (auto t = req.find("task"); t != req.end() && t->is_object()) {
    task_key = by_name ? "" : t->value("hash", "");
    if (task_key.empty()) task_key = "name:" + t->value("name", "");
  }
  // Hand-written transcripts may give the candidate's hash instead of its source.
  std::string cand;
  if (auto c = req.find("candidate"); c != req.end() && c->is_object()) {
    if (c->contains("source") && (*c)["source"].is_string())
      cand = HashHex((*c)["source"].get<std::string>());
    else if (c->contains("hash") && (*c)["hash"].is_string())
      cand = (*c)["hash"].get<std::string>();
  }
  std::string key = fmt::format("eval|{}|{}|{}", task_key, cand, req.value("mode", "check"));
  // A timing baseline (kiln optimize's original, kiln eval --baseline) is part of what was measured.
  if (auto b = req.find("baseline"); b != req.end() && b->is_object()) {
    if (b->contains("source") && (*b)["source"].is_string())
      key += "|baseline:" + HashHex((*b)["source"].get<std::string>());
    else if (b->contains("hash") && (*b)["hash"].is_string())
      key += "|baseline:" + (*b)["hash"].get<std::string>();
  }
  return key;
}

Result<std::unique_ptr<ReplayRunner>> ReplayRunner::Open(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return FromText(text, path);
}

Result<std::unique_ptr<ReplayRunner>> ReplayRunner::FromText(const std::string& text, const std::string& name) {
  std::unique_ptr<ReplayRunner> r(new ReplayRunner());
  r->name_ = name;
  const std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const size_t line_no = i + 1;
    if (IsBlankLine(line)) continue;
    json j = ParseJson(line);
    if (!j.is_object() || !j.contains("request") || !j.contains("response") || !j["request"].is_object() ||
        !j["response"].is_object()) {
      return InvalidArgument(
          fmt::format("{}:{}:1: error: not a transcript line (want {{\"request\": {{...}}, "
                      "\"response\": {{...}}}})",
                      name, line_no));
    }
    std::string key = KeyOf(j["request"]);
    r->by_key_[key].push_back(r->entries_.size());
    r->entries_.push_back({std::move(j["request"]), std::move(j["response"])});
  }
  return r;
}

Result<HelloInfo> ReplayRunner::Hello() {
  auto it = by_key_.find("hello");
  if (it == by_key_.end()) {
    // A transcript without a hello still replays evaluations; describe it from the first response.
    HelloInfo h;
    h.protocol = kProtocolVersion;
    for (const auto& e : entries_) {
      if (e.response.contains("versions")) h.versions = e.response["versions"];
      if (e.response.contains("device") && e.response["device"].is_object()) {
        DeviceInfo d;
        d.raw = e.response["device"];
        d.name = d.raw.value("name", "");
        d.uuid = d.raw.value("uuid", "");
        d.index = d.raw.value("index", 0);
        h.devices.push_back(d);
        break;
      }
    }
    h.isolation = "replay";
    return h;
  }
  auto h = HelloInfo::FromResponse(entries_[it->second.front()].response);
  if (h.ok()) h->isolation = "replay";
  return h;
}

Result<EvalResult> ReplayRunner::Evaluate(const EvalRequest& request) {
  json req = request.ToJson("replay");
  // Recordings match on the task hash (contents); hand-written ones without a hash on the name.
  std::string key = KeyOf(req);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) {
    key = KeyOf(req, /*by_name=*/true);
    it = by_key_.find(key);
  }
  if (it == by_key_.end()) {
    return NotFound(fmt::format("{}: no recorded response for task {} (hash {}), candidate {}, mode {}", name_,
                                request.task.name, request.task.hash,
                                request.candidate_source ? HashHex(*request.candidate_source) : "(task's own)",
                                ModeName(request.mode)));
  }
  size_t& cur = cursor_[key];
  size_t idx = it->second[std::min(cur, it->second.size() - 1)];
  ++cur;
  // A recorded out-of-memory answer replays as the live runner gave it (the pool then retries it).
  if (auto oom = EvalResult::FromInfraOom(entries_[idx].response)) return std::move(*oom);
  auto r = EvalResult::FromResponse(entries_[idx].response);
  if (!r.ok()) return InvalidArgument(fmt::format("{}: recorded response: {}", name_, r.status().message()));
  return r;
}

Result<json> ReplayRunner::DevicePeaks(const std::vector<std::string>& dtypes) {
  auto it = by_key_.find("device_peaks");
  if (it == by_key_.end()) return NotFound(name_ + ": no recorded device_peaks");
  return entries_[it->second.front()].response;
}

std::mutex RecordingRunner::mu_;

Status RecordingRunner::Append(const json& request, const json& response) {
  std::lock_guard<std::mutex> lock(mu_);
  std::ofstream f(path_, std::ios::app);
  if (!f) {
    return IoError(fmt::format("{}: error: cannot open the transcript for appending: {}", path_, std::strerror(errno)));
  }
  f << DumpJson(json{{"request", request}, {"response", response}}) << "\n";
  f.flush();
  if (!f) return IoError(fmt::format("{}: error: cannot write the transcript", path_));
  return Status::Ok();
}

Result<HelloInfo> RecordingRunner::Hello() {
  auto h = inner_->Hello();
  if (h.ok()) KILN_RETURN_IF_ERROR(Append(json{{"id", "hello"}, {"op", "hello"}}, h->raw));
  return h;
}

Result<EvalResult> RecordingRunner::Evaluate(const EvalRequest& request) {
  auto r = inner_->Evaluate(request);
  if (r.ok()) {
    json req = request.ToJson("recorded");
    // Keep the recording self-contained: the worker's raw answer when there is one, otherwise what
    // kiln made of it (timeouts and crashes are answered on this side).
    json resp = r->raw.is_object() && r->raw.contains("verdict") ? r->raw : r->ToJson();
    KILN_RETURN_IF_ERROR(Append(req, resp));
  }
  return r;
}

Result<json> RecordingRunner::DevicePeaks(const std::vector<std::string>& dtypes) {
  auto r = inner_->DevicePeaks(dtypes);
  if (r.ok()) KILN_RETURN_IF_ERROR(Append(json{{"id", "peaks"}, {"op", "device_peaks"}, {"dtypes", dtypes}}, *r));
  return r;
}

}  // namespace kiln::exec

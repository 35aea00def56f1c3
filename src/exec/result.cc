#include "exec/result.h"

#include <cmath>

#include <fmt/format.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"

namespace kiln::exec {

using nlohmann::json;

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOk: return "ok";
    case Verdict::kCompileError: return "compile_error";
    case Verdict::kRuntimeError: return "runtime_error";
    case Verdict::kTimeout: return "timeout";
    case Verdict::kCrash: return "crash";
    case Verdict::kMismatch: return "mismatch";
    case Verdict::kRejected: return "rejected";
  }
  return "crash";
}

std::optional<Verdict> ParseVerdict(std::string_view s) {
  for (Verdict v : {Verdict::kOk, Verdict::kCompileError, Verdict::kRuntimeError, Verdict::kTimeout, Verdict::kCrash,
                    Verdict::kMismatch, Verdict::kRejected}) {
    if (s == VerdictName(v)) return v;
  }
  return std::nullopt;
}

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kCheck: return "check";
    case Mode::kTime: return "time";
    case Mode::kCompile: return "compile";
    case Mode::kTimeOnly: return "time_only";
  }
  return "check";
}
Result<Mode> ParseMode(const std::string& s) {
  if (s == "check") return Mode::kCheck;
  if (s == "time") return Mode::kTime;
  if (s == "compile") return Mode::kCompile;
  if (s == "time_only") return Mode::kTimeOnly;
  return InvalidArgument(fmt::format("unknown mode '{}' (expected check, time, compile or time_only)", s));
}

const char* PolicyName(Policy p) { return p == Policy::kStrict ? "strict" : "trusted"; }
Result<Policy> ParsePolicy(const std::string& s) {
  if (s == "strict") return Policy::kStrict;
  if (s == "trusted") return Policy::kTrusted;
  return InvalidArgument(fmt::format("unknown policy '{}' (expected strict or trusted)", s));
}

const char* IsolationName(Isolation i) {
  switch (i) {
    case Isolation::kShared: return "shared";
    case Isolation::kFork: return "fork";
    case Isolation::kFresh: return "fresh";
  }
  return "fork";
}
Result<Isolation> ParseIsolation(const std::string& s) {
  if (s == "shared") return Isolation::kShared;
  if (s == "fork") return Isolation::kFork;
  if (s == "fresh") return Isolation::kFresh;
  return InvalidArgument(fmt::format("unknown isolation '{}' (expected shared, fork or fresh)", s));
}

json EvalRequest::ToJson(const std::string& id) const {
  json j = {{"id", id}, {"op", "eval"}, {"task", task.ToJson()}};
  if (candidate_source) {
    j["candidate"] = {{"source", *candidate_source}, {"name", candidate_name}};
  } else {
    j["candidate"] = nullptr;
  }
  if (baseline_source && (mode == Mode::kTime || mode == Mode::kTimeOnly))
    j["baseline"] = {{"source", *baseline_source}, {"name", "baseline.py"}};
  j["mode"] = ModeName(mode);
  j["policy"] = PolicyName(policy);
  j["seed"] = seed;
  j["trials"] = trials;
  if (mode == Mode::kTimeOnly) j["verify_trials"] = verify_trials;
  if (!cases.empty()) j["cases"] = cases;
  if (!tolerance.empty()) j["tolerance"] = tolerance;
  if (!protocol.empty()) j["protocol"] = protocol;
  if (!timing.empty()) j["timing"] = timing;
  if (legacy_stdout && (mode == Mode::kCheck || mode == Mode::kTime)) j["legacy_stdout"] = true;
  if (policy == Policy::kTrusted && autotune_picks.is_array() && !autotune_picks.empty())
    j["autotune_picks"] = autotune_picks;
  j["limits"] = {{"timeout_s", timeout_s},
                 {"max_gpu_mem_bytes", max_gpu_mem_bytes ? json(*max_gpu_mem_bytes) : json(nullptr)}};
  return j;
}

std::string EvalRequest::CandidateHash() const { return candidate_source ? HashHex(*candidate_source) : std::string(); }

std::string EvalRequest::ParamsHash() const {
  json j = ToJson("");
  j.erase("id");
  j.erase("task");
  j.erase("candidate");
  j.erase("autotune_picks");  // how fast the original's keys are tuned, not what is measured
  // the tolerance protocol; "kernelbench" is the worker's default, so it hashes like no protocol
  if (j.contains("protocol") && j["protocol"] != "kernelbench") j["tolerance_protocol"] = j["protocol"];
  j["protocol"] = kProtocolVersion;
  return HashHex(DumpJson(j));
}

namespace {

std::optional<Timing> ParseTiming(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return std::nullopt;
  Timing t;
  t.median = JsonNumber(*it, "median").value_or(NAN);
  t.min = JsonNumber(*it, "min").value_or(NAN);
  t.max = JsonNumber(*it, "max").value_or(NAN);
  t.p20 = JsonNumber(*it, "p20").value_or(NAN);
  t.p80 = JsonNumber(*it, "p80").value_or(NAN);
  t.n = JsonInt(*it, "n").value_or(0);
  return t;
}

json TimingJson(const Timing& t) {
  auto num = [](double d) { return std::isnan(d) ? json(nullptr) : json(d); };
  return {{"median", num(t.median)}, {"min", num(t.min)}, {"max", num(t.max)},
          {"p20", num(t.p20)},       {"p80", num(t.p80)}, {"n", t.n}};
}

json ReasonJson(const Reason& r) {
  json j = {{"code", r.code}, {"message", r.message}};
  if (r.line > 0) {
    j["file"] = r.file;
    j["line"] = r.line;
    j["column"] = r.column;
  }
  if (r.severity != "error") j["severity"] = r.severity;
  return j;
}

Reason ParseReason(const json& j) {
  Reason r;
  if (j.is_string()) {
    r.code = j.get<std::string>();
    return r;
  }
  if (!j.is_object()) return r;
  r.code = JsonString(j, "code");
  r.message = JsonString(j, "message");
  r.file = JsonString(j, "file");
  r.line = static_cast<int>(JsonInt(j, "line").value_or(0));
  r.column = static_cast<int>(JsonInt(j, "column").value_or(0));
  std::string sev = JsonString(j, "severity");
  if (!sev.empty()) r.severity = sev;
  return r;
}

}  // namespace

std::optional<EvalResult> EvalResult::FromInfraOom(const json& j) {
  if (!j.is_object()) return std::nullopt;
  auto c = j.find("error_code");
  if (c == j.end() || !c->is_string() || *c != "infra_out_of_memory") return std::nullopt;
  auto e = j.find("error");
  EvalResult r = Make(Verdict::kRuntimeError, "infra_out_of_memory",
                      e != j.end() && e->is_string() ? e->get<std::string>() : "out of memory (infrastructure)");
  r.raw = j;
  r.raw["verdict"] = VerdictName(r.verdict);
  r.raw["reasons"] = json::array({{{"code", "infra_out_of_memory"}, {"message", r.message}, {"severity", "error"}}});
  return r;
}

Result<EvalResult> EvalResult::FromResponse(const json& j) {
  if (!j.is_object()) return InvalidArgument("response is not a JSON object");
  if (j.contains("ok") && j["ok"].is_boolean() && !j["ok"].get<bool>()) {
    return InvalidArgument(fmt::format("worker error: {}", j.value("error", std::string("(no message)"))));
  }
  EvalResult r;
  r.raw = j;
  auto v = ParseVerdict(JsonString(j, "verdict"));
  if (!v) return InvalidArgument(fmt::format("response has no valid verdict: '{}'", JsonString(j, "verdict")));
  r.verdict = *v;
  if (auto it = j.find("reasons"); it != j.end() && it->is_array()) {
    for (const auto& x : *it) r.reasons.push_back(ParseReason(x));
  }
  if (auto it = j.find("warnings"); it != j.end() && it->is_array()) {
    for (const auto& x : *it) r.warnings.push_back(ParseReason(x));
  }
  r.message = JsonString(j, "message");
  if (auto it = j.find("cases"); it != j.end() && it->is_array()) {
    for (const auto& c : *it) {
      if (!c.is_object()) continue;
      CaseResult cr;
      cr.name = JsonString(c, "name");
      cr.passed = c.value("passed", false);
      cr.trials = static_cast<int>(JsonInt(c, "trials").value_or(0));
      cr.max_abs_err = JsonNumber(c, "max_abs_err");
      cr.rel_l2_err = JsonNumber(c, "rel_l2_err");
      if (c.contains("shapes") && c["shapes"].is_array()) cr.shapes = c["shapes"];
      if (c.contains("dtypes") && c["dtypes"].is_array()) cr.dtypes = c["dtypes"];
      if (c.contains("autotune_keys") && c["autotune_keys"].is_object()) cr.autotune_keys = c["autotune_keys"];
      cr.candidate_ms = ParseTiming(c, "candidate_ms");
      cr.reference_ms = ParseTiming(c, "reference_ms");
      cr.speedup = JsonNumber(c, "speedup");
      if (auto s = c.find("speedup_spread");
          s != c.end() && s->is_array() && s->size() == 2 && (*s)[0].is_number() && (*s)[1].is_number()) {
        cr.speedup_spread = std::make_pair((*s)[0].get<double>(), (*s)[1].get<double>());
      }
      cr.timing_method = JsonString(c, "timing_method");
      cr.reference_is_baseline = JsonString(c, "reference_is") == "baseline";
      cr.error = JsonString(c, "error");
      if (cr.error.empty()) cr.error = JsonString(c, "message");
      r.cases.push_back(std::move(cr));
    }
  }
  if (auto it = j.find("kernels"); it != j.end() && it->is_array()) {
    for (const auto& k : *it) {
      if (k.is_object()) r.kernels.push_back(KernelFactsFromObject(k));
    }
  }
  if (auto it = j.find("aten_ops"); it != j.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_number()) r.aten_ops[k] = static_cast<int64_t>(v.get<double>());
    }
  }
  r.runtime_checks = JsonObject(j, "runtime_checks");
  r.clocks = JsonObject(j, "clocks");
  r.versions = JsonObject(j, "versions");
  r.device = JsonObject(j, "device");
  r.elapsed_s = JsonNumber(j, "elapsed_s").value_or(0);
  r.stderr_tail = JsonString(j, "stderr_tail");
  // `fatal` (docs/verdicts.md): the CUDA context is dead; `restart_worker` is the older spelling.
  r.restart_worker =
      (j.contains("fatal") && j["fatal"].is_boolean() && j["fatal"].get<bool>()) ||
      (j.contains("restart_worker") && j["restart_worker"].is_boolean() && j["restart_worker"].get<bool>());
  r.from_cache = j.value("from_cache", false);
  return r;
}

EvalResult EvalResult::Make(Verdict v, std::string code, std::string message) {
  EvalResult r;
  r.verdict = v;
  r.message = message;
  r.reasons.push_back(MakeReason(std::move(code), std::move(message)));
  return r;
}

json EvalResult::ToJson() const {
  json j = raw.is_object() ? raw : json::object();
  j.erase("id");
  j["ok"] = true;
  j["verdict"] = VerdictName(verdict);
  json reasons = json::array();
  for (const auto& r : this->reasons) reasons.push_back(ReasonJson(r));
  j["reasons"] = reasons;
  json w = json::array();
  for (const auto& r : warnings) w.push_back(ReasonJson(r));
  j["warnings"] = w;
  j["message"] = message;
  if (!j.contains("cases")) {
    json cs = json::array();
    for (const auto& c : cases) {
      json cj = {
          {"name", c.name}, {"passed", c.passed}, {"trials", c.trials}, {"shapes", c.shapes}, {"dtypes", c.dtypes}};
      if (c.max_abs_err) cj["max_abs_err"] = *c.max_abs_err;
      if (c.rel_l2_err) cj["rel_l2_err"] = *c.rel_l2_err;
      if (c.candidate_ms) cj["candidate_ms"] = TimingJson(*c.candidate_ms);
      if (c.reference_ms) cj["reference_ms"] = TimingJson(*c.reference_ms);
      if (c.speedup) cj["speedup"] = *c.speedup;
      if (c.speedup_spread) cj["speedup_spread"] = {c.speedup_spread->first, c.speedup_spread->second};
      if (!c.timing_method.empty()) cj["timing_method"] = c.timing_method;
      if (c.reference_is_baseline) cj["reference_is"] = "baseline";
      if (!c.autotune_keys.empty()) cj["autotune_keys"] = c.autotune_keys;
      if (!c.error.empty()) cj["error"] = c.error;
      cs.push_back(cj);
    }
    j["cases"] = cs;
  }
  if (!j.contains("kernels")) j["kernels"] = json::array();
  if (!j.contains("aten_ops")) j["aten_ops"] = aten_ops;
  j["runtime_checks"] = runtime_checks;
  j["clocks"] = clocks;
  j["versions"] = versions;
  j["device"] = device;
  j["elapsed_s"] = elapsed_s;
  j["stderr_tail"] = stderr_tail;
  j["from_cache"] = from_cache;
  return j;
}

std::optional<double> EvalResult::GeomeanSpeedup() const {
  double log_sum = 0;
  int n = 0;
  for (const auto& c : cases) {
    if (!c.speedup) continue;
    if (*c.speedup <= 0) return std::nullopt;
    log_sum += std::log(*c.speedup);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return std::exp(log_sum / n);
}

namespace {

std::string TimingText(const Timing& t) {
  auto Ms = [](double ms) { return FormatDuration(ms, TimeUnit::kMilliseconds); };
  double spread = t.median > 0 ? (t.p80 - t.p20) / t.median * 100 : NAN;
  return fmt::format("{} (min {}, max {}, p20-p80 spread {:.1f}%, n={})", Ms(t.median), Ms(t.min), Ms(t.max), spread,
                     t.n);
}

// "file:line:col: " ("file:line: " when the column is unknown, as for runtime exceptions), or "".
std::string Where(const Reason& x) {
  if (x.line <= 0) return "";
  return x.column > 0 ? fmt::format("{}:{}:{}: ", x.file, x.line, x.column) : fmt::format("{}:{}: ", x.file, x.line);
}

}  // namespace

std::string FormatSummary(const EvalResult& r, const EvalRequest* req) {
  std::string out;
  out += fmt::format("verdict: {}{}\n", VerdictName(r.verdict), r.from_cache ? "  (from cache)" : "");
  if (req) {
    out += fmt::format("task: {} ({})  mode: {}  policy: {}\n", req->task.name, task::FormatName(req->task.format),
                       ModeName(req->mode), PolicyName(req->policy));
  }
  if (!r.message.empty() && r.verdict != Verdict::kOk) out += fmt::format("message: {}\n", r.message);
  for (const auto& x : r.reasons) {
    out += fmt::format("  reason: {}{}: {}\n", Where(x), x.code, x.message);
  }
  for (const auto& x : r.warnings) {
    out += fmt::format("  warning: {}{}: {}\n", Where(x), x.code, x.message);
  }
  for (const auto& c : r.cases) {
    std::string err;
    if (c.max_abs_err) err += fmt::format("  max abs err {:.3g}", *c.max_abs_err);
    if (c.rel_l2_err) err += fmt::format("  rel L2 err {:.3g}", *c.rel_l2_err);
    std::string shapes = c.shapes.empty() ? "" : "  shapes " + c.shapes.dump();
    out += fmt::format("case {}: {}  trials {}{}{}\n", c.name.empty() ? "?" : c.name, c.passed ? "passed" : "FAILED",
                       c.trials, err, shapes);
    if (!c.error.empty()) out += fmt::format("    error: {}\n", c.error);
    if (c.candidate_ms) out += "    candidate: " + TimingText(*c.candidate_ms) + "\n";
    if (c.reference_ms)
      out += (c.reference_is_baseline ? "    baseline:  " : "    reference: ") + TimingText(*c.reference_ms) + "\n";
    if (c.speedup) {
      std::string spread =
          c.speedup_spread ? fmt::format(" [{:.3f}, {:.3f}]", c.speedup_spread->first, c.speedup_spread->second) : "";
      out += fmt::format("    speedup: {:.3f}x{}{}\n", *c.speedup, spread,
                         c.timing_method.empty() ? "" : "  (" + c.timing_method + ")");
    }
  }
  if (auto g = r.GeomeanSpeedup(); g && r.cases.size() > 1) out += fmt::format("speedup (geomean): {:.3f}x\n", *g);
  for (const auto& k : r.kernels) {
    auto o = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("?"); };
    std::string grid;
    for (size_t i = 0; i < k.grid.size(); ++i) grid += (i ? "," : "") + std::to_string(k.grid[i]);
    out +=
        fmt::format("kernel {}: launches {}  regs {}  spills {}  smem {} B  warps {}  stages {}  grid ({})", k.name,
                    k.launches, o(k.n_regs), o(k.n_spills), o(k.shared_bytes), o(k.num_warps), o(k.num_stages), grid);
    if (!k.constexprs.empty()) out += "  " + k.constexprs.dump();
    out += "\n";
  }
  if (!r.aten_ops.empty()) {
    std::string ops;
    for (const auto& [k, v] : r.aten_ops) {
      if (v > 0) ops += fmt::format("{}{}={}", ops.empty() ? "" : " ", k, v);
    }
    if (!ops.empty()) out += "aten ops: " + ops + "\n";
  }
  if (!r.runtime_checks.empty()) out += "runtime checks: " + r.runtime_checks.dump() + "\n";
  if (!r.clocks.empty()) {
    auto b = r.clocks.find("sm_mhz_before"), a = r.clocks.find("sm_mhz_after");
    if (b != r.clocks.end() && a != r.clocks.end() && b->is_number() && a->is_number()) {
      double before = b->get<double>(), after = a->get<double>();
      out += fmt::format("clocks: SM {} -> {} MHz{}\n", before, after,
                         std::abs(before - after) > 0.02 * std::max(before, 1.0) ? "  (WARNING: clock moved)" : "");
    } else {
      out += "clocks: " + r.clocks.dump() + "\n";
    }
  }
  std::string dev;
  if (r.device.contains("name")) dev += r.device["name"].get<std::string>();
  if (r.device.contains("uuid") && r.device["uuid"].is_string()) dev += " " + r.device["uuid"].get<std::string>();
  if (!dev.empty()) out += "device: " + dev + "\n";
  if (!r.versions.empty()) {
    std::string v;
    for (const auto& [k, x] : r.versions.items()) {
      v += fmt::format("{}{} {}", v.empty() ? "" : ", ", k, x.is_string() ? x.get<std::string>() : x.dump());
    }
    out += "versions: " + v + "\n";
  }
  if (r.elapsed_s > 0) out += fmt::format("elapsed: {:.2f} s\n", r.elapsed_s);
  if (r.verdict != Verdict::kOk && !r.stderr_tail.empty()) {
    std::string tail = r.stderr_tail;
    if (tail.size() > 2000) tail = "..." + tail.substr(tail.size() - 2000);
    out += "stderr tail:\n" + tail + (tail.back() == '\n' ? "" : "\n");
  }
  return out;
}

Result<HelloInfo> HelloInfo::FromResponse(const json& j) {
  if (!j.is_object()) return InvalidArgument("hello response is not a JSON object");
  if (!j.value("ok", false)) {
    return InvalidArgument(fmt::format("worker refused hello: {}", j.value("error", std::string("(no message)"))));
  }
  HelloInfo h;
  h.raw = j;
  h.protocol = static_cast<int>(JsonInt(j, "protocol").value_or(0));
  h.interpreter = j.value("interpreter", false);
  h.isolation = JsonString(j, "isolation");
  h.versions = JsonObject(j, "versions");
  if (auto it = j.find("devices"); it != j.end() && it->is_array()) {
    for (const auto& d : *it) {
      if (!d.is_object()) continue;
      DeviceInfo di;
      di.index = static_cast<int>(JsonInt(d, "index").value_or(static_cast<int64_t>(h.devices.size())));
      di.name = JsonString(d, "name");
      di.uuid = JsonString(d, "uuid");
      di.raw = d;
      h.devices.push_back(std::move(di));
    }
  }
  return h;
}

std::string HelloInfo::DeviceUuid(int index) const {
  for (const auto& d : devices) {
    if (d.index == index && !d.uuid.empty()) return d.uuid;
  }
  if (interpreter || devices.empty()) return "cpu-interpreter";
  return "unknown";
}

}  // namespace kiln::exec

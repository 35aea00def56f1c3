#include "app/ci.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "common/file.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"
#include "search/loop.h"

namespace kiln::app {

using search::SteadySeconds;

namespace {

exec::EvalRequest Req(const CiTask& t, const CiOptions& o, uint64_t seed, const nlohmann::json& timing) {
  exec::EvalRequest r;
  r.task = t.spec;
  r.candidate_source = t.source;
  r.mode = exec::Mode::kTime;
  r.policy = exec::Policy::kTrusted;
  r.seed = seed;
  r.trials = o.trials;
  r.timing = timing;
  r.timeout_s = o.timeout_s;
  return r;
}

// The GPU model: the device name without per-board suffixes is what matters; names are compared
// exactly (an H100 SXM and an H100 PCIe differ in clocks and bandwidth).
bool SameGpu(const std::string& a, const std::string& b) { return a == b; }

}  // namespace

nlohmann::json Baseline::ToJson() const {
  nlohmann::json ts = nlohmann::json::object();
  for (const auto& [name, t] : tasks) {
    nlohmann::json cs = nlohmann::json::object();
    for (const auto& [cn, c] : t.cases)
      cs[cn] = {{"median_ms", c.median_ms}, {"p20_ms", c.p20_ms}, {"p80_ms", c.p80_ms}};
    ts[name] = {{"hash", t.hash}, {"cases", cs}};
  }
  return {{"schema_version", 1},  {"kind", "kiln-ci-baseline"}, {"gpu_name", gpu_name}, {"gpu_uuid", gpu_uuid},
          {"versions", versions}, {"created_at", created_at},   {"tasks", ts}};
}

Result<Baseline> Baseline::FromJson(const nlohmann::json& j) {
  if (!j.is_object() || j.value("kind", "") != "kiln-ci-baseline")
    return InvalidArgument("not a kiln ci baseline (missing \"kind\": \"kiln-ci-baseline\")");
  if (j.value("schema_version", 0) != 1)
    return InvalidArgument(fmt::format("unsupported baseline schema_version {}", j.value("schema_version", 0)));
  Baseline b;
  try {
    b.gpu_name = j.value("gpu_name", "");
    b.gpu_uuid = j.value("gpu_uuid", "");
    b.versions = j.value("versions", nlohmann::json::object());
    b.created_at = j.value("created_at", "");
    for (const auto& [name, t] : j.at("tasks").items()) {
      BaselineTask bt;
      bt.hash = t.value("hash", "");
      for (const auto& [cn, c] : t.at("cases").items())
        bt.cases[cn] = {c.at("median_ms").get<double>(), c.value("p20_ms", 0.0), c.value("p80_ms", 0.0)};
      b.tasks[name] = bt;
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("malformed baseline: ") + e.what());
  }
  return b;
}

Result<Baseline> Baseline::Load(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  nlohmann::json j = ParseJson(*text);
  if (j.is_discarded()) return ParseError(path + ": not valid JSON");
  auto b = FromJson(j);
  if (!b.ok()) return InvalidArgument(path + ": " + b.status().message());
  return b;
}

Status Baseline::Save(const std::string& path) const { return WriteFile(path, DumpJson(ToJson(), 2) + "\n"); }

Result<CiReport> RunCi(const std::vector<CiTask>& tasks, search::Measurer& ev, const Baseline* baseline,
                       const CiOptions& o) {
  const double t0 = SteadySeconds();
  CiReport rep;
  auto hello = ev.Hello();
  if (!hello.ok()) return hello.status();
  if (hello->interpreter) return Unavailable("no CUDA GPU here: kiln ci measures times and needs one");
  if (!hello->devices.empty()) rep.gpu_name = hello->devices[0].name;
  rep.updated.gpu_name = rep.gpu_name;
  rep.updated.gpu_uuid = hello->devices.empty() ? "" : hello->devices[0].uuid;
  rep.updated.versions = hello->versions;
  rep.updated.created_at = NowIsoUtc();
  if (!baseline && !o.update_baseline)
    return InvalidArgument("no baseline to compare with; create one with --update-baseline");
  if (baseline) {
    rep.baseline_gpu = baseline->gpu_name;
    if (!SameGpu(baseline->gpu_name, rep.gpu_name)) {
      rep.gpu_mismatch = true;
      std::string m =
          fmt::format("the baseline was measured on '{}' but this GPU is '{}'", baseline->gpu_name, rep.gpu_name);
      if (!o.update_baseline && !o.allow_different_gpu) {
        rep.warnings.push_back(m +
                               ": refusing to compare (use --allow-different-gpu to compare anyway, or "
                               "--update-baseline to replace it)");
        rep.exit_code = 2;
        rep.wall_s = SteadySeconds() - t0;
        return rep;
      }
      rep.warnings.push_back(m + (o.update_baseline ? ": it will be replaced" : ": comparing anyway"));
    }
  }
  uint64_t seed = o.seed;
  for (const auto& t : tasks) {
    const double ts = SteadySeconds();
    // A machinery failure (the worker cannot start) stops the gate: it is no task's verdict. A task error
    // (the task's own code raised: exec/worker_runner) is that task's failed row; the others still run.
    auto evaluated = ev.Evaluate(Req(t, o, seed++, o.timing));
    if (!evaluated.ok() && evaluated.status().message().rfind("task error: ", 0) == 0) {
      CiRow row;
      row.task = t.spec.name;
      row.case_name = "*";
      row.status = "failed";
      row.message = "error: " + evaluated.status().message();
      row.time_s = SteadySeconds() - ts;
      rep.rows.push_back(row);
      ++rep.failures;
      continue;
    }
    KILN_ASSIGN_OR_RETURN(exec::EvalResult r, std::move(evaluated));
    const BaselineTask* bt = nullptr;
    if (baseline && !rep.gpu_mismatch) {
      auto it = baseline->tasks.find(t.spec.name);
      if (it != baseline->tasks.end()) bt = &it->second;
    } else if (baseline && o.allow_different_gpu) {
      auto it = baseline->tasks.find(t.spec.name);
      if (it != baseline->tasks.end()) bt = &it->second;
    }
    if (r.verdict != exec::Verdict::kOk) {
      CiRow row;
      row.task = t.spec.name;
      row.case_name = "*";
      row.status = "failed";
      row.message = std::string(exec::VerdictName(r.verdict)) + ": " + r.message;
      row.time_s = SteadySeconds() - ts;
      rep.rows.push_back(row);
      ++rep.failures;
      if (bt) rep.updated.tasks[t.spec.name] = *bt;  // keep the old numbers of a broken task
      continue;
    }
    BaselineTask nt;
    nt.hash = t.spec.hash;
    std::vector<CiRow> rows;
    bool flagged = false;
    for (const auto& cs : r.cases) {
      CiRow row;
      row.task = t.spec.name;
      row.case_name = cs.name;
      if (!cs.candidate_ms) {
        row.status = "failed";
        row.message = "no timing for this case";
        rows.push_back(row);
        continue;
      }
      row.new_ms = cs.candidate_ms->median;
      nt.cases[cs.name] = {cs.candidate_ms->median, cs.candidate_ms->p20, cs.candidate_ms->p80};
      if (o.update_baseline) {
        row.status = "recorded";
      } else if (!bt || !bt->cases.count(cs.name)) {
        row.status = "new";
        row.message = "not in the baseline";
      } else {
        row.baseline_ms = bt->cases.at(cs.name).median_ms;
        row.ratio = row.new_ms / row.baseline_ms;
        if (row.ratio > 1.0 + o.threshold_pct / 100.0) {
          row.status = "regression";
          flagged = true;
        } else if (row.ratio < 1.0 - o.threshold_pct / 100.0) {
          row.status = "improved";
        } else {
          row.status = "pass";
        }
      }
      rows.push_back(row);
    }
    if (bt && !o.update_baseline) {
      for (const auto& [cn, c] : bt->cases) {
        bool seen = false;
        for (const auto& row : rows) seen |= row.case_name == cn;
        if (!seen) {
          CiRow row;
          row.task = t.spec.name;
          row.case_name = cn;
          row.status = "missing";
          row.baseline_ms = c.median_ms;
          row.message = "in the baseline but not measured now";
          rows.push_back(row);
        }
      }
    }
    if (flagged && o.remeasure) {
      KILN_ASSIGN_OR_RETURN(exec::EvalResult r2, ev.Evaluate(Req(t, o, seed++ + 1000003, o.remeasure_timing)));
      for (auto& row : rows) {
        if (row.status != "regression") continue;
        const exec::CaseResult* c2 = nullptr;
        for (const auto& cs : r2.cases)
          if (cs.name == row.case_name) c2 = &cs;
        if (r2.verdict != exec::Verdict::kOk || !c2 || !c2->candidate_ms) {
          row.message = "re-measurement failed; regression kept";
          continue;
        }
        row.remeasured_ms = c2->candidate_ms->median;
        double best = std::min(row.new_ms, row.remeasured_ms);
        row.ratio = best / row.baseline_ms;
        if (row.ratio > 1.0 + o.threshold_pct / 100.0) {
          row.message = fmt::format("confirmed on re-measurement ({:.4f} ms)", row.remeasured_ms);
        } else {
          row.status = "pass";
          row.message = fmt::format("not confirmed on re-measurement ({:.4f} ms)", row.remeasured_ms);
        }
      }
    }
    const double dt = SteadySeconds() - ts;
    for (auto& row : rows) {
      row.time_s = dt / std::max<size_t>(1, rows.size());
      if (row.status == "regression") ++rep.regressions;
      if (row.status == "failed") ++rep.failures;
      rep.rows.push_back(row);
    }
    rep.updated.tasks[t.spec.name] = nt;
  }
  // Tasks in the baseline that were not asked for stay in an updated baseline.
  if (baseline && o.update_baseline && !rep.gpu_mismatch)
    for (const auto& [name, bt] : baseline->tasks)
      if (!rep.updated.tasks.count(name)) rep.updated.tasks[name] = bt;
  rep.exit_code = (rep.regressions > 0 || rep.failures > 0) ? 1 : 0;
  rep.wall_s = SteadySeconds() - t0;
  return rep;
}

std::string FormatCiTable(const CiReport& r) {
  std::string s;
  for (const auto& w : r.warnings) s += "warning: " + w + "\n";
  s += fmt::format("{:<32} {:<14} {:>12} {:>12} {:>8}  {:<10} {}\n", "task", "case", "baseline", "now", "ratio",
                   "status", "note");
  auto ms = [](double v) { return v > 0 ? fmt::format("{:.4f} ms", v) : std::string("-"); };
  for (const auto& row : r.rows)
    s += fmt::format("{:<32} {:<14} {:>12} {:>12} {:>8}  {:<10} {}\n", row.task, row.case_name, ms(row.baseline_ms),
                     ms(row.remeasured_ms > 0 ? std::min(row.new_ms, row.remeasured_ms) : row.new_ms),
                     row.ratio > 0 ? fmt::format("{:.3f}", row.ratio) : "-", row.status, row.message);
  s += fmt::format("{} rows, {} regressions, {} failures on {}\n", r.rows.size(), r.regressions, r.failures,
                   r.gpu_name.empty() ? "?" : r.gpu_name);
  return s;
}

std::string XmlEscape(const std::string& in) {
  std::string o;
  for (unsigned char ch : in) {
    switch (ch) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default:
        if (ch < 0x20 && ch != '\n' && ch != '\t' && ch != '\r')
          o += ' ';  // not allowed in XML 1.0
        else
          o += static_cast<char>(ch);
    }
  }
  return o;
}

std::string JUnitXml(const CiReport& r) {
  int failures = 0, skipped = 0;
  for (const auto& row : r.rows) {
    if (row.status == "regression" || row.status == "failed") ++failures;
    if (row.status == "new" || row.status == "missing") ++skipped;
  }
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format("<testsuites name=\"kiln ci\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                   r.rows.size(), failures, r.exit_code == 2 ? 1 : 0, r.wall_s);
  x += fmt::format(
      "  <testsuite name=\"kiln-ci\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
      r.rows.size(), failures, r.exit_code == 2 ? 1 : 0, skipped, r.wall_s);
  x += "    <properties>\n";
  x += "      <property name=\"gpu\" value=\"" + XmlEscape(r.gpu_name) + "\"/>\n";
  x += "      <property name=\"baseline_gpu\" value=\"" + XmlEscape(r.baseline_gpu) + "\"/>\n";
  x += "    </properties>\n";
  if (r.exit_code == 2) {
    std::string m = r.warnings.empty() ? "refused" : r.warnings.front();
    x += "    <testcase classname=\"kiln.ci\" name=\"baseline\" time=\"0\">\n";
    x += "      <error message=\"" + XmlEscape(m) + "\"/>\n    </testcase>\n";
  }
  for (const auto& row : r.rows) {
    x += fmt::format("    <testcase classname=\"kiln.ci.{}\" name=\"{}\" time=\"{:.3f}\">\n", XmlEscape(row.task),
                     XmlEscape(row.case_name), row.time_s);
    std::string detail = fmt::format("baseline {:.6f} ms, now {:.6f} ms, re-measured {:.6f} ms, ratio {:.4f}. {}",
                                     row.baseline_ms, row.new_ms, row.remeasured_ms, row.ratio, row.message);
    if (row.status == "regression")
      x += "      <failure type=\"regression\" message=\"" +
           XmlEscape(fmt::format("{:.1f}% slower than the baseline", 100 * (row.ratio - 1))) + "\">" +
           XmlEscape(detail) + "</failure>\n";
    else if (row.status == "failed")
      x += "      <failure type=\"failed\" message=\"" + XmlEscape(row.message) + "\">" + XmlEscape(detail) +
           "</failure>\n";
    else if (row.status == "new" || row.status == "missing")
      x += "      <skipped message=\"" + XmlEscape(row.message) + "\"/>\n";
    else
      x += "      <system-out>" + XmlEscape(row.status + ": " + detail) + "</system-out>\n";
    x += "    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

}  // namespace kiln::app

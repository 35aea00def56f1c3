#include "bench/report.h"

#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "common/file.h"

namespace kiln::bench {

using nlohmann::json;

std::string NumberKey(double p) { return fmt::format("{}", p); }

void Compute(Report* r) {
  std::set<std::string> names;
  for (const auto& s : r->samples) names.insert(s.task);
  r->tasks.clear();
  for (const auto& n : names) r->tasks.push_back(TaskOf(n, r->samples));
  r->metrics = Summarize(r->tasks, r->samples, r->ks, r->ps);
  r->tasks_vs_compile.clear();
  if (r->compile_source.empty()) return;
  std::vector<SampleOutcome> vs = r->samples;  // the same outcomes, timed against torch.compile
  for (auto& s : vs) s.speedup = s.speedup_compile;
  for (const auto& n : names) r->tasks_vs_compile.push_back(TaskOf(n, vs));
  r->vs_compile = Summarize(r->tasks_vs_compile, vs, r->ks, r->ps);
}

namespace {

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json Counts(const std::map<Outcome, int>& m) {
  json j = json::object();
  for (Outcome o :
       {Outcome::kCorrect, Outcome::kWrong, Outcome::kHacked, Outcome::kFailed, Outcome::kNoCode, Outcome::kError}) {
    auto it = m.find(o);
    j[OutcomeName(o)] = it == m.end() ? 0 : it->second;
  }
  return j;
}

std::string Pct(double v) { return fmt::format("{:.1f}", 100 * v); }
std::string Pct(const std::optional<double>& v) { return v ? Pct(*v) : "n/a"; }
std::string X(const std::optional<double>& v) { return v ? fmt::format("{:.2f}x", *v) : "n/a"; }

std::string SpeedupDefinition(const Channel& c) {
  if (c.benchmark == Benchmark::kTritonBenchG)
    return "sum of gold Triton ms / sum of candidate ms over the perf harness's input sizes";
  if (c.benchmark == Benchmark::kTritonBenchT)
    return "sum of torch reference ms / sum of candidate ms over the perf harness's input sizes";
  return "torch eager reference ms / candidate ms";
}

std::string LegacyNote(const Report& r) {
  const ChannelMetrics& m = r.metrics;
  if (!r.channel.IsTritonBench())
    return "TritonBench's stdout comparison: not defined for this benchmark (docs/bench.md)";
  if (!m.legacy_exec_acc) return "TritonBench's stdout comparison: no sample went through it (docs/bench.md)";
  return fmt::format(
      "TritonBench's stdout comparison (EVAL 1_exe_acc.py): the candidate's file runs and prints exactly what "
      "the gold file prints; {} of {} samples went through it, the others count as failing it (docs/bench.md)",
      m.legacy_run, m.samples);
}

json VsCompileJson(const Report& r) {
  if (r.compile_source.empty()) return nullptr;
  const ChannelMetrics& m = r.vs_compile;
  json fast = json::object(), curve = json::array();
  for (double p : r.ps) fast[NumberKey(p)] = m.fast_p.count(p) ? json(m.fast_p.at(p)) : json(nullptr);
  if (m.timed)
    for (auto [p, v] : FastCurve(r.tasks_vs_compile, 3.0, 60)) curve.push_back({p, v});
  return {{"source", r.compile_source},
          {"tasks_with_baseline", r.compile_tasks},
          {"geomean_speedup", Opt(m.geomean_speedup)},
          {"tasks_with_speedup", m.tasks_with_speedup},
          {"fast_p", fast},
          {"fast_curve", curve},
          {"note", r.compile_note}};
}

}  // namespace

json SummaryJson(const Report& r) {
  const ChannelMetrics& m = r.metrics;
  json fast = json::object(), pass = json::object(), curve = json::array();
  for (double p : r.ps) fast[NumberKey(p)] = m.fast_p.count(p) ? json(m.fast_p.at(p)) : json(nullptr);
  for (int k : r.ks) pass[std::to_string(k)] = {{"value", Opt(m.pass_at_k.at(k))}, {"tasks", m.pass_at_k_tasks.at(k)}};
  if (m.timed)
    for (auto [p, v] : FastCurve(r.tasks, 3.0, 60)) curve.push_back({p, v});
  json j = {{"schema_version", kSummarySchemaVersion},
            {"channel", r.channel.Name()},
            {"label", r.label},
            {"gold", r.gold},
            {"mode", r.mode},
            {"protocol", r.protocol},
            {"device", r.device},
            {"wall_s", Opt(r.wall_s)},
            {"tasks", m.tasks},
            {"samples", m.samples},
            {"call_acc", m.call_acc},
            {"exec_acc", m.exec_acc},
            {"legacy_exec_acc", Opt(m.legacy_exec_acc)},
            {"legacy_exec_acc_note", LegacyNote(r)},
            {"timed", m.timed},
            {"speedup_definition", SpeedupDefinition(r.channel)},
            {"geomean_speedup", Opt(m.geomean_speedup)},
            {"tasks_with_speedup", m.tasks_with_speedup},
            {"fast_p", fast},
            {"fast_curve", curve},
            {"vs_compile", VsCompileJson(r)},
            {"pass_at_k", pass},
            {"outcomes", Counts(m.outcomes)},
            {"verdicts", m.verdicts},
            {"reasons",
             {{"hacked", m.hacked_reasons},
              {"failed", m.failed_reasons},
              {"wrong", m.wrong_reasons},
              {"error", m.error_reasons}}}};
  return j;
}

std::string SummaryMarkdown(const Report& r) {
  const ChannelMetrics& m = r.metrics;
  std::string head = "| Model | Call | Exec | Speedup |", rule = "|---|---:|---:|---:|";
  std::string row =
      fmt::format("| {} | {} | {} | {} |", r.label, Pct(m.call_acc), Pct(m.exec_acc), X(m.geomean_speedup));
  for (double p : r.ps) {
    head += fmt::format(" fast_{} |", NumberKey(p));
    rule += "---:|";
    row += fmt::format(" {} |", m.fast_p.count(p) ? Pct(m.fast_p.at(p)) : "n/a");
  }
  for (int k : r.ks) {
    head += fmt::format(" pass@{} |", k);
    rule += "---:|";
    const int covered = m.pass_at_k_tasks.at(k);  // tasks with n >= k
    row += covered == m.tasks ? fmt::format(" {} |", Pct(m.pass_at_k.at(k)))
                              : fmt::format(" {} ({}/{} tasks) |", Pct(m.pass_at_k.at(k)), covered, m.tasks);
  }
  std::string out = fmt::format("## {}{}\n\n", r.channel.Name(), r.gold ? " (gold: the reference as the samples)" : "");
  out += fmt::format(
      "{} tasks, {} samples, mode {}, protocol {}, device {}, {}. Accuracies, fast_p and "
      "pass@k in %; speedup: geometric mean over the {} tasks with a correct timed sample ({}).\n\n",
      m.tasks, m.samples, r.mode, r.protocol, r.device, WallText(r), m.tasks_with_speedup,
      SpeedupDefinition(r.channel));
  out += head + "\n" + rule + "\n" + row + "\n";
  if (!r.compile_source.empty()) {  // the same samples, speedups over torch.compile
    const ChannelMetrics& v = r.vs_compile;
    std::string crow = fmt::format("| {} vs torch.compile | {} | {} | {} |", r.label, Pct(v.call_acc), Pct(v.exec_acc),
                                   X(v.geomean_speedup));
    for (double p : r.ps) crow += fmt::format(" {} |", v.fast_p.count(p) ? Pct(v.fast_p.at(p)) : "n/a");
    for (size_t i = 0; i < r.ks.size(); ++i) crow += " |";
    out += crow + "\n";
  }
  out += "\n";
  if (!r.compile_source.empty())
    out += fmt::format("torch.compile baseline ({}): {} of {} tasks have a time{}.\n\n", r.compile_source,
                       r.compile_tasks, m.tasks, r.compile_note.empty() ? "" : "; " + r.compile_note);
  json c = Counts(m.outcomes);
  out += "| correct | wrong | hacked | failed | no code | error |\n|---:|---:|---:|---:|---:|---:|\n";
  out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", c["correct"].get<int>(), c["wrong"].get<int>(),
                     c["hacked"].get<int>(), c["failed"].get<int>(), c["no_code"].get<int>(), c["error"].get<int>());
  auto reasons = [&](const char* what, const std::map<std::string, int>& by) {
    if (by.empty()) return;
    out += fmt::format("\n{}:", what);
    for (const auto& [code, n] : by) out += fmt::format(" {} {};", code, n);
    out.back() = '\n';
  };
  reasons("hacked (rejected) reasons", m.hacked_reasons);
  reasons("failed reasons", m.failed_reasons);
  reasons("wrong reasons", m.wrong_reasons);
  reasons("errors (kiln could not evaluate: task error or machinery failure)", m.error_reasons);
  if (m.legacy_exec_acc)
    out += fmt::format(
        "\nTritonBench's legacy stdout exec accuracy (its own check: the same stdout as the gold file): {}% "
        "({} of {} samples went through it; docs/bench.md).\n",
        Pct(m.legacy_exec_acc), m.legacy_run, m.samples);
  else
    out += fmt::format("\n{}.\n", LegacyNote(r));
  return out;
}

std::string WallText(const Report& r) {
  return r.wall_s ? fmt::format("wall {:.1f} s", *r.wall_s) : "wall n/a (report only)";
}

namespace {

json VsCompileOf(const Report& r, const std::string& task) {
  for (const auto& t : r.tasks_vs_compile)
    if (t.task == task) return Opt(t.speedup);
  return nullptr;
}

json TaskJson(const Report& r, const TaskMetrics& t) {
  json pass = json::object();
  for (int k : r.ks) pass[std::to_string(k)] = Opt(PassAtK(t.n, t.correct, k));
  json verdicts = json::object();
  for (const auto& s : r.samples)
    if (s.task == t.task) verdicts[s.sample] = s.verdict;
  return {{"task", t.task},
          {"samples", t.n},
          {"called", t.called},
          {"correct", t.correct},
          {"outcomes", Counts(t.outcomes)},
          {"call_rate", t.call_rate},
          {"exec_rate", t.exec_rate},
          {"legacy_passed", t.legacy_passed},
          {"legacy_run", t.legacy_run},
          {"speedup", Opt(t.speedup)},
          {"sample_speedups", t.sample_speedups},
          {"speedup_vs_compile", VsCompileOf(r, t.task)},
          {"pass_at_k", pass},
          {"verdicts", verdicts}};
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

}  // namespace

std::string TasksJsonl(const Report& r) {
  std::string out;
  for (const auto& t : r.tasks) out += TaskJson(r, t).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  return out;
}

std::string TasksCsv(const Report& r) {
  std::string out =
      "task,samples,called,correct,wrong,hacked,failed,no_code,error,call_rate,exec_rate,speedup,legacy_rate\n";
  for (const auto& t : r.tasks) {
    json c = Counts(t.outcomes);
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.4f},{:.4f},{},{}\n", CsvField(t.task), t.n, t.called,
                       t.correct, c["wrong"].get<int>(), c["hacked"].get<int>(), c["failed"].get<int>(),
                       c["no_code"].get<int>(), c["error"].get<int>(), t.call_rate, t.exec_rate,
                       t.speedup ? fmt::format("{:.4f}", *t.speedup) : "",
                       r.metrics.legacy_exec_acc ? fmt::format("{:.4f}", t.legacy_rate) : "");
  }
  return out;
}

Status WriteReports(const Report& r, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("{}: cannot create the report folder: {}", dir, ec.message()));
  const auto p = [&](const char* name) { return (std::filesystem::path(dir) / name).string(); };
  KILN_RETURN_IF_ERROR(WriteFile(p("summary.json"), SummaryJson(r).dump(2) + "\n"));
  KILN_RETURN_IF_ERROR(WriteFile(p("summary.md"), SummaryMarkdown(r)));
  KILN_RETURN_IF_ERROR(WriteFile(p("tasks.jsonl"), TasksJsonl(r)));
  KILN_RETURN_IF_ERROR(WriteFile(p("tasks.csv"), TasksCsv(r)));
  return WriteFile(p("report.html"), Html(r));
}

}  // namespace kiln::bench

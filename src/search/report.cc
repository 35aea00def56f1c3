#include "search/report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/strings.h"

namespace kiln::search {

namespace {

// Milliseconds as the optimize report writes them: microseconds under 0.1 ms, "-" when unknown.
std::string Ms(double v) {
  static constexpr DurationStyle kSearch{
      .us_below_ms = 0.1, .us_decimals = 2, .ms_decimals = 4, .unknown = "-", .positive_only = true};
  return FormatDuration(v, TimeUnit::kMilliseconds, kSearch);
}

std::string Pct(double f) { return f >= 0 ? fmt::format("{:.0f}%", 100 * f) : "-"; }

std::vector<const CandidateRecord*> Sorted(const OptimizeResult& r) {
  std::vector<const CandidateRecord*> v;
  for (const auto& c : r.candidates) v.push_back(&c);
  std::stable_sort(v.begin(), v.end(), [](auto* a, auto* b) {
    bool fa = std::isfinite(a->score_ms), fb = std::isfinite(b->score_ms);
    if (fa != fb) return fa;
    return fa && a->score_ms < b->score_ms;
  });
  return v;
}

void Findings(std::string* s, const char* title, const std::optional<ProfileSummary>& p) {
  if (!p) return;
  *s += fmt::format("{} ({}-bound, {} of roofline):\n", title, p->bound.empty() ? "?" : p->bound,
                    Pct(p->roofline_fraction));
  if (p->findings.empty()) *s += "  (no findings)\n";
  for (const auto& f : p->findings) {
    std::string mv;
    for (const auto& m : f.moves) mv += (mv.empty() ? "" : ", ") + m;
    *s += fmt::format("  [{}] {}{}\n", f.rule, f.message, mv.empty() ? "" : " -> " + mv);
  }
}

}  // namespace

std::string FormatReportText(const OptimizeResult& r, int max_rows) {
  std::string s;
  s += fmt::format("kiln optimize: {} (kernel {}) on {}\n", r.task, r.kernel.empty() ? "?" : r.kernel,
                   r.device.empty() ? "?" : r.device);
  s += fmt::format("strategy {}, mode {}{}, stop: {}, wall {:.1f} s\n", r.strategy, r.mode,
                   r.mode_note.empty() ? "" : " (" + r.mode_note + ")", r.stop_reason, r.wall_s);
  if (r.timings.contains("search")) {
    const auto& t = r.timings;
    s += fmt::format(
        "time: {:.1f} s before the search (startup {:.1f}, baseline {:.1f}, profile {:.1f}), search {:.1f} s "
        "(budget {:.0f} s, counted from the {}'s start), verification and after {:.1f} s\n",
        t.value("before_search", 0.0), t.value("startup", 0.0), t.value("baseline", 0.0), t.value("profile", 0.0),
        t.value("search", 0.0), t.value("budget", 0.0), t.value("budget_scope", "run") == "search" ? "search" : "run",
        t.value("verification", 0.0));
  }
  s += fmt::format("candidates: {} measured, {} compiled, {} pruned after compiling, {} pruned before, {} failed\n",
                   r.measured, r.compiled, r.pruned, r.pruned_static, r.failed);
  if (r.improved) {
    s += fmt::format("result: {:.3f}x faster (geometric mean over {} cases), verified on fresh inputs\n",
                     r.geomean_speedup, r.cases.size());
    const ProposalSearch* ps = r.proposal_search ? &*r.proposal_search : nullptr;
    if (r.best_is_proposal && ps && ps->improved)
      s += fmt::format(
          "  the winner is the rewrite proposed by {} (#{}, {:.3f}x over the original), then tuned by the search "
          "({}) over its own tunables ({:.3f}x over the rewrite)\n  from {} (the rewrite's values)\n  to   {}\n",
          ps->origin, ps->proposal_id, ps->proposal_speedup, ps->strategy, ps->speedup_over_proposal,
          ConfigKey(ps->from), ConfigKey(ps->to));
    else if (r.best_is_proposal)
      s += fmt::format("  the winner is a rewrite proposed by {} (a whole module, not a config of the original)\n",
                       r.best_origin);
    else
      s += fmt::format("  from {}\n  to   {}\n", ConfigKey(r.baseline_config), ConfigKey(r.best_config));
  } else {
    s += "result: original kept: " + r.kept_reason + "\n";
  }
  if (!r.cases.empty()) {
    s += fmt::format("  {:<24} {:>12} {:>12} {:>9} {:>17}\n", "case", "baseline", "best", "speedup", "spread");
    for (const auto& c : r.cases)
      s += fmt::format("  {:<24} {:>12} {:>12} {:>8.3f}x {:>8.3f}-{:<7.3f}{}\n", c.name, Ms(c.baseline_ms),
                       Ms(c.best_ms), c.speedup, c.spread_lo, c.spread_hi, c.passed ? "" : " FAILED");
  }
  if (r.proposal_search)
    s += fmt::format("search on {} proposal #{} ({}): {}\n", r.proposal_search->origin, r.proposal_search->proposal_id,
                     r.proposal_search->kernel.empty() ? "?" : "kernel " + r.proposal_search->kernel,
                     r.proposal_search->outcome);
  if (r.roofline_before >= 0 || r.roofline_after >= 0)
    s += fmt::format("roofline: {} before, {} after{}\n", Pct(r.roofline_before), Pct(r.roofline_after),
                     r.roofline_after_estimated ? " (estimated from the profiled case's speedup)" : "");
  Findings(&s, "findings before", r.profile_before);
  Findings(&s, "findings after", r.profile_after);
  auto v = Sorted(r);
  s += fmt::format("candidates tried (best first, {} of {}):\n", std::min<size_t>(v.size(), max_rows), v.size());
  int n = 0;
  for (auto* c : v) {
    if (n++ >= max_rows) break;
    const std::string what = c->proposal          ? "[" + c->origin + " proposal: a whole module]"
                             : c->on_proposal >= 0 ? fmt::format("{} (proposal #{}'s module)", ConfigKey(c->config),
                                                                 c->on_proposal)
                                                   : ConfigKey(c->config);
    s += fmt::format("  #{:<3} {:<14} {:>12}  {}{}{}\n", c->id, c->verdict, Ms(c->score_ms), what,
                     c->final_outcome.empty() ? "" : "  [" + c->final_outcome + "]",
                     (c->verdict != "ok" && !c->message.empty()) ? "  (" + c->message.substr(0, 80) + ")" : "");
  }
  for (const auto& note : r.notes) s += "note: " + note + "\n";
  return s;
}

std::string FormatReportHtml(const OptimizeResult& r) {
  auto e = [](std::string_view v) { return HtmlEscape(v); };
  std::string h = R"(<!doctype html><html><head><meta charset="utf-8"><title>kiln optimize: )" + e(r.task) +
                  R"(</title><style>body{font-family:system-ui,sans-serif;margin:2em;max-width:70em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
td:first-child,th:first-child{text-align:left}.ok{color:#070}.bad{color:#a00}.won{background:#e8ffe8}
code{background:#f4f4f4;padding:0 .2em}</style></head><body>)";
  h += "<h1>kiln optimize: " + e(r.task) + "</h1>";
  h += "<p>kernel <code>" + e(r.kernel) + "</code> on " + e(r.device) + "; strategy <b>" + e(r.strategy) +
       "</b>; mode " + e(r.mode) + (r.mode_note.empty() ? "" : " (" + e(r.mode_note) + ")") +
       "; stop: " + e(r.stop_reason) + fmt::format("; wall {:.1f} s</p>", r.wall_s);
  if (r.improved)
    h += fmt::format(
        "<p class=ok><b>{:.3f}x faster</b> (geometric mean), verified on fresh inputs.<br>from <code>{}</code><br>to "
        "<code>{}</code></p>",
        r.geomean_speedup, e(ConfigKey(r.baseline_config)), e(ConfigKey(r.best_config)));
  else
    h += "<p class=bad>Original kept: " + e(r.kept_reason) + "</p>";
  if (r.proposal_search)
    h += fmt::format("<p>Search on {} proposal #{}: {}</p>", e(r.proposal_search->origin),
                     r.proposal_search->proposal_id, e(r.proposal_search->outcome));
  h += "<h2>Per input "
       "case</h2><table><tr><th>case</th><th>baseline</th><th>best</th><th>speedup</th><th>spread</th><th>verified</"
       "th></tr>";
  for (const auto& c : r.cases)
    h += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}x</td><td>{:.3f}&ndash;{:.3f}</td><td>{}</td></tr>", e(c.name),
        Ms(c.baseline_ms), Ms(c.best_ms), c.speedup, c.spread_lo, c.spread_hi, c.passed ? "yes" : "no");
  h += "</table>";
  h += "<h2>Roofline</h2><p>before: " + Pct(r.roofline_before) + ", after: " + Pct(r.roofline_after) +
       (r.roofline_after_estimated ? " (estimated from the profiled case's speedup)" : "") + "</p>";
  for (auto [title, p] :
       {std::pair{"Findings before", &r.profile_before}, std::pair{"Findings after", &r.profile_after}}) {
    if (!*p) continue;
    h += std::string("<h2>") + title + "</h2><ul>";
    for (const auto& f : (*p)->findings) {
      std::string mv;
      for (const auto& m : f.moves) mv += (mv.empty() ? "" : ", ") + m;
      h += "<li><b>" + e(f.rule) + "</b>: " + e(f.message) + (mv.empty() ? "" : " &rarr; " + e(mv)) + "</li>";
    }
    h += "</ul>";
  }
  h += "<h2>Candidates</h2><table><tr><th>#</th><th>origin</th><th>config</th><th>verdict</th><th>score</th><th>rung "
       "1</th><th>outcome</th><th>message</th></tr>";
  for (auto* c : Sorted(r)) {
    h += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td><code>{}</code></td><td "
        "class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        c->final_outcome == "won" ? "won" : "", c->id, e(c->origin), e(ConfigKey(c->config)),
        c->verdict == "ok" ? "ok" : "bad", e(c->verdict), Ms(c->score_ms), Ms(c->rung1_ms), e(c->final_outcome),
        e(c->message.substr(0, 200)));
  }
  h += "</table>";
  if (!r.notes.empty()) {
    h += "<h2>Notes</h2><ul>";
    for (const auto& n : r.notes) h += "<li>" + e(n) + "</li>";
    h += "</ul>";
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace kiln::search

// kiln/bench: report.html: the summary table, three inline SVG plots (fast_p curve, speedup distribution,
// outcome breakdown) and the per-task table; no script, no external resource.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "bench/report.h"
#include "common/strings.h"

namespace kiln::bench {

namespace {

constexpr int kW = 520, kH = 220, kL = 48, kB = 30;  // plot size and margins

std::string Axes(const std::string& xlabel, const std::string& ylabel) {
  return fmt::format(
      "<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' stroke='#333'/><line x1='{0}' y1='10' x2='{0}' y2='{1}' "
      "stroke='#333'/><text x='{3}' y='{4}' font-size='11' text-anchor='middle'>{5}</text>"
      "<text x='12' y='{6}' font-size='11' transform='rotate(-90 12 {6})' text-anchor='middle'>{7}</text>",
      kL, kH - kB, kW - 10, (kW + kL) / 2, kH - 4, HtmlEscape(xlabel), (kH - kB) / 2, HtmlEscape(ylabel));
}

std::string Svg(const std::string& title, const std::string& body) {
  return fmt::format(
      "<figure><figcaption>{}</figcaption><svg xmlns='http://www.w3.org/2000/svg' width='{}' "
      "height='{}' role='img'>{}</svg></figure>\n",
      HtmlEscape(title), kW, kH, body);
}

std::string FastCurveSvg(const Report& r) {
  if (!r.metrics.timed) return "<p>fast_p curve: no timings (check mode or the interpreter).</p>\n";
  const double pmax = 3.0;
  auto pts = FastCurve(r.tasks, pmax, 60);
  const double pw = kW - 10 - kL, ph = kH - kB - 10;
  std::string poly;
  for (auto [p, v] : pts) poly += fmt::format("{:.1f},{:.1f} ", kL + pw * p / pmax, kH - kB - ph * v);
  std::string body = Axes("p (speedup threshold)", "fast_p");
  for (double p : {0.0, 1.0, 2.0, 3.0})
    body += fmt::format("<text x='{:.1f}' y='{}' font-size='10' text-anchor='middle'>{}</text>", kL + pw * p / pmax,
                        kH - kB + 12, p);
  body += fmt::format("<text x='{}' y='14' font-size='10' text-anchor='end'>1.0</text>", kL - 4);
  body += fmt::format("<polyline fill='none' stroke='#1f77b4' stroke-width='2' points='{}'/>", poly);
  return Svg("fast_p: share of tasks correct and strictly faster than p", body);
}

std::string SpeedupSvg(const Report& r) {
  std::vector<double> s;
  for (const auto& t : r.tasks)
    if (t.speedup) s.push_back(*t.speedup);
  if (s.empty()) return "<p>speedup distribution: no correct timed task.</p>\n";
  // log2 bins of width 0.5 from 2^-4 to 2^4 (clamped)
  const int nb = 16;
  std::vector<int> bins(nb, 0);
  for (double v : s) bins[std::clamp(static_cast<int>(std::floor((std::log2(v) + 4) * 2)), 0, nb - 1)]++;
  const int top = *std::max_element(bins.begin(), bins.end());
  const double bw = (kW - 10.0 - kL) / nb, ph = kH - kB - 10;
  std::string body = Axes("speedup (log2 bins; 1x in the middle)", "tasks");
  for (int i = 0; i < nb; ++i) {
    double h = ph * bins[i] / top;
    body += fmt::format(
        "<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' fill='{}'><title>{} task(s) in "
        "[{:.3g}x, {:.3g}x)</title></rect>",
        kL + i * bw + 1, kH - kB - h, bw - 2, h, i >= nb / 2 ? "#2ca02c" : "#d62728", bins[i], std::exp2(i / 2.0 - 4),
        std::exp2((i + 1) / 2.0 - 4));
  }
  for (int e : {-4, -2, 0, 2, 4})
    body += fmt::format("<text x='{:.1f}' y='{}' font-size='10' text-anchor='middle'>{:g}x</text>",
                        kL + (e + 4) * 2 * bw, kH - kB + 12, std::exp2(e));
  body += fmt::format("<text x='{}' y='14' font-size='10' text-anchor='end'>{}</text>", kL - 4, top);
  return Svg("speedup distribution over correct timed tasks", body);
}

std::string OutcomeSvg(const Report& r) {
  static const std::pair<Outcome, const char*> kColors[] = {
      {Outcome::kCorrect, "#2ca02c"}, {Outcome::kWrong, "#ff7f0e"},  {Outcome::kHacked, "#9467bd"},
      {Outcome::kFailed, "#d62728"},  {Outcome::kNoCode, "#7f7f7f"}, {Outcome::kError, "#17becf"}};
  const int total = std::max(1, r.metrics.samples);
  const double w = kW - 20.0;
  double x = 10;
  std::string body, legend;
  int row = 0;
  for (auto [o, color] : kColors) {
    auto it = r.metrics.outcomes.find(o);
    const int n = it == r.metrics.outcomes.end() ? 0 : it->second;
    const double bw = w * n / total;
    if (n)
      body += fmt::format("<rect x='{:.1f}' y='20' width='{:.1f}' height='40' fill='{}'><title>{}: {}</title></rect>",
                          x, bw, color, OutcomeName(o), n);
    x += bw;
    legend += fmt::format(
        "<rect x='{}' y='{}' width='12' height='12' fill='{}'/><text x='{}' y='{}' "
        "font-size='11'>{} {}</text>",
        10 + (row % 3) * 170, 80 + (row / 3) * 20, color, 28 + (row % 3) * 170, 90 + (row / 3) * 20, OutcomeName(o), n);
    ++row;
  }
  return Svg(fmt::format("outcomes of the {} samples ({})", r.metrics.samples, r.channel.Name()), body + legend);
}

std::string MarkdownTableToHtml(const std::string& md) {
  std::string out = "<table>";
  bool header = true;
  for (auto line : SplitLines(md)) {
    if (!StartsWith(line, "|")) continue;
    if (StartsWith(line, "|---")) continue;
    out += "<tr>";
    size_t pos = 1;
    while (pos < line.size()) {
      size_t end = line.find('|', pos);
      if (end == std::string_view::npos) break;
      out += fmt::format("<{0}>{1}</{0}>", header ? "th" : "td", HtmlEscape(Trim(line.substr(pos, end - pos))));
      pos = end + 1;
    }
    out += "</tr>";
    header = false;
  }
  return out + "</table>\n";
}

std::string TaskTable(const Report& r) {
  std::string out =
      "<table><tr><th>task</th><th>samples</th><th>correct</th><th>wrong</th><th>hacked</th>"
      "<th>failed</th><th>no code</th><th>error</th><th>speedup</th></tr>";
  for (const auto& t : r.tasks) {
    auto n = [&](Outcome o) { return t.outcomes.count(o) ? t.outcomes.at(o) : 0; };
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>",
        HtmlEscape(t.task), t.n, n(Outcome::kCorrect), n(Outcome::kWrong), n(Outcome::kHacked), n(Outcome::kFailed),
        n(Outcome::kNoCode), n(Outcome::kError), t.speedup ? fmt::format("{:.3f}x", *t.speedup) : "");
  }
  return out + "</table>\n";
}

}  // namespace

std::string Html(const Report& r) {
  const std::string md = SummaryMarkdown(r);
  std::string tables;  // the two tables of the summary, then its notes as a paragraph
  size_t second = md.find("| correct");
  tables += MarkdownTableToHtml(md.substr(0, second));
  tables += MarkdownTableToHtml(md.substr(second));
  std::string notes;
  const std::string rest = md.substr(second);  // SplitLines views into it
  for (auto line : SplitLines(rest))
    if (!StartsWith(line, "|") && !IsBlankLine(line)) notes += std::string(line) + "\n";
  return fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>kiln bench: {0}</title>"
      "<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;margin:1em 0}}"
      "td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}td:first-child{{text-align:left}}"
      "figure{{display:inline-block;margin:1em}}</style></head><body>\n"
      "<h1>kiln bench: {0}</h1>\n<p>{1}</p>\n{2}<pre>{3}</pre>\n{4}{5}{6}<h2>Tasks</h2>\n{7}</body></html>\n",
      HtmlEscape(r.channel.Name() + (r.gold ? " (gold)" : "") + " - " + r.label),
      HtmlEscape(fmt::format("{} tasks, {} samples, mode {}, protocol {}, device {}, {}", r.metrics.tasks,
                             r.metrics.samples, r.mode, r.protocol, r.device, WallText(r))),
      tables, HtmlEscape(notes), FastCurveSvg(r), SpeedupSvg(r), OutcomeSvg(r), TaskTable(r));
}

}  // namespace kiln::bench

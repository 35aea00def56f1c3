#include "diagnose/report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common/strings.h"
#include "profile/metrics.h"

namespace kiln::diagnose {

namespace m = profile::metric;
using nlohmann::json;

ProfileReport DiagnoseRun(profile::ProfileRun run, const Thresholds& t) {
  ProfileReport r;
  for (const auto& k : run.kernels) r.diagnoses.push_back(Diagnose(k, t));
  r.run = std::move(run);
  return r;
}

namespace {

// int8 tensor work counts integer operations, not floating-point ones.
const char* OpUnit(const std::string& dtype) { return dtype == "int8" ? "OP" : "FLOP"; }

std::string Opt(const std::optional<double>& v, const char* fmtstr) {
  return v ? fmt::format(fmt::runtime(fmtstr), *v) : "n/a";
}

// Kernel durations (seconds): "12.34 us", "1.234 ms", "n/a" when not measured.
std::string Dur(double s) {
  constexpr DurationStyle kStyle{.us_decimals = 2, .ms_decimals = 3, .unknown = "n/a", .positive_only = true};
  return FormatDuration(s, TimeUnit::kSeconds, kStyle);
}

std::string Bytes(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} KB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

std::string RoofLine(const profile::Roofline& rf) {
  if (rf.bound_by.empty()) return "no device peaks (run `kiln device`)";
  std::string above = rf.above_measured_roof
                          ? fmt::format(" (capped: {:.0f}% of the measured roof, which this kernel beats)",
                                        rf.fraction_of_roof_measured * 100)
                          : "";
  if (rf.main() && rf.bound_by == "compute") {
    const auto* m = rf.main();
    std::string roof =
        m->peak_source == "fp32_pipe"
            ? fmt::format("{} CUDA-core compute roof ({:.1f} TFLOP/s FP32 pipe)", m->dtype, m->peak_flops_per_s / 1e12)
            : fmt::format("{} compute roof", m->dtype);
    return fmt::format("{:.0f}% of the {}{}", rf.fraction_of_roof * 100, roof, above);
  }
  if (rf.main() && rf.main()->peak_flops_per_s > 0 && rf.main()->ai >= 0.25) {
    return fmt::format("{:.0f}% of the memory roof (AI {:.3g} FLOP/B, {}){}", rf.fraction_of_roof * 100, rf.main()->ai,
                       rf.main()->dtype, above);
  }
  return fmt::format("{:.0f}% of the memory roof{}", rf.fraction_of_roof * 100, above);
}

std::string FactsLine(const exec::KernelFacts& f) {
  std::vector<std::string> parts;
  if (f.n_regs) parts.push_back(fmt::format("{} regs", *f.n_regs));
  if (f.n_spills) parts.push_back(fmt::format("{} spills", *f.n_spills));
  if (f.shared_bytes) parts.push_back(fmt::format("{} B shared", *f.shared_bytes));
  if (f.num_warps) parts.push_back(fmt::format("{} warps", *f.num_warps));
  if (f.num_stages) parts.push_back(fmt::format("{} stages", *f.num_stages));
  if (f.fp32_dot_without_tensor_cores) parts.push_back("fp32 tl.dot (ieee)");
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

const char* kDtypeColors[][2] = {{"float32", "#1f77b4"},     {"tf32", "#17becf"},          {"bfloat16", "#d62728"},
                                 {"float16", "#ff7f0e"},     {"float8_e4m3fn", "#9467bd"}, {"float64", "#8c564b"},
                                 {"float16_cuda", "#e377c2"}};
std::string ColorFor(const std::string& dtype) {
  for (auto& c : kDtypeColors) {
    if (dtype == c[0]) return c[1];
  }
  if (dtype == "float32 pipe") return "#6baed6";
  return "#444";
}

}  // namespace

std::string FormatText(const ProfileReport& r) {
  const auto& run = r.run;
  std::string s = fmt::format("kiln profile: {}\n", run.source);
  if (run.device) {
    const auto& d = *run.device;
    s += fmt::format("device: {} ({} SMs); measured DRAM {:.2f} TB/s", d.info.name, d.info.sm_count,
                     d.peaks.dram_bytes_per_s / 1e12);
    for (const auto& [k, v] : d.peaks.matmul_flops_per_s) s += fmt::format(", {} {:.0f} T{}/s", k, v / 1e12, OpUnit(k));
    s += "\n";
  } else {
    s += "device: unknown (no peaks; roofline fractions unavailable; run `kiln device` or pass --device-file)\n";
  }
  if (!run.dropped_metrics.empty()) {
    s += "note: this ncu does not know:";
    for (const auto& mname : run.dropped_metrics) s += " " + mname;
    s += "\n";
  }
  if (!run.skipped_kernels.empty()) {
    std::map<std::string, int> n;
    for (const auto& name : run.skipped_kernels) ++n[profile::ShortKernelName(name)];
    s += fmt::format("skipped {} other kernel(s) of the call (not the candidate's own; --all-kernels keeps them):",
                     run.skipped_kernels.size());
    for (const auto& [name, c] : n) s += c > 1 ? fmt::format(" {} x{}", name, c) : " " + name;
    s += "\n";
  }
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    const auto& k = run.kernels[i];
    const auto& d = r.diagnoses[i];
    const auto& row = k.row;
    const auto& rf = k.roofline;
    s += fmt::format("\nkernel {} (launch {})  {:.1f}% of GPU time  {}  grid {} block {}\n",
                     profile::ShortKernelName(k.name()), row.id,
                     k.time_share * 100, Dur(rf.seconds), row.grid_size, row.block_size);
    s += fmt::format("  class: {}   roofline: {}\n", ClassName(d.cls), RoofLine(rf));
    s += fmt::format("  throughput: SM {}  memory {}  DRAM {}   occupancy: achieved {} / theoretical {}\n",
                     Opt(row.Get(m::kSmThroughput), "{:.1f}%"), Opt(row.Get(m::kMemThroughput), "{:.1f}%"),
                     Opt(row.Get(m::kDramThroughput), "{:.1f}%"), Opt(row.Get(m::kAchievedOccupancy), "{:.1f}%"),
                     Opt(row.Get(m::kTheoreticalOccupancy), "{:.1f}%"));
    s += fmt::format("  DRAM {} at {:.3f} TB/s", Bytes(rf.dram_bytes), rf.dram_bytes_per_s / 1e12);
    if (rf.peak_dram_bytes_per_s > 0) s += fmt::format(" ({:.0f}% of measured peak)", rf.memory_fraction * 100);
    s += "\n";
    for (const auto& dt : rf.dtypes) {
      s += fmt::format("  {} {}: {:.3g} {u} at {:.2f} T{u}/s, AI {:.3g} {u}/B", dt.dtype,
                       dt.tensor ? "tensor" : "cuda-core", dt.flops, dt.flops_per_s / 1e12, dt.ai,
                       fmt::arg("u", OpUnit(dt.dtype)));
      if (dt.peak_flops_per_s > 0) {
        s += fmt::format(", {:.0f}% of {}peak, {:.0f}% of attainable", dt.compute_fraction * 100,
                         dt.peak_source == "fp32_pipe" ? "FP32-pipe " : "", dt.fraction_of_roof * 100);
      }
      s += "\n";
    }
    if (k.facts && !FactsLine(*k.facts).empty()) s += "  facts: " + FactsLine(*k.facts) + "\n";
    s += "  findings:\n";
    for (const auto& f : d.findings) {
      std::string t = FormatFinding(f);
      s += "    " + t;
    }
    if (!d.gated.empty()) {
      s += "  suppressed by the class:";
      for (const auto& g : d.gated) s += " " + g;
      s += "\n";
    }
  }
  if (run.ncu_seconds > 0) s += fmt::format("\nncu: {:.1f} s; total {:.1f} s\n", run.ncu_seconds, run.wall_seconds);
  return s;
}

json ToJson(const ProfileReport& r) {
  const auto& run = r.run;
  json ks = json::array();
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    const auto& k = run.kernels[i];
    json metrics = json::object();
    for (const auto& [name, mv] : k.row.metrics) {
      json e{{"raw", mv.raw}, {"unit", mv.base_unit}};
      e["value"] = mv.value ? json(*mv.value) : json(nullptr);
      metrics[name] = e;
    }
    json kj{{"name", k.name()},
            {"launch_id", k.row.id},
            {"time_share", k.time_share},
            {"duration_s", k.roofline.seconds},
            {"grid", k.row.grid_size},
            {"block", k.row.block_size},
            {"roofline", profile::ToJson(k.roofline)},
            {"diagnosis", ToJson(r.diagnoses[i])},
            {"metrics", metrics}};
    if (k.facts) kj["facts"] = exec::ToJson(*k.facts);
    ks.push_back(kj);
  }
  json j{
      {"schema", "kiln.profile/1"}, {"source", run.source}, {"kernels", ks}, {"total_duration_s", run.total_seconds}};
  j["device"] = run.device ? profile::ToJson(*run.device) : json(nullptr);
  if (!run.skipped_kernels.empty()) j["skipped_kernels"] = run.skipped_kernels;
  if (!run.ncu_command.empty()) {
    j["ncu"] = {{"command", run.ncu_command}, {"seconds", run.ncu_seconds}, {"dropped_metrics", run.dropped_metrics}};
    j["wall_seconds"] = run.wall_seconds;
  }
  return j;
}

std::string RooflineSvg(const ProfileReport& r) {
  const auto& run = r.run;
  const double W = 800, H = 440, L = 70, R = 220, T = 20, B = 50;
  const double pw = W - L - R, ph = H - T - B;
  double bw = run.device ? run.device->peaks.dram_bytes_per_s : 0;
  std::map<std::string, double> peaks;
  if (run.device) peaks = run.device->peaks.matmul_flops_per_s;
  // The CUDA-core float32 roof is the FP32 pipe where that is above the measured matmul.
  for (const auto& k : run.kernels) {
    for (const auto& d : k.roofline.dtypes) {
      if (d.peak_source == "fp32_pipe" && d.dtype == "float32") {
        peaks["float32 pipe"] = std::max(peaks["float32 pipe"], d.peak_flops_per_s);
      }
    }
  }
  // Axis ranges: AI 1/64 .. 4096 FLOP/B; FLOP/s from 1e9 up to 2x the highest peak.
  double xmin = 1.0 / 64, xmax = 4096;
  double ymax = 1e12;
  for (auto& [k, v] : peaks) ymax = std::max(ymax, v);
  for (const auto& k : run.kernels) {
    for (const auto& d : k.roofline.dtypes) {
      ymax = std::max(ymax, d.flops_per_s);
      if (d.ai > 0) {
        xmin = std::min(xmin, d.ai / 2);
        xmax = std::max(xmax, d.ai * 2);
      }
    }
  }
  ymax = std::pow(10, std::ceil(std::log10(ymax * 1.5)));
  double ymin = ymax / 1e5;
  auto X = [&](double ai) {
    return L + pw * (std::log10(ai) - std::log10(xmin)) / (std::log10(xmax) - std::log10(xmin));
  };
  auto Y = [&](double f) {
    f = std::max(f, ymin);
    return T + ph * (1 - (std::log10(f) - std::log10(ymin)) / (std::log10(ymax) - std::log10(ymin)));
  };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" "
      "role=\"img\" aria-label=\"roofline chart\" font-family=\"sans-serif\" font-size=\"11\">\n",
      W, H);
  s +=
      fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fff\" stroke=\"#888\"/>\n", L, T, pw, ph);
  // Grid and ticks: decades.
  for (int e = static_cast<int>(std::floor(std::log10(xmin))); e <= static_cast<int>(std::ceil(std::log10(xmax)));
       ++e) {
    double v = std::pow(10, e);
    if (v < xmin || v > xmax) continue;
    double x = X(v);
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x, T, T + ph, T + ph + 14, e >= 0 && e <= 3 ? fmt::format("{:g}", v) : fmt::format("1e{}", e));
  }
  for (int e = static_cast<int>(std::ceil(std::log10(ymin))); e <= static_cast<int>(std::floor(std::log10(ymax)));
       ++e) {
    double v = std::pow(10, e);
    double y = Y(v);
    std::string label = v >= 1e15   ? fmt::format("{:g} P", v / 1e15)
                        : v >= 1e12 ? fmt::format("{:g} T", v / 1e12)
                                    : fmt::format("{:g} G", v / 1e9);
    s += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        L, y, L + pw, L - 6, y + 4, label);
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (FLOP per DRAM byte, log)</text>\n",
      L + pw / 2, H - 12);
  s += fmt::format(
      "<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">FLOP/s (log)</text>\n",
      T + ph / 2);
  // Roofs: one per dtype with a measured peak: min(peak, AI * bw).
  double ly = T + 10;
  if (bw > 0) {
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#333\">DRAM {:.2f} TB/s</text>\n", L + pw + 8, ly, bw / 1e12);
    ly += 16;
    std::vector<std::pair<std::string, double>> sorted(peaks.begin(), peaks.end());
    std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.second > b.second; });
    for (const auto& [dt, pk] : sorted) {
      double ridge = pk / bw;
      double x0 = xmin, x1 = std::min(std::max(ridge, xmin), xmax);
      std::string col = ColorFor(dt);
      s += fmt::format(
          "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} "
          "{:.1f},{:.1f}\"/>\n",
          col, X(x0), Y(x0 * bw), X(x1), Y(std::min(pk, x1 * bw)), X(xmax), Y(pk));
      s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"{}\">{} {:.0f} T{}/s</text>\n", L + pw + 8, ly, col, dt,
                       pk / 1e12, OpUnit(dt));
      ly += 16;
    }
  } else {
    s += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#a00\">no device peaks: roofs unknown</text>\n", L + 10, T + 20);
  }
  // Kernel points (numbered; the legend names them).
  ly += 8;
  for (size_t i = 0; i < run.kernels.size() && i < 12; ++i) {
    std::string n = run.kernels[i].name();
    if (n.size() > 26) n = n.substr(0, 25) + "~";
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#000\">{}: {}</text>\n", L + pw + 8, ly, i + 1, HtmlEscape(n));
    ly += 16;
  }
  int idx = 0;
  for (const auto& k : run.kernels) {
    ++idx;
    for (const auto& d : k.roofline.dtypes) {
      if (d.ai <= 0 || d.flops_per_s <= 0) continue;
      double x = X(d.ai), y = Y(d.flops_per_s);
      s += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" fill=\"{}\" stroke=\"#000\"><title>{} ({}): AI {:.3g} FLOP/B, "
          "{:.2f} TFLOP/s</title></circle>"
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"bold\">{}</text>\n",
          x, y, ColorFor(d.dtype), HtmlEscape(k.name()), d.dtype, d.ai, d.flops_per_s / 1e12, x + 8, y - 8, idx);
    }
    if (k.roofline.dtypes.empty() && bw > 0 && k.roofline.dram_bytes_per_s > 0) {
      // No FLOPs: show achieved bandwidth as a mark on the left edge of the memory roof.
      double y = Y(xmin * k.roofline.dram_bytes_per_s);
      s += fmt::format(
          "<path d=\"M{:.1f},{:.1f} l10,-6 l0,12 z\" fill=\"#555\"><title>{}: no FLOPs; DRAM {:.2f} TB/s</title></path>"
          "<text x=\"{:.1f}\" y=\"{:.1f}\" font-weight=\"bold\">{} ({:.0f}% BW)</text>\n",
          L + 1, y, HtmlEscape(k.name()), k.roofline.dram_bytes_per_s / 1e12, L + 14, y + 4, idx,
          k.roofline.memory_fraction * 100);
    }
  }
  s += "</svg>\n";
  return s;
}

std::string RenderHtml(const ProfileReport& r) {
  const auto& run = r.run;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<title>kiln profile: " + HtmlEscape(run.source) + "</title>\n";
  h += R"(<style>
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px;color:#222;line-height:1.4}
h1{font-size:22px;margin-bottom:4px} h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
.sub{color:#666;font-size:13px} .cls{display:inline-block;padding:2px 8px;border-radius:10px;color:#fff;font-size:13px;font-weight:600}
.at_roofline{background:#2e7d32}.memory_bound{background:#1565c0}.compute_bound{background:#6a1b9a}.balanced{background:#00838f}
.latency_bound{background:#ef6c00}.small_grid{background:#c62828}.unknown{background:#757575}
.gauge{display:flex;align-items:center;margin:3px 0;font-size:13px}.gauge .lbl{width:230px}
.bar{flex:0 0 300px;height:12px;background:#eee;border-radius:6px;overflow:hidden;margin-right:8px}.bar span{display:block;height:100%}
.finding{border-left:4px solid #999;padding:6px 10px;margin:8px 0;background:#fafafa}
.finding.major{border-color:#c62828}.finding.minor{border-color:#ef6c00}.finding.info{border-color:#2e7d32}
.finding .rule{font-family:monospace;font-weight:600}.moves span{display:inline-block;background:#e3f2fd;border-radius:4px;padding:0 6px;margin:2px 4px 0 0;font-family:monospace;font-size:12px}
table{border-collapse:collapse;font-size:12px;margin-top:6px} td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
td.num{text-align:right;font-family:monospace} th{background:#f3f3f3} .ev{font-size:12px;color:#444;font-family:monospace}
details summary{cursor:pointer;color:#1565c0} .gated{color:#777;font-size:12px}
</style></head><body>
)";
  h += "<h1>kiln profile</h1>\n<div class=\"sub\">" + HtmlEscape(run.source);
  if (run.device) {
    h += fmt::format(" &middot; {} ({} SMs) &middot; measured DRAM {:.2f} TB/s", HtmlEscape(run.device->info.name),
                     run.device->info.sm_count, run.device->peaks.dram_bytes_per_s / 1e12);
  } else {
    h += " &middot; no device peaks (roofline fractions unavailable)";
  }
  if (run.ncu_seconds > 0) h += fmt::format(" &middot; ncu {:.1f} s", run.ncu_seconds);
  h += "</div>\n";
  h += "<h2>Roofline</h2>\n" + RooflineSvg(r);
  if (run.kernels.size() > 1) {
    h += "<h2>Kernels by share of GPU "
         "time</h2>\n<table><tr><th>#</th><th>kernel</th><th>time</th><th>share</th><th>class</th></tr>\n";
    for (size_t i = 0; i < run.kernels.size(); ++i) {
      const auto& k = run.kernels[i];
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1f}%</td><td>{}</td></tr>\n", i + 1,
          HtmlEscape(k.name()), Dur(k.roofline.seconds), k.time_share * 100, ClassName(r.diagnoses[i].cls));
    }
    h += "</table>\n";
  }
  auto gauge = [](const std::string& label, double pct, const std::string& color) {
    double w = std::clamp(pct, 0.0, 100.0);
    return fmt::format(
        "<div class=\"gauge\"><div class=\"lbl\">{}</div><div class=\"bar\"><span "
        "style=\"width:{:.1f}%;background:{}\"></span></div>{:.1f}%</div>\n",
        label, w, color, pct);
  };
  for (size_t i = 0; i < run.kernels.size(); ++i) {
    const auto& k = run.kernels[i];
    const auto& d = r.diagnoses[i];
    const auto& rf = k.roofline;
    h += fmt::format("<h2>{}. {} <span class=\"cls {}\">{}</span></h2>\n", i + 1, HtmlEscape(k.name()),
                     ClassName(d.cls), ClassName(d.cls));
    h += fmt::format(
        "<div class=\"sub\">launch {} &middot; {} &middot; {:.1f}% of GPU time &middot; grid {} &middot; block "
        "{}{}</div>\n",
        k.row.id, Dur(rf.seconds), k.time_share * 100, HtmlEscape(k.row.grid_size), HtmlEscape(k.row.block_size),
        k.facts ? " &middot; " + HtmlEscape(FactsLine(*k.facts)) : "");
    if (auto v = k.row.Get(m::kSmThroughput)) h += gauge("SM throughput (SOL)", *v, "#6a1b9a");
    if (auto v = k.row.Get(m::kMemThroughput)) h += gauge("memory throughput (SOL)", *v, "#1565c0");
    if (rf.peak_dram_bytes_per_s > 0) h += gauge("DRAM of measured peak", rf.memory_fraction * 100, "#1976d2");
    for (const auto& dt : rf.dtypes) {
      if (dt.peak_flops_per_s > 0)
        h += gauge(dt.dtype + " FLOP/s of measured peak", dt.compute_fraction * 100, ColorFor(dt.dtype));
    }
    if (!rf.bound_by.empty()) h += gauge("fraction of the roofline", rf.fraction_of_roof * 100, "#2e7d32");
    if (auto v = k.row.Get(m::kAchievedOccupancy)) h += gauge("achieved occupancy", *v, "#ef6c00");
    if (auto v = k.row.Get(m::kTheoreticalOccupancy)) h += gauge("theoretical occupancy", *v, "#ffb74d");
    h += "<h3>Findings</h3>\n";
    for (const auto& f : d.findings) {
      h += fmt::format("<div class=\"finding {}\"><span class=\"rule\">{}</span> <small>[{}]</small><br>{}\n",
                       SeverityName(f.severity), HtmlEscape(f.rule), SeverityName(f.severity), HtmlEscape(f.message));
      for (const auto& e : f.evidence) {
        h += fmt::format("<div class=\"ev\">{} = {:.6g}{}{}</div>\n", HtmlEscape(e.metric), e.value,
                         e.unit.empty() ? "" : " " + HtmlEscape(e.unit),
                         e.threshold ? fmt::format(" ({} {:.6g})", HtmlEscape(e.op), *e.threshold) : "");
      }
      if (!f.moves.empty()) {
        h += "<div class=\"moves\">moves: ";
        for (auto mv : f.moves) h += std::string("<span>") + MoveName(mv) + "</span>";
        h += "</div>";
      }
      h += "</div>\n";
    }
    if (!d.gated.empty()) {
      h += "<div class=\"gated\">suppressed by the class (" + std::string(ClassName(d.cls)) + "):";
      for (const auto& g : d.gated) h += " " + HtmlEscape(g);
      h += "</div>\n";
    }
    h += "<details><summary>all metrics (" + std::to_string(k.row.metrics.size()) +
         ")</summary>\n<table><tr><th>metric</th><th>value</th><th>unit</th><th>as printed</th></tr>\n";
    for (const auto& [name, mv] : k.row.metrics) {
      h += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td></tr>\n",
                       HtmlEscape(name), mv.value ? fmt::format("{:.6g}", *mv.value) : "n/a", HtmlEscape(mv.base_unit),
                       HtmlEscape(mv.raw + (mv.unit.empty() ? "" : " " + mv.unit)));
    }
    h += "</table></details>\n";
  }
  if (!run.ncu_command.empty()) {
    h += "<h2>Command</h2><pre style=\"white-space:pre-wrap;font-size:11px\">" + HtmlEscape(run.ncu_command) +
         "</pre>\n";
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace kiln::diagnose

#include "profile/ncu_csv.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "common/strings.h"

namespace kiln::profile {

namespace {

// Fixed (non-metric) columns of the raw page.
const char* const kFixedColumns[] = {"ID",     "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                                     "Stream", "Block Size", "Grid Size",    "Device",    "CC"};

bool IsFixedColumn(std::string_view c) {
  for (const char* f : kFixedColumns) {
    if (c == f) return true;
  }
  return false;
}

// Prefix -> factor for SI and binary prefixes as ncu prints them (K, M, G, T, P; m, u, n, p;
// Ki, Mi, Gi, Ti). `base` is what follows the prefix.
struct Prefixed {
  double factor;
  std::string_view base;
};

Prefixed SplitPrefix(std::string_view u) {
  static const std::string_view kBases[] = {"byte",  "second",    "hz",     "Hz",      "inst",
                                            "cycle", "warp",      "sector", "request", "thread",
                                            "block", "wavefront", "op",     "flop",    "bit"};
  auto is_base = [&](std::string_view s) {
    for (auto b : kBases) {
      if (s == b) return true;
    }
    return false;
  };
  if (u.empty() || is_base(u)) return {1.0, u};
  struct P {
    std::string_view p;
    double f;
  };
  static const P kPrefixes[] = {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                                {"K", 1e3},     {"k", 1e3},        {"M", 1e6},           {"G", 1e9},
                                {"T", 1e12},    {"P", 1e15},       {"m", 1e-3},          {"u", 1e-6},
                                {"n", 1e-9},    {"p", 1e-12}};
  for (const auto& p : kPrefixes) {
    if (StartsWith(u, p.p) && is_base(u.substr(p.p.size()))) return {p.f, u.substr(p.p.size())};
  }
  // Short forms some ncu versions print: ns, us, ms, s, B, KB, MB, GB.
  if (u == "ns") return {1e-9, "second"};
  if (u == "us") return {1e-6, "second"};
  if (u == "ms") return {1e-3, "second"};
  if (u == "s") return {1.0, "second"};
  if (u == "B") return {1.0, "byte"};
  if (u == "KB") return {1e3, "byte"};
  if (u == "MB") return {1e6, "byte"};
  if (u == "GB") return {1e9, "byte"};
  if (u == "TB") return {1e12, "byte"};
  return {1.0, u};
}

std::string CanonicalBase(std::string_view b) {
  if (b == "Hz") return "hz";
  return std::string(b);
}

}  // namespace

std::optional<double> ParseNcuNumber(std::string_view text) {
  text = Trim(text);
  if (text.empty() || text == "n/a" || text == "N/A" || text == "nan") return std::nullopt;
  std::string clean;
  clean.reserve(text.size());
  for (char c : text) {
    if (c == ',') continue;  // thousands separator
    clean.push_back(c);
  }
  if (clean.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(clean.c_str(), &end);
  if (end == clean.c_str() || *end != '\0') return std::nullopt;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

UnitScale NormaliseUnit(std::string_view unit) {
  unit = Trim(unit);
  if (unit.empty()) return {1.0, ""};
  if (unit == "%") return {1.0, "%"};
  // "Gbyte/second", "inst/cycle", "cycle/nsecond" (a frequency).
  size_t slash = unit.find('/');
  if (slash == std::string_view::npos) {
    auto p = SplitPrefix(unit);
    return {p.factor, CanonicalBase(p.base)};
  }
  auto num = SplitPrefix(unit.substr(0, slash));
  auto den = SplitPrefix(unit.substr(slash + 1));
  if (num.base == "cycle" && den.base == "second") return {num.factor / den.factor, "hz"};
  return {num.factor / den.factor, CanonicalBase(num.base) + "/" + CanonicalBase(den.base)};
}

std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> cells;
  std::string cur;
  bool in_quotes = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur.push_back('"');
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        cur.push_back(c);
      }
    } else if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      cells.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur.push_back(c);
    }
  }
  cells.push_back(std::move(cur));
  return cells;
}

const MetricValue* NcuKernelRow::Find(std::string_view metric) const {
  auto it = metrics.find(std::string(metric));
  if (it != metrics.end()) return &it->second;
  std::string alt;
  if (StartsWith(metric, "smsp__")) {
    alt = "sm__" + std::string(metric.substr(6));
  } else if (StartsWith(metric, "sm__")) {
    alt = "smsp__" + std::string(metric.substr(4));
  } else {
    return nullptr;
  }
  it = metrics.find(alt);
  return it == metrics.end() ? nullptr : &it->second;
}

std::optional<double> NcuKernelRow::Get(std::string_view metric) const {
  const MetricValue* m = Find(metric);
  if (!m) return std::nullopt;
  return m->value;
}

double NcuKernelRow::GetOr(std::string_view metric, double fallback) const {
  auto v = Get(metric);
  return v ? *v : fallback;
}

Result<NcuReport> ParseNcuRawCsv(std::string_view text) {
  NcuReport report;
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  size_t header = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = Trim(lines[i]);
    if (StartsWith(l, "==")) {
      report.messages.emplace_back(l);
      continue;
    }
    if (StartsWith(l, "\"ID\",") && l.find("\"Kernel Name\"") != std::string_view::npos) {
      header = i;
      break;
    }
  }
  if (header == lines.size()) {
    return ParseError("no ncu raw-page CSV header (a row starting with \"ID\",...,\"Kernel Name\") in the output");
  }
  report.columns = SplitCsvLine(Trim(lines[header]));
  const auto& cols = report.columns;
  std::map<std::string, size_t> index;
  for (size_t c = 0; c < cols.size(); ++c) {
    index[cols[c]] = c;
    if (!IsFixedColumn(cols[c])) report.metric_names.push_back(cols[c]);
  }
  auto col = [&](const std::vector<std::string>& cells, const char* name) -> std::string {
    auto it = index.find(name);
    return it == index.end() || it->second >= cells.size() ? std::string() : cells[it->second];
  };
  std::vector<std::string> units(cols.size());
  bool have_units = false;
  for (size_t i = header + 1; i < lines.size(); ++i) {
    std::string_view l = Trim(lines[i]);
    if (l.empty()) continue;
    if (StartsWith(l, "==")) {
      report.messages.emplace_back(l);
      continue;
    }
    if (l.front() != '"') continue;  // the profiled program's own output
    auto cells = SplitCsvLine(l);
    if (cells.size() != cols.size()) {
      return ParseError(
          fmt::format("ncu CSV line {}: {} cells where the header has {}", i + 1, cells.size(), cols.size()));
    }
    if (!have_units && col(cells, "ID").empty()) {  // the units row
      units = cells;
      have_units = true;
      continue;
    }
    NcuKernelRow row;
    auto id = ParseNcuNumber(col(cells, "ID"));
    row.id = id ? static_cast<int>(*id) : -1;
    row.process_id = col(cells, "Process ID");
    row.process_name = col(cells, "Process Name");
    row.host = col(cells, "Host Name");
    row.name = col(cells, "Kernel Name");
    row.context = col(cells, "Context");
    row.stream = col(cells, "Stream");
    row.block_size = col(cells, "Block Size");
    row.grid_size = col(cells, "Grid Size");
    row.device = col(cells, "Device");
    row.cc = col(cells, "CC");
    for (size_t c = 0; c < cols.size(); ++c) {
      if (IsFixedColumn(cols[c])) continue;
      MetricValue mv;
      mv.raw = cells[c];
      mv.unit = units[c];
      UnitScale s = NormaliseUnit(mv.unit);
      mv.base_unit = s.base;
      if (auto v = ParseNcuNumber(mv.raw)) mv.value = *v * s.factor;
      row.metrics.emplace(cols[c], std::move(mv));
    }
    report.kernels.push_back(std::move(row));
  }
  return report;
}

}  // namespace kiln::profile

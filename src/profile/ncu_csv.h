// kiln/profile: parsing Nsight Compute's raw CSV page (`ncu --csv --page raw`).
//
// The raw page is one header row of column names (11 fixed columns: ID, Process ID, Process Name,
// Host Name, Kernel Name, Context, Stream, Block Size, Grid Size, Device, CC, then one column per
// metric), one units row (empty for the fixed columns), then one row per profiled kernel launch.
// Values are quoted, may carry thousands separators ("1,234,567.5"), and may be "n/a" or text.
// Lines that are not part of the table (==PROF== progress, ==WARNING==/==ERROR== messages, the
// profiled program's own stdout) are collected separately.
//
// Units are normalised on access: bytes (byte), seconds (second), percent (%), Hz (hz), and
// ratios of those (byte/second); SI prefixes (K, M, G, T, m, u, n) and binary ones (Ki, Mi, Gi)
// are folded in. Other units (inst, cycle, warp, sector, register/thread, ...) keep their name
// with the prefix folded into the value.
//
// Roadmap: typed access only; derived quantities (roofline, shares) live in roofline.h/profile.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln::profile {

// One metric cell.
struct MetricValue {
  std::string raw;              // as printed, without quotes
  std::string unit;             // as printed in the units row ("Mbyte", "usecond", "%", "")
  std::string base_unit;        // normalised unit ("byte", "second", "%", "hz", "byte/second", ...)
  std::optional<double> value;  // in base_unit; nullopt for "n/a", empty or non-numeric cells
};

// Parses one number as ncu prints it: "1,234.5", "4.0e-05", "-3"; nullopt for "n/a", "", text.
std::optional<double> ParseNcuNumber(std::string_view text);

// Scale factor and base unit of an ncu unit string: ("Mbyte") -> {1e6, "byte"},
// ("usecond") -> {1e-6, "second"}, ("Gbyte/second") -> {1e9, "byte/second"}, ("%") -> {1, "%"}.
struct UnitScale {
  double factor = 1.0;
  std::string base;
};
UnitScale NormaliseUnit(std::string_view unit);

// One profiled kernel launch (one row of the table).
struct NcuKernelRow {
  int id = -1;  // ncu's launch ID
  std::string process_id, process_name, host;
  std::string name;  // "Kernel Name"
  std::string context, stream, device, cc;
  std::string block_size;                      // "(128, 1, 1)"
  std::string grid_size;                       // "(1024, 1, 1)"
  std::map<std::string, MetricValue> metrics;  // by metric name

  // Value in base units. Looks the name up as given, then with the sm__/smsp__ prefix swapped
  // (ncu offers several instruction counters at both levels).
  std::optional<double> Get(std::string_view metric) const;
  double GetOr(std::string_view metric, double fallback) const;
  const MetricValue* Find(std::string_view metric) const;
};

struct NcuReport {
  std::vector<std::string> columns;       // header row as printed
  std::vector<std::string> metric_names;  // the metric columns, in order
  std::vector<NcuKernelRow> kernels;      // in launch order
  std::vector<std::string> messages;      // ==PROF==/==WARNING==/==ERROR== lines, in order
};

// Parses the text of a raw-page CSV (the whole stdout of ncu or a saved file). Errors: kParse when
// no header row is found or a row has the wrong number of cells. A header without kernel rows is
// a valid, empty report (the caller decides whether that is "kernel not found").
Result<NcuReport> ParseNcuRawCsv(std::string_view text);

// Splits one CSV line into cells (RFC 4180 quoting, "" escapes a quote).
std::vector<std::string> SplitCsvLine(std::string_view line);

}  // namespace kiln::profile

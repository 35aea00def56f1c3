#include "flags.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace kiln::cli {

void AddWorkerFlags(CLI::App* sub, app::WorkerFlags* f, int which) {
  if (which & kPython)
    sub->add_option("--python", f->python,
                    "Python with torch+triton for the worker (default: $KILN_PYTHON, else python3)");
  if (which & kInterpret)
    sub->add_flag("--interpret", f->interpret, "Force Triton's interpreter in the worker (CPU; no timings)");
  if (which & kReplay)
    sub->add_option("--replay", f->replay, "Answer from a transcript recorded on a GPU instead of running a worker");
  if (which & kRecord)
    sub->add_option("--record", f->record, "Append every worker exchange to this transcript (JSON lines)");
}

void AddTaskFlags(CLI::App* sub, app::TaskOptions* f, bool files, bool check_format) {
  if (files) {
    sub->add_option("--entry", f->entry, "Entry function (kiln format; overrides TritonBench's)");
    sub->add_option("--bench", f->bench, "Bench file (kiln format)");
  }
  auto* format = sub->add_option("--format", f->format, "Task format (default: detect)");
  if (check_format) format->check(CLI::IsMember({"auto", "kernelbench", "tritonbench_g", "tritonbench_t", "kiln"}));
}

void AddRecordsFlags(CLI::App* sub, app::RecordsOptions* f) {
  sub->add_option("--db", f->db,
                  "Records database (default $XDG_CACHE_HOME/kiln/kiln.db or ~/.cache/kiln/kiln.db; env KILN_DB)");
  sub->add_flag("--no-db", f->no_db, "Neither read nor write the records database");
}

CLI::Validator FiniteRange(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(s, &used);
        } catch (const std::exception&) {
          return fmt::format("{}: not a number", s);
        }
        if (used != s.size()) return fmt::format("{}: not a number", s);
        if (!std::isfinite(v) || v < lo || v > hi) return fmt::format("{}: expected a number from {} to {}", s, lo, hi);
        return "";
      },
      fmt::format("NUMBER in [{} - {}]", lo, hi));
}

int ExitForParseError(CLI::App& app, const CLI::ParseError& e) { return app.exit(e) == 0 ? 0 : kUsageExit; }

}  // namespace kiln::cli

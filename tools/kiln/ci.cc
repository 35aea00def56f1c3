// `kiln ci --baseline FILE [--update-baseline] [--threshold 5] [--junit FILE] TASKS...`: the
// performance-regression gate (src/search/ci.h). Exit: 0 pass, 1 regression/failure, 2 refused/error.
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "common/file.h"
#include "exec/runner.h"
#include "search/adapters.h"
#include "search/ci.h"
#include "task/task.h"

namespace kiln::cli {

namespace {

struct CiFlags {
  std::string baseline, junit, python, replay, format;
  std::vector<std::string> tasks;
  double threshold = 5;
  bool update = false, no_remeasure = false, allow_gpu = false, json = false;
};

Command RegisterCi(CLI::App& app) {
  auto* sub = app.add_subcommand("ci", "Performance-regression gate against a stored baseline (needs a GPU)");
  auto f = std::make_shared<CiFlags>();
  sub->add_option("tasks", f->tasks, "Task files")->required();
  sub->add_option("--baseline", f->baseline, "Baseline JSON file")->required();
  sub->add_flag("--update-baseline", f->update, "Measure and write the baseline instead of comparing");
  sub->add_option("--threshold", f->threshold, "Regression threshold in percent (default 5)");
  sub->add_option("--junit", f->junit, "Write JUnit XML here");
  sub->add_flag("--no-remeasure", f->no_remeasure, "Fail on the first measurement (no confirmation run)");
  sub->add_flag("--allow-different-gpu", f->allow_gpu, "Compare with a baseline from another GPU model (warn)");
  sub->add_option("--format", f->format, "Task format (auto-detected)");
  sub->add_option("--python", f->python, "Python with torch+triton (env KILN_PYTHON)");
  sub->add_option("--replay", f->replay, "Answer from a recorded transcript");
  sub->add_flag("--json", f->json, "Print the rows as JSON");
  return {sub, [f]() -> int {
            std::vector<search::CiTask> tasks;
            for (const auto& p : f->tasks) {
              task::LoadOptions lo;
              lo.format = f->format;
              auto spec = task::LoadTask(p, lo);
              if (!spec.ok()) {
                std::fprintf(stderr, "%s\n", spec.status().message().c_str());
                return 2;
              }
              tasks.push_back({*spec, std::nullopt});
            }
            std::optional<search::Baseline> base;
            if (std::filesystem::exists(f->baseline)) {
              auto b = search::Baseline::Load(f->baseline);
              if (!b.ok()) {
                std::fprintf(stderr, "kiln ci: error: %s\n", b.status().message().c_str());
                return 2;
              }
              base = *b;
            } else if (!f->update) {
              std::fprintf(stderr, "kiln ci: error: %s does not exist; create it with --update-baseline\n",
                           f->baseline.c_str());
              return 2;
            }
            std::unique_ptr<exec::Runner> runner;
            if (!f->replay.empty()) {
              auto rr = exec::ReplayRunner::Open(f->replay);
              if (!rr.ok()) {
                std::fprintf(stderr, "kiln ci: error: %s\n", rr.status().message().c_str());
                return 2;
              }
              runner = std::move(*rr);
            } else {
              exec::WorkerOptions wo;
              wo.python = f->python;
              wo.isolation = exec::Isolation::kFork;
              runner = std::make_unique<exec::WorkerRunner>(wo);
            }
            search::RunnerEvaluator ev(runner.get(), nullptr, false, nullptr, 0);
            search::CiOptions o;
            o.threshold_pct = f->threshold;
            o.remeasure = !f->no_remeasure;
            o.update_baseline = f->update;
            o.allow_different_gpu = f->allow_gpu;
            auto r = search::RunCi(tasks, ev, base ? &*base : nullptr, o);
            if (!r.ok()) {
              std::fprintf(stderr, "kiln ci: error: %s\n", r.status().message().c_str());
              return 2;
            }
            std::fputs(search::FormatCiTable(*r).c_str(), stdout);
            if (!f->junit.empty())
              if (auto s = WriteFile(f->junit, search::JUnitXml(*r)); !s.ok())
                std::fprintf(stderr, "kiln ci: %s\n", s.message().c_str());
            if (f->update && r->exit_code != 2) {
              if (auto s = r->updated.Save(f->baseline); !s.ok()) {
                std::fprintf(stderr, "kiln ci: error: %s\n", s.message().c_str());
                return 2;
              }
              std::printf("wrote baseline %s (%zu tasks, %s)\n", f->baseline.c_str(), r->updated.tasks.size(),
                          r->updated.gpu_name.c_str());
              return r->failures > 0 ? 1 : 0;
            }
            return r->exit_code;
          }};
}

Registrar reg(60, RegisterCi);

}  // namespace

}  // namespace kiln::cli

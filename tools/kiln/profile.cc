// `kiln profile`: hardware counters (Nsight Compute), roofline and diagnosis (docs/profile.md).
//
//   kiln profile --task T [--candidate C] [--case NAME] [--json] [--html FILE] [--ncu PATH]
//   kiln profile --script FILE.py [-- ARGS...]        (a script following the NVTX convention)
//   kiln profile --from-csv FILE [--device-file F] [--facts F] [--source F.py]   (no GPU needed)
//
// Exit codes: see src/app/profile_job.h (0 diagnosed, 1 profiling failed, 2 usage).
#include "app/profile_job.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

namespace {

void AddNcuFlags(CLI::App* sub, app::ProfileJobOptions* o) {
  sub->add_option("--ncu", o->ncu,
                  "Path to ncu (default: $KILN_NCU, PATH, /opt/nvidia/nsight-compute/*/ncu, /usr/local/cuda/bin/ncu)");
  AddWorkerFlags(sub, &o->worker, kPython);
  sub->add_option("--kernel", o->kernel, "Kernel name regex (ncu -k regex:...)");
  sub->add_option("--launch-skip", o->launch_skip, "Matching launches to skip");
  sub->add_option("--launch-count", o->launch_count, "Matching launches to profile (0: all)");
  sub->add_flag("--no-nvtx", o->no_nvtx, "Do not restrict profiling to the kiln_profile NVTX range");
  sub->add_flag("--all-kernels", o->all_kernels,
                "--task: report every kernel of the call (default: the candidate's or module's own Triton kernels)");
  sub->add_option("--timeout", o->timeout_s, "ncu timeout in seconds (KILN_NCU_TIMEOUT_S overrides)");
}

Command RegisterProfile(CLI::App& app) {
  auto* sub = app.add_subcommand("profile", "Hardware counters (ncu), roofline and diagnosis of a task's kernels");
  auto o = std::make_shared<app::ProfileJobOptions>();
  sub->add_option("--task", o->task, "Task file (KernelBench, TritonBench, kiln)");
  sub->add_option("--candidate", o->candidate, "Candidate source to profile instead of the task's own code");
  AddTaskFlags(sub, &o->task_options);
  sub->add_option("--case", o->case_name, "Case to profile (default: the first)");
  sub->add_option("--script", o->script, "Profile a Python script that follows the kiln_profile NVTX convention");
  sub->add_option("--script-arg", o->script_args, "Argument for --script (repeatable)");
  sub->add_option("--from-csv", o->from_csv, "Diagnose a recorded `ncu --csv --page raw` file (no GPU needed)");
  sub->add_option("--facts", o->facts, "Compile/static facts JSON ({\"kernels\": [...]}, e.g. a worker eval response)");
  sub->add_option("--source", o->source,
                  "Python source to analyse for static facts (default: candidate, script or task)");
  sub->add_option("--device-file", o->device_file, "Device record JSON (as `kiln device --json` prints) for the roofs");
  sub->add_flag("--no-device", o->no_device, "Do not characterize the device (no roofline fractions)");
  sub->add_option("--cache-dir", o->cache_dir, "Device record cache directory");
  sub->add_flag("--json", o->json, "Print JSON");
  sub->add_option("--html", o->html, "Write a self-contained HTML report");
  sub->add_option("--save-csv", o->save_csv, "Save the raw ncu CSV");
  AddNcuFlags(sub, o.get());
  sub->add_option("--metrics", o->metrics,
                  "Metrics to collect: 'roofline' (the roofline's only: one or two replay passes, for long kernels), "
                  "or a comma-separated list of ncu metrics beside the roofline's (default: every metric kiln reads)");
  sub->add_flag("--list-metrics", o->list_metrics, "Print the metric list and exit (with --metrics, that list)");
  return {sub, [o]() { return app::RunProfile(*o); }};
}

Registrar reg(45, RegisterProfile);

}  // namespace

}  // namespace kiln::cli

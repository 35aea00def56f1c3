// `kiln device [--refresh] [--json] [--python P] [--device N]`: the GPU's properties and its measured
// peaks, cached per GPU (src/app/device_job.h). Exit codes: 0 ok, 1 no GPU / measurement failed, 2 usage.
#include "app/device_job.h"
#include "commands.h"
#include "flags.h"

namespace kiln::cli {

namespace {

Command RegisterDevice(CLI::App& app) {
  auto* sub = app.add_subcommand("device", "GPU properties and measured peaks (cached per GPU)");
  auto o = std::make_shared<app::DeviceJobOptions>();
  sub->add_flag("--refresh", o->refresh, "Re-measure the peaks even when cached");
  sub->add_flag("--json", o->json, "Print JSON");
  AddWorkerFlags(sub, &o->worker, kPython);
  sub->add_option("--device", o->device, "CUDA device index");
  sub->add_option("--cache-dir", o->cache_dir,
                  "Where device records live (default: $KILN_CACHE_DIR/devices, ~/.cache/kiln/devices)");
  return {sub, [o]() { return app::RunDevice(*o); }};
}

Registrar reg(40, RegisterDevice);

}  // namespace

}  // namespace kiln::cli

// `kiln device [--refresh] [--json] [--python P] [--device N]`: the GPU's properties and its
// measured peaks (DRAM bandwidth, matmul FLOP/s per dtype), measured once per GPU and cached
// (docs/profile.md). Exit codes: 0 ok, 1 no GPU / measurement failed, 2 usage.
// Argument handling only; the work is in src/profile/device.h.
#include <cstdio>

#include "commands.h"
#include "exec/runner.h"
#include "profile/device.h"

namespace kiln::cli {

namespace {

struct DeviceFlags {
  bool refresh = false, json = false;
  std::string python, cache_dir;
  int device = 0;
};

Command RegisterDevice(CLI::App& app) {
  auto* sub = app.add_subcommand("device", "GPU properties and measured peaks (cached per GPU)");
  auto f = std::make_shared<DeviceFlags>();
  sub->add_flag("--refresh", f->refresh, "Re-measure the peaks even when cached");
  sub->add_flag("--json", f->json, "Print JSON");
  sub->add_option("--python", f->python, "Python with torch+triton (default: $KILN_PYTHON, python3)");
  sub->add_option("--device", f->device, "CUDA device index");
  sub->add_option("--cache-dir", f->cache_dir,
                  "Where device records live (default: $KILN_CACHE_DIR/devices, ~/.cache/kiln/devices)");
  return {sub, [f]() {
            exec::WorkerOptions wo;
            wo.python = f->python;
            wo.isolation = exec::Isolation::kShared;
            wo.device = f->device;
            exec::WorkerRunner runner(wo);
            profile::JsonDeviceStore store(f->cache_dir);
            profile::CharacterizeOptions co;
            co.device_index = f->device;
            co.refresh = f->refresh;
            auto rec = profile::CharacterizeDevice(runner, co, store);
            if (!rec.ok()) {
              std::fprintf(stderr, "kiln device: error: %s\n", rec.status().message().c_str());
              return 1;
            }
            if (f->json) {
              auto j = profile::ToJson(*rec);
              j["source"] = rec->source;
              j["path"] = store.PathFor(rec->info.uuid);
              std::printf("%s\n", j.dump(2).c_str());
            } else {
              std::fputs(profile::FormatDevice(*rec).c_str(), stdout);
              std::printf("record: %s\n", store.PathFor(rec->info.uuid).c_str());
            }
            return 0;
          }};
}

Registrar reg(40, RegisterDevice);

}  // namespace

}  // namespace kiln::cli

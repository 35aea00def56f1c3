#include "app/device_job.h"

#include <cstdio>

#include "app/runner_factory.h"
#include "common/json_dump.h"
#include "profile/device.h"

namespace kiln::app {

int RunDevice(const DeviceJobOptions& o) {
  RunnerSpec spec;
  spec.python = o.worker.python;
  spec.isolation = exec::Isolation::kShared;
  spec.device = o.device;
  auto runner = MakeRunner(spec);
  profile::JsonDeviceStore store(o.cache_dir);
  profile::CharacterizeOptions co;
  co.device_index = o.device;
  co.refresh = o.refresh;
  auto rec =
      runner.ok() ? profile::CharacterizeDevice(**runner, co, store) : Result<profile::DeviceRecord>(runner.status());
  if (!rec.ok()) {
    std::fprintf(stderr, "kiln device: error: %s\n", rec.status().message().c_str());
    return 1;
  }
  if (o.json) {
    auto j = profile::ToJson(*rec);
    if (!j.contains("schema_version")) j["schema_version"] = 1;
    j["source"] = rec->source;
    j["path"] = store.PathFor(rec->info.uuid);
    std::printf("%s\n", DumpJson(j, 2).c_str());
  } else {
    std::fputs(profile::FormatDevice(*rec).c_str(), stdout);
    std::printf("record: %s\n", store.PathFor(rec->info.uuid).c_str());
  }
  return 0;
}

}  // namespace kiln::app

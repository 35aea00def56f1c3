// kiln/app: `kiln device`: the GPU's properties and its measured peaks (DRAM bandwidth, matmul FLOP/s
// per dtype), measured once per GPU and cached (docs/profile.md). Exit codes: 0 ok, 1 no GPU /
// measurement failed.
#pragma once

#include <string>

#include "app/options.h"

namespace kiln::app {

struct DeviceJobOptions {
  bool refresh = false, json = false;
  WorkerFlags worker;  // --python
  std::string cache_dir;
  int device = 0;
};

int RunDevice(const DeviceJobOptions& o);

}  // namespace kiln::app

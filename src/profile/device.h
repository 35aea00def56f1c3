// kiln/profile: device characterization: the GPU's properties and its measured peaks.
//
// DeviceInfo comes from the worker's `hello` (name, UUID, SM count, L2, shared memory per block
// opt-in, registers per SM, clocks). DevicePeaks comes from the worker's `device_peaks` op: DRAM
// bytes/s from a large device-to-device copy (read + write bytes) and dense matmul FLOP/s per
// dtype (float32, tf32, bfloat16, float16, float8_e4m3fn; int8 in integer operations/s). Both are measured once
// per GPU UUID and kept in a DeviceStore; `refresh` re-measures, as does a record without a dtype asked for.
//
// Store: src/store (SQLite) is not available yet, so JsonDeviceStore keeps one JSON file per GPU
// under $KILN_CACHE_DIR/devices/<uuid>.json (default ~/.cache/kiln/devices/). It sits behind the
// DeviceStore interface so the SQLite store can replace it without touching callers.
//
// Roadmap: the worker is reached through exec::Runner (WorkerRunner on a GPU host, ReplayRunner in
// tests). src/store has PutDevice but no lookup yet; when it does, a StoreDeviceStore replaces the
// JSON files.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "exec/runner.h"

namespace kiln::profile {

struct DeviceInfo {
  int index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;  // "GPU-..."
  int sm_count = 0;
  int64_t l2_bytes = 0;
  int64_t smem_per_block_optin = 0;
  int regs_per_sm = 0;
  int64_t total_mem_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  double sm_clock_mhz = 0;  // max SM clock
  double mem_clock_mhz = 0;
};

struct DevicePeaks {
  double dram_bytes_per_s = 0;                       // read + write bytes of a D2D copy / time
  std::map<std::string, double> matmul_flops_per_s;  // dtype -> FLOP/s
  std::vector<double> sm_clock_mhz;                  // SM clock seen before/after the measurement
  std::string measured_at;                           // ISO-8601 UTC
  std::vector<std::string> dtypes_asked;             // the dtypes measured (a failed one has no peak)
  // Peak FLOP/s for a roofline dtype key; derived where not measured (float64 = float32 / 2,
  // float16 on CUDA cores = 2 x float32, as on Hopper); 0 when unknown.
  double FlopsFor(const std::string& dtype) const;
};

struct DeviceRecord {
  DeviceInfo info;
  DevicePeaks peaks;
  nlohmann::json versions;  // from hello
  std::string source;       // "measured", "cache", "file"
};

nlohmann::json ToJson(const DeviceInfo& d);
nlohmann::json ToJson(const DevicePeaks& p);
nlohmann::json ToJson(const DeviceRecord& r);
Result<DeviceInfo> DeviceInfoFromJson(const nlohmann::json& j);      // one entry of hello's "devices"
Result<DevicePeaks> DevicePeaksFromJson(const nlohmann::json& j);    // device_peaks response
Result<DeviceRecord> DeviceRecordFromJson(const nlohmann::json& j);  // ToJson(DeviceRecord)
Result<DeviceRecord> LoadDeviceRecordFile(const std::string& path);

// Where device records live.
class DeviceStore {
 public:
  virtual ~DeviceStore() = default;
  virtual Result<std::optional<DeviceRecord>> Load(const std::string& uuid) = 0;
  virtual Status Save(const DeviceRecord& r) = 0;
};

class JsonDeviceStore : public DeviceStore {
 public:
  // dir empty: $KILN_CACHE_DIR/devices, else $XDG_CACHE_HOME/kiln/devices, else ~/.cache/kiln/devices.
  explicit JsonDeviceStore(std::string dir = "");
  Result<std::optional<DeviceRecord>> Load(const std::string& uuid) override;
  Status Save(const DeviceRecord& r) override;
  std::string PathFor(const std::string& uuid) const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

struct CharacterizeOptions {
  int device_index = 0;
  bool refresh = false;  // re-measure even when stored
  std::vector<std::string> dtypes = {"float32", "tf32", "bfloat16", "float16", "float8_e4m3fn", "int8"};
};

// hello -> DeviceInfo; then the stored record for that UUID unless `refresh`; else device_peaks
// (measured by the worker), saved to the store. Fails with kUnavailable when the worker has no GPU.
Result<DeviceRecord> CharacterizeDevice(exec::Runner& runner, const CharacterizeOptions& o, DeviceStore& store);

// Terminal text for `kiln device`.
std::string FormatDevice(const DeviceRecord& r);

}  // namespace kiln::profile

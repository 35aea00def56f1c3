#include "profile/device.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "common/file.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"

namespace kiln::profile {

using nlohmann::json;

namespace {

Status MakeDirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty() && mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
        return IoError(fmt::format("{}: {}", cur, std::strerror(errno)));
      }
    }
    if (i < path.size()) cur.push_back(path[i]);
  }
  return Status::Ok();
}

std::string SafeFileName(const std::string& s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_');
  return out;
}

}  // namespace

double DevicePeaks::FlopsFor(const std::string& dtype) const {
  auto get = [&](const std::string& k) {
    auto it = matmul_flops_per_s.find(k);
    return it == matmul_flops_per_s.end() ? 0.0 : it->second;
  };
  if (double v = get(dtype); v > 0) return v;
  if (dtype == "float64") return get("float32") / 2;
  if (dtype == "float16_cuda") return get("float32") * 2;
  if (dtype == "float8_e4m3fn") return get("float8_e5m2");
  return 0;
}

json ToJson(const DeviceInfo& d) {
  return json{{"index", d.index},
              {"name", d.name},
              {"uuid", d.uuid},
              {"sm_count", d.sm_count},
              {"l2_bytes", d.l2_bytes},
              {"smem_per_block_optin", d.smem_per_block_optin},
              {"regs_per_sm", d.regs_per_sm},
              {"total_mem_bytes", d.total_mem_bytes},
              {"cc", {d.cc_major, d.cc_minor}},
              {"sm_clock_mhz", d.sm_clock_mhz},
              {"mem_clock_mhz", d.mem_clock_mhz}};
}

json ToJson(const DevicePeaks& p) {
  json j{{"dram_bytes_per_s", p.dram_bytes_per_s},
         {"matmul_flops_per_s", p.matmul_flops_per_s},
         {"sm_clock_mhz", p.sm_clock_mhz}};
  if (!p.measured_at.empty()) j["measured_at"] = p.measured_at;
  if (!p.dtypes_asked.empty()) j["dtypes_asked"] = p.dtypes_asked;
  return j;
}

json ToJson(const DeviceRecord& r) {
  return json{{"schema", "kiln.device/1"},
              {"device", ToJson(r.info)},
              {"peaks", ToJson(r.peaks)},
              {"versions", r.versions.is_null() ? json::object() : r.versions}};
}

Result<DeviceInfo> DeviceInfoFromJson(const json& j) {
  if (!j.is_object()) return ParseError("device entry is not a JSON object");
  DeviceInfo d;
  d.index = static_cast<int>(JsonInt(j, "index").value_or(0));
  d.name = JsonString(j, "name");
  d.uuid = JsonString(j, "uuid");
  d.sm_count = static_cast<int>(JsonInt(j, "sm_count").value_or(0));
  d.l2_bytes = JsonInt(j, "l2_bytes").value_or(0);
  d.smem_per_block_optin = JsonInt(j, "smem_per_block_optin").value_or(0);
  d.regs_per_sm = static_cast<int>(JsonInt(j, "regs_per_sm").value_or(0));
  d.total_mem_bytes = JsonInt(j, "total_mem_bytes").value_or(0);
  if (auto it = j.find("cc"); it != j.end() && it->is_array() && it->size() == 2) {
    d.cc_major = (*it)[0].get<int>();
    d.cc_minor = (*it)[1].get<int>();
  }
  d.sm_clock_mhz = JsonNumber(j, "sm_clock_mhz").value_or(0);
  d.mem_clock_mhz = JsonNumber(j, "mem_clock_mhz").value_or(0);
  if (d.uuid.empty()) return ParseError("device entry has no \"uuid\"");
  return d;
}

Result<DevicePeaks> DevicePeaksFromJson(const json& j) {
  if (!j.is_object()) return ParseError("peaks are not a JSON object");
  DevicePeaks p;
  p.dram_bytes_per_s = JsonNumber(j, "dram_bytes_per_s").value_or(0);
  if (auto it = j.find("matmul_flops_per_s"); it != j.end() && it->is_object()) {
    for (auto& [k, v] : it->items()) {
      if (v.is_number() && v.get<double>() > 0) p.matmul_flops_per_s[k] = v.get<double>();
    }
  }
  if (auto it = j.find("sm_clock_mhz"); it != j.end() && it->is_array()) {
    for (auto& v : *it) {
      if (v.is_number()) p.sm_clock_mhz.push_back(v.get<double>());
    }
  }
  p.measured_at = JsonString(j, "measured_at");
  if (auto it = j.find("dtypes_asked"); it != j.end() && it->is_array()) {
    for (auto& v : *it)
      if (v.is_string()) p.dtypes_asked.push_back(v.get<std::string>());
  }
  if (p.dram_bytes_per_s <= 0) return ParseError("peaks have no positive \"dram_bytes_per_s\"");
  return p;
}

Result<DeviceRecord> DeviceRecordFromJson(const json& j) {
  if (!j.is_object() || !j.contains("device") || !j.contains("peaks")) {
    return ParseError("a device record needs \"device\" and \"peaks\" objects");
  }
  DeviceRecord r;
  KILN_ASSIGN_OR_RETURN(r.info, DeviceInfoFromJson(j["device"]));
  KILN_ASSIGN_OR_RETURN(r.peaks, DevicePeaksFromJson(j["peaks"]));
  if (j.contains("versions")) r.versions = j["versions"];
  return r;
}

Result<DeviceRecord> LoadDeviceRecordFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json j = ParseJson(text);
  if (j.is_discarded()) return ParseError(fmt::format("{}: not valid JSON", path));
  auto r = DeviceRecordFromJson(j);
  if (!r.ok()) return ParseError(fmt::format("{}: {}", path, r.status().message()));
  r->source = "file";
  return r;
}

JsonDeviceStore::JsonDeviceStore(std::string dir) : dir_(std::move(dir)) {
  if (!dir_.empty()) return;
  if (const char* c = std::getenv("KILN_CACHE_DIR"); c && *c) {
    dir_ = std::string(c) + "/devices";
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir_ = std::string(x) + "/kiln/devices";
  } else {
    const char* h = std::getenv("HOME");
    dir_ = std::string(h && *h ? h : "/tmp") + "/.cache/kiln/devices";
  }
}

std::string JsonDeviceStore::PathFor(const std::string& uuid) const {
  return dir_ + "/" + SafeFileName(uuid) + ".json";
}

Result<std::optional<DeviceRecord>> JsonDeviceStore::Load(const std::string& uuid) {
  std::string p = PathFor(uuid);
  if (access(p.c_str(), R_OK) != 0) return std::optional<DeviceRecord>();
  auto r = LoadDeviceRecordFile(p);
  if (!r.ok()) return r.status();
  if (r->info.uuid != uuid) return std::optional<DeviceRecord>();
  r->source = "cache";
  return std::optional<DeviceRecord>(std::move(r).value());
}

Status JsonDeviceStore::Save(const DeviceRecord& r) {
  KILN_RETURN_IF_ERROR(MakeDirs(dir_));
  return WriteFile(PathFor(r.info.uuid), DumpJson(ToJson(r), 2) + "\n");
}

Result<DeviceRecord> CharacterizeDevice(exec::Runner& runner, const CharacterizeOptions& o, DeviceStore& store) {
  auto hello = runner.Hello();
  if (!hello.ok()) return hello.status();
  if (hello->interpreter) {
    return Unavailable("no GPU: the worker runs in Triton's interpreter mode (torch.cuda is not available)");
  }
  const json& devs = hello->raw.contains("devices") ? hello->raw["devices"] : json();
  if (!devs.is_array() || devs.empty()) return Unavailable("the worker reports no CUDA device");
  const json* dj = &devs[0];
  for (const auto& d : devs) {
    if (d.value("index", -1) == o.device_index) dj = &d;
  }
  DeviceRecord rec;
  KILN_ASSIGN_OR_RETURN(rec.info, DeviceInfoFromJson(*dj));
  rec.versions = hello->versions;
  if (!o.refresh) {
    auto stored = store.Load(rec.info.uuid);
    // A record measured before a dtype was asked for (int8, session 23) is measured again, once: a dtype the
    // GPU cannot do stays asked, with no peak.
    auto asked = [&](const DeviceRecord& r) {
      const auto& a = r.peaks.dtypes_asked;
      return std::all_of(o.dtypes.begin(), o.dtypes.end(), [&](const std::string& d) {
        return std::find(a.begin(), a.end(), d) != a.end() || r.peaks.matmul_flops_per_s.count(d);
      });
    };
    if (stored.ok() && stored->has_value() && asked(**stored)) {
      DeviceRecord r = std::move(**stored);
      r.info = rec.info;  // live properties (clocks may differ); peaks from the store
      r.source = "cache";
      return r;
    }
  }
  auto peaks = runner.DevicePeaks(o.dtypes);
  if (!peaks.ok()) return peaks.status();
  KILN_ASSIGN_OR_RETURN(rec.peaks, DevicePeaksFromJson(*peaks));
  if (rec.peaks.measured_at.empty()) rec.peaks.measured_at = NowIsoUtc();
  rec.peaks.dtypes_asked = o.dtypes;
  rec.source = "measured";
  KILN_RETURN_IF_ERROR(store.Save(rec));
  return rec;
}

std::string FormatDevice(const DeviceRecord& r) {
  const auto& d = r.info;
  std::string s;
  s += fmt::format("{} ({})\n", d.name, d.uuid);
  s += fmt::format("  compute capability  {}.{}\n", d.cc_major, d.cc_minor);
  s += fmt::format("  SMs                 {}\n", d.sm_count);
  s += fmt::format("  L2                  {:.1f} MiB\n", d.l2_bytes / 1048576.0);
  s += fmt::format("  smem/block opt-in   {} bytes\n", d.smem_per_block_optin);
  s += fmt::format("  registers/SM        {}\n", d.regs_per_sm);
  s += fmt::format("  memory              {:.1f} GiB\n", d.total_mem_bytes / 1073741824.0);
  s += fmt::format("  clocks              SM {:.0f} MHz, memory {:.0f} MHz\n", d.sm_clock_mhz, d.mem_clock_mhz);
  s += fmt::format("measured peaks ({}{}):\n", r.source, r.peaks.measured_at.empty() ? "" : ", " + r.peaks.measured_at);
  s += fmt::format("  DRAM bandwidth      {:.2f} TB/s (device-to-device copy, read + write)\n",
                   r.peaks.dram_bytes_per_s / 1e12);
  for (const char* k : {"float32", "tf32", "bfloat16", "float16", "float8_e4m3fn", "int8"}) {
    auto it = r.peaks.matmul_flops_per_s.find(k);
    if (it == r.peaks.matmul_flops_per_s.end()) {
      s += fmt::format("  matmul {:<13}not measured\n", k);
    } else {
      s += fmt::format("  matmul {:<13}{:.1f} {}\n", k, it->second / 1e12,
                       std::string(k) == "int8" ? "TOP/s" : "TFLOP/s");
    }
  }
  return s;
}

}  // namespace kiln::profile

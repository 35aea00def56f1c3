#include "profile/device.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "common/file.h"

#ifndef KILN_SOURCE_DIR
#define KILN_SOURCE_DIR ""
#endif

namespace kiln::profile {

using nlohmann::json;

namespace {

template <typename T>
T Num(const json& j, const char* key, T fallback = T{}) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return fallback;
  return it->get<T>();
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string NowIso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

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

bool IsDir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
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
  d.index = Num<int>(j, "index");
  d.name = Str(j, "name");
  d.uuid = Str(j, "uuid");
  d.sm_count = Num<int>(j, "sm_count");
  d.l2_bytes = Num<int64_t>(j, "l2_bytes");
  d.smem_per_block_optin = Num<int64_t>(j, "smem_per_block_optin");
  d.regs_per_sm = Num<int>(j, "regs_per_sm");
  d.total_mem_bytes = Num<int64_t>(j, "total_mem_bytes");
  if (auto it = j.find("cc"); it != j.end() && it->is_array() && it->size() == 2) {
    d.cc_major = (*it)[0].get<int>();
    d.cc_minor = (*it)[1].get<int>();
  }
  d.sm_clock_mhz = Num<double>(j, "sm_clock_mhz");
  d.mem_clock_mhz = Num<double>(j, "mem_clock_mhz");
  if (d.uuid.empty()) return ParseError("device entry has no \"uuid\"");
  return d;
}

Result<DevicePeaks> DevicePeaksFromJson(const json& j) {
  if (!j.is_object()) return ParseError("peaks are not a JSON object");
  DevicePeaks p;
  p.dram_bytes_per_s = Num<double>(j, "dram_bytes_per_s");
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
  p.measured_at = Str(j, "measured_at");
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
  json j = json::parse(text, nullptr, false);
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
  return WriteFile(PathFor(r.info.uuid), ToJson(r).dump(2) + "\n");
}

// --- worker channel ------------------------------------------------------------------------

Result<std::unique_ptr<WorkerChannel>> WorkerChannel::Start(const Options& o) {
  SpawnOptions so;
  so.argv = {o.python, "-m", "kiln_worker"};
  so.argv.insert(so.argv.end(), o.args.begin(), o.args.end());
  so.env_set = o.env;
  auto p = Process::Spawn(so);
  if (!p.ok()) return p.status();
  auto ch = std::unique_ptr<WorkerChannel>(new WorkerChannel());
  ch->proc_ = std::move(p).value();
  return ch;
}

WorkerChannel::~WorkerChannel() {
  if (proc_ && proc_->running()) {
    (void)proc_->Write(R"({"id": "bye", "op": "shutdown"})" "\n");
    proc_->CloseStdin();
    if (!proc_->Wait(std::chrono::seconds(5))) proc_->Kill(9);
  }
}

Result<json> WorkerChannel::Call(json request, std::chrono::seconds timeout) {
  if (!request.contains("id")) request["id"] = std::to_string(next_id_++);
  std::string id = request["id"].get<std::string>();
  KILN_RETURN_IF_ERROR(proc_->Write(request.dump() + "\n"));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      proc_->Kill(9);
      return Timeout(fmt::format("the worker did not answer {} in {} s", request.value("op", "?"),
                                 timeout.count()));
    }
    auto line = proc_->ReadLine(left);
    if (!line.ok()) {
      if (line.status().code() == Code::kTimeout) continue;
      auto exit = proc_->Wait(std::chrono::seconds(2));
      return Internal(fmt::format("the worker exited ({}) before answering {}. stderr:\n{}",
                                  exit ? exit->Describe() : "no exit status",
                                  request.value("op", "?"), proc_->stderr_tail()));
    }
    json j = json::parse(*line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;  // stray output
    if (j.value("id", "") != id) continue;
    if (!j.value("ok", false)) {
      return Internal(fmt::format("the worker refused {}: {}", request.value("op", "?"),
                                  j.value("error", j.dump())));
    }
    return j;
  }
}

std::string FindWorkerPackageDir() {
  auto has_pkg = [](const std::string& d) { return IsDir(d + "/kiln_worker"); };
  if (const char* e = std::getenv("KILN_WORKER_PATH"); e && *e && has_pkg(e)) return e;
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    std::string exe(buf, n);
    std::string dir = exe.substr(0, exe.rfind('/'));
    for (int up = 0; up < 4; ++up) {
      if (has_pkg(dir + "/worker")) return dir + "/worker";
      auto slash = dir.rfind('/');
      if (slash == std::string::npos || slash == 0) break;
      dir = dir.substr(0, slash);
    }
  }
  std::string src = KILN_SOURCE_DIR;
  if (!src.empty() && has_pkg(src + "/worker")) return src + "/worker";
  return "";
}

Result<DeviceRecord> CharacterizeDevice(const CharacterizeOptions& o, DeviceStore& store) {
  WorkerChannel::Options wo;
  wo.python = o.python;
  wo.args = {"--device", std::to_string(o.device_index), "--isolation", "shared"};
  if (std::string w = FindWorkerPackageDir(); !w.empty()) {
    const char* pp = std::getenv("PYTHONPATH");
    wo.env["PYTHONPATH"] = pp && *pp ? w + ":" + pp : w;
  }
  auto ch = WorkerChannel::Start(wo);
  if (!ch.ok()) return Unavailable(fmt::format("cannot start the worker ({}): {}", o.python, ch.status().message()));
  auto hello = (*ch)->Call(json{{"op", "hello"}}, std::chrono::seconds(120));
  if (!hello.ok()) return hello.status();
  if (hello->value("interpreter", false)) {
    return Unavailable("no GPU: the worker runs in Triton's interpreter mode (torch.cuda is not available)");
  }
  const json& devs = (*hello)["devices"];
  if (!devs.is_array() || devs.empty()) return Unavailable("the worker reports no CUDA device");
  const json* dj = &devs[0];
  for (const auto& d : devs) {
    if (d.value("index", -1) == o.device_index) dj = &d;
  }
  DeviceRecord rec;
  KILN_ASSIGN_OR_RETURN(rec.info, DeviceInfoFromJson(*dj));
  rec.versions = hello->value("versions", json::object());
  if (!o.refresh) {
    auto stored = store.Load(rec.info.uuid);
    if (stored.ok() && stored->has_value()) {
      DeviceRecord r = std::move(**stored);
      r.info = rec.info;  // live properties (clocks may differ); peaks from the store
      r.source = "cache";
      return r;
    }
  }
  auto peaks = (*ch)->Call(json{{"op", "device_peaks"}, {"dtypes", o.dtypes}}, o.timeout);
  if (!peaks.ok()) return peaks.status();
  KILN_ASSIGN_OR_RETURN(rec.peaks, DevicePeaksFromJson(*peaks));
  if (rec.peaks.measured_at.empty()) rec.peaks.measured_at = NowIso();
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
  s += fmt::format("measured peaks ({}{}):\n", r.source,
                   r.peaks.measured_at.empty() ? "" : ", " + r.peaks.measured_at);
  s += fmt::format("  DRAM bandwidth      {:.2f} TB/s (device-to-device copy, read + write)\n",
                   r.peaks.dram_bytes_per_s / 1e12);
  for (const char* k : {"float32", "tf32", "bfloat16", "float16", "float8_e4m3fn"}) {
    auto it = r.peaks.matmul_flops_per_s.find(k);
    if (it == r.peaks.matmul_flops_per_s.end()) {
      s += fmt::format("  matmul {:<13}not measured\n", k);
    } else {
      s += fmt::format("  matmul {:<13}{:.1f} TFLOP/s\n", k, it->second / 1e12);
    }
  }
  return s;
}

}  // namespace kiln::profile

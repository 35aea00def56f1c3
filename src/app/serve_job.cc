#include "app/serve_job.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "common/file.h"
#include "serve/http.h"
#include "serve/service.h"
#include "store/store.h"

namespace kiln::app {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int Fail(const std::string& m) {
  std::string s = m;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  std::fprintf(stderr, "kiln serve: %s\n", s.c_str());
  return 2;
}

Result<std::string> ReadToken(const ServeOptions& o) {
  if (o.token_file.empty()) {
    if (!serve::IsLoopback(o.host))
      return InvalidArgument(
          fmt::format("--host {} is not a loopback address: give --token-file (a bearer token every "
                      "request must carry)",
                      o.host));
    return std::string();
  }
  KILN_ASSIGN_OR_RETURN(std::string t, ReadFile(o.token_file));
  t.erase(std::remove_if(t.begin(), t.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
          t.end());
  if (t.size() < 16)
    return InvalidArgument(fmt::format("{}: the token must hold at least 16 characters", o.token_file));
  return t;
}

std::unique_ptr<exec::Runner> Make(const RunnerSpec& s) {
  auto r = MakeRunner(s);
  return r.ok() ? std::move(*r) : nullptr;
}

// Sizes the pool from the probe worker's hello: interpreter workers, or one measuring worker per GPU
// and K check workers per GPU (the batch pipeline of `kiln eval --batch`).
struct GpuMemory {
  std::string gpu;
  double free_bytes, total_bytes;
};

// What the probe worker's hello said of the GPUs kiln serve uses (seeds /v1/metrics before any evaluation).
std::vector<GpuMemory> HelloMemory(const exec::HelloInfo& h, const std::vector<std::string>& gpus) {
  std::vector<GpuMemory> out;
  for (const auto& d : h.devices) {
    const std::string id = d.uuid.empty() ? std::to_string(d.index) : d.uuid;
    if (std::find(gpus.begin(), gpus.end(), id) == gpus.end()) continue;
    const json& r = d.raw;
    if (r.contains("free_mem_bytes") && r["free_mem_bytes"].is_number() && r.contains("total_mem_bytes") &&
        r["total_mem_bytes"].is_number())
      out.push_back({id, r["free_mem_bytes"].get<double>(), r["total_mem_bytes"].get<double>()});
  }
  return out;
}

Status SetUpPool(const ServeOptions& o, serve::ServiceConfig* cfg, std::shared_ptr<std::vector<std::string>> gpus,
                 std::vector<GpuMemory>* memory) {
  RunnerSpec spec = o.worker.Spec(*exec::ParseIsolation(o.isolation));
  auto probe = MakeRunner(spec);
  if (!probe.ok()) return probe.status();
  KILN_ASSIGN_OR_RETURN(exec::HelloInfo h, (*probe)->Hello());
  const bool interp = h.interpreter || h.devices.empty();
  if (!interp)
    for (const auto& d : h.devices) gpus->push_back(d.uuid.empty() ? std::to_string(d.index) : d.uuid);
  if (o.gpus >= 0 && static_cast<int>(gpus->size()) > o.gpus) gpus->resize(o.gpus);
  const int n_gpus = static_cast<int>(gpus->size());
  *memory = HelloMemory(h, *gpus);
  cfg->measure_slots = interp ? std::max(1, o.workers) : n_gpus;
  int k = o.check_workers;
  if (interp)
    k = std::max(0, k);
  else if (k < 0)
    k = std::clamp(static_cast<int>(std::thread::hardware_concurrency()) / (2 * n_gpus), 1, 8);
  cfg->check_slots = interp ? k : k * n_gpus;
  auto slot_spec = [spec, gpus, interp](int slot) {
    RunnerSpec s = spec;
    if (!interp && !gpus->empty()) {
      s.cuda_visible_devices = (*gpus)[slot % gpus->size()];
      s.device = 0;
    }
    return s;
  };
  auto first = std::make_shared<std::unique_ptr<exec::Runner>>(std::move(*probe));
  cfg->make_measure = [slot_spec, first, interp, n_gpus](int slot) -> std::unique_ptr<exec::Runner> {
    if (slot == 0 && *first && (interp || n_gpus <= 1)) return std::move(*first);
    return Make(slot_spec(slot));
  };
  cfg->make_check = [slot_spec](int slot) { return Make(slot_spec(slot)); };
  cfg->describe = {{"interpreter", interp},
                   {"gpus", *gpus},
                   {"measuring_workers", cfg->measure_slots},
                   {"check_workers", cfg->check_slots}};
  std::fprintf(stderr, "kiln serve: %d measuring worker(s)%s, %d check worker(s)\n", cfg->measure_slots,
               interp ? " (Triton interpreter, no GPU)" : "", cfg->check_slots);
  return Status::Ok();
}

}  // namespace

int RunServe(const ServeOptions& o) {
  auto token = ReadToken(o);
  if (!token.ok()) return Fail(token.status().message());
  serve::ServiceConfig cfg;
  auto formula = serve::LoadFormula(o.reward);
  if (!formula.ok()) return Fail(formula.status().message());
  cfg.reward = *formula;
  auto mode = exec::ParseMode(o.mode);
  auto policy = exec::ParsePolicy(o.policy);
  if (!mode.ok() || (*mode != exec::Mode::kCheck && *mode != exec::Mode::kTime))
    return Fail("--mode: expected check or time");
  if (!policy.ok()) return Fail(policy.status().message());
  if (!exec::ParseIsolation(o.isolation).ok()) return Fail("--isolation: expected shared, fork or fresh");
  cfg.base.mode = *mode;
  cfg.base.policy = *policy;
  cfg.base.seed = o.seed;
  cfg.base.trials = o.trials;
  cfg.base.timeout_s = o.timeout_s;
  cfg.queue_limit = o.queue_limit;
  cfg.max_items = o.max_items;
  cfg.batch_max = std::max<size_t>(1, o.batch_max);
  cfg.use_cache = !o.no_cache;
  std::unique_ptr<store::Store> st;
  if (!o.records.no_db) {
    auto s = store::Store::Open(o.records.Path());
    if (!s.ok()) return Fail(s.status().message());
    st = std::move(*s);
    cfg.store = st.get();
  }
  // Inline references live beside the records (or in the temp folder without them).
  fs::path inline_dir =
      st ? fs::path(st->path()).parent_path() / "serve_inline" : fs::temp_directory_path() / "kiln_serve_inline";
  serve::TaskSet tasks(inline_dir.string());
  if (!o.tasks.empty()) {
    std::vector<std::string> warnings;
    if (Status s = tasks.Load(o.tasks, &warnings); !s.ok()) return Fail(s.message());
    for (const auto& w : warnings) std::fprintf(stderr, "kiln serve: warning: %s\n", w.c_str());
    std::fprintf(stderr, "kiln serve: %zu task name(s) from %s\n", tasks.size(), o.tasks.c_str());
  }
  auto gpus = std::make_shared<std::vector<std::string>>();
  std::vector<GpuMemory> memory;
  if (Status s = SetUpPool(o, &cfg, gpus, &memory); !s.ok()) return Fail(s.message());
  serve::Service service(std::move(cfg), &tasks);
  for (const auto& m : memory) service.NoteGpuMemory(m.gpu, m.free_bytes, m.total_bytes);
  auto recovered = service.Recover();
  if (!recovered.ok()) return Fail(recovered.status().message());
  if (*recovered) std::fprintf(stderr, "kiln serve: %zu unfinished job(s) from the journal re-queued\n", *recovered);
  service.Start();
  serve::HttpOptions h;
  h.host = o.host;
  h.port = o.port;
  h.port_file = o.port_file;
  h.token = *token;
  h.max_body_bytes = o.max_body_bytes;
  h.max_response_bytes = o.max_response_bytes;
  h.default_wait_s = o.wait_s;
  return serve::Serve(&service, h);
}

}  // namespace kiln::app

// The service's /v1/metrics over a fake runner: worker counts by role, and the GPU memory the workers
// report with their results (a cached result's figure is not news), seeded at start from the hello.
#include "serve/service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "common/file.h"

namespace kiln::serve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kReference =
    "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
    "        return torch.relu(x)\n\ndef get_inputs():\n    return [torch.randn(64)]\n\n"
    "def get_init_inputs():\n    return []\n";

const char* kCandidate =
    "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n@triton.jit\n"
    "def relu_k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    m = i < n\n    tl.store(y_ptr + i, tl.maximum(tl.load(x_ptr + i, mask=m), 0.0), mask=m)\n\n"
    "class ModelNew(nn.Module):\n    def forward(self, x):\n        y = torch.empty_like(x)\n"
    "        relu_k[(1,)](x, y, x.numel(), BLOCK=64)\n        return y\n";

// Answers ok; its n-th result reports `free[n]` of 100 bytes free on GPU-a, and results flagged in
// `cached` claim to come from the cache.
class FakeRunner : public exec::Runner {
 public:
  FakeRunner(std::vector<double> free, std::vector<bool> cached) : free_(std::move(free)), cached_(std::move(cached)) {}
  Result<exec::HelloInfo> Hello() override {
    exec::HelloInfo h;
    h.protocol = exec::kProtocolVersion;
    exec::DeviceInfo d;
    d.name = "fake";
    d.uuid = "GPU-a";
    h.devices.push_back(d);
    return h;
  }
  Result<exec::EvalResult> Evaluate(const exec::EvalRequest&) override {
    const size_t n = calls_++;
    exec::EvalResult r;
    r.verdict = exec::Verdict::kOk;
    r.from_cache = n < cached_.size() && cached_[n];
    r.raw = {{"ok", true},
             {"verdict", "ok"},
             {"gpu_memory", {{"free_bytes", free_.at(n)}, {"total_bytes", 100}, {"uuid", "GPU-a"}}}};
    return r;
  }
  Result<json> DevicePeaks(const std::vector<std::string>&) override { return json::object(); }

 private:
  std::vector<double> free_;
  std::vector<bool> cached_;
  std::atomic<size_t> calls_{0};
};

class ServiceMetrics : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_service_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  json Item() const {
    return {{"items", json::array({{{"task", {{"reference", kReference}}}, {"code", kCandidate}}})}};
  }
  fs::path dir_;
};

bool Has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST_F(ServiceMetrics, WorkerCountsAndGpuMemoryFromResults) {
  TaskSet tasks(dir_.string());
  ServiceConfig cfg;
  cfg.measure_slots = 1;
  cfg.check_slots = 0;
  cfg.make_measure = [](int) -> std::unique_ptr<exec::Runner> {
    return std::make_unique<FakeRunner>(std::vector<double>{30, 5}, std::vector<bool>{false, true});
  };
  Service service(std::move(cfg), &tasks);
  service.NoteGpuMemory("GPU-a", 90, 100);  // the hello at start
  std::string m = service.MetricsText();
  EXPECT_TRUE(Has(m, "kiln_serve_gpu_memory_used_bytes{gpu=\"GPU-a\"} 10")) << m;
  EXPECT_TRUE(Has(m, "kiln_serve_gpu_memory_total_bytes{gpu=\"GPU-a\"} 100")) << m;
  EXPECT_TRUE(Has(m, "kiln_serve_workers{role=\"measure\"} 1")) << m;
  EXPECT_TRUE(Has(m, "kiln_serve_workers{role=\"check\"} 0")) << m;
  EXPECT_TRUE(Has(m, "kiln_serve_workers_up{role=\"measure\"} 0")) << m;  // made on the first item
  service.Start();
  Answer a = service.Submit(Item(), "", 60);
  ASSERT_EQ(a.http, 200) << a.body.dump();
  ASSERT_EQ(a.body["items"][0]["verdict"], "ok") << a.body.dump();
  m = service.MetricsText();
  EXPECT_TRUE(Has(m, "kiln_serve_gpu_memory_used_bytes{gpu=\"GPU-a\"} 70")) << m;
  EXPECT_TRUE(Has(m, "kiln_serve_workers_up{role=\"measure\"} 1")) << m;
  // The second result says it came from the cache: its memory figure is not taken.
  Answer b = service.Submit(Item(), "", 60);
  ASSERT_EQ(b.http, 200) << b.body.dump();
  m = service.MetricsText();
  EXPECT_TRUE(Has(m, "kiln_serve_gpu_memory_used_bytes{gpu=\"GPU-a\"} 70")) << m;
  EXPECT_NE(m.find("kiln_serve_gpu_memory_age_seconds{gpu=\"GPU-a\"} "), std::string::npos) << m;
  service.Stop();
}

TEST_F(ServiceMetrics, ManifestSizesOverrideKernelBenchConstants) {
  const std::string ref = std::string("batch_size = 4096\ndim = 393216\n") + kReference;
  ASSERT_TRUE(WriteFile((dir_ / "relu.py").string(), ref).ok());
  auto manifest = [&](const json& entry) {
    const std::string p = (dir_ / "tasks.json").string();
    EXPECT_TRUE(WriteFile(p, json{{"tasks", json::array({entry})}}.dump()).ok());
    return p;
  };
  TaskSet tasks((dir_ / "inline").string());
  std::vector<std::string> warnings;
  ASSERT_TRUE(
      tasks.Load(manifest({{"name", "small"}, {"path", "relu.py"}, {"sizes", {{"batch_size", 16}}}}), &warnings).ok());
  auto t = tasks.Find("small");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->sizes, json({{"batch_size", 16}}));
  TaskSet bad((dir_ / "inline").string());
  Status s = bad.Load(manifest({{"path", "relu.py"}, {"sizes", {{"batch", 16}}}}), &warnings);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("size 'batch' is not a module-level numeric constant"), std::string::npos) << s.message();
  s = bad.Load(manifest({{"path", "relu.py"}, {"sizes", 16}}), &warnings);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tasks[0].sizes: expected an object"), std::string::npos) << s.message();
}

TEST(Metrics, NoGpuLinesWithoutAReportAndBadFiguresIgnored) {
  Metrics m;
  std::string t = m.Render(0, 0, 0, {});
  EXPECT_EQ(t.find("kiln_serve_gpu_memory"), std::string::npos) << t;  // the interpreter: no GPU figures
  m.GpuMemory("GPU-b", 200, 100);                                      // free above total: not a figure
  m.GpuMemory("", 1, 100);
  m.GpuMemory("GPU-c\"x", 0, 0);
  EXPECT_EQ(m.Render(0, 0, 0, {}).find("kiln_serve_gpu_memory"), std::string::npos);
  m.GpuMemory("GPU-\"q\"", 25, 100);  // a label value is escaped
  t = m.Render(0, 0, 0, {2, 16, 2, 15, 19});
  EXPECT_TRUE(Has(t, "kiln_serve_gpu_memory_used_bytes{gpu=\"GPU-\\\"q\\\"\"} 75")) << t;
  EXPECT_TRUE(Has(t, "kiln_serve_workers{role=\"check\"} 16")) << t;
  EXPECT_TRUE(Has(t, "kiln_serve_workers_up{role=\"check\"} 15")) << t;
  EXPECT_TRUE(Has(t, "kiln_serve_worker_starts_total 19")) << t;
}

}  // namespace
}  // namespace kiln::serve

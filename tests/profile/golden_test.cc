// Golden diagnoses over ncu raw CSVs, data-driven: every case listed in synthetic/cases.json and
// data/cases.json (real recordings from bench/gpu/record_ncu.sh) is parsed, joined with its facts
// (facts file, static facts of its Python source) and the directory's device record, diagnosed,
// and checked against (1) the expectations a GPU engineer wrote down (class, rules that must and
// must not fire, gated rules, moves that must / must not be suggested, the range of the roof
// fraction and which roof; per kernel with "expect_per_kernel"), (2) invariants (no contradictory
// moves, gated rules never reported, time shares sum to 1), and (3) a golden summary
// <name>.golden.txt when present (KILN_UPDATE_GOLDEN=1 writes it). Cases whose CSV is not there
// yet are skipped.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/file.h"
#include "diagnose/report.h"
#include "diagnose/static_facts.h"
#include "profile/profile.h"
#include "profile/profile_task.h"

namespace kiln {
namespace {

using nlohmann::json;

const std::string kDir = KILN_PROFILE_TESTS;

struct Case {
  std::string dir, name;
  json spec, device;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.dir << "/" << c.name; }

std::vector<Case> LoadCases(const std::string& sub) {
  std::vector<Case> out;
  std::string path = kDir + "/" + sub + "/cases.json";
  auto text = ReadFile(path);
  if (!text.ok()) return out;
  json j = json::parse(*text);
  for (const auto& c : j["cases"]) out.push_back({sub, c["name"].get<std::string>(), c, j.value("device", "")});
  return out;
}

std::string Summary(const diagnose::ProfileReport& r) {
  std::string s;
  for (size_t i = 0; i < r.run.kernels.size(); ++i) {
    const auto& k = r.run.kernels[i];
    const auto& d = r.diagnoses[i];
    s +=
        fmt::format("kernel {} class={} share={:.3f} roof={:.3f} bound_by={}\n", k.name(), diagnose::ClassName(d.cls),
                    k.time_share, k.roofline.fraction_of_roof, k.roofline.bound_by.empty() ? "-" : k.roofline.bound_by);
    for (const auto& f : d.findings) {
      s += fmt::format("  {} [{}] moves=", f.rule, diagnose::SeverityName(f.severity));
      for (size_t m = 0; m < f.moves.size(); ++m) s += (m ? "," : "") + std::string(diagnose::MoveName(f.moves[m]));
      s += "\n";
    }
    if (!d.gated.empty()) {
      s += "  gated:";
      for (const auto& g : d.gated) s += " " + g;
      s += "\n";
    }
  }
  return s;
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, Diagnosis) {
  const Case& c = GetParam();
  std::string base = kDir + "/" + c.dir + "/";
  std::string csv = base + c.spec.value("csv", c.name + ".csv");
  if (access(csv.c_str(), R_OK) != 0) GTEST_SKIP() << csv << " not recorded yet";
  std::optional<profile::DeviceRecord> device;
  if (c.device.is_string() && !c.device.get<std::string>().empty() &&
      access((base + c.device.get<std::string>()).c_str(), R_OK) == 0) {
    auto d = profile::LoadDeviceRecordFile(base + c.device.get<std::string>());
    ASSERT_TRUE(d.ok()) << d.status().message();
    device = *d;
  }
  std::vector<exec::KernelFacts> facts;
  std::string facts_file = c.spec.value("facts", c.name + ".facts.json");
  if (auto t = ReadFile(base + facts_file); t.ok()) {
    auto f = exec::KernelFactsFromJson(json::parse(*t));
    ASSERT_TRUE(f.ok()) << f.status().message();
    facts = *f;
  }
  if (c.spec.contains("source")) {
    auto sf = diagnose::StaticFactsFromFile(kDir + "/" + c.spec["source"].get<std::string>());
    ASSERT_TRUE(sf.ok()) << sf.status().message();
    facts = exec::MergeFacts(facts, *sf);
  }
  auto run = profile::ProfileFromCsv(csv, facts, device);
  ASSERT_TRUE(run.ok()) << run.status().message();
  auto report = diagnose::DiagnoseRun(*run);
  std::string summary = Summary(report);
  SCOPED_TRACE(summary);

  EXPECT_EQ(static_cast<int>(report.run.kernels.size()), c.spec.value("kernels", 1));
  double share = 0;
  for (const auto& k : report.run.kernels) share += k.time_share;
  EXPECT_NEAR(share, 1.0, 1e-9);

  for (size_t i = 0; i < report.diagnoses.size(); ++i) {
    const auto& d = report.diagnoses[i];
    // "expect" applies to every kernel; "expect_per_kernel"[i], when given, to kernel i (launch order).
    const json& e = c.spec.contains("expect_per_kernel") ? c.spec["expect_per_kernel"].at(i) : c.spec["expect"];
    SCOPED_TRACE("kernel " + d.kernel);
    std::set<std::string> fired, gated(d.gated.begin(), d.gated.end()), moves;
    for (const auto& f : d.findings) {
      fired.insert(f.rule);
      for (auto m : f.moves) moves.insert(diagnose::MoveName(m));
    }
    if (e.contains("class")) {
      std::set<std::string> ok = e["class"];
      EXPECT_TRUE(ok.count(diagnose::ClassName(d.cls))) << "class " << diagnose::ClassName(d.cls);
    }
    for (const auto& r : e.value("rules", json::array())) EXPECT_TRUE(fired.count(r)) << "missing rule " << r;
    for (const auto& r : e.value("absent", json::array())) EXPECT_FALSE(fired.count(r)) << "unexpected rule " << r;
    for (const auto& r : e.value("gated", json::array())) EXPECT_TRUE(gated.count(r)) << "not gated: " << r;
    for (const auto& m : e.value("moves", json::array())) EXPECT_TRUE(moves.count(m)) << "missing move " << m;
    for (const auto& m : e.value("absent_moves", json::array()))
      EXPECT_FALSE(moves.count(m)) << "unexpected move " << m;
    if (e.contains("roof")) {  // [min, max] of the headline fraction of the roof
      double f = report.run.kernels[i].roofline.fraction_of_roof;
      EXPECT_GE(f, e["roof"][0].get<double>()) << "fraction of roof";
      EXPECT_LE(f, e["roof"][1].get<double>()) << "fraction of roof";
    }
    if (e.contains("bound_by")) EXPECT_EQ(report.run.kernels[i].roofline.bound_by, e["bound_by"].get<std::string>());
    // Invariants: no finding the class forbids; no contradictory moves.
    for (const auto& f : d.findings) {
      if (!f.is_class) EXPECT_TRUE(diagnose::AllowedIn(d.cls, f.rule)) << f.rule;
    }
    for (const auto& m : moves) {
      for (auto o : diagnose::OpposingMoves(*diagnose::MoveFromName(m))) {
        EXPECT_FALSE(moves.count(diagnose::MoveName(o))) << m << " and " << diagnose::MoveName(o);
      }
    }
    if (d.cls == diagnose::BoundClass::kAtRoofline) EXPECT_EQ(d.findings.size(), 1u);
  }
  // Optional check that counter FLOPs match the kernel's nominal FLOPs (catches unit mistakes).
  if (c.spec.contains("nominal_flops") && device) {
    double nominal = c.spec["nominal_flops"].get<double>();
    double counted = report.run.kernels[0].roofline.total_flops;
    EXPECT_GT(counted, 0.5 * nominal);
    EXPECT_LT(counted, 2.0 * nominal);
  }

  std::string golden = base + c.name + ".golden.txt";
  const char* update = std::getenv("KILN_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    ASSERT_TRUE(WriteFile(golden, summary).ok());
  } else if (auto g = ReadFile(golden); g.ok()) {
    EXPECT_EQ(*g, summary) << "golden " << golden << " differs (KILN_UPDATE_GOLDEN=1 to accept)";
  }
  // The reports render without throwing and carry the kernels.
  EXPECT_NE(diagnose::RenderHtml(report).find("<svg"), std::string::npos);
  EXPECT_TRUE(diagnose::ToJson(report).contains("kernels"));
}

std::vector<Case> AllCases() {
  auto a = LoadCases("synthetic");
  auto b = LoadCases("data");
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A cuBLAS fp16 GEMM recorded on an H200 (bench/gpu/gemm_roofline_check.sh: 4096^3 = 1.374e11 FLOP in 172.6 us,
// ncu 2025.3 with every tensor counter it lists): Hopper's ncu counts fp16 tensor work as
// sm__ops_path_tensor_src_fp16 only (the names with a destination type do not exist there), so the FLOPs come
// from that counter, once; without it TritonBench-G's fp16 GEMMs read as 26-30% of the memory roof.
TEST(Roofline, HopperFp16TensorFlopsFromTheRecordedCublasGemm) {
  auto run = profile::ProfileFromCsv(kDir + "/data/cublas_fp16_h200.csv", {},
                                     *profile::LoadDeviceRecordFile(kDir + "/data/device.json"));
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->kernels.size(), 1u);
  const auto& r = run->kernels[0].roofline;
  ASSERT_NE(r.main(), nullptr);
  EXPECT_EQ(r.main()->dtype, "float16");
  EXPECT_TRUE(r.main()->tensor);
  EXPECT_DOUBLE_EQ(r.main()->flops, 137438953472.0);  // 2 x 4096^3, counted once
  EXPECT_EQ(r.dtypes.size(), 1u);
  EXPECT_EQ(r.bound_by, "compute");
  // 796 TFLOP/s against the measured cuBLAS fp16 roof of 747: above it, capped.
  EXPECT_NEAR(r.fraction_of_roof_measured, 1.374e11 / 172.576e-6 / 746.97e12, 0.01);
  EXPECT_DOUBLE_EQ(r.fraction_of_roof, 1.0);
}

// int8 tensor work is integer operations: the report says OP and TOP/s for it (the H200's int8 peak, session 23).
TEST(Roofline, Int8IsCountedInOperations) {
  auto device = *profile::LoadDeviceRecordFile(kDir + "/data/device.json");
  device.peaks.matmul_flops_per_s["int8"] = 930e12;
  profile::NcuKernelRow row;
  row.name = "int8_gemm";
  for (auto [k, v] : std::map<std::string, double>{
           {"gpu__time_duration.sum", 1e-3}, {"dram__bytes_read.sum", 1e8}, {"sm__ops_path_tensor_src_int8.sum", 4e11}})
    row.metrics[k] = {std::to_string(v), "", "", v};
  profile::NcuReport rep;
  rep.kernels.push_back(row);
  auto run = profile::BuildProfileRun(rep, {}, device);
  ASSERT_EQ(run.kernels.size(), 1u);
  EXPECT_EQ(run.kernels[0].roofline.main()->dtype, "int8");
  EXPECT_NEAR(run.kernels[0].roofline.fraction_of_roof, 400.0 / 930.0, 1e-9);
  const std::string text = diagnose::FormatText(diagnose::DiagnoseRun(run));
  EXPECT_NE(text.find("int8 930 TOP/s"), std::string::npos) << text;
  EXPECT_NE(text.find("int8 tensor: 4e+11 OP at 400.00 TOP/s"), std::string::npos) << text;
  EXPECT_NE(text.find("bfloat16 776 TFLOP/s"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Profile, Golden, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.dir + "_" + i.param.name; });

}  // namespace
}  // namespace kiln

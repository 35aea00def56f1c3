#include "profile/device.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "exec/runner.h"

namespace kiln::profile {
namespace {

using nlohmann::json;

std::string Transcript(double bw) {
  json hello = {{"request", {{"id", "1"}, {"op", "hello"}}},
                {"response",
                 {{"id", "1"},
                  {"ok", true},
                  {"protocol", 1},
                  {"interpreter", false},
                  {"isolation", "shared"},
                  {"versions", {{"torch", "2.11.0"}}},
                  {"devices",
                   {{{"index", 0},
                     {"name", "NVIDIA H100 80GB HBM3"},
                     {"uuid", "GPU-abc"},
                     {"sm_count", 132},
                     {"l2_bytes", 52428800},
                     {"smem_per_block_optin", 232448},
                     {"regs_per_sm", 65536},
                     {"total_mem_bytes", 85520809984LL},
                     {"cc", {9, 0}},
                     {"sm_clock_mhz", 1980},
                     {"mem_clock_mhz", 2619}}}}}}};
  json peaks = {{"request", {{"id", "2"}, {"op", "device_peaks"}}},
                {"response",
                 {{"id", "2"},
                  {"ok", true},
                  {"dram_bytes_per_s", bw},
                  {"matmul_flops_per_s", {{"bfloat16", 7.5e14}, {"float32", 5.1e13}}},
                  {"sm_clock_mhz", {1980, 1975}}}}};
  return hello.dump() + "\n" + peaks.dump() + "\n";
}

TEST(Device, MeasuresOnceThenServesFromTheStore) {
  char tmpl[] = "/tmp/kiln-dev-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  JsonDeviceStore store(tmpl);
  auto r1 = exec::ReplayRunner::FromText(Transcript(3.3e12), "t1");
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  auto rec = CharacterizeDevice(**r1, {}, store);
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  EXPECT_EQ(rec->source, "measured");
  EXPECT_EQ(rec->info.sm_count, 132);
  EXPECT_EQ(rec->info.smem_per_block_optin, 232448);
  EXPECT_EQ(rec->info.cc_major, 9);
  EXPECT_DOUBLE_EQ(rec->peaks.dram_bytes_per_s, 3.3e12);
  EXPECT_DOUBLE_EQ(rec->peaks.matmul_flops_per_s.at("bfloat16"), 7.5e14);
  EXPECT_EQ(access(store.PathFor("GPU-abc").c_str(), R_OK), 0);

  // A second characterization reads the store (the transcript's peaks differ and are not asked).
  auto r2 = exec::ReplayRunner::FromText(Transcript(1.0e12), "t2");
  auto again = CharacterizeDevice(**r2, {}, store);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->source, "cache");
  EXPECT_DOUBLE_EQ(again->peaks.dram_bytes_per_s, 3.3e12);

  // --refresh re-measures.
  auto r3 = exec::ReplayRunner::FromText(Transcript(1.0e12), "t3");
  CharacterizeOptions refresh;
  refresh.refresh = true;
  auto fresh = CharacterizeDevice(**r3, refresh, store);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->source, "measured");
  EXPECT_DOUBLE_EQ(fresh->peaks.dram_bytes_per_s, 1.0e12);
  EXPECT_NE(FormatDevice(*fresh).find("1.00 TB/s"), std::string::npos);
  EXPECT_EQ(fresh->peaks.dtypes_asked, CharacterizeOptions().dtypes);  // int8 asked; its failure has no peak

  // A record from before a dtype was asked for (no int8, no dtypes_asked: session 22's) is measured again, once.
  DeviceRecord old = *fresh;
  old.peaks.dtypes_asked.clear();
  ASSERT_TRUE(store.Save(old).ok());
  auto r4 = exec::ReplayRunner::FromText(Transcript(2.0e12), "t4");
  auto remeasured = CharacterizeDevice(**r4, {}, store);
  ASSERT_TRUE(remeasured.ok());
  EXPECT_EQ(remeasured->source, "measured");
  EXPECT_DOUBLE_EQ(remeasured->peaks.dram_bytes_per_s, 2.0e12);
  auto r5 = exec::ReplayRunner::FromText(Transcript(1.0e12), "t5");
  auto cached = CharacterizeDevice(**r5, {}, store);
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ(cached->source, "cache");
  EXPECT_DOUBLE_EQ(cached->peaks.dram_bytes_per_s, 2.0e12);
}

TEST(Device, RecordJsonRoundTripAndErrors) {
  DeviceRecord r;
  r.info.uuid = "GPU-x";
  r.info.name = "n";
  r.peaks.dram_bytes_per_s = 1e12;
  r.peaks.matmul_flops_per_s["tf32"] = 1e14;
  auto back = DeviceRecordFromJson(ToJson(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->info.uuid, "GPU-x");
  EXPECT_DOUBLE_EQ(back->peaks.matmul_flops_per_s.at("tf32"), 1e14);
  EXPECT_FALSE(DeviceRecordFromJson(json{{"device", {{"name", "x"}}}}).ok());
  EXPECT_FALSE(DevicePeaksFromJson(json{{"dram_bytes_per_s", 0}}).ok());
}

}  // namespace
}  // namespace kiln::profile

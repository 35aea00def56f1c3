// `kiln profile --task` after ncu, replayed from a recording: TritonBench-G add_example on an H100 (ncu 2025.3.1,
// bench/gpu/profile_task_diag.sh), the test case's call profiled inside the kiln_profile NVTX range: 3 add_kernel
// launches (the fourth call has no element: Triton launches nothing) among torch's RNG and fill kernels of the
// harness. The worker's response names add_kernel as the module's own kernel.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/file.h"
#include "profile/ncu_csv.h"
#include "profile/profile.h"
#include "profile/profile_task.h"

namespace kiln::profile {
namespace {

int CountMessages(const ProfileRun& run, const std::string& text) {
  int n = 0;
  for (const auto& m : run.ncu_messages) n += m.find(text) != std::string::npos;
  return n;
}

struct Recording {
  ProfileRun run;
  nlohmann::json response;
};

Recording Load() {
  const std::string base = std::string(KILN_PROFILE_TESTS) + "/data/h100_add_example_task";
  auto csv = ReadFile(base + ".csv");
  auto resp = ReadFile(base + ".response.json");
  EXPECT_TRUE(csv.ok() && resp.ok());
  auto report = ParseNcuRawCsv(*csv);
  EXPECT_TRUE(report.ok()) << report.status().message();
  Recording r;
  r.run = BuildProfileRun(*report, {}, std::nullopt);
  r.response = nlohmann::json::parse(*resp);
  return r;
}

TEST(ProfileTaskReplay, H100AddExampleKeepsTheModulesOwnKernels) {
  Recording r = Load();
  ASSERT_EQ(r.run.kernels.size(), 12u);  // every launch of the call (the NVTX range), torch's included
  ApplyWorkerResponse(r.response, /*own_only=*/true, &r.run);
  ASSERT_EQ(r.run.kernels.size(), 3u);
  double share = 0;
  for (const auto& k : r.run.kernels) {
    EXPECT_EQ(k.name(), "add_kernel");
    share += k.time_share;
  }
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(r.run.skipped_kernels.size(), 9u);
  for (const auto& s : r.run.skipped_kernels) EXPECT_NE(s, "add_kernel");
  EXPECT_EQ(CountMessages(r.run, "none of the profiled kernels"), 0);
}

TEST(ProfileTaskReplay, AllKernelsKeepsEveryLaunch) {
  Recording r = Load();
  ApplyWorkerResponse(r.response, /*own_only=*/false, &r.run);
  EXPECT_EQ(r.run.kernels.size(), 12u);
  EXPECT_TRUE(r.run.skipped_kernels.empty());
}

TEST(ProfileTaskReplay, ARenamedOwnKernelKeepsEverythingAndSaysSo) {
  Recording r = Load();
  r.response["cases"][0]["own_kernel_names"] = {"add_kernel_v2"};  // a name ncu never reported
  ApplyWorkerResponse(r.response, /*own_only=*/true, &r.run);
  EXPECT_EQ(r.run.kernels.size(), 12u);
  EXPECT_EQ(CountMessages(r.run, "none of the profiled kernels"), 1);
}

}  // namespace
}  // namespace kiln::profile

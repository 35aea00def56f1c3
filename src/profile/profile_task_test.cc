#include "profile/profile_task.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/file.h"

namespace kiln::profile {
namespace {

// The worker request kiln profile writes for ncu's target: policy trusted, the case, and the autotune picks the
// caller gives (kiln optimize passes those of its timed runs, so the profiled original runs the configs it was
// timed with instead of tuning again under ncu). ncu is a stand-in that runs nothing; the request file stays in
// the given work directory.
TEST(ProfileTask, RequestCarriesTheAutotunePicks) {
  auto dir = TempDir::Make("kiln_profile_task_test");
  ASSERT_TRUE(dir.ok());
  const std::string ncu = dir->path() + "/ncu";
  ASSERT_TRUE(WriteFile(ncu, "#!/bin/sh\necho '==WARNING== No kernels were profiled.'\nexit 0\n").ok());
  ASSERT_EQ(chmod(ncu.c_str(), 0755), 0);
  task::TaskSpec spec;
  spec.format = task::Format::kTritonBenchG;
  spec.name = "tritonbench_g/add_example";
  spec.path = dir->path() + "/add_example.py";
  ProfileOptions o;
  o.ncu.ncu_path = ncu;
  o.work_dir = dir->path();
  o.case_name = "perf_3";
  o.autotune_picks = nlohmann::json::array({{{"id", "e7da"}, {"picks", {{{128, "torch.float32"}, 0}}}}});
  (void)ProfileTask(spec, std::nullopt, o, std::nullopt);  // fails: the stand-in profiles nothing
  auto text = ReadFile(dir->path() + "/request.json");
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["mode"], "profile");
  EXPECT_EQ(j["policy"], "trusted");
  EXPECT_EQ(j["profile_case"], "perf_3");
  EXPECT_EQ(j["autotune_picks"], o.autotune_picks);

  o.autotune_picks = nlohmann::json::array();  // none: the key is left out, as in any request
  (void)ProfileTask(spec, std::nullopt, o, std::nullopt);
  text = ReadFile(dir->path() + "/request.json");
  ASSERT_TRUE(text.ok());
  EXPECT_FALSE(nlohmann::json::parse(*text).contains("autotune_picks"));
}

}  // namespace
}  // namespace kiln::profile

// kiln profile --task keeps the candidate's own kernels (issue 14 item 5) and shortens C++ names in text.
#include "profile/profile.h"

#include <gtest/gtest.h>

#include "diagnose/report.h"

namespace kiln::profile {
namespace {

constexpr const char* kRng =
    "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
    "at::native::templates::cuda::uniform_and_transform<float, float, at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, "
    "at::CUDAGeneratorImpl*, float, float)::{lambda(curandStatePhilox4_32_10*)#1}>(long, "
    "at::PhiloxCudaState, float)";

ProfileRun Run3() {
  ProfileRun run;
  for (auto [name, s] : std::vector<std::pair<std::string, double>>{{kRng, 3e-6}, {"my_kernel", 1e-6}, {kRng, 3e-6}}) {
    KernelProfile k;
    k.row.name = name;
    k.roofline.seconds = s;
    run.total_seconds += s;
    run.kernels.push_back(k);
  }
  return run;
}

TEST(ProfileOwnKernels, KeepsTheCandidatesKernelsAndNamesTheOthers) {
  ProfileRun run = Run3();
  ASSERT_TRUE(KeepOwnKernels({"my_kernel"}, &run));
  ASSERT_EQ(run.kernels.size(), 1u);
  EXPECT_EQ(run.kernels[0].name(), "my_kernel");
  EXPECT_DOUBLE_EQ(run.kernels[0].time_share, 1.0);
  EXPECT_EQ(run.skipped_kernels, (std::vector<std::string>{kRng, kRng}));
}

TEST(ProfileOwnKernels, NoOwnKernelProfiledKeepsEverything) {
  ProfileRun run = Run3();
  EXPECT_FALSE(KeepOwnKernels({"other_kernel"}, &run));
  EXPECT_EQ(run.kernels.size(), 3u);
  EXPECT_TRUE(run.skipped_kernels.empty());
}

TEST(ProfileOwnKernels, ShortNamesInTextFullNamesInJson) {
  EXPECT_EQ(ShortKernelName(kRng), "distribution_elementwise_grid_stride_kernel");
  EXPECT_EQ(ShortKernelName("softmax_kernel"), "softmax_kernel");
  EXPECT_EQ(ShortKernelName("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)"),
            "Kernel2");
  ProfileRun run = Run3();
  KeepOwnKernels({"my_kernel"}, &run);
  auto report = diagnose::DiagnoseRun(run);
  std::string text = diagnose::FormatText(report);
  EXPECT_NE(text.find("skipped 2 other kernel(s) of the call"), std::string::npos) << text;
  EXPECT_NE(text.find("distribution_elementwise_grid_stride_kernel x2"), std::string::npos) << text;
  EXPECT_EQ(text.find("at::native"), std::string::npos) << text;
  auto j = diagnose::ToJson(report);
  EXPECT_EQ(j["skipped_kernels"][0], kRng);  // the full name stays in JSON
}

}  // namespace
}  // namespace kiln::profile

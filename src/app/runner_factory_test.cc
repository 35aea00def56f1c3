// The one runner factory: worker options from a spec, transcript replays, recording workers.
#include "app/runner_factory.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "app/prepare_input.h"
#include "common/file.h"

namespace kiln::app {
namespace {

const std::string kSrc = KILN_SOURCE_DIR;

TEST(RunnerFactory, WorkerOptionsFollowTheSpec) {
  RunnerSpec s;
  s.python = "/opt/py";
  s.isolation = exec::Isolation::kShared;
  s.interpret = true;
  s.device = 2;
  s.cuda_visible_devices = "GPU-1";
  exec::WorkerOptions o = ToWorkerOptions(s);
  EXPECT_EQ(o.python, "/opt/py");
  EXPECT_EQ(o.isolation, exec::Isolation::kShared);
  EXPECT_TRUE(o.interpret);
  EXPECT_EQ(o.device, 2);
  EXPECT_EQ(o.cuda_visible_devices, "GPU-1");
}

TEST(RunnerFactory, ReplayAnswersFromTheTranscriptAndAMissingOneIsAnError) {
  RunnerSpec s;
  s.replay = kSrc + "/tests/no/such/transcript.jsonl";
  EXPECT_FALSE(MakeRunner(s).ok());
  s.replay = kSrc + "/tests/eval/data/replay_relu.jsonl";
  s.record = "/tmp/kiln_rf_never.jsonl";  // a replay records nothing
  auto r = MakeRunner(s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Unrecorded(r->get()), r->get());
  auto h = (*r)->Hello();
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_FALSE(h->devices.empty());
  EXPECT_EQ(h->devices[0].uuid, "GPU-00000000-hand-written");
  EXPECT_FALSE(std::filesystem::exists("/tmp/kiln_rf_never.jsonl"));
}

TEST(RunnerFactory, RecordingWrapsTheWorkerItOwns) {
  RunnerSpec s;
  s.python = "/nonexistent/python3";
  auto plain = MakeRunner(s);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(Unrecorded(plain->get()), plain->get());
  s.record = "/tmp/kiln_rf_unused.jsonl";
  auto rec = MakeRunner(s);
  ASSERT_TRUE(rec.ok());
  exec::Runner* inner = Unrecorded(rec->get());
  EXPECT_NE(inner, rec->get());
  EXPECT_NE(dynamic_cast<exec::WorkerRunner*>(inner), nullptr);
}

TEST(PrepareInput, PicksTheLaunchedKernelAndItsSpace) {
  task::LoadOptions lo;
  lo.entry = "softmax";
  lo.bench = kSrc + "/examples/softmax/bench.py";
  auto spec = task::LoadTask(kSrc + "/examples/softmax/softmax.py", lo);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  auto in = PrepareInput(*spec, "");
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(in->kernel, "softmax_kernel");
  EXPECT_NE(in->space.Find("BLOCK"), nullptr);
  EXPECT_EQ(in->baseline.at("BLOCK"), 64);
  EXPECT_FALSE(in->autotuned);
  auto missing = PrepareInput(*spec, "no_such_kernel");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no @triton.jit kernel named 'no_such_kernel'"), std::string::npos);
}

// Literal tile sizes in kernel bodies (issue 21, tests/rewrite/cases/literal_tiles.py): lifted and searched
// where they only tile the data; fixed, with the reason, where the kernel or its caller relies on them.
TEST(PrepareInput, LiftsLiteralTileSizesOrSaysWhyNot) {
  task::LoadOptions lo;
  lo.entry = "scale";
  lo.bench = kSrc + "/tests/optimize/lift/bench.py";
  auto spec = task::LoadTask(kSrc + "/tests/rewrite/cases/literal_tiles.py", lo);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  auto has_note = [](const search::OptimizeInput& in, const std::string& s) {
    for (const auto& n : in.notes)
      if (n.find(s) != std::string::npos) return true;
    return false;
  };
  auto scale = PrepareInput(*spec, "scale_kernel");
  ASSERT_TRUE(scale.ok()) << scale.status().message();
  ASSERT_NE(scale->space.Find("KILN_BLOCK0"), nullptr);
  EXPECT_EQ(scale->baseline.at("KILN_BLOCK0"), 1024);
  EXPECT_NE(scale->render_source.find("KILN_BLOCK0: tl.constexpr = 1024"), std::string::npos);
  EXPECT_EQ(scale->original_source.find("KILN_BLOCK0"), std::string::npos);  // the original stays the baseline
  EXPECT_TRUE(has_note(*scale, "literal 1024 (line 14) -> constexpr KILN_BLOCK0 = 1024"));

  auto row = PrepareInput(*spec, "row_kernel");  // covers a row of 64 unmasked: lifted, then fixed
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(row->space.Find("KILN_BLOCK0"), nullptr);
  EXPECT_TRUE(row->render_source.empty());
  EXPECT_TRUE(has_note(*row, "literal 64 stays fixed: lifted as KILN_BLOCK0 for the analysis, it covers an extent"));

  auto chunk = PrepareInput(*spec, "chunk_sum_kernel");  // the caller sizes a buffer with the same 128
  ASSERT_TRUE(chunk.ok()) << chunk.status().message();
  EXPECT_TRUE(chunk->render_source.empty());
  EXPECT_TRUE(has_note(*chunk, "literal 128 stays fixed: host code uses the same number"));
}

TEST(PrepareInput, RefusesFormatsItCannotTune) {
  task::TaskSpec spec;
  spec.format = task::Format::kKernelBench;
  spec.path = "x.py";
  auto in = PrepareInput(spec, "");
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find("kiln eval"), std::string::npos);
}

}  // namespace
}  // namespace kiln::app

// The proposer of `kiln optimize` without --llm: the diagnosis's source rewrites, applied by kiln's own.
#include "app/rewrite_proposer.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "rewrite/rewrite.h"

namespace kiln::app {
namespace {

std::string Read(const std::string& rel) {
  std::ifstream f(std::string(KILN_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

search::ProposalContext Ctx(const std::string& rel, const std::string& kernel, std::vector<std::string> moves) {
  search::ProposalContext ctx;
  ctx.source = Read(rel);
  ctx.kernel = kernel;
  search::ProfileSummary p;
  p.bound = "latency";
  p.roofline_fraction = 0.3;
  p.findings.push_back({"low_occupancy_waves", "major", "few programs", std::move(moves), nlohmann::json::array()});
  ctx.profile = p;
  return ctx;
}

std::string Expected(const std::string& rel, const std::string& kernel, const std::string& request) {
  auto rq = rewrite::ParseRequest(request);
  EXPECT_TRUE(rq.ok());
  auto r = rewrite::ApplySequence(Read(rel), rel, rewrite::Target{kernel, {}}, {*rq});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->source : "";
}

// fifth_order_sph_harmonics, flash_decode2_llama, reversed_cumsum (development modules, H100 session 10):
// the diagnosis asked for a persistent grid the search could not compose: it is proposed now.
TEST(RewriteProposer, PersistentGridWhereTheDiagnosisAsksForIt) {
  task::TaskSpec task;
  RewriteProposer p(task, "add_kernel");
  auto ctx = Ctx("tests/rewrite/cases/vector_add_var.py", "add_kernel", {"bigger_block", "persistent_grid"});
  auto props = p.Propose(ctx);
  ASSERT_TRUE(props.ok()) << props.status().message();
  ASSERT_EQ(props->size(), 1u);
  EXPECT_EQ((*props)[0].source, Expected("tests/rewrite/cases/vector_add_var.py", "add_kernel", "persistent_grid"));
  EXPECT_NE((*props)[0].source.find("_kiln_num_tiles"), std::string::npos);
  EXPECT_EQ((*props)[0].note, "persistent_grid (diagnosis: low_occupancy_waves)");
  // One round only, and nothing without a diagnosis or a move it stands for.
  ctx.round = 1;
  EXPECT_TRUE(p.Propose(ctx)->empty());
  ctx.round = 0;
  ctx.profile.reset();
  EXPECT_TRUE(p.Propose(ctx)->empty());
  EXPECT_TRUE(p.Propose(Ctx("tests/rewrite/cases/vector_add_var.py", "add_kernel", {"bigger_block"}))->empty());
}

// matmul_triton1 (one program for 132 SMs, 0.5% of its roofline): split-K at 4 and 16; a rewrite that
// does not apply (a grid over META is not a persistent grid's tuple) is not proposed.
TEST(RewriteProposer, SplitKAndNothingThatDoesNotApply) {
  task::TaskSpec task;
  RewriteProposer p(task, "matmul_kernel");
  auto props = p.Propose(Ctx("tests/rewrite/cases/matmul.py", "matmul_kernel", {"split_k", "persistent_grid"}));
  ASSERT_TRUE(props.ok()) << props.status().message();
  ASSERT_EQ(props->size(), 2u);
  EXPECT_EQ((*props)[0].source, Expected("tests/rewrite/cases/matmul.py", "matmul_kernel", "split_k SPLIT_K=4"));
  EXPECT_EQ((*props)[1].source, Expected("tests/rewrite/cases/matmul.py", "matmul_kernel", "split_k SPLIT_K=16"));
  auto auto_tuned = p.Propose(Ctx("tests/rewrite/cases/matmul_autotuned.py", "matmul_kernel", {"split_k"}));
  ASSERT_TRUE(auto_tuned.ok());
  EXPECT_TRUE(auto_tuned->empty());  // split-K refuses an autotuned kernel
  EXPECT_EQ(p.moves(), (std::vector<std::string>{"persistent_grid", "split_k", "rows_per_program"}));
  for (const auto& m : p.moves()) EXPECT_FALSE(RewritesForMove(m).empty()) << m;
}

// dequantize_rowwise and logsumexp_fwd (development modules, H200 session 25): 2^19-2^21 programs of a
// few hundred bytes; the diagnosis's many_small_programs asks for rows per program, which applies to an
// elementwise kernel on a lambda grid and to an autotuned kernel on a 2-D grid.
TEST(RewriteProposer, RowsPerProgramForManySmallPrograms) {
  task::TaskSpec task;
  {
    const std::string rel = "tests/rewrite/cases/dequant_lambda_grid.py";
    RewriteProposer p(task, "dequant_kernel");
    auto props = p.Propose(Ctx(rel, "dequant_kernel", {"bigger_block", "rows_per_program", "fewer_warps"}));
    ASSERT_TRUE(props.ok()) << props.status().message();
    ASSERT_EQ(props->size(), 2u);
    EXPECT_EQ((*props)[0].source, Expected(rel, "dequant_kernel", "rows_per_program rows=8"));
    EXPECT_NE((*props)[0].source.find("ROWS_PER_PROGRAM=8"), std::string::npos);
    // and with one warp, for a small row (a sequence of two rewrites)
    const std::string one_warp = (*props)[1].source;
    EXPECT_NE(one_warp.find("ROWS_PER_PROGRAM=8"), std::string::npos);
    EXPECT_NE(one_warp.find("num_warps=1"), std::string::npos) << one_warp;
    EXPECT_NE(one_warp.find("tl.range("), std::string::npos);
    EXPECT_EQ((*props)[1].note,
              "rows_per_program rows=8 stages=3 ;; set_params num_warps=1 (diagnosis: low_occupancy_waves)");
  }
  {
    // Autotuned over num_warps on a 2-D grid: the rows rewrite applies; the warps stay the autotuner's.
    const std::string rel = "tests/rewrite/cases/row_lse_2d.py";
    RewriteProposer p(task, "lse_kernel");
    auto props = p.Propose(Ctx(rel, "lse_kernel", {"rows_per_program"}));
    ASSERT_TRUE(props.ok()) << props.status().message();
    ASSERT_EQ(props->size(), 2u);
    EXPECT_EQ((*props)[0].source, Expected(rel, "lse_kernel", "rows_per_program rows=8"));
    EXPECT_EQ((*props)[1].source, Expected(rel, "lse_kernel", "rows_per_program rows=8 stages=3"));
    EXPECT_EQ((*props)[1].note, "rows_per_program rows=8 stages=3 (diagnosis: low_occupancy_waves)");
  }
  // Not where programs wait on one another.
  RewriteProposer p(task, "chained_sum_kernel");
  EXPECT_TRUE(p.Propose(Ctx("tests/rewrite/cases/spin_flag.py", "chained_sum_kernel", {"rows_per_program"}))->empty());
}

}  // namespace
}  // namespace kiln::app

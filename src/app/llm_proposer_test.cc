#include "app/llm_proposer.h"

#include <gtest/gtest.h>

namespace kiln::app {
namespace {

TEST(LlmProposer, ProfileTextCarriesTheDiagnosisAndTheTimes) {
  search::ProposalContext ctx;
  ctx.kernel = "softmax_kernel";
  ctx.original_case_ms = {{"small", 0.0123}, {"wide", 0.5}};
  EXPECT_EQ(ProfileText(ctx),
            "- no profile was taken (measure-only run): judge from the code\n- case small: 0.0123 ms now\n"
            "- case wide: 0.5 ms now");
  search::ProfileSummary p;
  p.bound = "memory";
  p.roofline_fraction = 0.41;
  p.findings.push_back({"memory_bound_headroom", "major", "DRAM at 41% of peak", {}, nlohmann::json::array()});
  ctx.profile = p;
  ctx.original_case_ms.clear();
  EXPECT_EQ(ProfileText(ctx),
            "- kernel softmax_kernel: memory bound, at 41% of its roofline\n"
            "- [major] memory_bound_headroom: DRAM at 41% of peak");
}

TEST(LlmProposer, FeedbackOnACorrectProposalGivesItsTimeAgainstTheOriginal) {
  search::ProposalOutcome o;
  o.source = "code";
  o.verdict = "ok";
  o.result = exec::EvalResult::Make(exec::Verdict::kOk, "", "");
  o.score_ms = 0.5;
  o.original_score_ms = 1.0;
  EXPECT_EQ(ProposalFeedback(o),
            "Your rewrite is correct. It took 0.5 ms against the original's 1 ms (2.00x). Propose a faster one; reply "
            "with the complete module in one ```python block.");
  o.result = exec::EvalResult::Make(exec::Verdict::kMismatch, "value_mismatch", "out: 3 of 8 elements differ");
  EXPECT_NE(ProposalFeedback(o).find("(mismatch)"), std::string::npos);
  search::ProposalOutcome none;
  none.verdict = "no_code";
  EXPECT_NE(ProposalFeedback(none).find("no Python code block"), std::string::npos);
}

TEST(LlmProposer, LaterRoundsAreToldTheFastestModuleWithItsTimesAndTopFindings) {
  search::ProposalContext ctx;
  ctx.original_case_ms = {{"small", 0.2}, {"wide", 0.8}};
  search::ProposalOutcome prev;
  prev.original_score_ms = 0.4;
  ctx.previous = {prev};
  search::BestSoFar b;
  b.what = "proposal #3 (sample 1, round 1)";
  b.is_original = false;
  b.score_ms = 0.2;
  b.case_ms = {{"small", 0.1}, {"wide", 0.4}};
  for (int i = 0; i < 4; ++i)
    b.findings.push_back({"rule" + std::to_string(i), "major", "finding " + std::to_string(i), {}, {}});
  b.findings_of_original = false;
  EXPECT_EQ(BestSoFarText(b, ctx),
            "The fastest correct module so far is proposal #3 (sample 1, round 1): 0.2 ms against the original's "
            "0.4 ms (2.00x).\n"
            "- case small: 0.1 ms (the original: 0.2 ms)\n"
            "- case wide: 0.4 ms (the original: 0.8 ms)\n"
            "Top findings of its profile:\n"
            "- [major] rule0: finding 0\n- [major] rule1: finding 1\n- [major] rule2: finding 2");
  b.findings_of_original = true;
  EXPECT_NE(BestSoFarText(b, ctx).find("Top findings of the original's profile (the fastest was not profiled):"),
            std::string::npos);
  search::BestSoFar orig;
  orig.score_ms = 0.4;
  orig.case_ms = ctx.original_case_ms;
  EXPECT_EQ(BestSoFarText(orig, ctx),
            "The fastest correct module so far is still the original: 0.4 ms.\n- case small: 0.2 ms\n- case wide: 0.8 ms");
  orig.score_ms = -1;  // a dry run: nothing timed, nothing told
  EXPECT_EQ(BestSoFarText(orig, ctx), "");
}

// A proposal's module is analysed like the original: the kernel of the original's name, or (renamed) the
// launched one; its values become the search's start, and the renderer writes configs into its text.
TEST(LlmProposer, AProposalsModuleIsAnalysedForItsOwnTunables) {
  const std::string src =
      "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
      "def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)  # the model's\n\n\n"
      "def double(x):\n    y = torch.empty_like(x)\n    n = x.numel()\n"
      "    double_kernel[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128, num_warps=2)\n    return y\n";
  task::TaskSpec t;
  t.name = "double";
  t.format = task::Format::kKiln;
  t.path = "double.py";
  auto sp = ProposalSpaceOf(t, "old_kernel_name", src);
  ASSERT_TRUE(sp.ok()) << sp.status().message();
  EXPECT_EQ(sp->kernel, "double_kernel");
  EXPECT_EQ(sp->baseline.at("BLOCK"), 128);
  EXPECT_EQ(sp->baseline.at("num_warps"), 2);
  ASSERT_TRUE(sp->renderer);
  search::Config c = sp->baseline;
  c["BLOCK"] = 1024;
  auto r = sp->renderer->Render(c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->find("BLOCK=1024"), std::string::npos) << *r;
  EXPECT_NE(r->find("# the model's"), std::string::npos);
  EXPECT_FALSE(ProposalSpaceOf(t, "", "def f(:\n").ok());
}

}  // namespace
}  // namespace kiln::app

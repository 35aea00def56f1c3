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

}  // namespace
}  // namespace kiln::app

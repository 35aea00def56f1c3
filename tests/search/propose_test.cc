// The proposer's phase (kiln optimize --llm) with a fake measurer and a scripted proposer: a proposal
// faster than anything the parametric search reaches wins after verification, reported as the
// proposer's; proposals run under policy strict; failed proposals are told back in the next round; a
// proposer that fails ends the proposals, not the run; a dry run checks proposals for correctness.
#include <cmath>

#include <gtest/gtest.h>

#include "fakes.h"
#include "search/loop.h"
#include "search/report.h"

namespace kiln::search {
namespace {

using testing::FakeMeasurer;
using testing::FakeRenderer;
using testing::RenderConfig;

const Config kBase{{"BLOCK_SIZE", 64}, {"num_warps", 4}};
const Config kLlm{{"BLOCK_SIZE", 1024}, {"num_warps", 1}};    // the model's "rewrite": fastest of all
const Config kWrong{{"BLOCK_SIZE", 512}, {"num_warps", 1}};   // the model's wrong rewrite

std::string Rewrite(const Config& c) { return RenderConfig(c) + "# rewritten by the model\n"; }

// Records the policy of every request for a proposer's module.
class PolicyMeasurer : public FakeMeasurer {
 public:
  std::vector<exec::Policy> proposal_policies;
  exec::EvalResult Run(const exec::EvalRequest& r) override {
    if (r.candidate_source && r.candidate_source->find("# rewritten") != std::string::npos) {
      std::lock_guard<std::mutex> l(mu);
      proposal_policies.push_back(r.policy);
    }
    return FakeMeasurer::Run(r);
  }
};

class ScriptedProposer : public Proposer {
 public:
  std::vector<std::vector<Proposal>> rounds_;
  std::vector<ProposalContext> seen;
  bool fail_after = false;
  std::string name() const override { return "llm"; }
  int rounds() const override { return static_cast<int>(rounds_.size()) + (fail_after ? 1 : 0); }
  Result<std::vector<Proposal>> Propose(const ProposalContext& ctx) override {
    seen.push_back(ctx);
    if (ctx.round >= static_cast<int>(rounds_.size())) return Unavailable("http://127.0.0.1:9: Connection");
    return rounds_[ctx.round];
  }
};

struct Fixture {
  PolicyMeasurer ev;
  FakeRenderer rr;
  ScriptedProposer pr;
  double clock = 0;
  OptimizeOptions o;
  OptimizeInput in;
  Fixture() {
    // BLOCK_SIZE in 32..256 only: the search cannot reach 1024; bigger blocks are faster.
    ev.time_ms = [](const Config& c, bool) { return 64.0 / static_cast<double>(c.at("BLOCK_SIZE")); };
    ev.wrong = [](const Config& c, int) { return c == kWrong; };
    ev.clock = &clock;
    ev.cost_s = 0.5;
    o.clock = [this] { return clock; };
    o.budget_seconds = 1000;
    o.strategy = "coordinate";
    in.task.name = "fake/task";
    in.task.hash = "0123456789abcdef";
    in.kernel = "kernel";
    in.space = Space({{"BLOCK_SIZE", Role::kBlock, {32, 64, 128, 256}, false},
                      {"num_warps", Role::kNumWarps, {1, 2, 4, 8}, true}});
    in.baseline = kBase;
    in.original_source = RenderConfig(kBase);
  }
  Result<OptimizeResult> Run() {
    Deps d{&ev, &rr};
    d.proposer = &pr;
    return Optimize(in, o, d);
  }
};

TEST(Propose, AFasterRewriteWinsAfterVerificationAndIsReportedAsTheModels) {
  Fixture f;
  f.pr.rounds_ = {{{Rewrite(kLlm), "sample 0, turn 1"}}};
  auto r = f.Run();
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->improved) << r->kept_reason;
  EXPECT_EQ(r->best_source, Rewrite(kLlm));
  EXPECT_EQ(r->best_origin, "llm");
  EXPECT_TRUE(r->best_is_proposal);
  EXPECT_NEAR(r->geomean_speedup, 16.0, 1e-6);
  EXPECT_NE(FormatReportText(*r).find("the winner is a rewrite proposed by llm"), std::string::npos);
  EXPECT_EQ(r->ToJson()["best_origin"], "llm");
  // Every request for the model's module (short timing, verification, own check) ran under policy strict.
  ASSERT_GE(f.ev.proposal_policies.size(), 3u);
  for (auto p : f.ev.proposal_policies) EXPECT_EQ(p, exec::Policy::kStrict);
  // The proposer saw the original and its times.
  ASSERT_EQ(f.pr.seen.size(), 1u);
  EXPECT_EQ(f.pr.seen[0].source, RenderConfig(kBase));
  EXPECT_EQ(f.pr.seen[0].original_case_ms.size(), 2u);
}

TEST(Propose, FailuresGoBackToTheProposerAndTheSearchGoesOn) {
  Fixture f;
  f.pr.rounds_ = {{{Rewrite(kWrong), ""}, {"", "the answer had no code"}}, {}};
  f.pr.fail_after = true;
  auto r = f.Run();
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(f.pr.seen.size(), 3u);
  const auto& prev = f.pr.seen[1].previous;
  ASSERT_EQ(prev.size(), 2u);
  EXPECT_EQ(prev[0].verdict, "mismatch");
  EXPECT_EQ(prev[0].result.verdict, exec::Verdict::kMismatch);
  EXPECT_EQ(prev[1].verdict, "no_code");
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("llm: no proposals: http://127.0.0.1:9: Connection") != std::string::npos;
  EXPECT_TRUE(noted);
  // The parametric search still ran and won with a config of the original.
  EXPECT_TRUE(r->improved);
  EXPECT_FALSE(r->best_is_proposal);
  EXPECT_EQ(r->best_config.at("BLOCK_SIZE"), 256);
  int llm = 0;
  for (const auto& c : r->candidates) llm += c.origin == "llm" && c.proposal;
  EXPECT_EQ(llm, 2);
  EXPECT_NE(FormatReportText(*r).find("[llm proposal: a whole module]"), std::string::npos);
}

TEST(Propose, ADryRunChecksTheProposalsForCorrectness) {
  Fixture f;
  f.ev.interpreter = true;
  f.o.dry_run = true;
  f.pr.rounds_ = {{{Rewrite(kLlm), ""}, {Rewrite(kWrong), ""}}};
  auto r = f.Run();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->improved);
  std::vector<std::string> verdicts;
  for (const auto& c : r->candidates)
    if (c.origin == "llm") verdicts.push_back(c.verdict);
  EXPECT_EQ(verdicts, (std::vector<std::string>{"ok", "mismatch"}));
  EXPECT_EQ(f.ev.Count(exec::Mode::kTime), 0);
}

}  // namespace
}  // namespace kiln::search

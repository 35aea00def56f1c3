#include "datagen/dataset.h"

#include <gtest/gtest.h>

namespace kiln::datagen {
namespace {

SampleText Sample() {
  SampleText s;
  s.id = "comp_1_00000";
  s.program = "class Model:\n    pass\n";
  s.candidate = "class ModelNew:\n    pass\n";
  s.reasoning = CompilerReasoning({"activation", "reduction"},
                                  {{"poi_fused_relu_0", "pointwise", "# ..."}, {"per_fused_sum_1", "persistent reduction", ""}});
  s.route = "inductor";
  s.meta = {{"origin", "composed"}};
  return s;
}

TEST(Dataset, ThreeFormatsCarryTheSameInstructionAndResponse) {
  SampleText s = Sample();
  nlohmann::json m = MessagesRecord(s), a = AlpacaRecord(s), g = SharegptRecord(s);
  ASSERT_EQ(m["messages"].size(), 3u);
  EXPECT_EQ(m["messages"][0]["role"], "system");
  EXPECT_EQ(m["messages"][1]["role"], "user");
  EXPECT_EQ(m["messages"][2]["role"], "assistant");
  EXPECT_EQ(m["messages"][1]["content"], a["instruction"]);
  EXPECT_EQ(m["messages"][2]["content"], a["output"]);
  EXPECT_EQ(g["conversations"][0]["from"], "human");
  EXPECT_EQ(g["conversations"][0]["value"], a["instruction"]);
  EXPECT_EQ(g["conversations"][1]["from"], "gpt");
  EXPECT_EQ(g["conversations"][1]["value"], a["output"]);
  EXPECT_EQ(a["input"], "");
  EXPECT_EQ(m["id"], "comp_1_00000");
}

TEST(Dataset, InstructionHoldsTheProgramAndResponseEndsWithTheCode) {
  SampleText s = Sample();
  std::string ins = Instruction(s.program);
  EXPECT_NE(ins.find("```python\nclass Model:\n    pass\n```"), std::string::npos) << ins;
  EXPECT_NE(ins.find("ModelNew"), std::string::npos);
  EXPECT_NE(ins.find("@triton.jit"), std::string::npos);
  std::string r = Response(s);
  EXPECT_EQ(r.rfind("```python\nclass ModelNew:\n    pass\n```\n"), r.size() - std::string("```python\nclass ModelNew:\n    pass\n```\n").size());
  EXPECT_EQ(r.find(s.reasoning), 0u);
}

TEST(Dataset, ReasoningNamesEveryKernelAndWhy) {
  std::string r = Sample().reasoning;
  EXPECT_NE(r.find("activation, reduction"), std::string::npos) << r;
  EXPECT_NE(r.find("1. poi_fused_relu_0 (pointwise)"), std::string::npos) << r;
  EXPECT_NE(r.find("2. per_fused_sum_1 (persistent reduction)"), std::string::npos) << r;
  EXPECT_NE(r.find("2 kernels are enough"), std::string::npos) << r;
  std::string one = CompilerReasoning({}, {{"poi_fused_add_0", "pointwise", ""}});
  EXPECT_NE(one.find("1 kernel is enough"), std::string::npos) << one;
  EXPECT_NE(one.find("combines basic operators"), std::string::npos) << one;
  EXPECT_NE(one.find("chosen for these shapes"), std::string::npos) << one;
  std::string dyn = CompilerReasoning({}, {{"poi_fused_add_0", "pointwise", ""}}, {"s77 = x.size(0)", "s27 = x.size(1)"});
  EXPECT_NE(dyn.find("read from the inputs (s77 = x.size(0), s27 = x.size(1))"), std::string::npos) << dyn;
  EXPECT_EQ(dyn.find("chosen for these shapes"), std::string::npos) << dyn;
}

TEST(Dataset, ReasoningOfAnAnswerIsItsTextWithoutTheCode) {
  std::string code = "import triton\n@triton.jit\ndef k(x):\n    pass\n";
  EXPECT_EQ(ReasoningOf("Step 1: fuse.\nStep 2: launch.\n\n```python\n" + code + "```\n", code),
            "Step 1: fuse.\nStep 2: launch.");
  // text after the block stays; <think> tags go, their content stays; an earlier sketch block stays
  EXPECT_EQ(ReasoningOf("<think>rows fit a block</think>\nPlan: ```x```\n```py\n" + code + "```\nDone.", code),
            "rows fit a block\nPlan: ```x```\n\nDone.");
  // a block left open runs to the end
  EXPECT_EQ(ReasoningOf("Plan.\n```python\n" + code, code), "Plan.");
  // nothing but code: no reasoning
  EXPECT_EQ(ReasoningOf("```python\n" + code + "```", code), "");
  EXPECT_EQ(ReasoningOf(code, code), "");
}

TEST(Dataset, TheLlmPromptIsAGenTemplateAskingForReasoning) {
  std::string t = DefaultLlmPromptText();
  EXPECT_NE(t.find("=== system ==="), std::string::npos);
  EXPECT_NE(t.find("{{reference}}"), std::string::npos);
  EXPECT_NE(t.find("step by step"), std::string::npos);
  EXPECT_NE(t.find("libdevice"), std::string::npos);
}

}  // namespace
}  // namespace kiln::datagen

#include "datagen/normalize.h"

#include <gtest/gtest.h>

namespace kiln::datagen {
namespace {

const char* kModel = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """Applies ReLU."""
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) * 2.0

batch_size = 16
dim = 1024

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
)";

TEST(NormalizedHash, IgnoresCommentsDocstringsFormattingAndNames) {
  std::string renamed = R"(import torch
import torch.nn as nn
# a comment
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, inp):   # renamed argument
        return torch.relu(inp)*2.0
batch_size = 16
dim = 1024
def get_inputs():
    return [torch.randn(batch_size, dim)]
def get_init_inputs():
    return []
)";
  EXPECT_EQ(*NormalizedHash(kModel), *NormalizedHash(renamed));
}

TEST(NormalizedHash, SeesOperatorsConstantsAndAttributes) {
  std::string a = kModel;
  auto h = *NormalizedHash(a);
  std::string mul_to_add = a;
  mul_to_add.replace(mul_to_add.find("* 2.0"), 5, "+ 2.0");
  EXPECT_NE(h, *NormalizedHash(mul_to_add));
  std::string other_const = a;
  other_const.replace(other_const.find("2.0"), 3, "3.0");
  EXPECT_NE(h, *NormalizedHash(other_const));
  std::string other_api = a;
  other_api.replace(other_api.find("torch.relu"), 10, "torch.tanh");
  EXPECT_NE(h, *NormalizedHash(other_api));
}

TEST(NormalizedHash, SyntaxErrorIsLocated) {
  auto r = NormalizedHash("def f(:\n    pass\n", "bad.py");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.py:1:"), std::string::npos) << r.status().message();
}

TEST(BenchmarkIndex, MatchesATaskInDisguiseNotAnotherProgram) {
  BenchmarkIndex index;
  ASSERT_TRUE(index.Add("level1/19_ReLU.py", kModel).ok());
  // same Model, other sizes and spelling: still the benchmark task
  std::string disguised = kModel;
  disguised.replace(disguised.find("dim = 1024"), 10, "dim = 77");
  disguised.replace(disguised.find("def forward(self, x):\n        return torch.relu(x)"), 50,
                    "def forward(self, t):\n        return torch.relu(t)");
  EXPECT_EQ(index.Match(disguised), "level1/19_ReLU.py");
  std::string other = kModel;
  other.replace(other.find("torch.relu"), 10, "torch.sigmoid");
  EXPECT_EQ(index.Match(other), "");
}

TEST(BenchmarkIndex, TritonBenchOperatorsByTheirReferencePart) {
  std::string sep(146, '#');
  std::string op = "import torch\n\ndef add(a, b):\n    return a + b\n" + sep + "\ndef test_add():\n    return 1\n";
  BenchmarkIndex index;
  ASSERT_TRUE(index.Add("T/add.py", op).ok());
  std::string copy = "import torch\ndef plus(x, y):\n    return x + y\n" + sep + "\ndef test_other():\n    return 2\n";
  EXPECT_EQ(index.Match(copy), "T/add.py");
}

}  // namespace
}  // namespace kiln::datagen

#include "task/task.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/file.h"

namespace kiln::task {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TaskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_task_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    EXPECT_TRUE(WriteFile(p.string(), text).ok());
    return p.string();
  }
  fs::path dir_;
};

const char* kKb = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

batch_size = 16
dim = 1024

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
)";

std::string Sep() { return std::string(146, '#') + "\n"; }

TEST_F(TaskTest, DetectsKernelBench) {
  auto t = LoadTask(Write("level1/19_ReLU.py", kKb));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, Format::kKernelBench);
  EXPECT_EQ(t->name, "level1/19_ReLU");
  EXPECT_EQ(t->hash.size(), 16u);
  auto j = t->ToJson();
  EXPECT_EQ(j["format"], "kernelbench");
  auto back = TaskSpec::FromJson(j);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->hash, t->hash);
}

TEST_F(TaskTest, KernelBenchSizesAndConstants) {
  std::string p = Write("kb.py", kKb);
  LoadOptions o;
  o.sizes = {{"batch_size", 2}};
  auto t = LoadTask(p, o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->sizes["batch_size"], 2);
  auto plain = LoadTask(p);
  EXPECT_NE(plain->hash, t->hash);  // sizes are part of the identity
  o.sizes = {{"nope", 2}};
  auto bad = LoadTask(p, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("size 'nope'"), std::string::npos);
  auto c = ModuleConstants(p);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)["dim"], 1024);
}

// Size constants written as expressions or tuples can be overridden; a value of the wrong kind is a
// diagnostic at the constant (not a task that fails later in the worker).
TEST_F(TaskTest, KernelBenchSizeExpressionsAndTuples) {
  std::string p = Write("kb_expr.py", R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

N = 2048 * 2
M = -(1 << 4) + N
input_shape = (32768,)
alias = N

def get_inputs():
    return [torch.randn(N, *input_shape)]

def get_init_inputs():
    return []
)");
  LoadOptions o;
  o.sizes = {{"N", 64}, {"M", 8}, {"input_shape", "(128,)"}};
  auto t = LoadTask(p, o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->sizes["N"], 64);
  EXPECT_EQ(t->sizes["input_shape"], json::parse("[128]"));
  for (const char* v : {"[128, 2]", "128, 2", "(128, 2)"}) {
    o.sizes = {{"input_shape", v}};
    auto t2 = LoadTask(p, o);
    ASSERT_TRUE(t2.ok()) << v << ": " << t2.status().message();
    EXPECT_EQ(t2->sizes["input_shape"], json::parse("[128, 2]")) << v;
  }
  o.sizes = {{"input_shape", json::parse("[256]")}};
  ASSERT_TRUE(LoadTask(p, o).ok());

  o.sizes = {{"N", "abc"}};
  auto bad = LoadTask(p, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("kb_expr.py:8:5: error: size 'N' must be a number like the task's "
                                        "`N = 2048 * 2`, got \"abc\""),
            std::string::npos)
      << bad.status().message();
  o.sizes = {{"input_shape", "wide"}};
  bad = LoadTask(p, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("size 'input_shape' must be a tuple of numbers"), std::string::npos);
  o.sizes = {{"alias", 3}};  // a bare alias of another constant is not a size constant
  EXPECT_FALSE(LoadTask(p, o).ok());
}

TEST_F(TaskTest, HashCoversContents) {
  std::string p = Write("kb.py", kKb);
  auto a = LoadTask(p);
  Write("kb.py", std::string(kKb) + "\n# changed\n");
  auto b = LoadTask(p);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->hash, b->hash);
}

TEST_F(TaskTest, KernelBenchMissingGetInputsIsDiagnosed) {
  std::string src = "import torch\nclass Model:\n    pass\n\ndef get_init_inputs():\n    return []\n";
  auto t = LoadTask(Write("kb.py", src));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("kb.py:2:1: error: kernelbench task has no top-level function "
                                      "'get_inputs()'"),
            std::string::npos)
      << t.status().message();
}

TEST_F(TaskTest, SyntaxErrorIsDiagnosed) {
  auto t = LoadTask(Write("bad.py", "def f(:\n  pass\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("bad.py:1:"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("error:"), std::string::npos);
}

TEST_F(TaskTest, UnknownFormatIsDiagnosed) {
  auto t = LoadTask(Write("x.py", "x = 1\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("x.py:1:1: error: cannot tell the task format"), std::string::npos)
      << t.status().message();
}

TEST_F(TaskTest, DetectsTritonBenchGWithPerf) {
  std::string src =
      "import triton\nimport triton.language as tl\n@triton.jit\ndef k(x):\n    pass\n\n"
      "def helper():\n    pass\n\ndef wrapper(x):\n    return x\n" +
      Sep() +
      "def test_wrapper():\n    helper()\n    return {'a': wrapper(1)}\n"
      "result_gold = test_wrapper()\n";
  std::string p = Write("G/kernels/mykern.py", src);
  auto t = LoadTask(p);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, Format::kTritonBenchG);
  EXPECT_EQ(t->entry, "helper");  // first called function defined above (no perf harness yet)
  EXPECT_TRUE(t->perf_path.empty());
  Write("G/perf/mykern_perf.py", "from TritonBench_v1.mykern import wrapper\n");
  t = LoadTask(p);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->entry, "wrapper");
  EXPECT_EQ(t->perf_path, (dir_ / "G/perf/mykern_perf.py").string());
}

TEST_F(TaskTest, DetectsTritonBenchT) {
  std::string src =
      "import torch\ndef add(a, b):\n    return a + b\n" + Sep() + "def test_add():\n    return {'x': add(1, 2)}\n";
  auto t = LoadTask(Write("T/kernels/add.py", src));
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, Format::kTritonBenchT);
  EXPECT_EQ(t->entry, "add");
  EXPECT_EQ(t->name, "tritonbench_t/add");
}

TEST_F(TaskTest, TritonBenchWithoutTestFunction) {
  std::string src = "import triton\n@triton.jit\ndef k(x):\n    pass\n" + Sep() + "x = 1\n";
  auto t = LoadTask(Write("g.py", src));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("g.py:5:1: error: tritonbench task has no test_* function"), std::string::npos)
      << t.status().message();
}

TEST_F(TaskTest, KilnFlagsAndManifest) {
  std::string mod = Write("m.py", "import triton\n@triton.jit\ndef k(x):\n    pass\ndef softmax(x):\n    return x\n");
  std::string bench = Write("bench.py", "CASES = []\n");
  LoadOptions o;
  o.entry = "softmax";
  o.bench = bench;
  auto t = LoadTask(mod, o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, Format::kKiln);
  EXPECT_EQ(t->bench_path, bench);
  o.entry = "missing";
  auto bad = LoadTask(mod, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("entry 'missing'"), std::string::npos);
  std::string man = Write("task.json", R"({"module": "m.py", "entry": "softmax", "bench": "bench.py"})");
  auto m = LoadTask(man);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->path, mod);
  EXPECT_EQ(m->entry, "softmax");
  std::string bad_man = Write("bad.json", R"({"module": "m.py"})");
  EXPECT_FALSE(LoadTask(bad_man).ok());
  // wrong types are errors, not an uncaught nlohmann exception (kiln aborted)
  for (const char* text :
       {R"({"module": 5, "entry": "f", "bench": "b.py"})", R"({"module": "m.py", "entry": [1], "bench": "b.py"})",
        R"({"module": "m.py", "entry": "f", "bench": "b.py", "sizes": 3})"}) {
    auto r = LoadTask(Write("typed.json", text));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("bad kiln task manifest"), std::string::npos) << r.status().message();
  }
}

TEST_F(TaskTest, ManifestKeyOfTheWrongTypeIsAnError) {
  Write("m.py", "import triton\n@triton.jit\ndef k(x):\n    pass\ndef softmax(x):\n    return x\n");
  Write("bench.py", "CASES = []\n");
  auto t = LoadTask(Write("task.json", R"({"module": "m.py", "entry": 5, "bench": "bench.py"})"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("\"entry\" must be a string"), std::string::npos) << t.status().message();
  // A number too large for a double is nlohmann's out_of_range, not a parse_error: still a located error.
  auto big = LoadTask(Write("big.json", R"({"module": "m.py", "entry": "softmax", "bench": "bench.py", "x": 1e+3084})"));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("bad kiln task manifest"), std::string::npos) << big.status().message();
}

// Task modules are read by the one decoding policy: a declared latin-1 module loads, bad bytes and deep
// nesting are located errors naming the file.
TEST_F(TaskTest, TaskSourceDecodingAndDepth) {
  std::string kb = kKb;
  auto t = LoadTask(Write("level1/l1.py", "# -*- coding: latin-1 -*-\n# caf\xe9\n" + kb));
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto bad = LoadTask(Write("level1/bad.py", "# caf\xe9\n" + kb));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.py:1:6: error: cannot decode byte 0xe9"), std::string::npos)
      << bad.status().message();
  auto deep =
      LoadTask(Write("level1/deep.py", kb + "X = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n"));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("deep.py:16:205: error: too many nested parentheses"), std::string::npos)
      << deep.status().message();
  std::string chain = "X = 1";
  for (int i = 0; i < 10000; ++i) chain += " + 1";
  auto long_chain = LoadTask(Write("level1/chain.py", kb + chain + "\n"));
  ASSERT_FALSE(long_chain.ok());
  EXPECT_NE(long_chain.status().message().find("expression nested too deeply"), std::string::npos)
      << long_chain.status().message();
}

TEST_F(TaskTest, KilnDirectory) {
  Write("softmax/softmax.py", "import triton\n@triton.jit\ndef k(x):\n    pass\ndef softmax(x):\n    return x\n");
  Write("softmax/bench.py", "CASES = {}\n");
  auto t = LoadTask((dir_ / "softmax").string());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->format, Format::kKiln);
  EXPECT_EQ(t->entry, "softmax");
  EXPECT_EQ(t->bench_path, (dir_ / "softmax" / "bench.py").string());
  fs::create_directories(dir_ / "empty");
  EXPECT_FALSE(LoadTask((dir_ / "empty").string()).ok());
}

TEST_F(TaskTest, MissingFile) {
  auto t = LoadTask((dir_ / "nope.py").string());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), Code::kNotFound);
}

TEST(TaskSeparator, StripsTest) {
  std::string s = "a = 1\n" + std::string(146, '#') + "\ndef test_x(): pass\n";
  EXPECT_EQ(StripTritonBenchTest(s), "a = 1\n");
  EXPECT_EQ(StripTritonBenchTest("a = 1\n"), "a = 1\n");
  EXPECT_EQ(FindSeparator(std::string(103, '#')), std::string_view::npos);
}

// One rule with the worker (tests/worker/test_tritonbench.py, test_separator_rule): a line of exactly 146 '#'.
TEST(TaskSeparator, ExactlyOneLineOf146) {
  const std::string sep(146, '#');
  EXPECT_EQ(FindSeparator("a = 1\n" + sep + "  \r\nb"), 6u);  // trailing blanks allowed
  EXPECT_EQ(FindSeparator(sep), 0u);                          // last line, no newline
  EXPECT_EQ(FindSeparator(std::string(145, '#') + "\n"), std::string_view::npos);
  EXPECT_EQ(FindSeparator(std::string(147, '#') + "\n"), std::string_view::npos);
  EXPECT_EQ(FindSeparator(std::string(120, '#') + "\n"), std::string_view::npos);
  EXPECT_EQ(FindSeparator("x = '" + sep + "'\n"), std::string_view::npos);  // not a line of its own
  EXPECT_EQ(FindSeparator(" " + sep + "\n"), std::string_view::npos);       // indented
  std::string two = std::string(103, '#') + "\n" + sep + "\n" + sep + "\n";
  EXPECT_EQ(FindSeparator(two), 104u);  // the first 146 line
}

TEST(TaskCorpus, EveryTritonBenchFileLoads) {
  std::string root = std::string(KILN_CORPUS_DIR) + "/tritonbench";
  if (!fs::exists(root)) GTEST_SKIP() << "no corpus";
  int n = 0;
  for (const char* d : {"G", "T"}) {
    for (const auto& e : fs::directory_iterator(root + "/" + d + "/kernels")) {
      auto t = LoadTask(e.path().string());
      ASSERT_TRUE(t.ok()) << e.path() << ": " << t.status().message();
      EXPECT_EQ(t->format, d[0] == 'G' ? Format::kTritonBenchG : Format::kTritonBenchT) << e.path();
      EXPECT_FALSE(t->perf_path.empty()) << e.path();
      EXPECT_FALSE(t->entry.empty()) << e.path();
      ++n;
    }
  }
  EXPECT_GT(n, 200);
}

TEST(TaskCorpus, EveryKernelBenchFileLoads) {
  std::string root = std::string(KILN_CORPUS_DIR) + "/kernelbench";
  if (!fs::exists(root)) GTEST_SKIP() << "no corpus";
  for (const char* d : {"level1", "level2", "level3"}) {
    for (const auto& e : fs::directory_iterator(root + "/" + d)) {
      auto t = LoadTask(e.path().string());
      ASSERT_TRUE(t.ok()) << e.path() << ": " << t.status().message();
      EXPECT_EQ(t->format, Format::kKernelBench);
    }
  }
}

}  // namespace
}  // namespace kiln::task

#include "exec/static_check.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/file.h"

namespace kiln::exec {
namespace {

// A minimal honest KernelBench candidate; tests splice extra lines into it.
std::string Honest(const std::string& extra_top = "", const std::string& extra_forward = "") {
  return R"(import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl
)" + extra_top +
         R"(

@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x, 0.0), mask=mask)


def relu(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    relu_kernel[grid](x, out, n, BLOCK=1024)
    return out.view(x.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
)" + extra_forward +
         R"(        return relu(x.reshape(-1)).reshape(x.shape)
)";
}

std::vector<StaticFinding> Check(const std::string& src, const std::string& entry = "ModelNew") {
  auto t = pyast::Tree::Parse(src, "cand.py");
  EXPECT_TRUE(t.ok());
  EXPECT_FALSE((*t)->has_errors()) << src;
  return StaticCheck(**t, {entry, true});
}

std::string Rules(const std::vector<StaticFinding>& f) {
  std::string s;
  for (const auto& x : f) s += x.rule + "@" + std::to_string(x.span.begin.line) + ": " + x.message + "\n";
  return s;
}

bool Has(const std::vector<StaticFinding>& f, const std::string& rule) {
  for (const auto& x : f) {
    if (x.rule == rule) return true;
  }
  return false;
}

TEST(StaticCheck, HonestCandidatePasses) {
  auto f = Check(Honest());
  EXPECT_TRUE(f.empty()) << Rules(f);
}

TEST(StaticCheck, HonestVariantsPass) {
  const char* tops[] = {
      "import os\nBLOCK = int(os.environ.get('BLOCK', '1024'))\n",
      "import math\nimport functools\n",
      "try:\n    from triton.language.extra import libdevice\nexcept ImportError:\n    libdevice = None\n",
      "from torch import nn as nn2\nfrom triton import cdiv\n",
      "import sys\nprint('x', file=sys.stderr)\n",
      "from typing import Optional\nDEVICE = triton.runtime.driver.active.get_active_torch_device()\n",
      "def helper(x):\n    try:\n        return int(x)\n    except ValueError:\n        return 0\n",
      "def helper2():\n    try:\n        torch.cuda.synchronize()\n    except Exception:\n        pass\n",
      "with open(__file__) as fh:\n    SRC = fh.read()\n",
      "def compile_config():\n    return 1\nC = compile_config()\n",
      "import torch.nn.functional as Fn\nact = Fn.gelu\n",
      "torch.manual_seed(0)\n",
      "from torch._C import _cuda_getCurrentRawStream as get_raw_stream\n",
      "def launch(x, out):\n    try:\n        relu_kernel[(1,)](x, out, 1, BLOCK=1024)\n"
      "    except triton.OutOfResources:\n        relu_kernel[(2,)](x, out, 1, BLOCK=512)\n",
  };
  for (const char* top : tops) {
    auto f = Check(Honest(top));
    EXPECT_TRUE(f.empty()) << top << "\n" << Rules(f);
  }
  const char* fwds[] = {
      "        y = torch.empty((x.shape[0], 4), device=x.device, dtype=x.dtype)\n",
      "        x = F.pad(x, (0, 0))\n",
      "        x = x.transpose(0, 1).contiguous().transpose(0, 1)\n",
      "        self.cache = {}\n        self.cache['k'] = 1\n",
      "        assert x.is_cuda, 'needs CUDA'\n",
  };
  for (const char* fwd : fwds) {
    auto f = Check(Honest("", fwd));
    EXPECT_TRUE(f.empty()) << fwd << "\n" << Rules(f);
  }
}

TEST(StaticCheck, AutotunedAndFromImportedJitCount) {
  std::string src = Honest();
  std::string alt = src;
  alt.replace(alt.find("@triton.jit"), 11, "@jit");
  alt = "from triton import jit\n" + alt;
  EXPECT_TRUE(Check(alt).empty()) << Rules(Check(alt));
  std::string at = src;
  at.replace(at.find("@triton.jit"), 11,
             "@triton.autotune(configs=[triton.Config({'BLOCK': 128})], key=['n'])\n@triton.jit");
  EXPECT_TRUE(Check(at).empty()) << Rules(Check(at));
}

TEST(StaticCheck, MissingEntryAndKernel) {
  auto f = Check("import torch\nclass Model:\n    pass\n");
  EXPECT_TRUE(Has(f, "missing_entry")) << Rules(f);
  EXPECT_TRUE(Has(f, "no_triton_kernel")) << Rules(f);
  // A jit that is not triton's does not count.
  auto g = Check("import numba\n@numba.jit\ndef f():\n    pass\nclass ModelNew:\n    pass\n");
  EXPECT_TRUE(Has(g, "no_triton_kernel")) << Rules(g);
  // The entry for other formats is the entry function.
  std::string src = Honest();
  EXPECT_TRUE(Check(src, "relu").empty());
  EXPECT_TRUE(Has(Check(src, "softmax"), "missing_entry"));
}

struct BadCase {
  const char* name;
  std::string top;
  std::string fwd;
  const char* rule;
};

TEST(StaticCheck, RejectsHacks) {
  std::vector<BadCase> cases = {
      {"thread", "import threading\n", "", "process_spawn"},
      {"from_mp", "from multiprocessing import Pool\n", "", "process_spawn"},
      {"subprocess", "import subprocess as sp\n", "", "process_spawn"},
      {"ctypes", "import ctypes\n", "", "ctypes"},
      {"socket", "import socket\n", "", "network"},
      {"cpp_ext", "from torch.utils.cpp_extension import load_inline\n", "", "native_code"},
      {"harness", "import kiln_worker\n", "", "patched_worker"},
      {"os_system", "import os\n", "        os.system('nvidia-smi')\n", "process_spawn"},
      {"os_fork", "import os\n", "        os.fork()\n", "process_spawn"},
      {"os_exec", "import os\n", "        os.execv('/bin/sh', [])\n", "process_spawn"},
      {"exec", "", "        exec('x = 1')\n", "dynamic_code"},
      {"eval", "", "        eval('1')\n", "dynamic_code"},
      {"dunder_import", "", "        m = __import__('o' + 's')\n", "dynamic_code"},
      {"open_w", "", "        open('/tmp/x', 'w').write('1')\n", "file_write"},
      {"open_mode_kw", "", "        open('/tmp/x', mode='ab')\n", "file_write"},
      {"path_write", "import pathlib\n", "        pathlib.Path('x').write_text('1')\n", "file_write"},
      {"torch_save", "", "        torch.save(x, 'x.pt')\n", "file_write"},
      {"patch_allclose", "torch.allclose = lambda *a, **k: True\n", "", "patched_torch"},
      {"patch_F", "F.relu = lambda x: x\n", "", "patched_torch"},
      {"patch_time", "import time\ntime.perf_counter = lambda: 0.0\n", "", "patched_timer"},
      {"patch_from_time", "from time import perf_counter\nimport time as t\nt.time = perf_counter\n", "",
       "patched_timer"},
      {"patch_event", "torch.cuda.Event.elapsed_time = lambda self, other: 1e-3\n", "", "patched_torch"},
      {"patch_tensor", "from torch import Tensor\nTensor.__eq__ = lambda a, b: True\n", "", "patched_torch"},
      {"patch_triton", "triton.testing.do_bench = lambda *a, **k: 0.001\n", "", "patched_triton"},
      {"setattr_torch", "setattr(torch, 'allclose', lambda *a, **k: True)\n", "", "patched_torch"},
      {"environ", "import os\nos.environ['TRITON_INTERPRET'] = '1'\n", "", "patched_environment"},
      {"environ_update", "import os\nos.environ.update({'X': '1'})\n", "", "patched_environment"},
      {"tf32", "torch.backends.cuda.matmul.allow_tf32 = True\n", "", "patched_torch"},
      {"knobs", "triton.knobs.runtime.launch_enter_hook = None\n", "", "patched_triton"},
      {"torch_c_dispatch", "", "        g = torch._C._DisableTorchDispatch()\n", "patched_torch"},
      {"torch_library", "lib = torch.library.Library('aten', 'IMPL')\n", "", "patched_torch"},
      {"seed", "", "        torch.manual_seed(0)\n", "global_state"},
      {"matmul_precision", "torch.set_float32_matmul_precision('medium')\n", "", "global_state"},
      {"inspect", "import inspect\n", "", "introspection"},
      {"gc", "import gc\n", "        objs = gc.get_objects()\n", "introspection"},
      {"getframe", "import sys\n", "        f = sys._getframe(1)\n", "introspection"},
      {"from_getframe", "from sys import _getframe\n", "        f = _getframe(1)\n", "introspection"},
      {"sys_modules", "import sys\n", "        ref = sys.modules['__main__']\n", "introspection"},
      {"f_back", "", "        g = x.f_back.f_locals\n", "introspection"},
      {"globals_dunder", "", "        g = relu.__globals__\n", "introspection"},
      {"builtins", "", "        b = __builtins__\n", "introspection"},
      {"subclasses", "", "        s = object.__subclasses__()\n", "introspection"},
      {"getattr_frame", "", "        g = getattr(x, 'f_back')\n", "introspection"},
      {"dynamic_getattr_os", "import os\n", "        getattr(os, 'sys' + 'tem')('ls')\n", "dynamic_code"},
      {"fallback_bare", "",
       "        try:\n            return relu(x)\n        except:\n            return torch.relu(x)\n",
       "swallowed_kernel_error"},
      {"fallback_exception", "",
       "        try:\n            y = relu(x)\n        except Exception as e:\n            y = torch.relu(x)\n",
       "swallowed_kernel_error"},
      {"fallback_narrow_around_launch", "",
       "        try:\n            y = relu(x)\n        except (TypeError, ValueError):\n            y = "
       "x.clamp(min=0)\n",
       "swallowed_kernel_error"},
      {"fallback_broad_compute",
       "def ref(x):\n    try:\n        return x.numpy()\n    except RuntimeError:\n        return torch.relu(x)\n", "",
       "swallowed_kernel_error"},
      {"suppress", "import contextlib\n", "        with contextlib.suppress(Exception):\n            pass\n",
       "swallowed_kernel_error"},
  };
  for (const auto& c : cases) {
    auto f = Check(Honest(c.top, c.fwd));
    EXPECT_TRUE(Has(f, c.rule)) << c.name << " expected " << c.rule << "\n" << Rules(f);
  }
}

TEST(StaticCheck, ReraisingHandlerIsFine) {
  auto f = Check(Honest("",
                        "        try:\n            y = relu(x)\n        except Exception as e:\n"
                        "            print('failed', e)\n            raise\n"));
  EXPECT_TRUE(f.empty()) << Rules(f);
}

TEST(StaticCheck, FindingsHaveSpans) {
  auto f = Check(Honest("import threading\n"));
  ASSERT_EQ(f.size(), 1u) << Rules(f);
  EXPECT_EQ(f[0].span.begin.line, 6u);
  EXPECT_EQ(f[0].span.begin.column, 8u);
}

TEST(StaticCheck, KernelBenchExampleAndTritonBenchModulesPass) {
  std::string root = KILN_CORPUS_DIR;
  std::string ex = root + "/kernelbench/examples/model_new_ex_add_triton.py";
  if (!std::filesystem::exists(ex)) GTEST_SKIP() << "no corpus";
  auto t = pyast::Tree::ParseFile(ex);
  ASSERT_TRUE(t.ok());
  auto f = StaticCheck(**t, {"ModelNew", true});
  EXPECT_TRUE(f.empty()) << Rules(f);
  // Every TritonBench-G module (the part above the separator) is honest code: count what the
  // strict policy would say, so a change that rejects many of them shows up.
  int total = 0, flagged = 0;
  std::string report;
  for (const auto& e : std::filesystem::directory_iterator(root + "/tritonbench/G/kernels")) {
    auto text = ReadFile(e.path().string());
    ASSERT_TRUE(text.ok());
    std::string top = text->substr(0, text->find(std::string(146, '#')));
    auto tree = pyast::Tree::Parse(top, e.path().string());
    auto g = StaticCheck(**tree, {"", true});
    ++total;
    if (!g.empty()) {
      ++flagged;
      report += e.path().filename().string() + ": " + Rules(g);
    }
  }
  EXPECT_GT(total, 100);
  // A handful of corpus modules do reseed or touch os.environ; nearly all must pass.
  EXPECT_LE(flagged, 2) << report;
  std::printf("tritonbench_g modules flagged by strict static checks: %d of %d\n%s", flagged, total, report.c_str());
}

}  // namespace
}  // namespace kiln::exec

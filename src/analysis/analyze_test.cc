#include <gtest/gtest.h>

#include "analysis/driver.h"
#include "analysis/json.h"
#include "analysis/model.h"

namespace kiln::analysis {
namespace {

ModuleModel Analyze(const std::string& src) {
  auto t = pyast::Tree::Parse(src, "t.py");
  EXPECT_TRUE(t.ok());
  EXPECT_FALSE((*t)->has_errors());
  auto m = AnalyzeModule(**t);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ModuleModel{};
}

const std::string kAdd = R"(import torch
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out, n, BLOCK: tl.constexpr = 128):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0, eviction_policy="evict_first")
    y = tl.load(y_ptr + offs, mask=mask, cache_modifier=".cg")
    tl.store(out + offs, x + y, mask=mask)

BLOCK_SIZE = 1024

def add(x, y, warps=4):
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    add_kernel[grid](x, y, out, n, BLOCK=BLOCK_SIZE, num_warps=warps)
    add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, 256, num_warps=8, num_stages=2)
    return out
)";

const Binding& B(const Launch& l, const std::string& n) {
  const Binding* b = l.FindBinding(n);
  EXPECT_NE(b, nullptr) << n;
  static Binding empty;
  return b ? *b : empty;
}

TEST(Analyze, ElementwiseKernelFacts) {
  ModuleModel m = Analyze(kAdd);
  ASSERT_EQ(m.kernels.size(), 1u);
  const Kernel& k = m.kernels[0];
  EXPECT_EQ(k.name, "add_kernel");
  EXPECT_EQ(k.def_span.begin.line, 6u);
  EXPECT_EQ(k.span.begin.line, 5u);  // decorators included
  ASSERT_EQ(k.params.size(), 5u);
  EXPECT_EQ(k.params[0].kind, ParamKind::kPointer);
  EXPECT_EQ(k.params[0].evidence, ParamEvidence::kUsage);
  EXPECT_EQ(k.params[2].name, "out");
  EXPECT_EQ(k.params[2].kind, ParamKind::kPointer);  // by usage, no suffix
  EXPECT_EQ(k.params[3].kind, ParamKind::kScalar);
  EXPECT_EQ(k.params[4].kind, ParamKind::kConstexpr);
  EXPECT_EQ(k.params[4].evidence, ParamEvidence::kAnnotation);
  EXPECT_EQ(k.params[4].default_value.text, "128");
  EXPECT_EQ(k.params[4].annotation.text, "tl.constexpr");
  ASSERT_EQ(k.program_ids.size(), 1u);
  EXPECT_EQ(k.program_ids[0].axis, 0);
  EXPECT_EQ(k.program_ids[0].target, "pid");
  ASSERT_EQ(k.aranges.size(), 1u);
  EXPECT_EQ(k.aranges[0].start.text, "0");
  EXPECT_EQ(k.aranges[0].end.text, "BLOCK");
  ASSERT_EQ(k.memops.size(), 3u);
  EXPECT_EQ(k.memops[0].kind, MemOp::Kind::kLoad);
  EXPECT_EQ(k.memops[0].pointer.text, "x_ptr + offs");
  EXPECT_EQ(k.memops[0].mask.text, "mask");
  EXPECT_EQ(k.memops[0].other.text, "0.0");
  EXPECT_EQ(k.memops[0].eviction_policy.text, "\"evict_first\"");
  EXPECT_EQ(k.memops[1].cache_modifier.text, "\".cg\"");
  EXPECT_EQ(k.memops[2].kind, MemOp::Kind::kStore);
  EXPECT_EQ(k.memops[2].value.text, "x + y");
  // Spans are exact: the pointer expression's bytes are its text.
  const Span& s = k.memops[0].pointer.span;
  EXPECT_EQ(kAdd.substr(s.begin.byte, s.size()), "x_ptr + offs");
  EXPECT_EQ(k.memops[0].span.begin.line, 10u);
  EXPECT_EQ(k.cls, KernelClass::kElementwise);
  EXPECT_TRUE(k.launched);
}

TEST(Analyze, LaunchOriginsLiteralVariableParamDefault) {
  ModuleModel m = Analyze(kAdd);
  ASSERT_EQ(m.launches.size(), 2u);
  const Launch& l = m.launches[0];
  EXPECT_EQ(l.kernel, "add_kernel");
  EXPECT_EQ(l.enclosing_function, "add");
  EXPECT_EQ(l.grid.kind, GridKind::kVariable);
  EXPECT_EQ(l.grid.resolved_kind, GridKind::kLambda);
  ASSERT_TRUE(l.grid.assignment.has_value());
  EXPECT_EQ(l.grid.meta_param, "meta");
  EXPECT_EQ(l.grid.meta_keys, std::vector<std::string>{"BLOCK"});
  EXPECT_EQ(l.grid.names, std::vector<std::string>{"n"});
  EXPECT_EQ(l.grid.constexprs, std::vector<std::string>{"BLOCK"});
  ASSERT_EQ(l.args.size(), 6u);
  EXPECT_EQ(l.args[3].param, "n");
  EXPECT_EQ(l.args[4].keyword, "BLOCK");
  // BLOCK=BLOCK_SIZE: a module-level variable assigned a literal.
  const Binding& blk = B(l, "BLOCK");
  EXPECT_EQ(blk.origin.kind, OriginKind::kVariable);
  EXPECT_EQ(blk.origin.value, "1024");
  EXPECT_EQ(blk.origin.scope, "module");
  ASSERT_TRUE(blk.origin.assignment.has_value());
  const Span& vs = blk.origin.assignment->value.span;
  EXPECT_EQ(kAdd.substr(vs.begin.byte, vs.size()), "1024");
  EXPECT_EQ(blk.origin.at_launch.text, "BLOCK_SIZE");
  const Binding& nw = B(l, "num_warps");
  EXPECT_TRUE(nw.launch_option);
  EXPECT_EQ(nw.origin.kind, OriginKind::kFunctionParam);
  EXPECT_EQ(nw.origin.function_param, "warps");
  EXPECT_EQ(nw.origin.function_param_default.text, "4");
  EXPECT_EQ(B(l, "num_stages").origin.kind, OriginKind::kDefault);
  EXPECT_EQ(B(l, "num_stages").origin.value, "3");

  const Launch& l2 = m.launches[1];
  EXPECT_EQ(l2.grid.kind, GridKind::kTuple);
  ASSERT_EQ(l2.grid.dims.size(), 1u);
  EXPECT_EQ(l2.grid.dims[0].text, "triton.cdiv(n, 256)");
  const Binding& b2 = B(l2, "BLOCK");  // positional literal
  EXPECT_EQ(b2.origin.kind, OriginKind::kLiteral);
  EXPECT_EQ(b2.origin.value, "256");
  EXPECT_EQ(kAdd.substr(b2.origin.at_launch.span.begin.byte, b2.origin.at_launch.span.size()), "256");
  EXPECT_EQ(B(l2, "num_warps").origin.kind, OriginKind::kLiteral);
  EXPECT_EQ(B(l2, "num_stages").origin.value, "2");
}

TEST(Analyze, OriginComputedVariableAndDefault) {
  ModuleModel m = Analyze(R"(
import triton
import triton.language as tl
@triton.jit
def k(X, N, BLOCK: tl.constexpr, R: tl.constexpr = 2, Q: tl.constexpr = 1):
    tl.store(X + tl.arange(0, BLOCK), 0)
def run(x, n):
    BLOCK = triton.next_power_of_2(n)
    w = 4
    if BLOCK > 1024:
        w = 8
    k[(1,)](x, n, BLOCK, R=R2, num_warps=w)
R2 = 3
)");
  ASSERT_EQ(m.launches.size(), 1u);
  const Launch& l = m.launches[0];
  const Binding& b = B(l, "BLOCK");
  EXPECT_EQ(b.origin.kind, OriginKind::kComputed);
  EXPECT_EQ(b.origin.expression.text, "triton.next_power_of_2(n)");
  EXPECT_EQ(b.origin.variable, "BLOCK");
  ASSERT_TRUE(b.origin.assignment.has_value());
  EXPECT_EQ(b.origin.assignment->span.begin.line, 8u);
  // Module variable assigned after the function definition: still the module's value at call time.
  EXPECT_EQ(B(l, "R").origin.kind, OriginKind::kVariable);
  EXPECT_EQ(B(l, "R").origin.value, "3");
  EXPECT_EQ(B(l, "Q").origin.kind, OriginKind::kDefault);
  EXPECT_EQ(B(l, "Q").origin.value, "1");
  const Binding& w = B(l, "num_warps");
  EXPECT_EQ(w.origin.kind, OriginKind::kVariable);
  EXPECT_EQ(w.origin.value, "8");
  EXPECT_TRUE(w.origin.multiple_assignments);
  ASSERT_EQ(w.origin.other_assignments.size(), 1u);
  EXPECT_EQ(w.origin.other_assignments[0].value.text, "4");
}

TEST(Analyze, OriginMissing) {
  ModuleModel m = Analyze(R"(
import triton
import triton.language as tl
@triton.jit
def k(X, BLOCK: tl.constexpr):
    tl.store(X, 0)
def run(x):
    k[(1,)](x)
)");
  ASSERT_EQ(m.launches.size(), 1u);
  EXPECT_EQ(B(m.launches[0], "BLOCK").origin.kind, OriginKind::kMissing);
}

const std::string kMatmul = R"(import torch
import triton
import triton.language as tl

def get_autotune_config():
    return [triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': 64, 'GROUP_SIZE_M': 8}, num_stages=3, num_warps=8)]

@triton.autotune(
    configs=[
        triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': 64, 'GROUP_SIZE_M': 8}, num_stages=3, num_warps=8),
        triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, num_stages=4, num_warps=4, maxnreg=128, pre_hook=None),
        triton.Config({'BLOCK_SIZE_M': 64, 'BLOCK_SIZE_N': 64, 'BLOCK_SIZE_K': 32, 'GROUP_SIZE_M': 8}, 2, 5),
    ],
    key=['M', 'N', 'K'],
    reset_to_zero=['c_ptr'],
    prune_configs_by={'early_config_prune': None},
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
        stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
        GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    offs_am = (pid * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_SIZE_K), num_stages=3, loop_unroll_factor=2):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator, input_precision="tf32", out_dtype=tl.float32)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    c_ptrs = c_ptr + stride_cm * offs_am[:, None] + stride_cn * offs_bn[None, :]
    tl.store(c_ptrs, c)

@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)

def matmul(a, b, activation=""):
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), )
    matmul_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        ACTIVATION=activation
    )
    return c
)";

// Configs written as a comprehension over literal lists (TritonBench-G's matrix_vector_multip: 48 configs)
// are expanded in Python's order, the innermost clause fastest; a condition or a non-literal list leaves
// them generated (not searched).
TEST(Analyze, AutotuneConfigComprehensionExpanded) {
  const std::string src = R"(import triton
import triton.language as tl

SIZES = [16, 32]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_stages=s, num_warps=4)
        for m in [32, 64, 128]
        for n in (1, 2)
        for s in range(3, 5)
    ],
    key=["M"],
)
@triton.jit
def mv(A, M, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pass


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in [32, 64] if b > 32], key=["M"])
@triton.jit
def filtered(A, M, BLOCK: tl.constexpr):
    pass


@triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in SIZES], key=["M"])
@triton.jit
def named(A, M, BLOCK: tl.constexpr):
    pass
)";
  ModuleModel m = Analyze(src);
  const Autotune& a = *m.FindKernel("mv")->autotune;
  EXPECT_TRUE(a.configs_resolved);
  EXPECT_TRUE(a.configs_expanded);
  EXPECT_FALSE(a.configs_generated);
  ASSERT_EQ(a.configs.size(), 12u);
  auto show = [](const AutotuneConfig& c) {
    return c.kwargs[0].value.text + "," + c.kwargs[1].value.text + "," + c.num_stages->value.text + "," +
           c.num_warps->value.text;
  };
  EXPECT_EQ(show(a.configs[0]), "32,1,3,4");
  EXPECT_EQ(show(a.configs[1]), "32,1,4,4");
  EXPECT_EQ(show(a.configs[2]), "32,2,3,4");
  EXPECT_EQ(show(a.configs[11]), "128,2,4,4");
  EXPECT_EQ(a.tuned_names, (std::vector<std::string>{"BLOCK_M", "BLOCK_N"}));
  EXPECT_EQ(a.tuned_options, (std::vector<std::string>{"num_warps", "num_stages"}));
  for (const char* k : {"filtered", "named"}) {
    const Autotune& g = *m.FindKernel(k)->autotune;
    EXPECT_TRUE(g.configs_generated) << k;
    EXPECT_FALSE(g.configs_expanded) << k;
    EXPECT_EQ(g.tuned_names, (std::vector<std::string>{"BLOCK"})) << k;
  }
}

TEST(Analyze, AutotuneGemm) {
  ModuleModel m = Analyze(kMatmul);
  ASSERT_EQ(m.kernels.size(), 2u);
  const Kernel& k = *m.FindKernel("matmul_kernel");
  ASSERT_TRUE(k.autotune.has_value());
  const Autotune& a = *k.autotune;
  ASSERT_EQ(a.configs.size(), 3u);
  EXPECT_TRUE(a.configs_resolved);
  EXPECT_EQ(a.key, (std::vector<std::string>{"M", "N", "K"}));
  EXPECT_EQ(a.tuned_names, (std::vector<std::string>{"BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M"}));
  EXPECT_EQ(a.configs[0].kwargs[0].name, "BLOCK_SIZE_M");
  EXPECT_EQ(a.configs[0].kwargs[0].value.text, "128");
  ASSERT_TRUE(a.configs[0].num_warps.has_value());
  EXPECT_EQ(a.configs[0].num_warps->value.text, "8");
  EXPECT_EQ(kMatmul.substr(a.configs[0].num_warps->value.span.begin.byte, 1), "8");
  EXPECT_EQ(a.configs[1].maxnreg->value.text, "128");
  EXPECT_FALSE(a.configs[1].has_pre_hook);             // pre_hook=None
  EXPECT_EQ(a.configs[2].num_warps->value.text, "2");  // positional
  EXPECT_EQ(a.configs[2].num_stages->value.text, "5");
  EXPECT_EQ(a.reset_to_zero.text, "['c_ptr']");
  EXPECT_TRUE(a.prune_configs_by.present());
  // Loop, dot, classification.
  ASSERT_EQ(k.loops.size(), 1u);
  EXPECT_EQ(k.loops[0].kind, "tl.range");
  EXPECT_EQ(k.loops[0].start.text, "0");
  EXPECT_EQ(k.loops[0].end.text, "tl.cdiv(K, BLOCK_SIZE_K)");
  ASSERT_EQ(k.loops[0].options.size(), 2u);
  EXPECT_EQ(k.loops[0].options[0].name, "num_stages");
  EXPECT_EQ(k.loops[0].options[1].name, "loop_unroll_factor");
  ASSERT_EQ(k.dots.size(), 1u);
  EXPECT_EQ(k.dots[0].acc.text, "accumulator");
  EXPECT_EQ(k.dots[0].input_precision.text, "\"tf32\"");
  EXPECT_EQ(k.dots[0].out_dtype.text, "tl.float32");
  EXPECT_EQ(k.dots[0].loop, 0);
  EXPECT_EQ(k.memops[0].loop_depth, 1);
  EXPECT_EQ(k.cls, KernelClass::kGemm);
  ASSERT_EQ(k.calls.size(), 1u);
  EXPECT_EQ(k.calls[0].callee, "leaky_relu");
  EXPECT_EQ(k.FindParam("a_ptr")->kind, ParamKind::kPointer);
  EXPECT_EQ(k.FindParam("stride_am")->kind, ParamKind::kScalar);
  EXPECT_TRUE(m.FindKernel("leaky_relu")->is_helper);
  // Launch: autotune origins, function param.
  ASSERT_EQ(m.launches.size(), 1u);
  const Launch& l = m.launches[0];
  EXPECT_EQ(B(l, "BLOCK_SIZE_M").origin.kind, OriginKind::kAutotune);
  EXPECT_EQ(B(l, "GROUP_SIZE_M").origin.kind, OriginKind::kAutotune);
  EXPECT_EQ(B(l, "num_warps").origin.kind, OriginKind::kAutotune);
  EXPECT_EQ(B(l, "ACTIVATION").origin.kind, OriginKind::kFunctionParam);
  EXPECT_EQ(B(l, "ACTIVATION").origin.function_param_default.text, "\"\"");
  EXPECT_EQ(l.grid.constexprs, (std::vector<std::string>{"BLOCK_SIZE_M", "BLOCK_SIZE_N"}));
  EXPECT_EQ(l.args[6].param, "stride_am");
}

TEST(Analyze, HeuristicsJitArgsAndDoNotSpecialize) {
  ModuleModel m = Analyze(R"(
from triton import jit, heuristics
import triton.language as tl
import triton

@triton.heuristics({"EVEN_N": lambda args: args["N"] % args["BLOCK"] == 0})
@jit(do_not_specialize=["N", 0])
def k(X, N, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    tl.store(X + tl.arange(0, BLOCK), 1)

def run(x):
    k[(1, 1)](x, x.numel(), BLOCK=64)
)");
  ASSERT_EQ(m.kernels.size(), 1u);
  const Kernel& k = m.kernels[0];
  ASSERT_TRUE(k.heuristics.has_value());
  ASSERT_EQ(k.heuristics->entries.size(), 1u);
  EXPECT_EQ(k.heuristics->entries[0].name, "EVEN_N");
  EXPECT_EQ(k.heuristics->entries[0].value.text, "lambda args: args[\"N\"] % args[\"BLOCK\"] == 0");
  ASSERT_TRUE(k.jit.has_value());
  EXPECT_EQ(k.jit->do_not_specialize, (std::vector<std::string>{"N", "X"}));
  EXPECT_TRUE(k.FindParam("N")->do_not_specialize);
  const Launch& l = m.launches[0];
  EXPECT_EQ(B(l, "EVEN_N").origin.kind, OriginKind::kHeuristics);
  ASSERT_TRUE(B(l, "EVEN_N").origin.heuristic.has_value());
  EXPECT_EQ(B(l, "BLOCK").origin.kind, OriginKind::kLiteral);
  EXPECT_EQ(l.grid.kind, GridKind::kTuple);
  EXPECT_EQ(l.grid.dims.size(), 2u);
}

// Integers past int64 where the analysis reads a number (std::stoi threw out_of_range and ended the
// process): a program id axis and a do_not_specialize position stay unknown / as written.
TEST(Analyze, HugeIntegersAreNotFatal) {
  ModuleModel m = Analyze(R"(
import triton
import triton.language as tl

@triton.jit(do_not_specialize=[99999999999999999999999])
def k(X, N):
    a = tl.program_id(99999999999999999999)
    b = tl.program_id(7)
    c = tl.program_id(axis=2)
    tl.store(X + a + b + c, 1)

def run(x):
    k[(1,)](x, x.numel())
)");
  ASSERT_EQ(m.kernels.size(), 1u);
  const Kernel& k = m.kernels[0];
  ASSERT_EQ(k.program_ids.size(), 3u);
  EXPECT_EQ(k.program_ids[0].axis, -1);
  EXPECT_EQ(k.program_ids[1].axis, -1);
  EXPECT_EQ(k.program_ids[2].axis, 2);
  ASSERT_TRUE(k.jit.has_value());
  EXPECT_EQ(k.jit->do_not_specialize, (std::vector<std::string>{"99999999999999999999999"}));
}

TEST(Analyze, SoftmaxAndReductionsMethodForm) {
  ModuleModel m = Analyze(R"(
import triton
import triton.language as tl
@triton.jit
def softmax(Y, X, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < n, other=-float("inf"))
    z = x - x.max(axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    tl.store(Y + row * stride + cols, num / den, mask=cols < n)

@triton.jit
def rms(Y, X, W, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * n + cols)
    var = tl.sum(x * x, axis=0) / n
    r = 1 / tl.sqrt(var + eps)
    tl.store(Y + row * n + cols, x * r * tl.load(W + cols))

@triton.jit
def scan(Y, X, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.store(Y + tl.arange(0, BLOCK), tl.cumsum(x, axis=0))
    tl.atomic_add(Y, 1.0)
)");
  const Kernel& s = *m.FindKernel("softmax");
  ASSERT_EQ(s.reductions.size(), 2u);
  EXPECT_EQ(s.reductions[0].op, "max");
  EXPECT_EQ(s.reductions[0].form, "method");
  EXPECT_EQ(s.reductions[0].input.text, "x");
  EXPECT_EQ(s.reductions[0].axis.text, "0");
  EXPECT_EQ(s.reductions[1].form, "function");
  EXPECT_EQ(s.cls, KernelClass::kSoftmax);
  EXPECT_FALSE(s.launched);
  const Kernel& r = *m.FindKernel("rms");
  EXPECT_EQ(r.cls, KernelClass::kReduction);
  EXPECT_EQ(r.FindParam("W")->kind, ParamKind::kPointer);
  EXPECT_EQ(r.FindParam("n")->kind, ParamKind::kScalar);  // X + row * n: n is an offset factor
  const Kernel& c = *m.FindKernel("scan");
  ASSERT_EQ(c.scans.size(), 1u);
  EXPECT_EQ(c.scans[0].op, "cumsum");
  ASSERT_EQ(c.atomics.size(), 1u);
  EXPECT_EQ(c.atomics[0].op, "add");
  EXPECT_EQ(c.atomics[0].value.text, "1.0");
  EXPECT_EQ(c.cls, KernelClass::kScan);
}

TEST(Analyze, AttentionBlockPointersLoopsLibdevice) {
  ModuleModel m = Analyze(R"(
import triton
import triton.language as tl
from triton.language.extra import libdevice as ld

@triton.jit
def attn(Q, K, V, O, N_CTX, sm_scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    start_m = tl.program_id(0)
    q_ptr = tl.make_block_ptr(base=Q, shape=(N_CTX, D), strides=(D, 1), offsets=(start_m * BLOCK_M, 0),
                              block_shape=(BLOCK_M, D), order=(1, 0))
    k_ptr = tl.make_block_ptr(base=K, shape=(D, N_CTX), strides=(1, D), offsets=(0, 0),
                              block_shape=(D, BLOCK_N), order=(0, 1))
    q = tl.load(q_ptr, boundary_check=(0, 1), padding_option="zero")
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(k_ptr)
        qk = tl.dot(q, k, allow_tf32=False)
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        for j in tl.static_range(2):
            p = ld.tanh(p)
        v = tl.load(V + tl.arange(0, BLOCK_N)[:, None] * D + tl.arange(0, D)[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        k_ptr = tl.advance(k_ptr, (0, BLOCK_N))
    tl.store(O + tl.arange(0, BLOCK_M)[:, None] * D + tl.arange(0, D)[None, :], acc)

@triton.jit
def tma(desc, out_desc, M):
    a = desc.load([0, 0])
    out_desc.store([0, 0], a)
    d2 = tl.make_tensor_descriptor(M, shape=[8, 8], strides=[8, 1], block_shape=[8, 8])
)");
  const Kernel& a = *m.FindKernel("attn");
  EXPECT_EQ(a.cls, KernelClass::kAttention);
  EXPECT_EQ(a.FindParam("Q")->kind, ParamKind::kPointer);
  EXPECT_EQ(a.FindParam("K")->kind, ParamKind::kPointer);
  EXPECT_EQ(a.FindParam("V")->kind, ParamKind::kPointer);
  EXPECT_EQ(a.FindParam("N_CTX")->kind, ParamKind::kScalar);
  ASSERT_GE(a.block_ptrs.size(), 3u);
  EXPECT_EQ(a.block_ptrs[0].op, "make_block_ptr");
  EXPECT_EQ(a.block_ptrs[0].base.text, "Q");
  EXPECT_EQ(a.block_ptrs[0].target, "q_ptr");
  EXPECT_EQ(a.block_ptrs[2].op, "advance");
  EXPECT_TRUE(a.memops[0].block_pointer);
  EXPECT_EQ(a.memops[0].boundary_check.text, "(0, 1)");
  EXPECT_EQ(a.memops[0].padding_option.text, "\"zero\"");
  EXPECT_EQ(a.dots[0].allow_tf32.text, "False");
  EXPECT_EQ(a.dots[1].acc.text, "acc");
  ASSERT_EQ(a.loops.size(), 2u);
  EXPECT_EQ(a.loops[0].kind, "range");
  EXPECT_EQ(a.loops[0].step.text, "BLOCK_N");
  EXPECT_EQ(a.loops[1].kind, "tl.static_range");
  EXPECT_EQ(a.loops[1].depth, 2);
  EXPECT_EQ(a.loops[1].parent, 0);
  EXPECT_EQ(a.loops[1].end.text, "2");
  ASSERT_EQ(a.libdevice.size(), 2u);
  EXPECT_EQ(a.libdevice[0].name, "exp2");
  EXPECT_EQ(a.libdevice[0].via, "tl.math");
  EXPECT_EQ(a.libdevice[1].name, "tanh");
  EXPECT_EQ(a.libdevice[1].via, "ld");
  const Kernel& t = *m.FindKernel("tma");
  EXPECT_EQ(t.FindParam("desc")->kind, ParamKind::kDescriptor);
  EXPECT_EQ(t.FindParam("out_desc")->kind, ParamKind::kDescriptor);
  EXPECT_EQ(t.FindParam("M")->kind, ParamKind::kPointer);  // base of make_tensor_descriptor
  ASSERT_EQ(t.block_ptrs.size(), 3u);
  EXPECT_EQ(t.block_ptrs[0].op, "descriptor_load");
  EXPECT_EQ(t.block_ptrs[1].op, "descriptor_store");
  EXPECT_EQ(t.block_ptrs[2].op, "make_tensor_descriptor");
}

TEST(Analyze, LaunchInClassLambdaAliasAndSplats) {
  ModuleModel m = Analyze(R"(
import triton
import triton.language as tl
import kernels_mod as km

@triton.jit
def fwd(X, Y, BLOCK: tl.constexpr):
    tl.store(Y, tl.load(X))

@triton.jit
def fwd2(X, Y, BLOCK: tl.constexpr):
    tl.store(Y, tl.load(X))

class Op:
    def forward(self, x, y, fast):
        fx = fwd2 if fast else fwd
        fx[(1,)](x, y, BLOCK=32)
        launch = lambda: fwd[(2,)](x, y, BLOCK=self.block)
        cfg = {"BLOCK": 16}
        fwd[(3,)](*(x, y), **cfg)
        return launch

def outer(x, y, cfg, *args):
    def inner():
        fwd[(4,)](*args, BLOCK=B)
    B = 64
    fwd[(5,)](x, y, **cfg.kwargs)
    km.other[(1,)](x)
    return inner
)");
  ASSERT_EQ(m.launches.size(), 6u);  // the alias launch: one Launch per candidate, same span
  const Launch& a = m.launches[0];
  EXPECT_EQ(a.enclosing_function, "Op.forward");
  EXPECT_EQ(a.kernel_candidates, (std::vector<std::string>{"fwd2", "fwd"}));
  EXPECT_EQ(a.kernel_ref.text, "fx");
  EXPECT_EQ(a.kernel, "fwd2");
  const Launch& a2 = m.launches[1];
  EXPECT_EQ(a2.kernel, "fwd");
  EXPECT_EQ(a2.kernel_candidates, a.kernel_candidates);
  EXPECT_EQ(a2.span.begin.byte, a.span.begin.byte);
  EXPECT_EQ(B(a2, "BLOCK").origin.value, "32");
  m.launches.erase(m.launches.begin());
  const Launch& b = m.launches[1];
  EXPECT_TRUE(b.in_lambda);
  EXPECT_EQ(B(b, "BLOCK").origin.kind, OriginKind::kComputed);
  EXPECT_EQ(B(b, "BLOCK").origin.expression.text, "self.block");
  const Launch& c = m.launches[2];
  EXPECT_EQ(c.args[1].param, "X");  // element of the literal *splat
  EXPECT_EQ(c.args[2].param, "Y");
  EXPECT_EQ(B(c, "BLOCK").origin.kind, OriginKind::kLiteral);
  EXPECT_EQ(B(c, "BLOCK").origin.value, "16");
  const Launch& d = m.launches[3];
  EXPECT_EQ(d.enclosing_function, "outer.<locals>.inner");
  EXPECT_EQ(B(d, "BLOCK").origin.kind, OriginKind::kVariable);  // closure over outer's B = 64
  EXPECT_EQ(B(d, "BLOCK").origin.value, "64");
  const Launch& e = m.launches[4];
  EXPECT_EQ(B(e, "BLOCK").origin.kind, OriginKind::kFunctionParam);
  EXPECT_EQ(B(e, "BLOCK").origin.function_param, "cfg");
  ASSERT_EQ(m.notes.size(), 1u);  // km.other is not a kernel of this module
}

TEST(Analyze, PositionalAfterUnknownSplatAligned) {
  ModuleModel m = Analyze(R"(
import triton
import triton.language as tl
@triton.jit
def k(X, sx, sy, N, D: tl.constexpr, BLOCK: tl.constexpr):
    tl.store(X, N)
def run(x, n):
    k[(1,)](x, *x.stride(), n, 16, BLOCK=32)
)");
  const Launch& l = m.launches[0];
  ASSERT_EQ(l.args.size(), 5u);
  EXPECT_EQ(l.args[2].param, "N");
  EXPECT_TRUE(l.args[2].position_inferred);
  EXPECT_EQ(l.args[3].param, "D");
  EXPECT_EQ(B(l, "D").origin.kind, OriginKind::kLiteral);
  EXPECT_EQ(B(l, "D").origin.value, "16");
}

// Every name of a `from ... import a, b` (tree-sitter's field names lost those after the first comma): `jit` imported
// second still marks a kernel, `(cdiv,\n jit)` in parentheses too.
TEST(Analyze, EveryNameOfAFromImport) {
  for (const char* imp : {"from triton import cdiv, jit", "from triton import (cdiv,\n    jit)"}) {
    ModuleModel m = Analyze(std::string(imp) + R"(
import triton.language as tl
@jit
def k(X, BLOCK: tl.constexpr):
    tl.store(X + tl.arange(0, BLOCK), 1.0)
def run(x):
    k[(cdiv(8, 4),)](x, BLOCK=128)
)");
    ASSERT_EQ(m.kernels.size(), 1u) << imp;
    EXPECT_EQ(m.kernels[0].name, "k");
    EXPECT_EQ(m.launches.size(), 1u) << imp;
  }
}

// A grid written as bare indices (`k[4, n]`): each index is a dimension (tree-sitter's field names read the second as
// the `,` between them).
TEST(Analyze, GridOfBareIndices) {
  ModuleModel m = Analyze(R"(
import triton
import triton.language as tl
@triton.jit
def k(X, N, BLOCK: tl.constexpr):
    tl.store(X, N)
def run(x, n):
    k[4, triton.cdiv(n, 128)](x, n, BLOCK=128)
    k[n,](x, n, BLOCK=128)
)");
  ASSERT_EQ(m.launches.size(), 2u);
  EXPECT_EQ(m.launches[0].grid.kind, GridKind::kTuple);
  ASSERT_EQ(m.launches[0].grid.dims.size(), 2u);
  EXPECT_EQ(m.launches[0].grid.dims[0].text, "4");
  EXPECT_EQ(m.launches[0].grid.dims[1].text, "triton.cdiv(n, 128)");
  EXPECT_EQ(m.launches[1].grid.kind, GridKind::kTuple);
  ASSERT_EQ(m.launches[1].grid.dims.size(), 1u);
  EXPECT_EQ(m.launches[1].grid.dims[0].text, "n");
}

TEST(Analyze, GridFunctionAndCall) {
  ModuleModel m = Analyze(R"(
import triton
import triton.language as tl
@triton.jit
def k(X, N, BLOCK: tl.constexpr):
    tl.store(X, N)
def grid_fn(meta):
    return (triton.cdiv(1000, meta["BLOCK"]), 1)
def run(x, n):
    BLOCK = 128
    k[grid_fn](x, n, BLOCK=BLOCK)
    g = (triton.cdiv(n, BLOCK),)
    k[g](x, n, BLOCK=BLOCK)
    k[make_grid(n)](x, n, BLOCK)
)");
  ASSERT_EQ(m.launches.size(), 3u);
  EXPECT_EQ(m.launches[0].grid.kind, GridKind::kVariable);
  EXPECT_EQ(m.launches[0].grid.resolved_kind, GridKind::kLambda);
  EXPECT_EQ(m.launches[0].grid.meta_keys, std::vector<std::string>{"BLOCK"});
  EXPECT_EQ(m.launches[0].grid.dims.size(), 2u);
  EXPECT_EQ(m.launches[1].grid.resolved_kind, GridKind::kTuple);
  EXPECT_EQ(m.launches[1].grid.constexprs, std::vector<std::string>{"BLOCK"});
  EXPECT_EQ(B(m.launches[1], "BLOCK").origin.kind, OriginKind::kVariable);
  EXPECT_EQ(m.launches[2].grid.kind, GridKind::kCall);
  EXPECT_EQ(m.launches[2].grid.names, std::vector<std::string>{"n"});
  EXPECT_TRUE(m.launches[2].grid.constexprs.empty());
}

TEST(Analyze, NoKernelsIsAnError) {
  auto t = pyast::Tree::Parse("import torch\nx = 1\n", "t.py");
  ASSERT_TRUE(t.ok());
  auto m = AnalyzeModule(**t);
  EXPECT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "no @triton.jit function found");
}

TEST(Analyze, NonTritonJitIgnored) {
  auto r = AnalyzeText("import numba\n@numba.jit\ndef f(x):\n    return x\n", "n.py");
  EXPECT_FALSE(r.ok());
}

TEST(Analyze, JsonHasSchemaVersionAndSpans) {
  ModuleModel m = Analyze(kAdd);
  auto j = ModuleToJson(m);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["kernels"][0]["name"], "add_kernel");
  EXPECT_EQ(j["kernels"][0]["params"][0]["kind"], "pointer");
  EXPECT_EQ(j["launches"][0]["bindings"][0]["origin"]["kind"], "variable");
  EXPECT_EQ(j["launches"][0]["bindings"][0]["origin"]["assignment"]["value"]["span"]["line"], 14);
  EXPECT_TRUE(j["kernels"][0]["memops"][0]["span"].contains("begin"));
}

TEST(Driver, Errors) {
  auto r = AnalyzeText("def f(:\n", "bad.py");
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_EQ(r.diagnostics[0].line, 1);
  auto b = AnalyzeText(std::string("\x7f"
                                   "ELF\x01\x02\xff\xfe",
                                   8),
                       "bin.py");
  ASSERT_EQ(b.diagnostics.size(), 1u);
  // Undecodable bytes: located (line 1, the 0xff at byte 7), as every decoding error is.
  EXPECT_EQ(b.diagnostics[0].line, 1);
  EXPECT_EQ(b.diagnostics[0].column, 7);
  EXPECT_EQ(b.diagnostics[0].message.rfind("cannot decode byte 0xff as utf-8", 0), 0u) << b.diagnostics[0].message;
  auto d = AnalyzeFile("/");
  EXPECT_EQ(d.diagnostics[0].message, "is a directory (expected a Python file)");
  auto n = AnalyzeFile("/nonexistent/x.py");
  EXPECT_EQ(n.diagnostics[0].message, "no such file");
}

// Nesting that would exhaust the stack of a recursive walk is a located error, through the library.
TEST(Driver, DeepNestingIsAnErrorNotACrash) {
  std::string head = "import triton\n\n@triton.jit\ndef k(x):\n    y = ";
  std::string chain = "x";
  for (int i = 1; i < 10000; ++i) chain += " + x";
  const std::string parens = std::string(50000, '(') + "x" + std::string(50000, ')');
  for (const std::string& expr : {parens, chain}) {
    auto r = AnalyzeText(head + expr + "\n", "deep.py");
    ASSERT_EQ(r.diagnostics.size(), 1u);
    EXPECT_FALSE(r.model.has_value());
    EXPECT_EQ(r.diagnostics[0].line, 5);
    // brackets: refused before parsing at the 201st, as CPython's tokenizer does; the chain by the tree's depth
    EXPECT_NE(r.diagnostics[0].message.find(expr[0] == '(' ? "too many nested parentheses"
                                                              : "expression nested too deeply"),
              std::string::npos)
        << r.diagnostics[0].message;
  }
}

// A latin-1 module with its declaration is analyzed; its texts are UTF-8 (the JSON dumps).
TEST(Driver, DeclaredEncodingAnalyzed) {
  auto r =
      AnalyzeText("# -*- coding: latin-1 -*-\nimport triton\n\n@triton.jit\ndef k(x):\n    s = 'caf\xe9'\n", "l1.py");
  ASSERT_TRUE(r.ok()) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
  EXPECT_EQ(r.model->kernels.at(0).name, "k");
  EXPECT_NO_THROW((void)ReportsToJson({r}).dump());
}

}  // namespace
}  // namespace kiln::analysis

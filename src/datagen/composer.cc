// The composer: a vocabulary of operators, each an applicability test over the current tensor's shape and
// an emitter of the lines it adds to Model.__init__, Model.forward and get_inputs.
#include "datagen/composer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <functional>
#include <set>

#include <fmt/format.h>

namespace kiln::datagen {

namespace {

// splitmix64: a fixed, portable stream (std distributions differ between standard libraries).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int Below(int n) { return static_cast<int>(Next() % static_cast<uint64_t>(n)); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) { return v[Below(static_cast<int>(v.size()))]; }
  double Unit() { return static_cast<double>(Next() >> 11) / 9007199254740992.0; }

 private:
  uint64_t s_;
};

// The program being written: the current tensor `x` has shape `dims` (rank 2 or 3).
struct State {
  std::vector<int64_t> dims;
  std::string dtype;
  bool small = false;
  bool terminal = false;  // a shape-reducing reduction ended the chain
  int layer = 0;          // counter for layer / parameter / input names
  std::vector<std::string> init, forward;
  std::vector<std::pair<std::string, std::string>> extra_inputs;  // name, constructor expression
  int64_t last() const { return dims.back(); }
  std::string DtypeArg() const { return "dtype=torch." + dtype; }
  std::string Fresh(const char* stem) { return fmt::format("{}{}", stem, layer++); }
};

// An extra input shaped like x: its first dim is `batch_size` (no operator changes the leading dim), so that
// verification at other batch sizes (--shapes) draws inputs that still broadcast.
std::string BatchShapeTuple(const std::vector<int64_t>& dims) {
  std::string s = "batch_size";
  for (size_t i = 1; i < dims.size(); ++i) s += ", " + std::to_string(dims[i]);
  return s;
}

std::string Num(double v) { return fmt::format("{:.3g}", v); }

struct Op {
  OpInfo info;
  std::function<bool(const State&)> applies;
  std::function<void(State&, Rng&)> emit;
};

bool Any(const State&) { return true; }
void Fwd(State& s, std::string line) { s.forward.push_back(std::move(line)); }

std::vector<Op> Elementwise() {
  return {
      {{"add_scalar", "elementwise"}, Any,
       [](State& s, Rng& r) { Fwd(s, "x = x + " + Num(r.Unit() * 2 - 1)); }},
      {{"mul_scalar", "elementwise"}, Any,
       [](State& s, Rng& r) { Fwd(s, "x = x * " + Num(0.5 + r.Unit() * 1.5)); }},
      {{"add_input", "elementwise"}, Any,
       [](State& s, Rng&) {
         std::string y = s.Fresh("y");
         s.extra_inputs.push_back({y, fmt::format("torch.randn({}, {})", BatchShapeTuple(s.dims), s.DtypeArg())});
         Fwd(s, "x = x + " + y);
       }},
      {{"mul_input", "elementwise"}, Any,
       [](State& s, Rng&) {
         std::string y = s.Fresh("y");
         s.extra_inputs.push_back({y, fmt::format("torch.randn({}, {})", BatchShapeTuple(s.dims), s.DtypeArg())});
         Fwd(s, "x = x * torch.sigmoid(" + y + ")");
       }},
      {{"scale_parameter", "elementwise"}, Any,
       [](State& s, Rng&) {
         std::string p = s.Fresh("scale");
         s.init.push_back(fmt::format("self.{} = nn.Parameter(torch.randn({}, {}) * 0.1 + 1.0)", p, s.last(),
                                      s.DtypeArg()));
         Fwd(s, "x = x * self." + p);
       }},
      {{"clamp", "elementwise"}, Any,
       [](State& s, Rng& r) {
         double lo = -0.5 - r.Unit();
         Fwd(s, fmt::format("x = torch.clamp(x, min={}, max={})", Num(lo), Num(-lo)));
       }},
      {{"abs_square", "elementwise"}, Any, [](State& s, Rng&) { Fwd(s, "x = x * x.abs()"); }},
      {{"rsqrt", "elementwise"}, Any, [](State& s, Rng&) { Fwd(s, "x = torch.rsqrt(x.abs() + 1.0)"); }},
  };
}

std::vector<Op> Activations() {
  auto act = [](const char* name, std::string expr) {
    return Op{{name, "activation"}, Any, [expr](State& s, Rng&) { Fwd(s, "x = " + expr); }};
  };
  return {act("relu", "torch.relu(x)"),
          act("gelu", "F.gelu(x)"),
          act("gelu_tanh", "F.gelu(x, approximate=\"tanh\")"),
          act("silu", "F.silu(x)"),
          act("sigmoid", "torch.sigmoid(x)"),
          act("tanh", "torch.tanh(x)"),
          act("leaky_relu", "F.leaky_relu(x, negative_slope=0.1)"),
          act("elu", "F.elu(x)"),
          act("softplus", "F.softplus(x)"),
          act("hardswish", "F.hardswish(x)"),
          act("mish", "F.mish(x)")};
}

std::vector<Op> Reductions() {
  auto keep = [](const char* name, std::string expr) {
    return Op{{name, "reduction"}, Any, [expr](State& s, Rng&) { Fwd(s, "x = " + expr); }};
  };
  auto terminal = [](const char* name, const char* fn) {
    return Op{{name, "reduction"}, Any, [fn](State& s, Rng& r) {
                // over the last dimension, or (rank 3) sometimes the middle one
                int dim = (s.dims.size() == 3 && r.Below(3) == 0) ? 1 : -1;
                Fwd(s, fmt::format("x = {}(x, dim={})", fn, dim));
                s.dims.erase(s.dims.begin() + (dim == 1 ? 1 : static_cast<long>(s.dims.size()) - 1));
                s.terminal = true;
              }};
  };
  return {keep("center", "x - x.mean(dim=-1, keepdim=True)"),
          keep("subtract_max", "x - x.amax(dim=-1, keepdim=True)"),
          keep("l1_scale", "x / (x.abs().sum(dim=-1, keepdim=True) + 1e-3)"),
          keep("cumsum", "torch.cumsum(x, dim=-1)"),
          terminal("sum", "torch.sum"),
          terminal("mean", "torch.mean"),
          terminal("amax", "torch.amax"),
          terminal("amin", "torch.amin"),
          terminal("logsumexp", "torch.logsumexp")};
}

std::vector<Op> Normalizations() {
  return {
      {{"softmax", "normalization"}, Any, [](State& s, Rng&) { Fwd(s, "x = torch.softmax(x, dim=-1)"); }},
      {{"log_softmax", "normalization"}, Any, [](State& s, Rng&) { Fwd(s, "x = F.log_softmax(x, dim=-1)"); }},
      {{"layer_norm", "normalization"}, Any,
       [](State& s, Rng&) {
         std::string m = s.Fresh("norm");
         s.init.push_back(fmt::format("self.{} = nn.LayerNorm({}, {})", m, s.last(), s.DtypeArg()));
         Fwd(s, "x = self." + m + "(x)");
       }},
      {{"rms_norm", "normalization"}, Any,
       [](State& s, Rng&) { Fwd(s, "x = x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + 1e-6)"); }},
      {{"l2_normalize", "normalization"}, Any, [](State& s, Rng&) { Fwd(s, "x = F.normalize(x, dim=-1)"); }},
      {{"batch_norm", "normalization"}, [](const State& s) { return s.dims.size() == 2; },
       [](State& s, Rng&) {
         std::string m = s.Fresh("bn");
         s.init.push_back(fmt::format("self.{} = nn.BatchNorm1d({}, {})", m, s.last(), s.DtypeArg()));
         Fwd(s, "x = self." + m + "(x)");
       }},
  };
}

int64_t PickWidth(State& s, Rng& r) {
  static const std::vector<int64_t> kSmall = {16, 32, 48};
  static const std::vector<int64_t> kLarge = {64, 128, 256, 512, 768};
  return r.Pick(s.small ? kSmall : kLarge);
}

std::vector<Op> Matmuls() {
  return {
      {{"linear", "matmul"}, Any,
       [](State& s, Rng& r) {
         int64_t out = PickWidth(s, r);
         std::string m = s.Fresh("linear");
         bool bias = r.Below(4) != 0;
         s.init.push_back(fmt::format("self.{} = nn.Linear({}, {}, bias={}, {})", m, s.last(), out,
                                      bias ? "True" : "False", s.DtypeArg()));
         Fwd(s, "x = self." + m + "(x)");
         s.dims.back() = out;
       }},
      {{"matmul_input", "matmul"}, Any,
       [](State& s, Rng& r) {
         int64_t out = PickWidth(s, r);
         std::string w = s.Fresh("w");
         s.extra_inputs.push_back({w, fmt::format("torch.randn({}, {}, {}) / {}", s.last(), out, s.DtypeArg(),
                                                  Num(std::sqrt(static_cast<double>(s.last()))))});
         Fwd(s, "x = torch.matmul(x, " + w + ")");
         s.dims.back() = out;
       }},
      {{"bmm_self", "matmul"}, [](const State& s) { return s.dims.size() == 3; },
       [](State& s, Rng&) {
         Fwd(s, fmt::format("x = torch.bmm(x, x.transpose(1, 2)) / {}", s.last()));
         s.dims.back() = s.dims[1];
       }},
  };
}

std::vector<Op> Indexing() {
  return {
      {{"transpose", "indexing"}, [](const State& s) { return s.dims.size() == 3; },
       [](State& s, Rng&) {
         Fwd(s, "x = x.transpose(1, 2).contiguous()");
         std::swap(s.dims[1], s.dims[2]);
       }},
      {{"stride_slice", "indexing"}, [](const State& s) { return s.last() % 2 == 0 && s.last() >= 32; },
       [](State& s, Rng&) {
         Fwd(s, "x = x[..., ::2]");
         s.dims.back() /= 2;
       }},
      {{"narrow", "indexing"}, [](const State& s) { return s.last() >= 32; },
       [](State& s, Rng& r) {
         int64_t keep = s.last() / 2 + r.Below(static_cast<int>(s.last() / 2));
         Fwd(s, fmt::format("x = x[..., :{}]", keep));
         s.dims.back() = keep;
       }},
      {{"flip", "indexing"}, Any, [](State& s, Rng&) { Fwd(s, "x = torch.flip(x, dims=[-1])"); }},
      {{"roll", "indexing"}, Any,
       [](State& s, Rng& r) { Fwd(s, fmt::format("x = torch.roll(x, shifts={}, dims=-1)", 1 + r.Below(7))); }},
      {{"concat_activation", "indexing"}, [](const State& s) { return s.last() <= 1024; },
       [](State& s, Rng&) {
         Fwd(s, "x = torch.cat([x, torch.relu(x)], dim=-1)");
         s.dims.back() *= 2;
       }},
      {{"permute_gather", "indexing"}, Any,
       [](State& s, Rng&) {
         std::string b = s.Fresh("perm");
         // a fixed permutation: i*p mod n with p prime to n
         int64_t n = s.last(), p = 7;
         while (std::gcd(p, n) != 1) p += 2;
         s.init.push_back(
             fmt::format("self.register_buffer(\"{}\", (torch.arange({}) * {}) % {})", b, n, p, n));
         Fwd(s, fmt::format("x = torch.index_select(x, -1, self.{})", b));
       }},
  };
}

const std::vector<Op>& Ops() {
  static const std::vector<Op> ops = [] {
    std::vector<Op> all;
    for (auto group : {Elementwise(), Activations(), Reductions(), Normalizations(), Matmuls(), Indexing()})
      all.insert(all.end(), group.begin(), group.end());
    return all;
  }();
  return ops;
}

std::string Render(const ComposedProgram& p, const State& s, const std::vector<int64_t>& in_dims) {
  std::string ops;
  for (const auto& o : p.ops) ops += (ops.empty() ? "" : ", ") + o;
  std::string families;
  for (const auto& f : p.families) families += (families.empty() ? "" : ", ") + f;
  std::string out = fmt::format(
      "# Composed by kiln datagen ({}): {}\n# families: {}; dtype: {}\n"
      "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n",
      p.name, ops, families, p.dtype);
  std::vector<const char*> names = {"batch_size", "features"};
  if (in_dims.size() == 3) names.insert(names.begin() + 1, "seq_len");
  for (size_t i = 0; i < in_dims.size(); ++i) out += fmt::format("{} = {}\n", names[i], in_dims[i]);
  out += fmt::format("\n\nclass Model(nn.Module):\n    \"\"\"{}\"\"\"\n\n    def __init__(self):\n"
                     "        super().__init__()\n",
                     ops);
  for (const auto& l : s.init) out += "        " + l + "\n";
  std::string params = "x";
  for (const auto& [name, _] : s.extra_inputs) params += ", " + name;
  out += fmt::format("\n    def forward(self, {}):\n", params);
  for (const auto& l : s.forward) out += "        " + l + "\n";
  out += "        return x\n\n\ndef get_inputs():\n";
  std::string shape;
  for (size_t i = 0; i < in_dims.size(); ++i) shape += (i ? ", " : "") + std::string(names[i]);
  out += fmt::format("    x = torch.randn({}, dtype=torch.{})\n", shape, p.dtype);
  std::string ret = "x";
  for (const auto& [name, ctor] : s.extra_inputs) {
    out += fmt::format("    {} = {}\n", name, ctor);
    ret += ", " + name;
  }
  out += fmt::format("    return [{}]\n\n\ndef get_init_inputs():\n    return []\n", ret);
  return out;
}

}  // namespace

std::vector<OpInfo> Vocabulary() {
  std::vector<OpInfo> v;
  for (const auto& op : Ops()) v.push_back(op.info);
  return v;
}

ComposedProgram Compose(uint64_t seed, int index, const ComposeOptions& opts) {
  Rng r(seed * 0x100000001B3ull + static_cast<uint64_t>(index) * 0x9E3779B97F4A7C15ull + 1);
  ComposedProgram p;
  p.name = fmt::format("comp_{}_{:05d}", seed, index);
  State s;
  s.small = opts.small;
  int d = r.Below(10);
  s.dtype = (!opts.allow_half || d < 7) ? "float32" : (d < 9 ? "float16" : "bfloat16");
  p.dtype = s.dtype;
  static const std::vector<int64_t> kBatch = {8, 16, 32, 64, 128}, kBatchSmall = {2, 3, 4};
  static const std::vector<int64_t> kSeq = {8, 16, 32, 64}, kSeqSmall = {2, 4};
  static const std::vector<int64_t> kFeat = {64, 128, 256, 512, 1024, 2048}, kFeatSmall = {16, 32, 64};
  std::vector<int64_t> in_dims = {r.Pick(opts.small ? kBatchSmall : kBatch)};
  if (r.Below(3) == 0) in_dims.push_back(r.Pick(opts.small ? kSeqSmall : kSeq));
  in_dims.push_back(r.Pick(opts.small ? kFeatSmall : kFeat));
  s.dims = in_dims;
  int n = opts.min_ops + r.Below(std::max(1, opts.max_ops - opts.min_ops + 1));
  const auto& ops = Ops();
  std::set<std::string> seen_families;
  for (int i = 0; i < n && !s.terminal; ++i) {
    const Op* op = nullptr;
    for (int tries = 0; tries < 50 && !op; ++tries) {
      const Op& c = ops[r.Below(static_cast<int>(ops.size()))];
      if (!c.applies(s)) continue;
      // a shape-reducing reduction only as the last operator
      bool reduces = c.info.family == "reduction" && (c.info.name == "sum" || c.info.name == "mean" ||
                                                      c.info.name == "amax" || c.info.name == "amin" ||
                                                      c.info.name == "logsumexp");
      if (reduces && i + 1 < n) continue;
      op = &c;
    }
    if (!op) break;
    op->emit(s, r);
    p.ops.push_back(op->info.name);
    if (seen_families.insert(op->info.family).second) p.families.push_back(op->info.family);
  }
  p.source = Render(p, s, in_dims);
  return p;
}

}  // namespace kiln::datagen

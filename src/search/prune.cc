#include "search/prune.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln::search {

namespace {

std::optional<int64_t> ValueOf(const Space& s, const Config& c, Role role) {
  for (const auto& p : s.params()) {
    if (p.role != role) continue;
    auto it = c.find(p.name);
    if (it != c.end()) return it->second;
  }
  // Launch options may be absent from the space but present in the config.
  if (role == Role::kNumWarps)
    if (auto it = c.find("num_warps"); it != c.end()) return it->second;
  if (role == Role::kNumStages)
    if (auto it = c.find("num_stages"); it != c.end()) return it->second;
  return std::nullopt;
}

}  // namespace

int64_t GemmSharedBytes(const Space& s, const Config& c, int dtype_bytes) {
  auto bm = ValueOf(s, c, Role::kBlockM), bn = ValueOf(s, c, Role::kBlockN), bk = ValueOf(s, c, Role::kBlockK);
  if (!bm || !bn || !bk) return 0;
  int64_t stages = ValueOf(s, c, Role::kNumStages).value_or(3);
  return static_cast<int64_t>(dtype_bytes) * ((*bm) * (*bk) + (*bk) * (*bn)) * std::max<int64_t>(1, stages);
}

int64_t AccumulatorRegs(const Space& s, const Config& c) {
  auto bm = ValueOf(s, c, Role::kBlockM), bn = ValueOf(s, c, Role::kBlockN);
  if (!bm || !bn) return 0;
  int64_t warps = ValueOf(s, c, Role::kNumWarps).value_or(4);
  return (*bm) * (*bn) / (32 * std::max<int64_t>(1, warps));
}

std::optional<std::string> PruneBeforeCompile(const Space& s, const Config& c, const PruneContext& p) {
  if (auto w = ValueOf(s, c, Role::kNumWarps); w && *w * 32 > p.max_threads)
    return fmt::format("num_warps={} exceeds {} threads per block", *w, p.max_threads);
  if (int64_t smem = GemmSharedBytes(s, c, p.dtype_bytes); smem > p.smem_limit)
    return fmt::format("shared memory {} B ({} B/elem x (BM*BK+BK*BN) x stages) exceeds the {} B limit", smem,
                       p.dtype_bytes, p.smem_limit);
  if (int64_t regs = AccumulatorRegs(s, c); regs > p.max_acc_regs)
    return fmt::format("accumulator needs {} registers per thread (BM*BN/(32*warps)) > {}", regs, p.max_acc_regs);
  for (const auto& prm : s.params()) {
    auto v = c.find(prm.name);
    if (prm.role != Role::kBlock || prm.tiles.empty() || v == c.end()) continue;
    const int64_t n = TileElements(prm, v->second, c, p.ran_with);
    if (n <= p.max_tile_elems) continue;
    Config orig = c;
    for (const auto& [k, x] : p.ran_with) orig[k] = x;
    if (auto o = orig.find(prm.name); o != orig.end() && n <= TileElements(prm, o->second, orig, p.ran_with)) continue;
    const auto* tile = LargestTile(prm, v->second, c, p.ran_with);
    if (!tile) tile = &prm.tiles.front();
    return fmt::format("{}={} makes a tile of {} elements (> {}): {}", prm.name, v->second, n, p.max_tile_elems,
                       fmt::join(*tile, " x "));
  }
  for (const auto& f : p.out_of_resources) {
    bool superset = true;
    for (const auto& prm : s.params()) {
      auto a = c.find(prm.name), b = f.find(prm.name);
      if (a == c.end() || b == f.end()) continue;
      const bool grows = IsBlockRole(prm.role) || prm.role == Role::kNumStages;
      if (grows ? a->second < b->second : a->second != b->second) superset = false;
    }
    if (superset) return "needs at least the resources of " + ConfigKey(f) + ", which ran out of them when compiled";
  }
  return std::nullopt;
}

bool IsResourceFailure(const std::string& message) {
  return message.find("out of resource") != std::string::npos ||
         message.find("OutOfResources") != std::string::npos;
}

std::optional<std::string> PruneAfterCompile(const std::vector<exec::KernelFacts>& kernels, const PruneContext& p) {
  const int64_t allowed = std::max(p.max_spills, p.baseline_spills);
  for (const auto& k : kernels) {
    if (k.n_spills && *k.n_spills > allowed)
      return fmt::format("{} spills {} registers (allowed {})", k.name, *k.n_spills, allowed);
    if (k.shared_bytes && *k.shared_bytes > p.smem_limit)
      return fmt::format("{} needs {} B of shared memory (limit {})", k.name, *k.shared_bytes, p.smem_limit);
  }
  return std::nullopt;
}

std::optional<int> InferDtypeBytes(const Space& s, const Config& c, const std::vector<exec::KernelFacts>& kernels) {
  // The kernel with the most shared memory, at the config it ran with: its recorded constexprs and
  // launch options over `c` (an autotuned original runs the config its autotuner picked, not `c`: on
  // an H100, matmul_triton2's pick had 2x the tile of its first config, which read as 4-byte elements
  // and pruned legal fp16 configs).
  const exec::KernelFacts* big = nullptr;
  for (const auto& k : kernels)
    if (k.shared_bytes && *k.shared_bytes > 0 && (!big || *k.shared_bytes > *big->shared_bytes)) big = &k;
  if (!big) return std::nullopt;
  Config ran = c;
  for (const auto& p : s.params()) {
    if (p.name == "num_warps" && big->num_warps)
      ran[p.name] = *big->num_warps;
    else if (p.name == "num_stages" && big->num_stages)
      ran[p.name] = *big->num_stages;
    else if (auto it = big->constexprs.find(p.name); it != big->constexprs.end() && it->is_number_integer())
      ran[p.name] = it->get<int64_t>();
  }
  int64_t per_byte = GemmSharedBytes(s, ran, 1);
  if (per_byte <= 0) return std::nullopt;
  const int64_t shared = *big->shared_bytes;
  double r = static_cast<double>(shared) / static_cast<double>(per_byte);
  // Triton keeps stages-1 buffers in flight plus epilogue scratch: round to the nearest of 1, 2, 4.
  int best = 2;
  double bd = 1e300;
  for (int b : {1, 2, 4}) {
    double d = std::abs(std::log2(r) - std::log2(static_cast<double>(b)));
    if (d < bd) {
      bd = d;
      best = b;
    }
  }
  return best;
}

std::vector<std::string> AdoptRecordedValues(const std::vector<std::string>& names, const std::string& kernel,
                                             const std::vector<exec::KernelFacts>& kernels, Space* s,
                                             Config* baseline, const SpaceOptions& opts) {
  std::vector<std::string> notes;
  if (names.empty()) return notes;
  const exec::KernelFacts* k = nullptr;
  for (const auto& f : kernels)
    if (f.name == kernel) k = &f;
  std::vector<Param> ps = s->params();
  for (const auto& n : names) {
    std::optional<int64_t> v;
    if (k && n == "num_warps") v = k->num_warps;
    if (k && n == "num_stages") v = k->num_stages;
    if (k && !v)
      if (auto it = k->constexprs.find(n); it != k->constexprs.end() && it->is_number_integer())
        v = it->get<int64_t>();
    auto p = std::find_if(ps.begin(), ps.end(), [&](const Param& x) { return x.name == n; });
    if (p == ps.end()) continue;
    if (!v || *v <= 0) {
      notes.push_back(n + ": the original's value was not recorded; the search starts from " +
                      std::to_string((*baseline)[n]));
      continue;
    }
    const bool block = IsBlockRole(p->role);
    if (block && !p->values.empty() && (*v & (*v - 1)) == 0) {
      const int64_t top = std::min(p->values.back(), *v * opts.block_span);
      for (int64_t q = std::max(opts.block_min, *v / opts.block_span); q <= top; q <<= 1)
        if (std::find(p->values.begin(), p->values.end(), q) == p->values.end()) p->values.push_back(q);
    }
    if (std::find(p->values.begin(), p->values.end(), *v) == p->values.end()) p->values.push_back(*v);
    std::sort(p->values.begin(), p->values.end());
    (*baseline)[n] = *v;
    notes.push_back(fmt::format("{}: the original ran with {} (computed by its wrapper or passed by its caller)", n, *v));
  }
  *s = Space(std::move(ps));
  return notes;
}

}  // namespace kiln::search

#include "search/space.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <tuple>

#include "analysis/tunables.h"
#include "common/strings.h"

namespace kiln::search {

const char* RoleName(Role r) {
  switch (r) {
    case Role::kBlockM: return "block_m";
    case Role::kBlockN: return "block_n";
    case Role::kBlockK: return "block_k";
    case Role::kBlock: return "block";
    case Role::kGroupM: return "group_m";
    case Role::kNumWarps: return "num_warps";
    case Role::kNumStages: return "num_stages";
    case Role::kOther: return "other";
  }
  return "other";
}

namespace {

std::string Upper(const std::string& s) {
  std::string u = s;
  for (auto& ch : u) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return u;
}

bool IsPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

uint64_t SplitMix(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

Role GuessRole(const std::string& name) {
  if (name == "num_warps") return Role::kNumWarps;
  if (name == "num_stages") return Role::kNumStages;
  const std::string u = Upper(name);
  if (u.find("GROUP") != std::string::npos) return Role::kGroupM;
  const bool blockish = u.find("BLOCK") != std::string::npos || u.find("TILE") != std::string::npos || u == "BM" ||
                        u == "BN" || u == "BK";
  if (!blockish) return Role::kOther;
  // Head dimensions and model widths are shapes, not tiles.
  if (u.find("DMODEL") != std::string::npos || u.find("HEAD") != std::string::npos || EndsWith(u, "_D") ||
      EndsWith(u, "DIM"))
    return Role::kOther;
  auto ends = [&](const char* a) { return EndsWith(u, a); };
  if (ends("_M") || ends("SIZE_M") || u == "BM" || ends("BLOCK_M") || ends("BLOCKM")) return Role::kBlockM;
  if (ends("_N") || u == "BN" || ends("BLOCKN")) return Role::kBlockN;
  if (ends("_K") || u == "BK" || ends("BLOCKK")) return Role::kBlockK;
  return Role::kBlock;  // BLOCK, BLOCK_SIZE, XBLOCK, RBLOCK, BLOCK_D, ...
}

std::string ConfigKey(const Config& c) {
  std::string s;
  for (const auto& [k, v] : c) {
    if (!s.empty()) s += ' ';
    s += k + "=" + std::to_string(v);
  }
  return s;
}

nlohmann::json ConfigToJson(const Config& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : c) j[k] = v;
  return j;
}

const Param* Space::Find(const std::string& name) const {
  for (const auto& p : params_)
    if (p.name == name) return &p;
  return nullptr;
}

double Space::Size() const {
  if (params_.empty()) return 0;
  double n = 1;
  for (const auto& p : params_) n *= static_cast<double>(p.values.size());
  return n;
}

std::vector<int> Space::Indices(const Config& c) const {
  std::vector<int> idx;
  idx.reserve(params_.size());
  for (const auto& p : params_) {
    int best = 0;
    auto it = c.find(p.name);
    if (it != c.end()) {
      double bd = 1e300;
      for (size_t i = 0; i < p.values.size(); ++i) {
        // Distance in log space for positive values (block sizes), linear otherwise.
        double a = static_cast<double>(p.values[i]), b = static_cast<double>(it->second);
        double d = (a > 0 && b > 0) ? std::abs(std::log2(a) - std::log2(b)) : std::abs(a - b);
        if (d < bd) {
          bd = d;
          best = static_cast<int>(i);
        }
      }
    }
    idx.push_back(best);
  }
  return idx;
}

Config Space::At(const std::vector<int>& idx) const {
  Config c;
  for (size_t i = 0; i < params_.size() && i < idx.size(); ++i) c[params_[i].name] = params_[i].values[idx[i]];
  return c;
}

std::vector<double> Space::Features(const Config& c) const {
  auto idx = Indices(c);
  std::vector<double> f(params_.size(), 0.0);
  for (size_t i = 0; i < params_.size(); ++i) {
    size_t n = params_[i].values.size();
    f[i] = n > 1 ? static_cast<double>(idx[i]) / static_cast<double>(n - 1) : 0.0;
  }
  return f;
}

std::vector<Config> Space::Neighbors(const Config& c) const {
  std::vector<Config> out;
  auto idx = Indices(c);
  Config base = At(idx);
  for (const auto& [k, v] : c)
    if (!Find(k)) base[k] = v;  // keep foreign keys
  for (size_t i = 0; i < params_.size(); ++i) {
    for (int d : {-1, +1}) {
      int j = idx[i] + d;
      if (j < 0 || j >= static_cast<int>(params_[i].values.size())) continue;
      Config n = base;
      n[params_[i].name] = params_[i].values[j];
      out.push_back(std::move(n));
    }
  }
  return out;
}

std::vector<Config> Space::CoupledNeighbors(const Config& c) const {
  std::vector<Config> out;
  auto idx = Indices(c);
  Config base = At(idx);
  for (const auto& [k, v] : c)
    if (!Find(k)) base[k] = v;
  auto find_role = [&](Role r) -> int {
    for (size_t i = 0; i < params_.size(); ++i)
      if (params_[i].role == r && params_[i].values.size() > 1) return static_cast<int>(i);
    return -1;
  };
  auto add = [&](int a, int da, int b, int db) {
    if (a < 0 || b < 0 || a == b) return;
    int ja = idx[a] + da, jb = idx[b] + db;
    if (ja < 0 || jb < 0 || ja >= static_cast<int>(params_[a].values.size()) ||
        jb >= static_cast<int>(params_[b].values.size()))
      return;
    Config n = base;
    n[params_[a].name] = params_[a].values[ja];
    n[params_[b].name] = params_[b].values[jb];
    out.push_back(std::move(n));
  };
  const int warps = find_role(Role::kNumWarps), stages = find_role(Role::kNumStages);
  const int bm = find_role(Role::kBlockM), bn = find_role(Role::kBlockN), bk = find_role(Role::kBlockK);
  for (int tile : {bm, bn, find_role(Role::kBlock)})
    for (int d : {+1, -1}) add(tile, d, warps, d);
  for (int d : {-1, +1}) add(bk, d, stages, -d);
  for (int d : {+1, -1}) add(bm, d, bn, -d);
  return out;
}

std::vector<Config> Space::Enumerate(size_t limit) const {
  std::vector<Config> out;
  if (params_.empty() || Size() > static_cast<double>(limit)) return out;
  std::vector<int> idx(params_.size(), 0);
  while (true) {
    out.push_back(At(idx));
    size_t i = params_.size();
    while (i > 0) {
      --i;
      if (++idx[i] < static_cast<int>(params_[i].values.size())) break;
      idx[i] = 0;
      if (i == 0) return out;
    }
  }
}

Config Space::Random(uint64_t* state) const {
  std::vector<int> idx;
  for (const auto& p : params_) idx.push_back(static_cast<int>(SplitMix(state) % p.values.size()));
  return At(idx);
}

Config Space::Complete(const Config& c, const Config& fallback) const {
  Config out;
  for (const auto& p : params_) {
    auto it = c.find(p.name);
    if (it != c.end())
      out[p.name] = it->second;
    else if (auto f = fallback.find(p.name); f != fallback.end())
      out[p.name] = f->second;
    else
      out[p.name] = p.values.front();
  }
  return out;
}

nlohmann::json Space::ToJson() const {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& p : params_) {
    a.push_back(
        {{"name", p.name}, {"role", RoleName(p.role)}, {"values", p.values}, {"launch_option", p.launch_option}});
  }
  return {{"params", a}, {"size", Size()}};
}

std::vector<int64_t> CandidateValues(Role role, std::optional<int64_t> current, const std::vector<int64_t>& seen,
                                     int64_t min_value, int64_t max_value, const SpaceOptions& o) {
  std::set<int64_t> vals;
  switch (role) {
    case Role::kNumWarps:
      for (auto w : (o.has_dot ? o.warps_dot : o.warps)) vals.insert(w);
      break;
    case Role::kNumStages:
      for (auto s : (o.has_dot ? o.stages_dot : o.stages)) vals.insert(s);
      break;
    case Role::kGroupM:
      for (auto g : o.group_m) vals.insert(g);
      break;
    default: {
      const bool two_d = role == Role::kBlockM || role == Role::kBlockN || role == Role::kBlockK;
      int64_t hi_cap = two_d ? o.block_max_2d : o.block_max_1d;
      int64_t cur = current.value_or(two_d ? 64 : 1024);
      if (cur <= 0) cur = 1;
      // The span around the current value, widened to the range where tuned kernels usually sit
      // (a kernel written with BLOCK_SIZE=4 is searched up to the 1-D canonical top, not only to 32).
      const int64_t canon_lo = two_d ? o.canonical_2d_lo : o.canonical_1d_lo;
      const int64_t canon_hi = two_d ? o.canonical_2d_hi : o.canonical_1d_hi;
      int64_t lo = std::max<int64_t>(o.block_min, std::min<int64_t>(cur / o.block_span, canon_lo));
      int64_t hi = std::min<int64_t>(hi_cap, std::max<int64_t>(std::max<int64_t>(cur, 1) * o.block_span, canon_hi));
      if (cur > hi_cap) hi = cur;  // never exclude the current value's neighbourhood
      int64_t p = 1;
      while (p < lo) p <<= 1;
      for (; p <= hi; p <<= 1) vals.insert(p);
      if (!IsPow2(cur) && vals.empty()) vals.insert(cur);
      break;
    }
  }
  if (current) vals.insert(*current);
  for (auto v : seen) vals.insert(v);
  std::vector<int64_t> out;
  for (auto v : vals) {
    if (v < std::max<int64_t>(1, min_value)) continue;
    if (max_value > 0 && v > max_value) continue;
    out.push_back(v);
  }
  if (out.empty() && current) out.push_back(*current);
  return out;
}

SpaceBuild SpaceFromTunables(const analysis::Tunables& t, const SpaceOptions& opts) {
  SpaceOptions o = opts;
  if (t.cls == analysis::KernelClass::kGemm || t.cls == analysis::KernelClass::kAttention) o.has_dot = true;
  SpaceBuild b;
  std::vector<Param> params;
  for (const auto& tu : t.items) {
    if (!tu.editable) {
      b.skipped.push_back(tu.name + ": " + (tu.reason.empty() ? "not editable" : tu.reason));
      continue;
    }
    if (tu.boolean) {
      b.skipped.push_back(tu.name + ": boolean flag (not a tuning knob)");
      continue;
    }
    if (tu.name == "num_ctas" || tu.name == "maxnreg") {
      b.skipped.push_back(tu.name + ": not searched");
      continue;
    }
    Role role = tu.launch_option ? GuessRole(tu.name) : GuessRole(tu.name);
    if (role == Role::kOther && !tu.power_of_two) {
      b.skipped.push_back(tu.name + ": unknown role (not a block size, warps or stages)");
      continue;
    }
    if (role == Role::kOther) role = Role::kBlock;
    std::optional<int64_t> cur = tu.value;
    // an autotuned kernel: the search starts from its first config (docs/optimize.md), not a mix of values
    if (!cur && tu.autotune_first) cur = tu.autotune_first;
    if (!cur && !tu.autotune_values.empty()) cur = tu.autotune_values[tu.autotune_values.size() / 2];
    if (!cur && tu.name == "num_warps") cur = 4;
    if (!cur && tu.name == "num_stages") cur = 3;
    Param p;
    p.name = tu.name;
    p.role = role;
    p.launch_option = tu.launch_option;
    p.tiles = tu.tiles;
    p.values = CandidateValues(role, cur, tu.autotune_values, tu.min_value, tu.max_value, o);
    if (p.values.empty()) continue;
    if (cur)
      b.baseline[p.name] = *cur;
    else
      b.baseline[p.name] = p.values[p.values.size() / 2];
    if (!tu.value && analysis::IsHiddenSite(tu.site)) b.runtime_valued.push_back(p.name);
    params.push_back(std::move(p));
  }
  b.space = Space(std::move(params));
  return b;
}

namespace {

// The elements of one tile, 0 when one of its sides is unknown.
int64_t OneTileElements(const std::vector<std::string>& tile, const std::string& name, int64_t v, const Config& c,
                        const Config& fixed) {
  int64_t n = 1;
  for (const auto& d : tile) {
    int64_t x = 0;
    if (d == name) {
      x = v;
    } else if (auto it = c.find(d); it != c.end()) {
      x = it->second;
    } else if (auto f = fixed.find(d); f != fixed.end()) {
      x = f->second;
    } else if (!d.empty() && std::all_of(d.begin(), d.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
               d.size() < 10) {
      x = std::stoll(d);
    }
    if (x <= 0 || n > (int64_t{1} << 40) / x) return 0;
    n *= x;
  }
  return n;
}

}  // namespace

const std::vector<std::string>* LargestTile(const Param& p, int64_t v, const Config& c, const Config& fixed) {
  const std::vector<std::string>* best = nullptr;
  int64_t most = 0;
  for (const auto& tile : p.tiles)
    if (int64_t n = OneTileElements(tile, p.name, v, c, fixed); n > most) most = n, best = &tile;
  return best;
}

int64_t TileElements(const Param& p, int64_t v, const Config& c, const Config& fixed) {
  const auto* tile = LargestTile(p, v, c, fixed);
  return tile ? OneTileElements(*tile, p.name, v, c, fixed) : v;
}

std::vector<Config> TunedSeeds(const Space& s, const Config& base, bool smaller_first, const Config& fixed) {
  auto role_param = [&](Role r) -> const Param* {
    for (const auto& p : s.params())
      if (p.role == r) return &p;
    return nullptr;
  };
  const Param *bm = role_param(Role::kBlockM), *bn = role_param(Role::kBlockN), *bk = role_param(Role::kBlockK),
              *blk = role_param(Role::kBlock), *gm = role_param(Role::kGroupM), *w = role_param(Role::kNumWarps),
              *st = role_param(Role::kNumStages);
  struct Seed {
    int64_t m, n, k, warps, stages;
  };
  std::vector<Seed> seeds;
  if (bm && bn)
    seeds = {{128, 128, 64, 8, 3}, {128, 256, 64, 8, 3}, {64, 256, 32, 4, 4},
             {128, 128, 64, 4, 4}, {128, 64, 64, 4, 4},  {64, 128, 64, 4, 4}};
  else if (blk && std::count_if(s.params().begin(), s.params().end(),
                                 [](const Param& p) { return p.role == Role::kBlock; }) == 1)
    seeds = {{1024, 0, 0, 4, 0}, {2048, 0, 0, 8, 0}, {4096, 0, 0, 8, 0}, {4096, 0, 0, 16, 0}};
  const Config start = s.Complete(base, base);
  std::vector<Config> out;
  std::set<std::string> seen = {ConfigKey(start)};
  for (const Seed& sd : seeds) {
    Config c = start;
    auto set = [&](const Param* p, int64_t v) {
      if (p && v > 0) c[p->name] = v;
    };
    if (bm && bn) {
      set(bm, sd.m), set(bn, sd.n), set(bk, sd.k), set(gm, 8);
    } else {
      for (const auto& p : s.params()) {
        if (p.role != Role::kBlock) continue;
        if (p.tiles.empty() || p.values.empty()) {
          set(&p, sd.m);
          continue;
        }
        // One side of a tile: the largest value whose tile holds at most the seed's elements.
        int64_t v = p.values.front();
        for (int64_t q : p.values)
          if (TileElements(p, q, c, fixed) <= sd.m) v = q;
        set(&p, v);
      }
    }
    set(w, sd.warps), set(st, sd.stages);
    c = s.At(s.Indices(c));  // snapped to allowed values
    for (const auto& [k, v] : base)  // keys outside the space stay as they are
      if (!s.Find(k)) c[k] = v;
    if (seen.insert(ConfigKey(c)).second) out.push_back(std::move(c));
  }
  if (smaller_first && bm && bn && start.count(bm->name) && start.count(bn->name)) {
    const int64_t area0 = start.at(bm->name) * start.at(bn->name);
    const bool n_ge_m = start.at(bn->name) >= start.at(bm->name);
    auto rank = [&](const Config& c) {
      const int64_t a = c.at(bm->name) * c.at(bn->name);
      // Of equal areas, those keeping the original's BLOCK_N >= BLOCK_M (or <) first: a causal attention loop
      // up to (start_m + 1) * BLOCK_M in steps of BLOCK_N leaves rows without a key (NaN) when BLOCK_N <
      // BLOCK_M (context_attn_nopad's 128x64 on an H200, session 23).
      const int keeps = (c.at(bn->name) >= c.at(bm->name)) == n_ge_m ? 0 : 1;
      return std::make_tuple(a < area0 ? 0 : a == area0 ? 1 : 2, a < area0 ? -a : a, keeps);
    };
    std::stable_sort(out.begin(), out.end(), [&](const Config& x, const Config& y) { return rank(x) < rank(y); });
  }
  return out;
}

Status Space::RestrictToGrid(const nlohmann::json& grid, const Config& keep, Space* s) {
  if (!grid.is_object()) return InvalidArgument("a grid is a JSON object {\"PARAM\": [values...]}");
  for (const auto& [name, vals] : grid.items()) {
    if (!s->Find(name)) {
      std::string known;
      for (const auto& p : s->params()) known += (known.empty() ? "" : ", ") + p.name;
      return InvalidArgument("grid parameter '" + name + "' is not a tunable of this kernel (tunables: " + known + ")");
    }
    if (!vals.is_array() || vals.empty())
      return InvalidArgument("grid parameter '" + name + "': expected a non-empty list");
    for (const auto& v : vals)
      if (!v.is_number_integer())
        return InvalidArgument("grid parameter '" + name + "': " + v.dump() + " is not an integer");
  }
  std::vector<Param> ps = s->params();
  for (auto& p : ps) {
    std::vector<int64_t> v;
    if (grid.contains(p.name))
      for (const auto& x : grid[p.name]) v.push_back(x.get<int64_t>());
    if (auto it = keep.find(p.name); it != keep.end()) v.push_back(it->second);
    if (v.empty()) v = {p.values.front()};
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    p.values = v;
  }
  *s = Space(std::move(ps));
  return Status::Ok();
}

}  // namespace kiln::search

#include "diagnose/rules.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "common/strings.h"
#include "profile/metrics.h"

namespace kiln::diagnose {

namespace m = profile::metric;
using profile::KernelProfile;

const char* ClassName(BoundClass c) {
  switch (c) {
    case BoundClass::kAtRoofline: return "at_roofline";
    case BoundClass::kMemoryBound: return "memory_bound";
    case BoundClass::kComputeBound: return "compute_bound";
    case BoundClass::kBalanced: return "balanced";
    case BoundClass::kLatencyBound: return "latency_bound";
    case BoundClass::kSmallGrid: return "small_grid";
    case BoundClass::kUnknown: return "unknown";
  }
  return "?";
}

namespace {

// Stalls that mean "waiting on memory" vs "waiting on math".
bool MemoryStall(const std::string& r) {
  return r == "long_scoreboard" || r == "lg_throttle" || r == "tex_throttle" || r == "drain" || r == "imc_miss";
}
bool ComputeStall(const std::string& r) { return r == "math_pipe_throttle"; }

}  // namespace

bool AllowedIn(BoundClass cls, const std::string& rule) {
  const bool occupancy = StartsWith(rule, "occupancy_limited_") || rule == "achieved_below_theoretical_occupancy";
  std::string stall = StartsWith(rule, "dominant_stall_") ? rule.substr(15) : "";
  switch (cls) {
    case BoundClass::kAtRoofline: return false;  // stop: nothing else to say
    case BoundClass::kMemoryBound:
      if (rule == "fp32_dot_without_tensor_cores") return false;
      if (!stall.empty() && ComputeStall(stall)) return false;
      return true;
    case BoundClass::kComputeBound:
      if (occupancy || rule == "uncoalesced_global_access") return false;
      if (!stall.empty() && MemoryStall(stall)) return false;
      return true;
    case BoundClass::kSmallGrid:
      if (occupancy || rule == "partial_last_wave") return false;
      return true;
    case BoundClass::kBalanced:
    case BoundClass::kLatencyBound:
    case BoundClass::kUnknown: return true;
  }
  return true;
}

namespace {

struct Ctx {
  const KernelProfile& kp;
  const Thresholds& t;
  Diagnosis& d;
  std::optional<double> Get(const char* metric) const { return kp.row.Get(metric); }
  std::optional<double> Need(const char* metric) {
    auto v = kp.row.Get(metric);
    if (!v && std::find(d.missing_metrics.begin(), d.missing_metrics.end(), metric) == d.missing_metrics.end()) {
      d.missing_metrics.push_back(metric);
    }
    return v;
  }
};

Evidence Ev(std::string metric, double v, std::string unit, std::optional<double> thr = std::nullopt,
            std::string op = "") {
  return Evidence{std::move(metric), v, std::move(unit), thr, std::move(op)};
}

std::string Pct(double v) { return fmt::format("{:.1f}%", v); }
std::string Tbs(double v) { return fmt::format("{:.2f} TB/s", v / 1e12); }
std::string Tflops(double v) { return fmt::format("{:.1f} TFLOP/s", v / 1e12); }
// "the measured bfloat16 peak", or "the float32 FP32-pipe peak (66.6 TFLOP/s)" when the roof is the
// pipe (above the measured float32 matmul).
std::string PeakName(const profile::DtypeRoof& d) {
  if (d.peak_source == "fp32_pipe") {
    return fmt::format("the {} CUDA-core pipe peak ({})", d.dtype, Tflops(d.peak_flops_per_s));
  }
  return fmt::format("the measured {} peak", d.dtype);
}

// Global accesses that waste fetched sectors (< sector_use_pct of each 32-byte sector used). The
// store side counts only when stores carry a real share of the traffic (>= 5% of the global
// sectors, or of the DRAM bytes when the store sector count is not recorded): a kernel that writes
// one scalar per program (a row reduction) stores "uncoalesced" but that costs nothing.
struct SectorWaste {
  std::optional<double> ld, st;  // percent of each sector used
  bool bad_ld = false, bad_st = false;
  bool st_negligible = false;
  double worst = 100;
  bool any() const { return bad_ld || bad_st; }
};

SectorWaste Waste(const KernelProfile& kp, const Thresholds& t) {
  SectorWaste w;
  w.ld = kp.row.Get(m::kGlobalLdBytesPerSectorPct);
  w.st = kp.row.Get(m::kGlobalStBytesPerSectorPct);
  // 0 or missing means no global loads/stores through the LSU (e.g. TMA): nothing to judge.
  w.bad_ld = w.ld && *w.ld > 0 && *w.ld < t.sector_use_pct;
  w.bad_st = w.st && *w.st > 0 && *w.st < t.sector_use_pct;
  if (w.bad_st) {
    auto st_sec = kp.row.Get(m::kGlobalStSectors);
    auto ld_sec = kp.row.Get(m::kGlobalLdSectors);
    double wr = kp.row.GetOr(m::kDramBytesWrite, 0), rd = kp.row.GetOr(m::kDramBytesRead, 0);
    if (st_sec && ld_sec && *st_sec + *ld_sec > 0) {
      w.st_negligible = *st_sec < t.store_share * (*st_sec + *ld_sec);
    } else if (kp.row.Get(m::kDramBytesWrite) && rd + wr > 0) {
      w.st_negligible = wr < t.store_share * (rd + wr);
    }
    if (w.st_negligible) w.bad_st = false;
  }
  w.worst = std::min(w.bad_ld ? *w.ld : 100.0, w.bad_st ? *w.st : 100.0);
  return w;
}

bool Spills(const KernelProfile& kp) {
  return (kp.facts && kp.facts->n_spills && *kp.facts->n_spills > 0) ||
         kp.row.GetOr(m::kLocalLdInst, 0) + kp.row.GetOr(m::kLocalStInst, 0) > 0;
}

bool HasDot(const KernelProfile& kp) {
  if (kp.facts && kp.facts->has_dot) return true;
  for (const auto& d : kp.roofline.dtypes) {
    if (d.tensor) return true;
  }
  return false;
}

// What every case of the class finding reads: the Speed-of-Light throughputs (percent) and their
// evidence, whether the device has measured peaks (a roofline position), and whether either side is
// near its roof.
struct ClassInput {
  double sm = 0, mem = 0;
  Evidence e_sm, e_mem;
  bool have_roof = false;
  bool near = false;
};

// The class finding's cases, in Classify's order. Each fills `f` (kernel and is_class set) and the
// diagnosis' class.

// 1. At the roofline: stop.
Finding AtRooflineFinding(Ctx& c, ClassInput in, Finding f) {
  const auto& t = c.t;
  const auto& r = c.kp.roofline;
  c.d.cls = BoundClass::kAtRoofline;
  f.rule = "at_roofline";
  f.severity = FindingSeverity::kInfo;
  if (in.have_roof) {
    f.evidence.push_back(Ev("roofline.fraction_of_roof", r.fraction_of_roof, "fraction", t.at_roof_fraction, ">="));
    if (r.bound_by == "memory") {
      f.evidence.push_back(Ev("dram_bytes_per_second", r.dram_bytes_per_s, "byte/second"));
      f.evidence.push_back(Ev("peak_dram_bytes_per_second", r.peak_dram_bytes_per_s, "byte/second"));
      f.message = fmt::format(
          "at the memory roofline: DRAM traffic {} is {:.0f}% of the measured peak {}{}; stop "
          "optimizing this kernel (only moving fewer bytes can help)",
          Tbs(r.dram_bytes_per_s), r.fraction_of_roof_measured * 100, Tbs(r.peak_dram_bytes_per_s),
          r.above_measured_roof ? " (above it: the measured copy peak is a practical roof, not the hardware's)" : "");
    } else {
      const auto* dt = r.main();
      f.evidence.push_back(Ev("achieved_flops_per_second", dt->flops_per_s, "flop/second"));
      f.evidence.push_back(Ev("peak_flops_per_second." + dt->dtype, dt->peak_flops_per_s, "flop/second"));
      f.message = fmt::format(
          "at the compute roofline: {} {} is {:.0f}% of {}; stop optimizing "
          "this kernel (only a cheaper precision can help)",
          Tflops(dt->flops_per_s), dt->dtype, r.fraction_of_roof * 100, PeakName(*dt));
    }
  } else {
    f.evidence.push_back(std::max(in.sm, in.mem) == in.sm ? in.e_sm : in.e_mem);
    f.evidence.back().threshold = t.at_roof_sol_pct;
    f.evidence.back().op = ">=";
    f.message = fmt::format(
        "at the hardware roof by Speed-of-Light ({} {}); stop optimizing this kernel (no "
        "measured device peaks: run `kiln device` for the roofline)",
        in.sm >= in.mem ? "SM throughput" : "memory throughput", Pct(std::max(in.sm, in.mem)));
  }
  return f;
}

// 2. Latency-bound (or a grid too small to fill the GPU): neither side busy.
Finding LowThroughputFinding(Ctx& c, ClassInput in, Finding f) {
  const auto& t = c.t;
  const auto& r = c.kp.roofline;
  auto waves = c.Get(m::kWaves);
  in.e_sm.threshold = t.latency_pct;
  in.e_sm.op = "<";
  in.e_mem.threshold = t.latency_pct;
  in.e_mem.op = "<";
  f.evidence = {in.e_sm, in.e_mem};
  double grid = c.Get(m::kGridSize).value_or(0);
  double sms = c.Get(m::kSmCount).value_or(c.kp.row.Get(m::kSmCount).value_or(0));
  bool small = waves ? *waves < 1.0 : (grid > 0 && sms > 0 && grid < sms);
  if (small) {
    c.d.cls = BoundClass::kSmallGrid;
    f.rule = "small_grid";
    f.severity = FindingSeverity::kMajor;
    if (waves) f.evidence.push_back(Ev(m::kWaves, *waves, "", 1.0, "<"));
    if (grid > 0) f.evidence.push_back(Ev(m::kGridSize, grid, ""));
    if (sms > 0) f.evidence.push_back(Ev(m::kSmCount, sms, ""));
    f.message = fmt::format(
        "the grid does not fill the GPU ({} programs{}{}): most SMs idle, throughput SM {} / "
        "memory {}; launch more, smaller programs{}",
        grid > 0 ? fmt::format("{:.0f}", grid) : "few", sms > 0 ? fmt::format(" for {:.0f} SMs", sms) : "",
        waves ? fmt::format(", {:.2f} waves", *waves) : "", Pct(in.sm), Pct(in.mem),
        HasDot(c.kp) ? " (smaller tiles, or split-K for a long reduction dimension)" : " (smaller tiles)");
    f.moves = {Move::kSmallerTiles};
    if (HasDot(c.kp)) f.moves.push_back(Move::kSplitK);
    if (r.seconds > 0 && r.seconds < t.tiny_kernel_s) {
      // A few microseconds of work in all: splitting it further cannot beat the launch cost.
      f.message = fmt::format(
          "the grid does not fill the GPU ({} programs{}), but the whole kernel runs {:.2f} us, "
          "about the cost of launching it: there is too little work to spread over more programs; "
          "fuse it with its neighbours or replay it in a CUDA graph",
          grid > 0 ? fmt::format("{:.0f}", grid) : "few", sms > 0 ? fmt::format(" for {:.0f} SMs", sms) : "",
          r.seconds * 1e6);
      f.moves = {Move::kFuse};
    }
    return f;
  }
  c.d.cls = BoundClass::kLatencyBound;
  f.rule = "latency_bound";
  f.severity = FindingSeverity::kMajor;
  auto issue = c.Get(m::kIssueActive);
  if (issue) f.evidence.push_back(Ev(m::kIssueActive, *issue, ""));
  f.message = fmt::format(
      "latency-bound: neither the SMs ({}) nor memory ({}) are busy; warps wait on dependencies "
      "instead of issuing. Hide latency with more work in flight (more warps, deeper pipelining)",
      Pct(in.sm), Pct(in.mem));
  f.moves = {Move::kMoreWarps, Move::kMoreStages};
  return f;
}

// 3a. Memory-bound. `roof_with_waste`: at the roof, but loads waste most of each sector.
Finding MemoryBoundFinding(Ctx& c, ClassInput in, bool roof_with_waste, Finding f) {
  const auto& t = c.t;
  const auto& r = c.kp.roofline;
  auto ld_use = c.Get(m::kGlobalLdBytesPerSectorPct);
  c.d.cls = BoundClass::kMemoryBound;
  f.rule = "memory_bound_headroom";
  f.severity = in.near ? FindingSeverity::kMinor : FindingSeverity::kMajor;
  in.e_mem.threshold = in.sm + t.bound_gap_pts;
  in.e_mem.op = ">=";
  f.evidence = {in.e_mem, in.e_sm};
  auto dram = c.Get(m::kDramThroughput);
  if (dram) f.evidence.push_back(Ev(m::kDramThroughput, *dram, "%"));
  auto l2hit = c.Get(m::kL2HitRate);
  if (l2hit) f.evidence.push_back(Ev(m::kL2HitRate, *l2hit, "%"));
  // Which unit is saturated: DRAM, or L2 / L1 traffic that never reaches DRAM.
  auto l2 = c.Get(m::kL2Throughput);
  auto l1 = c.Get(m::kL1Throughput);
  std::string unit;
  double unit_pct = 0;
  if (dram && l2 && *l2 >= *dram + t.bound_gap_pts && *l2 >= l1.value_or(0)) {
    unit = "L2";
    unit_pct = *l2;
  } else if (dram && l1 && *l1 >= *dram + t.bound_gap_pts) {
    unit = "L1";
    unit_pct = *l1;
  }
  if (!unit.empty()) f.evidence.push_back(Ev(unit == "L2" ? m::kL2Throughput : m::kL1Throughput, unit_pct, "%"));
  std::string roof;
  if (in.have_roof) {
    f.evidence.push_back(Ev("roofline.fraction_of_roof", r.fraction_of_roof, "fraction", t.at_roof_fraction, "<"));
    roof = fmt::format("; DRAM {} = {:.0f}% of the measured {} ({:.0f}% headroom)", Tbs(r.dram_bytes_per_s),
                       r.memory_fraction * 100, Tbs(r.peak_dram_bytes_per_s),
                       std::max(0.0, (1 - r.fraction_of_roof) * 100));
  }
  const SectorWaste waste = Waste(c.kp, t);
  if (waste.any()) {
    // The memory pipes are busy moving bytes nobody uses: coalescing comes before anything else,
    // however close to a roof the throughput looks.
    f.severity = FindingSeverity::kMajor;
    f.message = fmt::format(
        "memory-bound on {} traffic: memory throughput {} vs SM {}{}; uncoalesced global {} use only "
        "{:.0f}% of each 32-byte sector, so most of that traffic is wasted: coalesce the accesses first",
        unit.empty() ? "DRAM" : unit, Pct(in.mem), Pct(in.sm), roof,
        waste.bad_ld && waste.bad_st ? "loads and stores" : (waste.bad_ld ? "loads" : "stores"), waste.worst);
    f.moves = {Move::kCoalesceAccess};
    return f;
  }
  f.message = fmt::format("memory-bound{}: memory throughput {} vs SM {}{}", in.near ? ", near its roof" : "",
                          Pct(in.mem), Pct(in.sm), roof);
  if (!unit.empty()) {
    f.message += fmt::format("; the busy unit is {} ({}), not DRAM ({})", unit, Pct(unit_pct), Pct(*dram));
  }
  if (roof_with_waste) {
    f.message += fmt::format("; the roof is reached with wasted bytes: loads use only {:.0f}% of each sector", *ld_use);
  }
  if (Spills(c.kp)) {
    // Bigger tiles would spill more: the per-thread working set has to shrink first.
    f.moves = {Move::kEvictionHints};
    f.message +=
        "; registers spill to local memory (extra memory traffic): shrink the per-thread "
        "working set before moving more bytes per program";
    return f;
  }
  if (HasDot(c.kp)) {
    f.moves = {Move::kGroupMSwizzle, Move::kBiggerTiles, Move::kMoreStages};
    f.message += "; reuse tiles from L2 (GROUP_M swizzle) and keep more loads in flight";
  } else {
    f.moves = {Move::kBiggerTiles, Move::kEvictionHints};
    f.message += "; move more bytes per program and mark streaming data evict-first";
  }
  return f;
}

// 3b. Compute-bound.
Finding ComputeBoundFinding(Ctx& c, ClassInput in, Finding f) {
  const auto& t = c.t;
  const auto& r = c.kp.roofline;
  c.d.cls = BoundClass::kComputeBound;
  f.rule = "compute_bound";
  f.severity = in.near ? FindingSeverity::kMinor : FindingSeverity::kMajor;
  in.e_sm.threshold = in.mem + t.bound_gap_pts;
  in.e_sm.op = ">=";
  f.evidence = {in.e_sm, in.e_mem};
  auto tensor = c.Get(m::kTensorPipeActive);
  if (!tensor) tensor = c.Get(m::kTensorCyclesActive);
  if (tensor) f.evidence.push_back(Ev(m::kTensorPipeActive, *tensor, "%"));
  std::string roof;
  if (in.have_roof && r.main()) {
    const auto* dt = r.main();
    f.evidence.push_back(Ev("achieved_flops_per_second", dt->flops_per_s, "flop/second"));
    f.evidence.push_back(Ev("roofline.fraction_of_roof", r.fraction_of_roof, "fraction", t.at_roof_fraction, "<"));
    roof = fmt::format("; {} {} = {:.0f}% of {}", Tflops(dt->flops_per_s), dt->dtype, dt->compute_fraction * 100,
                       PeakName(*dt));
  }
  f.message = fmt::format("compute-bound{}: SM throughput {} vs memory {}{}", in.near ? ", near its roof" : "",
                          Pct(in.sm), Pct(in.mem), roof);
  bool cuda_core_fp32 = r.main() && !r.main()->tensor && r.main()->dtype == "float32";
  if (cuda_core_fp32 && HasDot(c.kp)) {
    f.moves = {Move::kPrecision};
    f.message += "; the FLOPs run on CUDA cores: tensor cores (tf32/bf16) are the lever";
  } else {
    f.moves = {Move::kBiggerTiles, Move::kPersistentGrid};
    f.message += "; cut non-math instructions per FLOP (bigger tiles, persistent grid)";
  }
  return f;
}

// The class finding.
Finding Classify(Ctx& c, double sm, double mem) {
  const auto& t = c.t;
  const auto& r = c.kp.roofline;
  Finding f;
  f.kernel = c.kp.name();
  f.is_class = true;
  const bool have_roof = !r.bound_by.empty();
  // The roof must be the right one: an fp32 dot at the CUDA-core roof still has the tensor cores
  // to gain, and DRAM saturated by uncoalesced accesses moves mostly wasted bytes.
  const bool fp32_cuda_dot = c.kp.facts && c.kp.facts->fp32_dot_without_tensor_cores && r.main() && !r.main()->tensor &&
                             r.main()->dtype == "float32";
  auto ld_use = c.Get(m::kGlobalLdBytesPerSectorPct);
  const bool wasteful = ld_use && *ld_use > 0 && *ld_use < t.sector_use_pct;
  const bool at_roof =
      (have_roof && r.fraction_of_roof >= t.at_roof_fraction) || (!have_roof && std::max(sm, mem) >= t.at_roof_sol_pct);
  const bool wrong_roof = fp32_cuda_dot || (wasteful && (r.bound_by == "memory" || !have_roof));
  const ClassInput in{.sm = sm,
                      .mem = mem,
                      .e_sm = Ev(m::kSmThroughput, sm, "%"),
                      .e_mem = Ev(m::kMemThroughput, mem, "%"),
                      .have_roof = have_roof,
                      .near = std::max(sm, mem) >= t.near_roof_pct};
  if (at_roof && !wrong_roof) return AtRooflineFinding(c, in, std::move(f));
  if (sm < t.latency_pct && mem < t.latency_pct) return LowThroughputFinding(c, in, std::move(f));
  if (mem >= sm + t.bound_gap_pts) return MemoryBoundFinding(c, in, at_roof && wasteful, std::move(f));
  if (sm >= mem + t.bound_gap_pts) return ComputeBoundFinding(c, in, std::move(f));
  const bool near = in.near;
  const Evidence& e_sm = in.e_sm;
  const Evidence& e_mem = in.e_mem;
  c.d.cls = BoundClass::kBalanced;
  f.rule = "balanced_bound";
  f.severity = near ? FindingSeverity::kMinor : FindingSeverity::kMajor;
  f.evidence = {e_sm, e_mem};
  f.message = fmt::format(
      "compute and memory both busy (SM {}, memory {}, within {:.0f} points){}; gains need fewer "
      "bytes and fewer instructions at once",
      Pct(sm), Pct(mem), t.bound_gap_pts, near ? ", near the roofs" : "");
  f.moves = {Move::kPrecision};
  return f;
}

void Add(Ctx& c, Finding f) {
  f.kernel = c.kp.name();
  if (!AllowedIn(c.d.cls, f.rule)) {
    c.d.gated.push_back(f.rule);
    return;
  }
  c.d.findings.push_back(std::move(f));
}

void OccupancyRules(Ctx& c) {
  const auto& t = c.t;
  auto theo = c.Need(m::kTheoreticalOccupancy);
  auto achieved = c.Need(m::kAchievedOccupancy);
  if (theo && *theo < t.theoretical_occupancy_pct) {
    struct Lim {
      const char* metric;
      const char* rule;
    };
    const Lim lims[] = {{m::kOccLimitRegisters, "occupancy_limited_registers"},
                        {m::kOccLimitSharedMem, "occupancy_limited_shared_memory"},
                        {m::kOccLimitWarps, "occupancy_limited_warps"},
                        {m::kOccLimitBlocks, "occupancy_limited_blocks"}};
    const Lim* best = nullptr;
    double best_v = 1e30;
    Finding f;
    f.evidence.push_back(Ev(m::kTheoreticalOccupancy, *theo, "%", t.theoretical_occupancy_pct, "<"));
    for (const auto& l : lims) {
      auto v = c.Get(l.metric);
      if (!v) continue;
      f.evidence.push_back(Ev(l.metric, *v, "block/SM"));
      if (*v < best_v) {  // first (registers) wins ties
        best_v = *v;
        best = &l;
      }
    }
    if (best) {
      f.rule = best->rule;
      f.severity = *theo < 50 ? FindingSeverity::kMajor : FindingSeverity::kMinor;
      std::string why;
      auto regs = c.Get(m::kRegistersPerThread);
      if (f.rule == "occupancy_limited_registers") {
        if (regs) f.evidence.push_back(Ev(m::kRegistersPerThread, *regs, "register/thread"));
        why = fmt::format("{} registers per thread allow only {:.0f} block(s) per SM",
                          regs ? fmt::format("{:.0f}", *regs) : "the", best_v);
        f.moves = {Move::kSmallerTiles, Move::kMoreWarps};
      } else if (f.rule == "occupancy_limited_shared_memory") {
        double smem = c.Get(m::kSharedStatic).value_or(0) + c.Get(m::kSharedDynamic).value_or(0);
        if (smem > 0) f.evidence.push_back(Ev("launch__shared_mem_per_block", smem, "byte"));
        why = fmt::format("{} bytes of shared memory per block allow only {:.0f} block(s) per SM",
                          smem > 0 ? fmt::format("{:.0f}", smem) : "the", best_v);
        f.moves = {Move::kFewerStages, Move::kSmallerTiles};
      } else if (f.rule == "occupancy_limited_warps") {
        why = fmt::format("the block size allows only {:.0f} block(s) per SM", best_v);
        f.moves = {Move::kFewerWarps};
      } else {
        why = fmt::format("the per-SM block limit ({:.0f}) with small blocks caps resident warps", best_v);
        f.moves = {Move::kMoreWarps, Move::kMultipleRowsPerProgram};
      }
      f.message = fmt::format("theoretical occupancy {} (< {:.0f}%): {}", Pct(*theo), t.theoretical_occupancy_pct, why);
      Add(c, std::move(f));
    }
  }
  if (theo && achieved && *achieved < *theo - t.achieved_gap_pts) {
    Finding f;
    f.rule = "achieved_below_theoretical_occupancy";
    f.severity = FindingSeverity::kMinor;
    f.evidence = {Ev(m::kAchievedOccupancy, *achieved, "%", *theo - t.achieved_gap_pts, "<"),
                  Ev(m::kTheoreticalOccupancy, *theo, "%")};
    f.message = fmt::format(
        "achieved occupancy {} is {:.0f} points under the theoretical {}: warps finish unevenly or "
        "blocks start late (load imbalance, tail effects)",
        Pct(*achieved), *theo - *achieved, Pct(*theo));
    f.moves = {Move::kPersistentGrid, Move::kSmallerTiles};
    Add(c, std::move(f));
  }
}

void StallRule(Ctx& c) {
  const auto& t = c.t;
  std::vector<std::pair<std::string, double>> stalls;
  double total = 0;
  for (const auto& r : m::StallReasons()) {
    if (r == "selected") continue;  // issuing, not stalled
    auto v = c.Get(m::StallMetric(r).c_str());
    if (!v || *v <= 0) continue;
    stalls.push_back({r, *v});
    total += *v;
  }
  if (stalls.empty() || total <= 0) {
    c.Need(m::StallMetric("long_scoreboard").c_str());
    return;
  }
  auto top =
      *std::max_element(stalls.begin(), stalls.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  double share = top.second / total;
  auto issue = c.Need(m::kIssueActive);
  if (share <= t.stall_share || (issue && *issue >= t.stall_issue_active)) return;
  Finding f;
  f.rule = "dominant_stall_" + top.first;
  f.severity = share > 0.5 ? FindingSeverity::kMajor : FindingSeverity::kMinor;
  f.evidence.push_back(Ev("stall_share." + top.first, share, "fraction", t.stall_share, ">"));
  f.evidence.push_back(Ev(m::StallMetric(top.first), top.second, "cycle/issue"));
  if (issue) f.evidence.push_back(Ev(m::kIssueActive, *issue, "", t.stall_issue_active, "<"));
  struct Why {
    const char* reason;
    const char* text;
    std::vector<Move> moves;
  };
  static const std::vector<Why> kWhy = {
      {"long_scoreboard", "warps wait on global/local memory loads", {Move::kMoreStages, Move::kEvictionHints}},
      {"short_scoreboard", "warps wait on shared memory or special-function results", {Move::kTileShape}},
      {"barrier", "warps wait at barriers (uneven work between warps)", {Move::kFewerWarps}},
      {"mio_throttle", "the memory input/output queue (shared memory) is full", {Move::kTileShape, Move::kBiggerTiles}},
      {"lg_throttle", "the local/global load-store queue is full (many small accesses)", {Move::kBiggerTiles}},
      {"math_pipe_throttle", "a math pipe is saturated", {Move::kPrecision}},
      {"wait", "fixed-latency dependencies between instructions", {Move::kMoreWarps}},
      {"not_selected", "eligible warps wait for the scheduler (more warps than needed)", {Move::kFewerWarps}},
      {"no_instruction", "instruction cache misses or branch targets", {}},
      {"membar", "memory barriers/fences", {}},
      {"branch_resolving", "branch target computation", {}},
      {"dispatch_stall", "the dispatcher is stalled", {}},
      {"drain", "stores draining at exit", {}},
      {"imc_miss", "constant cache misses", {}},
      {"tex_throttle", "the texture pipe is full", {}},
      {"sleeping", "warps are sleeping", {}},
      {"misc", "miscellaneous reasons", {}},
  };
  std::string text = "stalled";
  for (const auto& w : kWhy) {
    if (top.first == w.reason) {
      text = w.text;
      f.moves = w.moves;
    }
  }
  f.message = fmt::format("{:.0f}% of stall cycles are {} ({}) while the scheduler issues only {} per cycle",
                          share * 100, top.first, text, issue ? fmt::format("{:.2f}", *issue) : "?");
  Add(c, std::move(f));
}

void SpillRule(Ctx& c) {
  const auto& facts = c.kp.facts;
  double local_ld = c.Get(m::kLocalLdInst).value_or(0);
  double local_st = c.Get(m::kLocalStInst).value_or(0);
  int spills = facts && facts->n_spills ? *facts->n_spills : 0;
  if (spills <= 0 && local_ld + local_st <= 0) return;
  Finding f;
  f.rule = "register_spills";
  f.severity = FindingSeverity::kMajor;
  if (spills > 0) f.evidence.push_back(Ev("compile.n_spills", spills, "register", 0.0, ">"));
  if (local_ld + local_st > 0) {
    f.evidence.push_back(Ev(m::kLocalLdInst, local_ld, "inst", 0.0, ">"));
    f.evidence.push_back(Ev(m::kLocalStInst, local_st, "inst"));
  }
  if (auto regs = c.Get(m::kRegistersPerThread))
    f.evidence.push_back(Ev(m::kRegistersPerThread, *regs, "register/thread"));
  f.message = fmt::format(
      "registers spill to local memory ({}{}): each spill is a slow memory round trip; "
      "shrink the per-thread working set",
      spills > 0 ? fmt::format("{} spilled registers", spills) : "local loads/stores executed",
      local_ld + local_st > 0 && spills > 0 ? fmt::format(", {:.0f} local-memory instructions", local_ld + local_st)
                                            : "");
  f.moves = {Move::kSmallerTiles, Move::kFewerStages, Move::kMoreWarps};
  Add(c, std::move(f));
}

void WaveRule(Ctx& c) {
  auto waves = c.Need(m::kWaves);
  if (!waves || *waves < 1.0) return;
  double full = std::floor(*waves);
  double frac = *waves - full;
  if (frac < 1e-6 || frac > 1 - 1e-6) return;
  double loss = (1.0 - frac) / std::ceil(*waves);  // idle share of the time if waves take equal time
  if (loss < c.t.tail_loss - 1e-9) return;
  Finding f;
  f.rule = "partial_last_wave";
  f.severity = loss >= 0.25 ? FindingSeverity::kMajor : FindingSeverity::kMinor;
  f.evidence = {Ev(m::kWaves, *waves, ""), Ev("tail_idle_fraction", loss, "fraction", c.t.tail_loss, ">=")};
  if (auto g = c.Get(m::kGridSize)) f.evidence.push_back(Ev(m::kGridSize, *g, ""));
  f.message = fmt::format(
      "{:.2f} waves: the last wave runs only {:.0f}% full, leaving up to {:.0f}% of the SM time idle; "
      "size the grid to whole waves (retile) or loop over tiles in a persistent grid",
      *waves, frac * 100, loss * 100);
  f.moves = {Move::kPersistentGrid, Move::kSmallerTiles};
  Add(c, std::move(f));
}

void CoalescingRule(Ctx& c) {
  c.Need(m::kGlobalLdBytesPerSectorPct);
  const SectorWaste w = Waste(c.kp, c.t);
  const auto& ld = w.ld;
  const auto& st = w.st;
  const bool bad_ld = w.bad_ld, bad_st = w.bad_st;
  if (!bad_ld && !bad_st) return;
  Finding f;
  f.rule = "uncoalesced_global_access";
  double worst = w.worst;
  f.severity = worst < 30 ? FindingSeverity::kMajor : FindingSeverity::kMinor;
  if (ld) f.evidence.push_back(Ev(m::kGlobalLdBytesPerSectorPct, *ld, "%", c.t.sector_use_pct, "<"));
  if (st) f.evidence.push_back(Ev(m::kGlobalStBytesPerSectorPct, *st, "%", c.t.sector_use_pct, "<"));
  if (auto s = c.Get(m::kGlobalLdSectors)) {
    if (auto rq = c.Get(m::kGlobalLdRequests); rq && *rq > 0) {
      f.evidence.push_back(Ev("sectors_per_request.global_ld", *s / *rq, ""));
    }
  }
  f.message = fmt::format(
      "uncoalesced global {}: only {:.0f}% of each 32-byte sector fetched is used; make "
      "consecutive lanes touch consecutive addresses (index the contiguous dimension with the "
      "fastest-varying offsets)",
      bad_ld && bad_st ? "loads and stores" : (bad_ld ? "loads" : "stores"), worst);
  f.moves = {Move::kCoalesceAccess};
  Add(c, std::move(f));
}

void BankConflictRule(Ctx& c) {
  double conf = c.Get(m::kSharedLdBankConflicts).value_or(0) + c.Get(m::kSharedStBankConflicts).value_or(0);
  double wf = c.Get(m::kSharedLdWavefronts).value_or(0) + c.Get(m::kSharedStWavefronts).value_or(0);
  if (wf <= 0) return;
  double ratio = conf / wf;
  if (ratio < c.t.bank_conflict_ratio) return;
  Finding f;
  f.rule = "shared_bank_conflicts";
  f.severity = ratio >= 0.3 ? FindingSeverity::kMajor : FindingSeverity::kMinor;
  f.evidence = {Ev("shared_bank_conflict_ratio", ratio, "fraction", c.t.bank_conflict_ratio, ">="),
                Ev("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", conf, ""),
                Ev("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", wf, "")};
  f.message = fmt::format(
      "{:.0f}% of shared-memory wavefronts are bank conflicts: accesses serialise; "
      "change the tile shape or the layout of the shared tile",
      ratio * 100);
  f.moves = {Move::kTileShape};
  Add(c, std::move(f));
}

void Fp32DotRule(Ctx& c) {
  if (!c.kp.facts || !c.kp.facts->fp32_dot_without_tensor_cores) return;
  auto tensor = c.Get(m::kTensorPipeActive);
  if (!tensor) tensor = c.Get(m::kTensorCyclesActive);
  if (tensor && *tensor >= c.t.tensor_idle_pct) return;
  Finding f;
  f.rule = "fp32_dot_without_tensor_cores";
  f.severity = FindingSeverity::kMajor;
  f.evidence.push_back(Ev("static.fp32_dot_without_tensor_cores", 1, ""));
  if (tensor) f.evidence.push_back(Ev(m::kTensorPipeActive, *tensor, "%", c.t.tensor_idle_pct, "<"));
  for (const auto& d : c.kp.roofline.dtypes) {
    if (d.dtype == "float32")
      f.evidence.push_back(Ev("achieved_flops_per_second.float32", d.flops_per_s, "flop/second"));
  }
  f.message =
      "tl.dot on fp32 inputs runs on CUDA cores (input_precision=\"ieee\"), leaving the tensor cores "
      "idle; tf32 (or bf16 inputs) is several times faster if the tolerance allows";
  f.moves = {Move::kPrecision};
  Add(c, std::move(f));
}

void TinyKernelRule(Ctx& c) {
  double s = c.kp.roofline.seconds;
  if (s <= 0 || s >= c.t.tiny_kernel_s) return;
  Finding f;
  f.rule = "launch_bound_tiny_kernel";
  f.severity = FindingSeverity::kMinor;
  f.evidence = {Ev(m::kDuration, s, "second", c.t.tiny_kernel_s, "<")};
  f.message = fmt::format(
      "the kernel runs {:.2f} us, about as long as launching it from Python (~4-5 us): fuse it with "
      "its neighbours or replay it in a CUDA graph; per-kernel tuning has little left to win",
      s * 1e6);
  f.moves = {Move::kFuse};
  Add(c, std::move(f));
}

// Many waves of programs that each move a few hundred bytes (one short row per program): the per-SM limit
// on resident blocks and each program's start-up cap the bytes in flight, whatever the warps. On an H200,
// 2^19 programs of 384 bytes ran at 13% of the roof; eight rows in turn per program ran 4-5x faster.
void SmallProgramsRule(Ctx& c) {
  auto waves = c.Get(m::kWaves);
  auto grid = c.Get(m::kGridSize);
  if (!waves || !grid || *grid <= 0 || *waves < c.t.many_waves) return;
  auto ld = c.Get(m::kGlobalLdSectors), st = c.Get(m::kGlobalStSectors);
  double bytes = 0;
  std::string how;
  if (ld || st) {
    bytes = 32.0 * (ld.value_or(0) + st.value_or(0));
    how = "global sectors";
  } else {
    bytes = c.Get(m::kDramBytesRead).value_or(0) + c.Get(m::kDramBytesWrite).value_or(0);
    how = "DRAM bytes";
  }
  if (bytes <= 0) return;
  const double per = bytes / *grid;
  if (per > c.t.small_program_bytes) return;
  Finding f;
  f.rule = "many_small_programs";
  f.severity = FindingSeverity::kMajor;
  f.evidence = {Ev(m::kWaves, *waves, "", c.t.many_waves, ">="), Ev(m::kGridSize, *grid, ""),
                Ev("bytes_per_program", per, "byte", c.t.small_program_bytes, "<=")};
  f.message = fmt::format(
      "{:.0f} programs ({:.0f} waves) each move only {:.0f} bytes ({}): the per-SM limit on resident "
      "blocks and each program's start-up cap the bytes in flight; let each program handle several rows "
      "in turn (rows per program), with fewer warps for a small row",
      *grid, *waves, per, how);
  f.moves = {Move::kMultipleRowsPerProgram, Move::kFewerWarps};
  // More warps per program add no bytes in flight when a program's row is this small: the class finding's
  // more_warps (latency-bound) would otherwise win the conflict with fewer_warps.
  for (auto& g : c.d.findings)
    if (g.is_class) g.moves.erase(std::remove(g.moves.begin(), g.moves.end(), Move::kMoreWarps), g.moves.end());
  Add(c, std::move(f));
}

int Rank(const Finding& f) {
  if (f.is_class) return 0;
  // Spills are a root cause (their local-memory traffic shows up as memory stalls and bytes): their
  // moves win over a symptom's (e.g. more stages for a long-scoreboard stall).
  if (f.rule == "register_spills") return 1;
  return f.severity == FindingSeverity::kMajor ? 2 : f.severity == FindingSeverity::kMinor ? 3 : 4;
}

void ResolveMoveConflicts(Diagnosis& d) {
  std::stable_sort(d.findings.begin(), d.findings.end(),
                   [](const Finding& a, const Finding& b) { return Rank(a) < Rank(b); });
  std::set<Move> accepted;
  for (auto& f : d.findings) {
    std::vector<Move> keep;
    for (Move mv : f.moves) {
      bool conflict = false;
      for (Move o : OpposingMoves(mv)) conflict |= accepted.count(o) > 0;
      if (!conflict) keep.push_back(mv);
    }
    for (Move mv : keep) accepted.insert(mv);
    f.moves = std::move(keep);
  }
}

}  // namespace

Diagnosis Diagnose(const KernelProfile& kp, const Thresholds& t) {
  Diagnosis d;
  d.kernel = kp.name();
  Ctx c{kp, t, d};
  auto sm = c.Need(m::kSmThroughput);
  auto mem = c.Need(m::kMemThroughput);
  if (!sm || !mem) {
    d.cls = BoundClass::kUnknown;
    Finding f;
    f.rule = "unclassified";
    f.severity = FindingSeverity::kInfo;
    f.kernel = kp.name();
    f.is_class = true;
    f.message = "SM and memory throughput are missing from the counters; cannot classify the bottleneck";
    d.findings.push_back(f);
  } else {
    d.findings.push_back(Classify(c, *sm, *mem));
  }
  OccupancyRules(c);
  StallRule(c);
  SpillRule(c);
  WaveRule(c);
  CoalescingRule(c);
  BankConflictRule(c);
  Fp32DotRule(c);
  TinyKernelRule(c);
  SmallProgramsRule(c);
  ResolveMoveConflicts(d);
  return d;
}

nlohmann::json ToJson(const Diagnosis& d) {
  nlohmann::json fs = nlohmann::json::array();
  for (const auto& f : d.findings) fs.push_back(ToJson(f));
  return {{"kernel", d.kernel},
          {"class", ClassName(d.cls)},
          {"findings", fs},
          {"gated", d.gated},
          {"missing_metrics", d.missing_metrics}};
}

}  // namespace kiln::diagnose

#include "search/loop.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "common/hash.h"
#include "search/halving.h"
#include "search/strategy.h"

namespace kiln::search {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Ctx {
  const OptimizeInput& in;
  const OptimizeOptions& o;
  const Deps& d;
  OptimizeResult& res;
  double t0 = 0;
  std::vector<std::string> search_cases;
  std::vector<std::string> all_cases;
  std::vector<std::string> run_cases;  // --cases resolved to names by the baseline (empty: all)
  ProgressState ps;

  double Now() const {
    return o.clock ? o.clock() : SteadySeconds();
  }
  double Elapsed() const { return Now() - t0; }
  void Step(const std::string& kind, const nlohmann::json& j) {
    if (d.recorder) d.recorder->Step(res.run_id, kind, j);
  }
  void Say(const std::string& s) {
    if (d.progress) d.progress->Line(s);
  }
  void Show(const std::string& phase) {
    if (!d.progress) return;
    ps.phase = phase;
    ps.elapsed_s = Elapsed();
    ps.budget_s = o.budget_seconds;
    d.progress->Update(ps);
  }
};

exec::EvalRequest MakeRequest(const Ctx& c, const std::optional<std::string>& source, exec::Mode mode,
                              uint64_t seed, int trials, const nlohmann::json& timing,
                              const std::vector<std::string>& cases) {
  exec::EvalRequest r;
  r.task = c.in.task;
  r.candidate_source = source;
  if (source) r.candidate_name = "kiln_cand_" + HashHex(*source).substr(0, 8) + ".py";
  r.mode = mode;
  r.policy = c.o.policy;
  r.seed = seed;
  r.trials = trials;
  r.cases = cases;
  if (mode == exec::Mode::kTime) r.timing = timing;
  r.timeout_s = c.o.timeout_s;
  return r;
}

// Seconds the worker reported for the named phases of a request (phases_s).
double PhaseSum(const nlohmann::json& phases, std::initializer_list<const char*> names) {
  double t = 0;
  for (const char* n : names)
    if (phases.is_object() && phases.contains(n) && phases[n].is_number()) t += phases[n].get<double>();
  return t;
}

// Median of one case (0 when it was not timed).
double CaseMs(const std::vector<CaseTiming>& cases, const std::string& name) {
  for (const auto& t : cases)
    if (t.name == name && t.median_ms > 0) return t.median_ms;
  return 0;
}

std::vector<CaseTiming> CaseTimes(const exec::EvalResult& r) {
  std::vector<CaseTiming> out;
  for (const auto& cs : r.cases) {
    CaseTiming t;
    t.name = cs.name;
    if (cs.candidate_ms) {
      t.median_ms = cs.candidate_ms->median;
      t.p20_ms = cs.candidate_ms->p20;
      t.p80_ms = cs.candidate_ms->p80;
    }
    out.push_back(t);
  }
  return out;
}

// Geometric mean of the case medians over `names` (all cases when empty); +inf when not ok or a
// case has no time.
double Score(const exec::EvalResult& r, const std::vector<std::string>& names) {
  if (r.verdict != exec::Verdict::kOk) return kInf;
  std::vector<double> v;
  for (const auto& cs : r.cases) {
    if (!names.empty() && std::find(names.begin(), names.end(), cs.name) == names.end()) continue;
    if (!cs.passed || !cs.candidate_ms || !(cs.candidate_ms->median > 0)) return kInf;
    v.push_back(cs.candidate_ms->median);
  }
  if (v.empty()) return kInf;
  return GeoMean(v);
}

nlohmann::json KernelsJson(const std::vector<exec::KernelFacts>& ks) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& k : ks) {
    nlohmann::json j = {{"name", k.name}, {"launches", k.launches}};
    if (k.n_regs) j["n_regs"] = *k.n_regs;
    if (k.n_spills) j["n_spills"] = *k.n_spills;
    if (k.shared_bytes) j["shared_bytes"] = *k.shared_bytes;
    if (k.num_warps) j["num_warps"] = *k.num_warps;
    if (k.num_stages) j["num_stages"] = *k.num_stages;
    a.push_back(j);
  }
  return a;
}

nlohmann::json CandJson(const CandidateRecord& c) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& t : c.cases) {
    nlohmann::json j = {{"name", t.name}};
    if (std::isfinite(t.median_ms)) j["median_ms"] = t.median_ms;
    if (std::isfinite(t.p20_ms)) j["p20_ms"] = t.p20_ms;
    if (std::isfinite(t.p80_ms)) j["p80_ms"] = t.p80_ms;
    cases.push_back(j);
  }
  nlohmann::json j = {{"id", c.id},           {"config", ConfigToJson(c.config)},
                      {"origin", c.origin},   {"source_hash", c.source_hash},
                      {"verdict", c.verdict}, {"message", c.message},
                      {"cases", cases},       {"at_s", c.at_s},
                      {"eval_s", c.eval_s},   {"finalist", c.finalist},
                      {"final_outcome", c.final_outcome}, {"kernels", c.kernels}};
  if (!c.phases.empty()) j["phases_s"] = c.phases;
  j["score_ms"] = std::isfinite(c.score_ms) ? nlohmann::json(c.score_ms) : nlohmann::json(nullptr);
  j["rung1_ms"] = std::isfinite(c.rung1_ms) ? nlohmann::json(c.rung1_ms) : nlohmann::json(nullptr);
  return j;
}

// Per-case comparison of a finalist's long run against the original, which that request timed
// interleaved with it (its timing baseline). A case without that timing cannot win.
std::vector<CaseComparison> Compare(const exec::EvalResult& cand) {
  std::vector<CaseComparison> out;
  for (const auto& cc : cand.cases) {
    CaseComparison cmp;
    cmp.name = cc.name;
    cmp.passed = cc.passed;
    cmp.max_abs_err = cc.max_abs_err.value_or(0);
    if (cc.candidate_ms) cmp.best_ms = cc.candidate_ms->median;
    if (cc.reference_is_baseline && cc.speedup && cc.reference_ms && cmp.best_ms > 0) {
      cmp.baseline_ms = cc.reference_ms->median;
      cmp.speedup = *cc.speedup;
      cmp.spread_lo = cc.speedup_spread ? cc.speedup_spread->first : cmp.speedup;
      cmp.spread_hi = cc.speedup_spread ? cc.speedup_spread->second : cmp.speedup;
    } else {
      cmp.speedup = 0;  // no time against the original: cannot win
      cmp.passed = false;
    }
    out.push_back(cmp);
  }
  return out;
}

// Bounded pool of compile requests: Start() launches up to `jobs` at a time in the background,
// Get(i) waits for request i.
class CompilePool {
 public:
  CompilePool(Evaluator* ev, int jobs, std::vector<exec::EvalRequest> reqs)
      : ev_(ev), reqs_(std::move(reqs)), done_(reqs_.size(), false), results_(reqs_.size()) {
    int n = std::min<int>(std::max(0, jobs), static_cast<int>(reqs_.size()));
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Work(); });
  }
  ~CompilePool() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  bool active() const { return !threads_.empty(); }
  exec::EvalResult Get(size_t i) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return done_[i]; });
    return results_[i];
  }

 private:
  void Work() {
    while (!stop_) {
      size_t i = next_.fetch_add(1);
      if (i >= reqs_.size()) return;
      exec::EvalResult r = ev_->Evaluate(reqs_[i]);
      {
        std::lock_guard<std::mutex> l(mu_);
        results_[i] = std::move(r);
        done_[i] = true;
      }
      cv_.notify_all();
    }
  }
  Evaluator* ev_;
  std::vector<exec::EvalRequest> reqs_;
  std::vector<bool> done_;
  std::vector<exec::EvalResult> results_;
  std::vector<std::thread> threads_;
  std::atomic<size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char* VerdictString(exec::Verdict v) {
  switch (v) {
    case exec::Verdict::kOk: return "ok";
    case exec::Verdict::kCompileError: return "compile_error";
    case exec::Verdict::kRuntimeError: return "runtime_error";
    case exec::Verdict::kTimeout: return "timeout";
    case exec::Verdict::kCrash: return "crash";
    case exec::Verdict::kMismatch: return "mismatch";
    case exec::Verdict::kRejected: return "rejected";
  }
  return "unknown";
}

double GeoMean(const std::vector<double>& v) {
  double s = 0;
  int n = 0;
  for (double x : v) {
    if (!(x > 0) || !std::isfinite(x)) continue;
    s += std::log(x);
    ++n;
  }
  return n ? std::exp(s / n) : std::numeric_limits<double>::quiet_NaN();
}

nlohmann::json ProfileSummary::ToJson() const {
  nlohmann::json f = nlohmann::json::array();
  for (const auto& x : findings)
    f.push_back({{"rule", x.rule}, {"severity", x.severity}, {"message", x.message}, {"moves", x.moves},
                 {"evidence", x.evidence}});
  nlohmann::json j = {{"kernel", kernel}, {"bound", bound}, {"findings", f}};
  j["roofline_fraction"] = roofline_fraction >= 0 ? nlohmann::json(roofline_fraction) : nlohmann::json(nullptr);
  j["duration_ms"] = duration_ms >= 0 ? nlohmann::json(duration_ms) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json OptimizeResult::ToJson() const {
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : cases)
    cs.push_back({{"name", c.name}, {"baseline_ms", c.baseline_ms}, {"best_ms", c.best_ms},
                  {"speedup", c.speedup}, {"spread", {c.spread_lo, c.spread_hi}}, {"passed", c.passed},
                  {"max_abs_err", c.max_abs_err}});
  nlohmann::json cands = nlohmann::json::array();
  for (const auto& c : candidates) cands.push_back(CandJson(c));
  nlohmann::json j = {{"schema_version", 1},
                      {"task", task},
                      {"kernel", kernel},
                      {"strategy", strategy},
                      {"mode", mode},
                      {"mode_note", mode_note},
                      {"device", device},
                      {"device_uuid", device_uuid},
                      {"versions", versions},
                      {"space", space.ToJson()},
                      {"baseline_config", ConfigToJson(baseline_config)},
                      {"best_config", ConfigToJson(best_config)},
                      {"improved", improved},
                      {"kept_reason", kept_reason},
                      {"geomean_speedup", geomean_speedup},
                      {"cases", cs},
                      {"candidates", cands},
                      {"measured", measured},
                      {"compiled", compiled},
                      {"pruned", pruned},
                      {"pruned_static", pruned_static},
                      {"failed", failed},
                      {"stop_reason", stop_reason},
                      {"wall_s", wall_s},
                      {"notes", notes},
                      {"run_id", run_id}};
  j["profile_before"] = profile_before ? profile_before->ToJson() : nlohmann::json(nullptr);
  j["profile_after"] = profile_after ? profile_after->ToJson() : nlohmann::json(nullptr);
  j["roofline_before"] = roofline_before >= 0 ? nlohmann::json(roofline_before) : nlohmann::json(nullptr);
  j["roofline_after"] = roofline_after >= 0 ? nlohmann::json(roofline_after) : nlohmann::json(nullptr);
  j["roofline_after_estimated"] = roofline_after_estimated;
  j["reserve_s"] = reserve_s;
  j["startup_s"] = startup;
  j["best_is_autotune"] = best_is_autotune;
  return j;
}

Result<OptimizeResult> Optimize(const OptimizeInput& in, const OptimizeOptions& o, const Deps& d) {
  KILN_CHECK(d.evaluator && d.renderer, "Optimize needs an evaluator and a renderer");
  OptimizeResult res;
  Ctx c{in, o, d, res};
  c.t0 = o.started_at >= 0 ? o.started_at : c.Now();
  res.task = in.task.name;
  res.startup = o.startup;
  res.kernel = in.kernel;
  res.space = in.space;
  res.baseline_config = in.baseline;
  res.best_config = in.baseline;
  res.best_source = in.original_source;
  res.notes = in.notes;
  uint64_t seed = o.seed;
  auto next_seed = [&seed] { return seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, seed >> 17; };

  // Device.
  const double t_hello = c.Now();
  auto hello = d.evaluator->Hello();
  if (!hello.ok()) return hello.status();
  res.startup["hello_s"] = c.Now() - t_hello;
  res.startup["baseline_starts_at_s"] = c.Elapsed();
  res.versions = hello->versions;
  if (!hello->devices.empty()) {
    res.device = hello->devices[0].name;
    res.device_uuid = hello->devices[0].uuid;
  }
  if (hello->interpreter && !o.dry_run)
    return Unavailable(
        "no CUDA GPU here: the worker runs in Triton's interpreter, which cannot time kernels, so "
        "kiln optimize cannot rank candidates; run it on a GPU machine, or pass --dry-run to check "
        "the candidates' correctness in the interpreter");
  PruneContext prune = o.prune;
  if (!hello->devices.empty()) {
    const auto& raw = hello->devices[0].raw;
    if (raw.contains("smem_per_block_optin") && raw["smem_per_block_optin"].is_number_integer() &&
        raw["smem_per_block_optin"].get<int64_t>() > 0)
      prune.smem_limit = raw["smem_per_block_optin"].get<int64_t>();
  }

  if (d.recorder)
    res.run_id = d.recorder->BeginRun({{"task", in.task.name},
                                       {"task_hash", in.task.hash},
                                       {"kernel", in.kernel},
                                       {"device", res.device},
                                       {"device_uuid", res.device_uuid},
                                       {"strategy", o.strategy},
                                       {"budget_seconds", o.budget_seconds},
                                       {"max_evals", o.max_evals},
                                       {"space", in.space.ToJson()},
                                       {"baseline_config", ConfigToJson(in.baseline)}});
  auto finish = [&](const std::string& status) -> Result<OptimizeResult> {
    res.wall_s = c.Elapsed();
    if (d.progress) {
      c.ps.elapsed_s = res.wall_s;
      c.Show("done");
      d.progress->Finish();
    }
    if (d.recorder) d.recorder->EndRun(res.run_id, status, res.ToJson());
    return res;
  };

  int next_id = 0;
  // Baseline ---------------------------------------------------------------------------------------
  c.Show("baseline");
  CandidateRecord base;
  base.id = next_id++;
  base.config = in.baseline;
  base.origin = "baseline";
  base.source_hash = HashHex(in.original_source);
  const exec::Mode base_mode = o.dry_run ? exec::Mode::kCheck : exec::Mode::kTime;
  double t_eval = c.Now();
  exec::EvalResult br = d.evaluator->Evaluate(
      MakeRequest(c, in.original_source, base_mode, next_seed(), o.dry_run ? o.verify_trials : o.search_trials,
                  o.short_timing, o.cases));
  base.eval_s = c.Now() - t_eval;
  base.phases = br.raw.value("phases_s", nlohmann::json::object());
  base.verdict = VerdictString(br.verdict);
  base.message = br.message;
  base.cases = CaseTimes(br);
  base.kernels = KernelsJson(br.kernels);
  for (const auto& cs : br.cases) c.all_cases.push_back(cs.name);
  if (!o.cases.empty()) c.run_cases = c.all_cases;  // selectors such as @largest:K, as the worker resolved them
  c.Step("baseline", CandJson(base));
  if (br.verdict != exec::Verdict::kOk) {
    res.candidates.push_back(base);
    res.stop_reason = "the original failed";
    finish("failed");
    // Under the interpreter the original may fail where a GPU runs it: the interpreter runs programs one
    // after another on numpy arrays, so an out-of-bounds access that a GPU tolerates crashes it, and
    // large inputs take minutes.
    const bool interp = o.dry_run && (br.verdict == exec::Verdict::kCrash || br.verdict == exec::Verdict::kTimeout);
    return InvalidArgument(fmt::format("the original kernel does not pass its own check ({}): {}{}", base.verdict,
                                       br.message,
                                       interp ? " (under Triton's interpreter, which --dry-run uses: it crashes on "
                                                "out-of-bounds accesses that a GPU tolerates and is slow on large "
                                                "inputs; the kernel may still run on a GPU)"
                                              : ""));
  }
  for (const auto& k : br.kernels) if (k.n_spills) prune.baseline_spills = std::max(prune.baseline_spills, *k.n_spills);
  if (auto b = InferDtypeBytes(in.space, in.baseline, br.kernels)) prune.dtype_bytes = *b;

  // Cases timed while searching; the slowest case of the original is the one profiled.
  const exec::CaseResult* slowest = nullptr;
  for (const auto& cs : br.cases)
    if (cs.candidate_ms && (!slowest || cs.candidate_ms->median > slowest->candidate_ms->median)) slowest = &cs;
  const std::string profile_case = slowest ? slowest->name : "";
  if (!o.search_cases.empty()) {
    c.search_cases = o.search_cases;
  } else if (o.largest_case_only && slowest) {
    c.search_cases = {slowest->name};
  } else {
    c.search_cases = c.run_cases;
  }
  base.score_ms = o.dry_run ? 0 : Score(br, c.search_cases);
  res.candidates.push_back(base);
  if (!o.dry_run && !std::isfinite(base.score_ms)) {
    res.stop_reason = "the original has no timings";
    finish("failed");
    return Internal("the original kernel passed but returned no timings (is this a GPU worker?)");
  }
  res.measured = 1;

  // Profile / diagnose -----------------------------------------------------------------------------
  double profile_s = 0;  // what one ncu profile costs here (the winner's profile needs as much again)
  std::vector<std::string> moves;
  std::string why;
  if (o.dry_run) {
    res.mode = "dry-run";
    res.mode_note = "interpreter: correctness only, no timing, no profile";
  } else if (d.profiler && d.profiler->Available(&why)) {
    c.Show("profile");
    const double t_prof0 = c.Now();
    auto p = d.profiler->Profile(in.task, in.original_source, profile_case);
    profile_s = c.Now() - t_prof0;
    if (p.ok()) {
      res.mode = "profiled";
      res.profile_before = *p;
      res.roofline_before = p->roofline_fraction;
      for (const auto& f : p->findings)
        for (const auto& m : f.moves)
          if (std::find(moves.begin(), moves.end(), m) == moves.end()) moves.push_back(m);
      c.Step("profile_before", p->ToJson());
    } else {
      res.mode = "measure-only";
      res.mode_note = "profiling failed: " + p.status().message();
    }
  } else {
    res.mode = "measure-only";
    res.mode_note = d.profiler ? why : "no profiler configured";
  }
  if (!res.mode_note.empty()) c.Say("kiln: " + res.mode + ": " + res.mode_note);
  // A 1-D block far below where elementwise and row kernels are tuned (TritonBench's add_example
  // launches BLOCK_SIZE=4: 33 million programs of 4 elements, half of every 32-byte sector unused) is
  // the first thing to grow, whatever the counters stressed; uncoalesced access in a 1-D kernel is
  // served the same way (more contiguous elements per program).
  for (const auto& p : in.space.params()) {
    if (p.role != Role::kBlock) continue;
    auto it = in.baseline.find(p.name);
    if (it == in.baseline.end() || it->second >= o.small_block) continue;
    for (const char* m : {"bigger_block", "typical_block"})
      if (std::find(moves.begin(), moves.end(), m) == moves.end()) moves.insert(moves.begin(), m);
    res.notes.push_back(fmt::format("{}={} is far below the block sizes 1-D kernels are tuned at (>= {}): "
                                    "growing it is tried first", p.name, it->second, o.small_block));
  }
  if (std::find(moves.begin(), moves.end(), "coalesce_access") != moves.end() &&
      std::find(moves.begin(), moves.end(), "bigger_block") == moves.end())
    for (const auto& p : in.space.params())
      if (p.role == Role::kBlock) {
        moves.push_back("bigger_block");
        break;
      }
  for (const auto& m : moves) {
    const auto& km = KnownMoves();
    if (std::find(km.begin(), km.end(), m) == km.end())
      res.notes.push_back("move '" + m + "' suggested by the diagnosis needs a source rewrite the search does not compose yet");
  }

  // Strategy ---------------------------------------------------------------------------------------
  StrategyContext sctx;
  sctx.space = in.space;
  std::map<std::string, std::string> static_pruned;  // config key -> reason
  sctx.feasible = [&in, &prune, &static_pruned](const Config& cfg) {
    auto why_not = PruneBeforeCompile(in.space, cfg, prune);
    if (why_not) static_pruned.emplace(ConfigKey(cfg), *why_not);
    return !why_not.has_value();
  };
  sctx.moves = moves;
  sctx.seed = o.seed;
  sctx.accept_gain = o.accept_gain;
  res.strategy = o.strategy.empty() || o.strategy == "auto" ? ResolveAuto(sctx) : o.strategy;
  auto strat_or = MakeStrategy(res.strategy, sctx);
  if (!strat_or.ok()) {
    finish("failed");
    return strat_or.status();
  }
  auto& strat = *strat_or;
  // An autotuned original runs the config its autotuner picked for each shape in that process, so its
  // time is no configuration's. The search starts from its first config measured as a fixed config:
  // started from the autotuned time, every neighbour looked worse (on an H100, matmul_triton2's search
  // stopped after 6 measurements, its pick 0.69x the exhaustive one).
  double start_score = o.dry_run ? 1.0 : base.score_ms;
  // One short timing of a search candidate (one trial, the search cases), recorded in `rec`.
  auto time_short = [&](const std::string& src, CandidateRecord* rec) {
    const double t1 = c.Now();
    exec::EvalResult r = d.evaluator->Evaluate(
        MakeRequest(c, src, exec::Mode::kTime, next_seed(), o.search_trials, o.short_timing, c.search_cases));
    rec->eval_s = c.Now() - t1;
    rec->phases = r.raw.value("phases_s", nlohmann::json::object());
    ++res.measured;
    rec->verdict = VerdictString(r.verdict);
    rec->message = r.message;
    rec->cases = CaseTimes(r);
    if (!r.kernels.empty()) rec->kernels = KernelsJson(r.kernels);
    rec->score_ms = Score(r, c.search_cases);
    return r;
  };
  if (in.autotuned && !o.dry_run && !in.space.empty() && res.roofline_before < o.roofline_stop) {
    CandidateRecord rec;
    rec.id = next_id++;
    rec.config = in.baseline;
    rec.origin = "baseline config";
    rec.at_s = c.Elapsed();
    auto src = d.renderer->Render(in.baseline);
    if (!src.ok()) {
      rec.verdict = "render_error";
      rec.message = src.status().message();
    } else {
      rec.source_hash = HashHex(*src);
      exec::EvalResult r = time_short(*src, &rec);
      if (r.verdict == exec::Verdict::kOk && std::isfinite(rec.score_ms)) start_score = rec.score_ms;
    }
    c.Step("candidate", CandJson(rec));
    res.candidates.push_back(rec);
  }
  strat->Start(in.baseline, start_score);

  if (in.space.empty()) {
    res.kept_reason = "no editable tunables: nothing to search";
    res.stop_reason = "empty space";
    for (const auto& n : in.notes) c.Say("kiln: " + n);
    return finish("kept");
  }
  if (res.roofline_before >= o.roofline_stop) {
    res.kept_reason = fmt::format("the original already reaches {:.0f}% of its roofline", 100 * res.roofline_before);
    res.stop_reason = "at roofline";
    return finish("kept");
  }

  // Dry run: check a few candidates' correctness, time nothing. -------------------------------------
  if (o.dry_run) {
    // Triton's interpreter ignores the options only the compiler reads (num_warps, num_stages, ...): a
    // config that differs from one already checked only in those is the same program there. Check
    // distinct programs (the original's check covers its own launch-option neighbours).
    auto program_key = [&in](const Config& cfg) {
      Config s;
      for (const auto& [k, v] : cfg)
        if (const Param* p = in.space.Find(k); !p || !p->launch_option) s[k] = v;
      return ConfigKey(s);
    };
    const size_t want = static_cast<size_t>(std::max(1, o.dry_run_candidates));
    std::set<std::string> seen = {program_key(in.baseline)};
    std::vector<Config> props;
    size_t same_program = 0;
    for (const auto& cfg : strat->Propose(std::max<size_t>(64, want * 16))) {
      if (props.size() == want) break;
      if (seen.insert(program_key(cfg)).second) props.push_back(cfg);
      else ++same_program;
    }
    if (props.empty())
      res.notes.push_back("dry run: every proposed config differs from the original only in launch options "
                          "(num_warps, num_stages, ...) that Triton's interpreter ignores; the original's check "
                          "stands for them");
    else if (same_program)
      res.notes.push_back(fmt::format("dry run: {} proposed configs differ from a checked one only in launch options "
                                      "that Triton's interpreter ignores; not checked again", same_program));
    size_t checked = 0;
    for (const auto& cfg : props) {
      // The budget holds here too: under the interpreter one check can take minutes.
      if (c.Elapsed() >= o.budget_seconds) {
        res.notes.push_back(fmt::format("dry run: the {:.0f} s budget ended after {} of {} candidates",
                                        o.budget_seconds, checked, props.size()));
        break;
      }
      ++checked;
      CandidateRecord cr;
      cr.id = next_id++;
      cr.config = cfg;
      cr.origin = res.strategy;
      cr.at_s = c.Elapsed();
      auto src = d.renderer->Render(cfg);
      if (!src.ok()) {
        cr.verdict = "render_error";
        cr.message = src.status().message();
      } else {
        cr.source_hash = HashHex(*src);
        auto r = d.evaluator->Evaluate(MakeRequest(c, *src, exec::Mode::kCheck, next_seed(), o.verify_trials, {}, c.run_cases));
        cr.verdict = VerdictString(r.verdict);
        cr.message = r.message;
        if (r.verdict != exec::Verdict::kOk) ++res.failed;
      }
      c.Step("dry_run_check", CandJson(cr));
      c.Say(fmt::format("kiln: dry-run {}: {}", ConfigKey(cfg), cr.verdict));
      res.candidates.push_back(cr);
      ++c.ps.tried;
      c.Show("dry-run");
    }
    res.kept_reason = "dry run: candidates were checked for correctness only; nothing can be timed without a GPU";
    res.stop_reason = "dry-run";
    return finish("dry-run");
  }

  // Search -----------------------------------------------------------------------------------------
  // The search ends when what follows it still fits the budget: three long verification runs (the
  // original, a finalist, its confirmation), each costed at long_cost_factor x one measurement. A
  // measurement is first costed from the original's run as the worker reported it (its inputs and
  // timing: its check also paid the first compile), or its whole run when no phases came back; then
  // from the median of the search's own measurements. The winner's profile runs only when the budget
  // still has room for it at that point.
  double t_measure = base.eval_s;
  if (base.phases.is_object() && base.phases.contains("timing"))
    t_measure = PhaseSum(base.phases, {"timing", "timing_inputs"}) +
                o.verify_trials * PhaseSum(base.phases, {"inputs"}) + 0.5;
  std::vector<double> cand_eval_s;
  auto set_reserve = [&] {
    res.reserve_s = o.dry_run ? 0.0
                              : std::max(o.budget_seconds * o.reserve_fraction,
                                         3.0 * o.long_cost_factor * std::max(0.1, t_measure) + 1.0);
  };
  set_reserve();
  // A budget spent before the search (a slow original, a slow profile) still leaves the search a
  // minimal window.
  const double search_floor = c.Elapsed() + o.min_search_fraction * o.budget_seconds;
  double search_end = std::max(o.budget_seconds - res.reserve_s, search_floor);
  double best_score = start_score;
  Config best_cfg = in.baseline;
  int rounds_without_gain = 0;
  int measured_search = 0;
  auto over_budget = [&] { return c.Elapsed() >= search_end; };
  auto evals_left = [&]() -> int {
    return o.max_evals > 0 ? o.max_evals - res.measured : 1 << 30;
  };
  c.ps.best_speedup = 1.0;
  c.ps.best_config = ConfigKey(in.baseline);
  std::set<std::string> seen_src{base.source_hash};
  const double base_profile_case_ms = CaseMs(base.cases, profile_case);
  double best_profile_case_ms = base_profile_case_ms;
  while (true) {
    if (over_budget()) { res.stop_reason = "budget"; break; }
    if (evals_left() <= 0) { res.stop_reason = "max-evals"; break; }
    auto props = strat->Propose(static_cast<size_t>(std::max(1, o.batch)));
    if (props.empty()) { res.stop_reason = "converged"; break; }
    const double round_start_best = best_score;
    // Render and prune before compiling.
    struct Pending {
      CandidateRecord rec;
      std::string src;
      int compile_index = -1;
    };
    std::vector<Pending> pend;
    std::vector<exec::EvalRequest> compiles;
    for (const auto& cfg : props) {
      Pending p;
      p.rec.id = next_id++;
      p.rec.config = cfg;
      p.rec.origin = strat->name();
      p.rec.at_s = c.Elapsed();
      if (auto why_not = PruneBeforeCompile(in.space, cfg, prune)) {
        p.rec.verdict = "pruned";
        p.rec.message = *why_not;
      } else if (auto src = d.renderer->Render(cfg); !src.ok()) {
        p.rec.verdict = "render_error";
        p.rec.message = src.status().message();
      } else {
        p.src = *src;
        p.rec.source_hash = HashHex(p.src);
        if (o.compile_jobs > 0) {
          p.compile_index = static_cast<int>(compiles.size());
          compiles.push_back(MakeRequest(c, p.src, exec::Mode::kCompile, 0, 1, {}, c.search_cases));
        }
      }
      pend.push_back(std::move(p));
    }
    CompilePool pool(d.evaluator, o.compile_jobs, compiles);
    bool stopped = false;
    for (auto& p : pend) {
      auto& rec = p.rec;
      if (rec.verdict.empty() && (stopped || over_budget() || evals_left() <= 0)) {
        // Not measured: the budget ran out mid-round. Not observed as a failure.
        rec.verdict = "skipped";
        rec.message = "budget reached before it was measured";
        stopped = true;
        res.candidates.push_back(rec);
        continue;
      }
      if (rec.verdict.empty() && p.compile_index >= 0) {
        exec::EvalResult cr = pool.Get(p.compile_index);
        ++res.compiled;
        rec.kernels = KernelsJson(cr.kernels);
        if (cr.verdict != exec::Verdict::kOk) {
          rec.verdict = VerdictString(cr.verdict);
          rec.message = cr.message;
        } else if (auto why_not = PruneAfterCompile(cr.kernels, prune)) {
          rec.verdict = "pruned";
          rec.message = *why_not;
        }
      }
      if (rec.verdict.empty()) {
        exec::EvalResult r = time_short(p.src, &rec);
        ++measured_search;
        cand_eval_s.push_back(rec.eval_s);
        if (cand_eval_s.size() >= 3) {
          std::vector<double> v = cand_eval_s;
          std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
          t_measure = v[v.size() / 2];
          set_reserve();
          search_end = std::max(o.budget_seconds - res.reserve_s, search_floor);
        }
        if (r.verdict == exec::Verdict::kOk) {
          if (auto why_not = PruneAfterCompile(r.kernels, prune)) {
            rec.verdict = "pruned";
            rec.message = *why_not;
            rec.score_ms = kInf;
          }
        }
      }
      if (rec.verdict == "pruned") ++res.pruned, ++c.ps.pruned;
      else if (rec.verdict != "ok") ++res.failed, ++c.ps.failed;
      else ++c.ps.tried;
      strat->Observe(rec.config, rec.score_ms);
      if (rec.score_ms < best_score) {
        best_score = rec.score_ms;
        best_cfg = rec.config;
        best_profile_case_ms = CaseMs(rec.cases, profile_case);
        c.ps.best_speedup = base.score_ms / best_score;
        c.ps.best_config = ConfigKey(best_cfg);
      }
      c.Step("candidate", CandJson(rec));
      res.candidates.push_back(rec);
      c.Show("search");
    }
    if (stopped) { res.stop_reason = over_budget() ? "budget" : "max-evals"; break; }
    if (best_score < round_start_best * (1.0 - o.min_round_gain)) rounds_without_gain = 0;
    else ++rounds_without_gain;
    if (rounds_without_gain >= o.patience) {
      res.stop_reason = fmt::format("no gain of {:.0f}% in {} rounds", 100 * o.min_round_gain, o.patience);
      break;
    }
    // The roofline fraction is the profiled case's: scale it by that case's own speedup (other cases'
    // gains say nothing about it); no estimate when the profiled case was not timed.
    if (res.roofline_before > 0 && base_profile_case_ms > 0 && best_profile_case_ms > 0 &&
        res.roofline_before * base_profile_case_ms / best_profile_case_ms >= o.roofline_stop) {
      res.stop_reason = "estimated at roofline";
      break;
    }
  }
  res.pruned_static = static_cast<int>(static_pruned.size());
  if (!static_pruned.empty())
    res.notes.push_back(fmt::format("{} configs pruned before compiling, e.g. {}: {}", static_pruned.size(),
                                    static_pruned.begin()->first, static_pruned.begin()->second));
  c.Say(fmt::format("kiln: search stopped ({}) after {} measured, {} pruned, {} failed; best {} ({:.3f}x on short timings)",
                    res.stop_reason, measured_search, res.pruned, res.failed, ConfigKey(best_cfg),
                    base.score_ms / best_score));

  // Finalists: candidates that beat the original on rung 0 ----------------------------------------
  std::vector<size_t> idx;
  std::vector<double> s0;
  for (size_t i = 1; i < res.candidates.size(); ++i) {
    const auto& cr = res.candidates[i];
    if (cr.verdict == "ok" && cr.score_ms < base.score_ms * (1.0 - o.accept_gain)) {
      idx.push_back(i);
      s0.push_back(cr.score_ms);
    }
  }
  if (idx.empty()) {
    res.kept_reason = "no candidate was faster than the original";
    return finish("kept");
  }
  c.Show("finalists");
  std::map<size_t, std::string> sources;
  auto source_of = [&](size_t ci) -> std::string {
    auto it = sources.find(ci);
    if (it != sources.end()) return it->second;
    auto s = d.renderer->Render(res.candidates[ci].config);
    std::string v = s.ok() ? *s : "";
    sources[ci] = v;
    return v;
  };
  HalvingOptions ho;
  ho.eta = o.eta;
  ho.keep = static_cast<size_t>(std::max(1, o.finalists));
  ho.max_rungs = 1;
  std::vector<size_t> order;
  if (idx.size() > ho.keep) {
    auto surv = SuccessiveHalving(s0, ho, [&](size_t k, int rung) {
      if (evals_left() <= 0) return s0[k];  // no measurements left: keep the rung-0 score
      auto& cr = res.candidates[idx[k]];
      auto r = d.evaluator->Evaluate(MakeRequest(c, source_of(idx[k]), exec::Mode::kTime, next_seed(),
                                                 o.search_trials, o.medium_timing, c.search_cases));
      ++res.measured;
      cr.rung1_ms = Score(r, c.search_cases);
      c.Step("rung", {{"id", cr.id}, {"rung", rung}, {"score_ms", std::isfinite(cr.rung1_ms) ? nlohmann::json(cr.rung1_ms) : nlohmann::json(nullptr)}});
      return cr.rung1_ms;
    });
    for (auto k : surv) order.push_back(idx[k]);
  } else {
    std::vector<std::pair<double, size_t>> v;
    for (size_t k = 0; k < idx.size(); ++k) v.push_back({s0[k], idx[k]});
    std::sort(v.begin(), v.end());
    for (auto& [s, i] : v) order.push_back(i);
  }

  // Verification: interleaved long timing against the reference, fresh inputs, all cases -----------
  c.Show("verify");
  // Each long run times the finalist and the original interleaved in one request (the original as the
  // request's timing baseline): one process, one autotune pick of each, the same clocks. (Comparing runs
  // of separate requests let an autotuned original's per-process pick decide: on an H100, swiglu_backward's
  // original measured 0.0018-0.021 ms on one size across requests, and finalists 1.4x faster side by side
  // were rejected at 0.27x.)
  auto long_run = [&](const std::optional<std::string>& src) {
    auto rq = MakeRequest(c, src, exec::Mode::kTime, next_seed(), o.verify_trials, o.long_timing, c.run_cases);
    rq.baseline_source = in.original_source;
    return d.evaluator->Evaluate(rq);
  };
  auto judge = [&](const exec::EvalResult& r, std::vector<CaseComparison>* cmp) -> std::string {
    if (r.verdict != exec::Verdict::kOk) return std::string(VerdictString(r.verdict)) + ": " + r.message;
    *cmp = Compare(r);
    if (cmp->size() < c.all_cases.size()) return "not every input case ran";
    std::vector<double> sp;
    for (const auto& x : *cmp) {
      if (!x.passed) return "case " + x.name + " failed verification";
      if (x.speedup < 1.0 - o.case_slack)
        return fmt::format("case {} is slower than the original ({:.3f}x)", x.name, x.speedup);
      sp.push_back(x.speedup);
    }
    double g = GeoMean(sp);
    if (!(g >= o.min_speedup)) return fmt::format("geometric-mean speedup {:.3f}x below {:.3f}x", g, o.min_speedup);
    return "";
  };
  // The task's own correctness check (mode check, its default cases: a TritonBench-G module's test_*
  // function, a kiln task's CASES), which the timed cases need not cover: the perf harness's sizes can
  // miss a path the module's test takes (a causal branch, another head size). -> why it fails.
  // When a finalist fails it, the original is checked the same way (once): an original that fails its
  // own check too (a racy or self-inconsistent test) cannot judge anyone, and the timed cases decide.
  std::optional<bool> original_own_ok;
  auto own_check = [&](const std::string& src) -> std::string {
    exec::EvalResult r = d.evaluator->Evaluate(MakeRequest(c, src, exec::Mode::kCheck, next_seed(), o.verify_trials, {}, {}));
    if (r.verdict == exec::Verdict::kOk) return "";
    if (!original_own_ok) {
      exec::EvalResult b = d.evaluator->Evaluate(
          MakeRequest(c, in.original_source, exec::Mode::kCheck, next_seed(), o.verify_trials, {}, {}));
      original_own_ok = b.verdict == exec::Verdict::kOk;
      if (!*original_own_ok)
        res.notes.push_back("the original fails the task's own check too (" + std::string(VerdictString(b.verdict)) +
                            "): finalists are judged on the timed cases only");
    }
    if (!*original_own_ok) return "";
    return "fails the task's own check (" + std::string(VerdictString(r.verdict)) + "): " + r.message;
  };
  // One long run of `src`, judged against the original's: -> why it fails ("" when it passes).
  auto run_and_judge = [&](const std::string& src, std::vector<CaseComparison>* cmp, exec::EvalResult* r = nullptr) {
    exec::EvalResult rr = long_run(src);
    ++res.measured;
    std::string why = judge(rr, cmp);
    if (r) *r = std::move(rr);
    return why;
  };
  // A verified winner: reported with the more conservative of its two runs per case.
  auto declare_winner = [&](const Config& cfg, const std::string& src, const std::vector<CaseComparison>& cmp1,
                            std::vector<CaseComparison> cmp2) {
    for (size_t k = 0; k < cmp2.size() && k < cmp1.size(); ++k)
      if (cmp1[k].speedup < cmp2[k].speedup) cmp2[k] = cmp1[k];
    res.improved = true;
    res.best_config = cfg;
    res.best_source = src;
    res.cases = cmp2;
    std::vector<double> sp;
    for (const auto& x : cmp2) sp.push_back(x.speedup);
    res.geomean_speedup = GeoMean(sp);
    c.ps.best_speedup = res.geomean_speedup;
  };
  std::vector<size_t> lost_some;  // finalists that won some cases and lost others
  for (size_t ci : order) {
    auto& cr = res.candidates[ci];
    cr.finalist = true;
    std::string src = source_of(ci);
    if (src.empty()) {
      cr.final_outcome = "rejected: could not render";
      continue;
    }
    std::vector<CaseComparison> cmp1, cmp2;
    exec::EvalResult r1;
    std::string why1 = run_and_judge(src, &cmp1, &r1);
    if (why1.empty()) why1 = own_check(src);
    if (!why1.empty() && r1.verdict == exec::Verdict::kOk && why1.rfind("fails the task's own check", 0) != 0) {
      // Faster than the original in some case and slower in another: a per-shape candidate.
      bool won = false, lost = false;
      for (const auto& x : cmp1) {
        won |= x.passed && x.speedup > 1.0 + o.case_slack;
        lost |= x.speedup < 1.0 - o.case_slack;
      }
      if (won && lost) lost_some.push_back(ci);
    }
    if (!why1.empty()) {
      cr.final_outcome = "rejected: " + why1;
      c.Step("verify", {{"id", cr.id}, {"outcome", cr.final_outcome}});
      c.Say(fmt::format("kiln: finalist {} rejected: {}", ConfigKey(cr.config), why1));
      continue;
    }
    // Confirm on other fresh inputs.
    std::string why2 = run_and_judge(src, &cmp2);
    if (!why2.empty()) {
      cr.final_outcome = "rejected on re-measurement: " + why2;
      c.Step("verify", {{"id", cr.id}, {"outcome", cr.final_outcome}});
      c.Say(fmt::format("kiln: finalist {} rejected on re-measurement: {}", ConfigKey(cr.config), why2));
      continue;
    }
    cr.final_outcome = "won";
    declare_winner(cr.config, src, cmp1, cmp2);
    c.Step("verify", {{"id", cr.id}, {"outcome", "won"}, {"geomean_speedup", res.geomean_speedup}});
    break;
  }
  // Per shape: a finalist that won some cases and lost others (typically faster on the large inputs,
  // slower on the small ones) is combined with the original's config under @triton.autotune keyed on
  // the kernel's size arguments, so each shape runs its faster config; verified like any finalist.
  if (!res.improved && o.per_shape_fallback && !lost_some.empty()) {
    const CandidateRecord& fin = res.candidates[lost_some.front()];
    auto at = d.renderer->RenderPerShape(fin.config, in.baseline);
    if (!at.ok()) {
      res.notes.push_back("per-shape autotune of " + ConfigKey(fin.config) + " and the original: " +
                          at.status().message());
    } else {
      CandidateRecord cr;
      cr.id = next_id++;
      cr.config = fin.config;
      cr.origin = "per-shape autotune";
      cr.source_hash = HashHex(*at);
      cr.finalist = true;
      cr.at_s = c.Elapsed();
      std::vector<CaseComparison> cmp1, cmp2;
      exec::EvalResult r1;
      std::string why = run_and_judge(*at, &cmp1, &r1);
      if (why.empty()) why = own_check(*at);
      if (why.empty()) why = run_and_judge(*at, &cmp2);
      cr.verdict = VerdictString(r1.verdict);
      cr.cases = CaseTimes(r1);
      cr.eval_s = c.Elapsed() - cr.at_s;
      if (why.empty()) {
        cr.final_outcome = "won";
        declare_winner(fin.config, *at, cmp1, cmp2);
        res.best_is_autotune = true;
        res.notes.push_back("the winner is @triton.autotune over " + ConfigKey(fin.config) +
                            " and the original's config(s): each input shape runs the fastest");
      } else {
        cr.final_outcome = "rejected: " + why;
      }
      c.Step("verify", {{"id", cr.id}, {"outcome", cr.final_outcome}});
      res.candidates.push_back(cr);
    }
  }
  if (!res.improved) {
    res.kept_reason = "no finalist passed verification with a speedup (the original is kept)";
    // Report the original against itself per case for the table (its baseline run).
    for (const auto& cs : br.cases) {
      CaseComparison x;
      x.name = cs.name;
      if (cs.candidate_ms) x.baseline_ms = x.best_ms = cs.candidate_ms->median;
      res.cases.push_back(x);
    }
    return finish("kept");
  }

  // After: profile the winner, emit autotune ------------------------------------------------------
  if (res.mode == "profiled" && c.Elapsed() + profile_s > o.budget_seconds && !o.profile_winner_always) {
    res.notes.push_back(fmt::format("the winner was not profiled: the profile takes {:.0f} s and {:.0f} s of the "
                                    "budget are left (roofline after is estimated from the profiled case's "
                                    "speedup; --profile-winner to profile it anyway)",
                                    profile_s, std::max(0.0, o.budget_seconds - c.Elapsed())));
    for (const auto& x : res.cases)
      if (x.name == profile_case && res.roofline_before > 0 && x.speedup > 0) {
        res.roofline_after = res.roofline_before * x.speedup;
        res.roofline_after_estimated = true;
      }
  } else if (res.mode == "profiled") {
    c.Show("profile");
    auto p = d.profiler->Profile(in.task, res.best_source, profile_case);
    if (p.ok()) {
      res.profile_after = *p;
      res.roofline_after = p->roofline_fraction;
      c.Step("profile_after", p->ToJson());
    } else {
      res.notes.push_back("profiling the winner failed: " + p.status().message());
    }
  }
  if (o.emit_autotune) {
    // The winner first, then the best config of each case (a per-shape winner), then the runners-up.
    std::vector<Config> cfgs{res.best_config};
    auto add = [&](const Config& cfg) {
      if (static_cast<int>(cfgs.size()) >= o.autotune_configs) return;
      for (const auto& x : cfgs) if (x == cfg) return;
      // Every config the autotuner may pick must be correct: check it on fresh inputs.
      auto src = d.renderer->Render(cfg);
      if (!src.ok()) return;
      auto r = d.evaluator->Evaluate(MakeRequest(c, *src, exec::Mode::kCheck, next_seed(), o.verify_trials, {}, c.run_cases));
      if (r.verdict != exec::Verdict::kOk) {
        res.notes.push_back("--emit-autotune: dropped " + ConfigKey(cfg) + " (" + VerdictString(r.verdict) + ")");
        return;
      }
      cfgs.push_back(cfg);
    };
    for (const auto& name : c.all_cases) {
      const CandidateRecord* bestc = nullptr;
      double bt = kInf;
      for (const auto& cr : res.candidates) {
        if (cr.verdict != "ok") continue;
        for (const auto& t : cr.cases)
          if (t.name == name && t.median_ms < bt) { bt = t.median_ms; bestc = &cr; }
      }
      if (bestc) add(bestc->config);
    }
    for (size_t ci : order) add(res.candidates[ci].config);
    auto at = d.renderer->RenderAutotune(cfgs);
    if (at.ok()) {
      auto r = d.evaluator->Evaluate(MakeRequest(c, *at, exec::Mode::kCheck, next_seed(), o.verify_trials, {}, c.run_cases));
      if (r.verdict == exec::Verdict::kOk) res.autotune_source = *at;
      else res.notes.push_back(std::string("--emit-autotune: the autotuned module failed its check (") +
                               VerdictString(r.verdict) + ": " + r.message + "); writing the plain winner");
    } else {
      res.notes.push_back("--emit-autotune: " + at.status().message());
    }
  }
  res.stop_reason = res.stop_reason.empty() ? "done" : res.stop_reason;
  return finish("improved");
}

}  // namespace kiln::search

// kiln/search: the tuning loop's driver (Optimize) and its first phases: the device, the original's
// measurement and profile, the moves, and the strategy (see optimize_run.h for the layout).
#include "search/loop.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/hash.h"
#include "exec/admission.h"
#include "search/optimize_run.h"

namespace kiln::search {

namespace {

// The default compile batch: the requests one after another on one background thread.
class SerialCompileBatch : public CompileBatch {
 public:
  SerialCompileBatch(Measurer* m, std::vector<exec::EvalRequest> reqs)
      : results_(reqs.size()), thread_([this, m, reqs = std::move(reqs)] {
          for (size_t i = 0; i < reqs.size() && !stop_; ++i) {
            Result<exec::EvalResult> r = m->Evaluate(reqs[i]);
            std::lock_guard<std::mutex> l(mu_);
            results_[i] = std::move(r);
            cv_.notify_all();
          }
        }) {}
  ~SerialCompileBatch() override {
    stop_ = true;
    thread_.join();
  }
  Result<exec::EvalResult> Wait(size_t i) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return results_[i].has_value(); });
    return *results_[i];
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::optional<Result<exec::EvalResult>>> results_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace

std::unique_ptr<CompileBatch> Measurer::StartCompiles(std::vector<exec::EvalRequest> requests, int jobs) {
  return std::make_unique<SerialCompileBatch>(this, std::move(requests));
}

Result<OptimizeResult> Optimize(const OptimizeInput& in, const OptimizeOptions& o, const Deps& d) {
  KILN_CHECK(d.measurer && d.renderer, "Optimize needs a measurer and a renderer");
  return internal::OptimizeRun(in, o, d).Run();
}

namespace internal {

OptimizeRun::OptimizeRun(const OptimizeInput& in, const OptimizeOptions& o, const Deps& d)
    : in_(in), o_(o), d_(d), seed_(o.seed), prune_(o.prune) {
  t0_ = o.started_at >= 0 ? o.started_at : Now();
  res_.task = in.task.name;
  res_.startup = o.startup;
  res_.kernel = in.kernel;
  res_.space = in.space;
  res_.baseline_config = in.baseline;
  res_.best_config = in.baseline;
  res_.best_source = in.original_source;
  res_.notes = in.notes;
}

Result<OptimizeResult> OptimizeRun::Run() {
  KILN_RETURN_IF_ERROR(ConnectToDevice());
  // From here on the run is recorded: a failure ends it as "failed".
  auto phases = [&]() -> Status {
    KILN_RETURN_IF_ERROR(MeasureOriginal());
    if (finished_) return Status::Ok();
    ProfileOriginal();
    AddBlockSizeMoves();
    KILN_RETURN_IF_ERROR(ChooseStrategy());
    KILN_RETURN_IF_ERROR(MeasureAutotunedStart());
    if (finished_) return Status::Ok();
    t_search0_ = Elapsed();
    if (o_.budget_is_search) budget_start_ = t_search0_;  // the fixed costs before it are counted apart
    KILN_RETURN_IF_ERROR(ProposeRewrites());
    if (o_.dry_run) return DryRun();
    KILN_RETURN_IF_ERROR(ContinueFromProposal());  // a proposal that wins: the search continues from it
    std::vector<size_t> order;
    if (!res_.improved) {
      KILN_RETURN_IF_ERROR(Search());
      order = PickFinalists();
      t_verify0_ = Elapsed();
      if (finished_) return Status::Ok();
      KILN_RETURN_IF_ERROR(VerifyFinalists(order));
      if (!res_.improved) {
        auto more = RefillFinalists();
        if (!more.empty()) KILN_RETURN_IF_ERROR(VerifyFinalists(more));
      }
    }
    if (!res_.improved && o_.per_shape_fallback && !lost_some_.empty()) KILN_RETURN_IF_ERROR(TryPerShapeAutotune());
    if (!res_.improved) {
      KeepOriginal();
      return Status::Ok();
    }
    ProfileWinner();
    if (o_.emit_autotune) KILN_RETURN_IF_ERROR(EmitAutotune(order));
    res_.stop_reason = res_.stop_reason.empty() ? "done" : res_.stop_reason;
    finished_ = true;
    finish_status_ = "improved";
    return Status::Ok();
  };
  Status s = phases();
  if (!s.ok() && hard_end_hit_ && original_passed_ && (res_.improved || o_.dry_run)) {
    // A winner verified before the hard end stands (what followed it, e.g. --emit-autotune, is cut).
    res_.notes.push_back(s.message() + ": the run ends here");
    res_.stop_reason = "hard end";
    return Finish(o_.dry_run ? "dry-run" : "improved");
  }
  if (!s.ok() && original_passed_ && !o_.dry_run) return KeepAfterFailure(s);
  if (!s.ok()) {
    if (!finished_) {
      if (res_.stop_reason.empty()) res_.stop_reason = "the machinery failed";
      (void)Finish("failed");
    }
    return s;
  }
  return Finish(finish_status_);
}

// ---- clock, records, display, requests --------------------------------------------------------

double OptimizeRun::Now() const { return o_.clock ? o_.clock() : SteadySeconds(); }

void OptimizeRun::Step(const std::string& kind, const nlohmann::json& j) {
  if (d_.recorder) d_.recorder->Step(res_.run_id, kind, j);
}

void OptimizeRun::Say(const std::string& s) {
  if (d_.progress) d_.progress->Line(s);
}

void OptimizeRun::Show(const std::string& phase) {
  if (!d_.progress) return;
  ps_.phase = phase;
  ps_.elapsed_s = Elapsed();
  ps_.budget_s = BudgetEnd();
  d_.progress->Update(ps_);
}

void OptimizeRun::RecordTimings() {
  auto& t = res_.timings;
  const double end = Elapsed();
  const double baseline_at = res_.startup.value("baseline_starts_at_s", 0.0);
  const double search0 = t_search0_ >= 0 ? t_search0_ : end;
  const double verify0 = t_verify0_ >= 0 ? t_verify0_ : (t_search0_ >= 0 ? end : search0);
  t["startup"] = baseline_at;
  t["baseline"] = base_.eval_s;
  t["profile"] = profile_s_;
  t["before_search"] = search0;  // startup, baseline, profile and an autotuned original's first config
  t["search"] = std::max(0.0, verify0 - search0);
  t["verification"] = std::max(0.0, end - verify0);
  t["budget"] = o_.budget_seconds;
  t["budget_scope"] = o_.budget_is_search ? "search" : "run";
  t["hard_end"] = o_.hard_end_s;
}

Result<OptimizeResult> OptimizeRun::Finish(const std::string& status) {
  RecordTimings();
  res_.wall_s = Elapsed();
  if (d_.progress) {
    ps_.elapsed_s = res_.wall_s;
    Show("done");
    d_.progress->Finish();
  }
  if (d_.recorder) d_.recorder->EndRun(res_.run_id, status, res_.ToJson());
  finished_ = true;
  return res_;
}

// Ends the run as failed with `error` (the run is recorded with its stop reason).
Status OptimizeRun::Fail(const std::string& stop_reason, Status error) {
  res_.stop_reason = stop_reason;
  if (!original_passed_ || o_.dry_run) (void)Finish("failed");  // else Run keeps the original
  return error;
}

// The original passed and something later failed (a worker that died for good, a rewrite or protocol error,
// a strategy that cannot start): nothing verified beats the original, so it is kept and the run says why.
Result<OptimizeResult> OptimizeRun::KeepAfterFailure(const Status& error) {
  const std::string why = error.message();
  res_.improved = false;
  res_.best_is_autotune = false;
  res_.best_source = in_.original_source;
  res_.autotune_source.clear();
  res_.best_config = in_.baseline;
  res_.geomean_speedup = 1.0;
  res_.cases.clear();
  KeepOriginal();
  if (hard_end_hit_) {
    res_.kept_reason = "original kept, because " + why;
    res_.stop_reason = "hard end";
  } else {
    res_.kept_reason = "original kept, because the loop failed: " + why;
    res_.stop_reason = "failure in the loop: " + (res_.stop_reason.empty() ? why : res_.stop_reason);
  }
  res_.notes.push_back(res_.kept_reason);
  Say("kiln: " + res_.kept_reason);
  return Finish("kept");
}

Status OptimizeRun::CheckOriginalOnItsOwn(const std::string& failure) {
  auto own = Measure(MakeRequest(in_.original_source, exec::Mode::kCheck, NextSeed(), o_.verify_trials, {}, {}));
  // Not a verdict on the original when the run's time ended before its own check could run.
  const bool out_of_time = !own.ok() && hard_end_hit_;
  if (!out_of_time && !own.ok())  // no own check to report: the timed run's failure is the verdict
    return InvalidArgument(
        fmt::format("the original kernel does not pass its own check ({}): {}", base_.verdict, original_.message));
  // Its own check failed too: that check is the verdict the error states (the timed run's failure follows).
  if (!out_of_time && own->verdict != exec::Verdict::kOk)
    return InvalidArgument(fmt::format("the original kernel does not pass its own check ({}): {}; {}",
                                       exec::VerdictName(own->verdict), own->message, failure));
  std::string why;
  if (out_of_time) {
    why = own.status().message() + ", so it was not checked on its own";
    res_.stop_reason = "hard end";
  } else {
    original_ = std::move(*own);
    why = "it passes its own check (the task's default cases, as kiln eval runs it), so nothing could be timed "
          "against it";
    res_.stop_reason = "original not measurable";
  }
  res_.kept_reason = "original kept, because " + failure.substr(failure.find(' ') + 1) + "; " + why;
  res_.notes.push_back(res_.kept_reason);
  Say("kiln: " + res_.kept_reason);
  finish_status_ = "kept";
  finished_ = true;
  return Status::Ok();
}

std::optional<exec::EvalResult> OptimizeRun::RetryBelowLargest(const exec::EvalResult& failed, std::string* note) {
  static constexpr std::string_view kSel = "@largest:";
  if (o_.cases.size() != 1 || o_.cases[0].rfind(kSel, 0) != 0) return std::nullopt;
  const std::string k_text = o_.cases[0].substr(kSel.size());
  if (k_text.empty() || k_text.size() > 6 || k_text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const int k = std::stoi(k_text);
  if (k <= 0) return std::nullopt;
  // Only sizes of a sweep: a failure outside one (no case timed, or the task's own `test` case) would fail
  // the same way below.
  if (std::any_of(failed.cases.begin(), failed.cases.end(), [](const exec::CaseResult& c) { return c.name == "test"; }))
    return std::nullopt;
  constexpr int kRetries = 2;
  for (int r = 1; r <= kRetries; ++r) {
    if (o_.hard_end_s > 0 && Elapsed() >= o_.hard_end_s - o_.runner_grace_s) break;
    const std::string sel = fmt::format("@largest:{}:skip:{}", k, r * k);
    Show("baseline");
    auto m = Measure(MakeRequest(in_.original_source, exec::Mode::kTime, NextSeed(), o_.search_trials, o_.short_timing,
                                 {sel}));
    if (!m.ok()) break;  // no smaller sizes (a task error), or the machinery: the failure stands
    if (m->verdict != exec::Verdict::kOk) continue;
    std::string names;
    for (const auto& c : m->cases) names += (names.empty() ? "" : ", ") + c.name;
    *note = fmt::format("the original fails at its {} largest sizes ({}: {}); searched and timed at the next {} "
                        "sizes, where it passes ({})",
                        r * k, exec::VerdictName(failed.verdict), failed.message.substr(0, 300), k, names);
    return std::move(*m);
  }
  return std::nullopt;
}

uint64_t OptimizeRun::NextSeed() {
  seed_ = seed_ * 6364136223846793005ULL + 1442695040888963407ULL;
  return seed_ >> 17;
}

exec::EvalRequest OptimizeRun::MakeRequest(const std::optional<std::string>& source, exec::Mode mode, uint64_t seed,
                                           int trials, const nlohmann::json& timing,
                                           const std::vector<std::string>& cases) const {
  exec::EvalRequest r;
  r.task = in_.task;
  r.candidate_source = source;
  if (source) r.candidate_name = "kiln_cand_" + HashHex(*source).substr(0, 8) + ".py";
  r.mode = mode;
  r.policy = source && strict_sources_.count(HashHex(*source)) ? exec::Policy::kStrict : o_.policy;
  r.seed = seed;
  r.trials = trials;
  r.cases = cases;
  if (mode == exec::Mode::kTime) r.timing = timing;
  r.timeout_s = o_.timeout_s;
  return r;
}

// Every request goes through here: a machinery failure stops the run with a clear message.
Result<exec::EvalResult> OptimizeRun::Measure(exec::EvalRequest r, double* sent_s) {
  if (o_.hard_end_s > 0) {
    const double left = o_.hard_end_s - Elapsed() - o_.runner_grace_s;
    if (left < 1.0) {
      hard_end_hit_ = true;
      return Timeout(fmt::format("the run reached its hard end ({:.0f} s after the start, --hard-end-seconds)",
                                 o_.hard_end_s));
    }
    r.timeout_s = std::min(r.timeout_s, left);
  }
  if (sent_s) *sent_s = r.timeout_s;
  if (r.policy == exec::Policy::kTrusted) r.autotune_picks = autotune_picks_;
  auto res = d_.measurer->Evaluate(r);
  if (res.ok() && r.policy == exec::Policy::kTrusted) KeepAutotunePicks(res->raw);
  // The task's own code failing (its reference does not import, ...) is said as it is, as `kiln eval`
  // says it; anything else stops the run as the machinery's failure.
  if (!res.ok() && IsTaskError(res.status())) return res.status();
  if (!res.ok()) return Status(res.status().code(), "the measuring machinery failed: " + res.status().message());
  return res;
}

// The autotune picks a trusted response reported (the worker's kept pick tables, by kernel identity), merged
// into those kiln sends with its next trusted requests: a worker restarted after a candidate was cut at its
// deadline does not tune the original's keys again (on an H200 int8_matmul_quantization's original took 68 s
// to tune; its finalist's verification, in a fresh worker, ran into the hard end). Only trusted responses
// feed them and only trusted requests carry them.
void OptimizeRun::KeepAutotunePicks(const nlohmann::json& raw) {
  auto it = raw.find("autotune_picks");
  if (it == raw.end() || !it->is_array()) return;
  for (const auto& e : *it) {
    if (!e.is_object() || !e.contains("id") || !e["id"].is_string() || !e.contains("picks")) continue;
    bool merged = false;
    for (auto& mine : autotune_picks_)
      if (mine["id"] == e["id"]) {
        mine["picks"] = e["picks"];  // the worker's table includes what it was sent
        merged = true;
      }
    if (!merged) autotune_picks_.push_back(e);
  }
}

// Every profile goes through here: the original's autotuned kernels run the configs they were timed with
// (the kept picks) instead of tuning again in the profiler's own process.
Result<ProfileSummary> OptimizeRun::ProfileSource(const std::optional<std::string>& source) {
  d_.profiler->SeedAutotune(autotune_picks_);
  return d_.profiler->Profile(in_.task, source, profile_case_);
}

// One short timing of a search candidate (one trial, the search cases), recorded in `rec`.
Result<exec::EvalResult> OptimizeRun::TimeShort(const std::string& src, CandidateRecord* rec) {
  const double t1 = Now();
  exec::EvalRequest rq = MakeRequest(src, exec::Mode::kTime, NextSeed(), o_.search_trials, o_.short_timing,
                                     search_cases_);
  rq.timeout_s = CandidateTimeout();
  // With --budget-scope search a search measurement ends by the budget's end (plus one typical
  // measurement): one slow candidate must not stretch the search past it.
  if (o_.budget_is_search && t_search0_ >= 0 && search_end_ > 0 && t_verify0_ < 0)
    rq.timeout_s = std::min(rq.timeout_s, std::max(o_.slow_floor_s, search_end_ - Elapsed() + std::max(1.0, t_measure_)));
  double sent_s = rq.timeout_s;
  KILN_ASSIGN_OR_RETURN(exec::EvalResult r, Measure(rq, &sent_s));
  rec->eval_s = Now() - t1;
  rec->phases = r.raw.value("phases_s", nlohmann::json::object());
  ++res_.measured;
  rec->verdict = exec::VerdictName(r.verdict);
  rec->message = r.message;
  rec->cases = CaseTimes(r);
  if (!r.kernels.empty()) rec->kernels = r.kernels;
  rec->score_ms = Score(r, search_cases_);
  (void)CutAsSlow(rq.timeout_s, sent_s, r, rec);
  return r;
}

// ---- phases -----------------------------------------------------------------------------------

// The device: versions, names, shared-memory limit; no GPU is an error unless this is a dry run.
Status OptimizeRun::ConnectToDevice() {
  const double t_hello = Now();
  auto hello = d_.measurer->Hello();
  if (!hello.ok()) return Status(hello.status().code(), "the worker did not start: " + hello.status().message());
  res_.startup["hello_s"] = Now() - t_hello;
  res_.startup["baseline_starts_at_s"] = Elapsed();
  res_.versions = hello->versions;
  if (!hello->devices.empty()) {
    res_.device = hello->devices[0].name;
    res_.device_uuid = hello->devices[0].uuid;
  }
  if (hello->interpreter && !o_.dry_run)
    return Unavailable(
        "no CUDA GPU here: the worker runs in Triton's interpreter, which cannot time kernels, so "
        "kiln optimize cannot rank candidates; run it on a GPU machine, or pass --dry-run to check "
        "the candidates' correctness in the interpreter");
  if (!hello->devices.empty()) {
    const auto& raw = hello->devices[0].raw;
    if (raw.contains("smem_per_block_optin") && raw["smem_per_block_optin"].is_number_integer() &&
        raw["smem_per_block_optin"].get<int64_t>() > 0)
      prune_.smem_limit = raw["smem_per_block_optin"].get<int64_t>();
  }
  if (d_.recorder)
    res_.run_id = d_.recorder->BeginRun({{"task", in_.task.name},
                                         {"task_hash", in_.task.hash},
                                         {"kernel", in_.kernel},
                                         {"device", res_.device},
                                         {"device_uuid", res_.device_uuid},
                                         {"strategy", o_.strategy},
                                         {"budget_seconds", o_.budget_seconds},
                                         {"max_evals", o_.max_evals},
                                         {"space", in_.space.ToJson()},
                                         {"baseline_config", ConfigToJson(in_.baseline)}});
  return Status::Ok();
}

// Cases the worker could not time by CUDA-graph replay (docs/eval.md, timing): a call that draws random
// numbers is never captured (method "..._rng"), a capture that failed (a host sync, ...) falls back to
// events ("..._nocapture"). Said in a note: such a case is timed with events, launch overhead included.
std::string EventTimingNote(const exec::EvalResult& r) {
  std::string rng, failed;
  for (const auto& c : r.cases) {
    const std::string& m = c.timing_method;
    if (m.size() >= 4 && m.compare(m.size() - 4, 4, "_rng") == 0) rng += (rng.empty() ? "" : ", ") + c.name;
    if (m.find("_nocapture") != std::string::npos) failed += (failed.empty() ? "" : ", ") + c.name;
  }
  std::string out;
  if (!rng.empty()) out = "the original draws random numbers in " + rng + ": timed with CUDA events, not a CUDA graph";
  if (!failed.empty())
    out += (out.empty() ? "" : "; ") + std::string("a CUDA graph could not be captured in ") + failed +
           ": timed with CUDA events instead";
  return out;
}

// Sizes the worker left out of `--cases @largest:K` because they do not fit the GPU (tasks.py, largest_cases).
std::string SkippedCasesNote(const exec::EvalResult& r) {
  const auto it = r.raw.find("skipped_cases");
  if (it == r.raw.end() || !it->is_array() || it->empty()) return "";
  std::string out = "sizes left out because they do not fit this GPU's memory (the next largest are timed): ";
  for (size_t i = 0; i < it->size(); ++i)
    out += (i ? "; " : "") + ((*it)[i].is_string() ? (*it)[i].get<std::string>() : (*it)[i].dump());
  return out;
}

// The original, timed briefly: its cases, its score, its compile facts, the cases searched and profiled.
Status OptimizeRun::MeasureOriginal() {
  Show("baseline");
  base_.id = next_id_++;
  base_.config = in_.baseline;
  base_.origin = "baseline";
  base_.source_hash = HashHex(in_.original_source);
  const exec::Mode mode = o_.dry_run ? exec::Mode::kCheck : exec::Mode::kTime;
  const double t_eval = Now();
  exec::EvalRequest first = MakeRequest(in_.original_source, mode, NextSeed(),
                                        o_.dry_run ? o_.verify_trials : o_.search_trials, o_.short_timing, o_.cases);
  // An autotuned original's first timed run tunes every config at each new size, as Triton does
  // (matrix_vector_multip's 48 configs of a short kernel at its check and perf sizes: past 120 s on an H200);
  // nothing can be searched without it, so it may take until the hard end (Measure cuts it there).
  if (in_.autotuned && o_.hard_end_s > 0) first.timeout_s = std::max(first.timeout_s, o_.hard_end_s);
  auto measured = Measure(std::move(first));
  if (!measured.ok()) return Fail("the machinery failed", measured.status());
  original_ = std::move(*measured);
  if (!o_.dry_run && original_.verdict != exec::Verdict::kOk) {
    std::string note;
    if (auto smaller = RetryBelowLargest(original_, &note)) {
      original_ = std::move(*smaller);
      res_.notes.push_back(note);
      Say("kiln: " + note);
    }
  }
  const exec::EvalResult& br = original_;
  base_.eval_s = Now() - t_eval;
  base_.phases = br.raw.value("phases_s", nlohmann::json::object());
  base_.verdict = exec::VerdictName(br.verdict);
  base_.message = br.message;
  base_.cases = CaseTimes(br);
  base_.kernels = br.kernels;
  for (const auto& cs : br.cases) all_cases_.push_back(cs.name);
  if (!o_.cases.empty()) run_cases_ = all_cases_;  // selectors such as @largest:K, as the worker resolved them
  Step("baseline", CandJson(base_));
  if (br.verdict != exec::Verdict::kOk) {
    res_.candidates.push_back(base_);
    // Under the interpreter the original may fail where a GPU runs it: the interpreter runs programs one
    // after another on numpy arrays, so an out-of-bounds access that a GPU tolerates crashes it, and
    // large inputs take minutes.
    const bool interp = o_.dry_run && (br.verdict == exec::Verdict::kCrash || br.verdict == exec::Verdict::kTimeout);
    if (!o_.dry_run) {
      // Timed at sizes its own check does not use (the perf harness's largest): out of memory, in-place
      // effects, a draw inside graph capture. Kept when its own check passes.
      std::string failure = fmt::format("the original failed its timed run ({}): {}", base_.verdict, br.message);
      if (br.verdict == exec::Verdict::kTimeout && in_.autotuned)
        failure +=
            " (its @triton.autotune times every config at each new size first: --hard-end-seconds, or "
            "--timeout without a hard end, gives it longer)";
      Status st = CheckOriginalOnItsOwn(failure);
      return st.ok() ? st : Fail("the original failed", st);
    }
    return Fail("the original failed",
                InvalidArgument(
                    fmt::format("the original kernel does not pass its own check ({}): {}{}", base_.verdict, br.message,
                                interp ? " (under Triton's interpreter, which --dry-run uses: it crashes on "
                                         "out-of-bounds accesses that a GPU tolerates and is slow on large "
                                         "inputs; the kernel may still run on a GPU)"
                                       : "")));
  }
  // A kernel chosen by its tunables that the original's run never launched (the backward of a module
  // whose perf harness times its forward: softmax_flaggems, fast_rms_layernorm): searching it changes nothing.
  if (o_.kernel_chosen && !br.kernels.empty() &&
      std::none_of(br.kernels.begin(), br.kernels.end(),
                   [&](const exec::KernelFacts& k) { return k.name == in_.kernel; })) {
    for (const auto& k : br.kernels) res_.kernels_ran.push_back(k.name);
    res_.tuned_kernel_not_run = true;
    res_.candidates.push_back(base_);
    res_.kept_reason = fmt::format("'{}' did not run when the original ran the cases (the kernels that ran: {})",
                                   in_.kernel, fmt::join(res_.kernels_ran, ", "));
    res_.stop_reason = "kernel not run";
    Say("kiln: " + res_.kept_reason);
    finish_status_ = "kept";
    finished_ = true;
    return Status::Ok();
  }
  SpaceOptions around;
  if (in_.space_given) around.block_span = 1;  // the user's grid: only the recorded value joins
  for (const auto& n :
       AdoptRecordedValues(in_.runtime_valued, in_.kernel, br.kernels, &in_.space, &in_.baseline, around))
    res_.notes.push_back(n);
  for (const auto& k : br.kernels)
    if (k.name == in_.kernel && k.constexprs.is_object())
      for (const auto& [name, v] : k.constexprs.items())
        if (v.is_number_integer()) ran_with_[name] = v.get<int64_t>();
  prune_.ran_with = ran_with_;
  CapTiledBlocks();
  if (std::string n = EventTimingNote(br); !n.empty()) res_.notes.push_back(n);
  if (std::string n = SkippedCasesNote(br); !n.empty()) res_.notes.push_back(n);
  if (!in_.runtime_valued.empty()) {
    res_.space = in_.space;
    res_.baseline_config = res_.best_config = base_.config = in_.baseline;
  }
  for (const auto& k : br.kernels)
    if (k.n_spills) prune_.baseline_spills = std::max(prune_.baseline_spills, *k.n_spills);
  if (auto b = InferDtypeBytes(in_.space, in_.baseline, br.kernels)) prune_.dtype_bytes = *b;
  // Cases timed while searching; the slowest case of the original is the one profiled (ProfileCase).
  const exec::CaseResult* slowest = nullptr;
  for (const auto& cs : br.cases)
    if (cs.candidate_ms && (!slowest || cs.candidate_ms->median > slowest->candidate_ms->median)) slowest = &cs;
  profile_case_ = ProfileCase(br, slowest, &res_.notes);
  compile_jobs_ = CompileJobsByMemory(br, &res_.notes);
  if (!o_.search_cases.empty()) {
    search_cases_ = o_.search_cases;
  } else if (o_.largest_case_only && slowest) {
    search_cases_ = {slowest->name};
  } else {
    search_cases_ = run_cases_;
  }
  base_.score_ms = o_.dry_run ? 0 : Score(br, search_cases_);
  res_.candidates.push_back(base_);
  original_passed_ = true;
  if (!o_.dry_run && !std::isfinite(base_.score_ms))
    return Fail("the original has no timings",
                Internal("the original kernel passed but returned no timings (is this a GPU worker?)"));
  res_.measured = 1;
  return Status::Ok();
}

// The case profiled: the slowest timed case (`slowest`, of `br`), unless its median passes profile_case_max_ms; then
// the slowest case up to it, else the fastest, with a note. "" when nothing was timed.
std::string OptimizeRun::ProfileCase(const exec::EvalResult& br, const exec::CaseResult* slowest,
                                     std::vector<std::string>* notes) const {
  const exec::CaseResult *fastest = nullptr, *capped = nullptr;
  for (const auto& cs : br.cases) {
    if (!cs.candidate_ms) continue;
    const double ms = cs.candidate_ms->median;
    if (!fastest || ms < fastest->candidate_ms->median) fastest = &cs;
    if (ms <= o_.profile_case_max_ms && (!capped || ms > capped->candidate_ms->median)) capped = &cs;
  }
  if (!slowest) return "";
  if (o_.profile_case_max_ms <= 0 || slowest->candidate_ms->median <= o_.profile_case_max_ms) return slowest->name;
  const exec::CaseResult* pick = capped ? capped : fastest;
  notes->push_back(fmt::format(
      "profiled case {} ({:.3g} ms), not the slowest {} ({:.3g} ms): ncu replays the kernel "
      "dozens of times, so a case past {:g} ms is profiled at a shorter size",
      pick->name, pick->candidate_ms->median, slowest->name, slowest->candidate_ms->median, o_.profile_case_max_ms));
  return pick->name;
}

// Compile requests at once: --compile-jobs, fewer when the original's peak GPU memory per process (its timed
// run's: the inputs drawn, the check's outputs) leaves room on the GPU for fewer compile workers beside the
// measuring one. Each compile worker builds the search's inputs on the GPU too.
int OptimizeRun::CompileJobsByMemory(const exec::EvalResult& br, std::vector<std::string>* notes) const {
  if (o_.compile_jobs <= 0 || o_.compile_memory_share <= 0 || !br.raw.is_object()) return o_.compile_jobs;
  auto bytes = [&](const char* obj, const char* key) -> double {
    auto o = br.raw.find(obj);
    if (o == br.raw.end() || !o->is_object()) return 0;
    auto v = o->find(key);
    return v != o->end() && v->is_number() ? v->get<double>() : 0.0;
  };
  const double total = bytes("gpu_memory", "total_bytes");
  // exec::ReportedPeakBytes reads the allocated peak, as the eval pool's admission does; the allocator's
  // reserved peak (its cache) is held by the process too.
  const double peak =
      std::max(static_cast<double>(exec::ReportedPeakBytes(br)), bytes("memory", "peak_reserved_bytes"));
  if (total <= 0 || peak <= 0) return o_.compile_jobs;
  const int fit = static_cast<int>(std::floor(o_.compile_memory_share * total / peak)) - 1;
  const int jobs = std::clamp(fit, 0, o_.compile_jobs);
  if (jobs < o_.compile_jobs)
    notes->push_back(fmt::format(
        "{} compile worker(s) of {} (--compile-jobs): the original's run peaked at {:.1f} GiB of GPU memory, and "
        "each compile worker builds the search's inputs beside the measuring worker on this {:.0f} GiB GPU{}",
        jobs, o_.compile_jobs, peak / (1 << 30), total / (1 << 30),
        jobs == 0 ? "; candidates compile in their own measurement" : ""));
  return jobs;
}

// The kernel was chosen by its tunables (no --kernel) and another kernel of the module takes most of the
// profiled case's GPU time: say so (the search tunes one kernel per run). "" otherwise.
std::string OptimizeRun::OtherKernelNote(const std::map<std::string, double>& shares) const {
  if (!o_.kernel_chosen) return "";
  auto share = [&](const std::string& k) {
    auto it = shares.find(k);
    return it == shares.end() ? 0.0 : it->second;
  };
  std::string top;
  for (const auto& k : in_.launched_kernels)
    if (k != in_.kernel && (top.empty() || share(k) > share(top))) top = k;
  if (top.empty() || share(top) < 0.5 || share(top) <= share(in_.kernel)) return "";
  return fmt::format("'{}' takes {:.0f}% of the profiled case's GPU time and the tuned '{}' {:.0f}%: --kernel {} "
                     "tunes it",
                     top, 100 * share(top), in_.kernel, 100 * share(in_.kernel), top);
}

// Profile and diagnose the original when a profiler is available: its roofline position and moves.
void OptimizeRun::ProfileOriginal() {
  Status available = Unavailable("no profiler configured");
  if (!o_.dry_run && d_.profiler) available = d_.profiler->Available();
  if (o_.dry_run) {
    res_.mode = "dry-run";
    res_.mode_note = "interpreter: correctness only, no timing, no profile";
  } else if (available.ok() && o_.hard_end_s > 0 && o_.hard_end_s - Elapsed() - o_.runner_grace_s < o_.min_profile_s) {
    // chunk_gla_fwd (session 17): three baseline tries left 1 s, and ncu was started with that limit.
    res_.mode = "measure-only";
    res_.mode_note = fmt::format(
        "not profiled: {:.0f} s are left before the hard end (--hard-end-seconds), and a profile takes at least "
        "{:.0f} s (a fresh worker under ncu)",
        std::max(0.0, o_.hard_end_s - Elapsed() - o_.runner_grace_s), o_.min_profile_s);
  } else if (available.ok()) {
    Show("profile");
    const double t_prof0 = Now();
    // An outlier profile must leave the search and verification theirs (on an H200, chunk_retention's ran
    // 58 s into a 90 s hard end and nothing was searched): past profile_cap_floor_s it gets at most a share
    // of what is left. Below that floor, where 55 of the 57 profiles of sessions 15-18 ended, it is not cut.
    if (o_.hard_end_s > 0) {
      const double left = std::max(1.0, o_.hard_end_s - Elapsed() - o_.runner_grace_s);
      d_.profiler->LimitSeconds(std::min(left, std::max(o_.profile_cap_floor_s, o_.profile_share * left)));
    }
    auto p = ProfileSource(in_.original_source);
    profile_s_ = Now() - t_prof0;
    if (p.ok()) {
      res_.mode = "profiled";
      res_.profile_before = *p;
      res_.roofline_before = p->roofline_fraction;
      for (const auto& f : p->findings)
        for (const auto& m : f.moves)
          if (std::find(moves_.begin(), moves_.end(), m) == moves_.end()) moves_.push_back(m);
      Step("profile_before", p->ToJson());
      if (std::string n = OtherKernelNote(p->kernel_shares); !n.empty()) res_.notes.push_back(n);
    } else {
      res_.mode = "measure-only";
      res_.mode_note = "profiling failed: " + p.status().message();
    }
  } else {
    res_.mode = "measure-only";
    res_.mode_note = available.message();
  }
  if (!res_.mode_note.empty()) Say("kiln: " + res_.mode + ": " + res_.mode_note);
}

// A 1-D block far below where elementwise and row kernels are tuned (TritonBench's add_example
// launches BLOCK_SIZE=4: 33 million programs of 4 elements, half of every 32-byte sector unused) is
// the first thing to grow, whatever the counters stressed; uncoalesced access in a 1-D kernel is
// served the same way (more contiguous elements per program). Not when the diagnosis asks for smaller
// tiles (small_grid: the grid does not fill the GPU, as fused_recurrent_retention's 16 programs of
// BV=32 on 132 SMs): growing the block would leave more SMs idle.
bool OptimizeRun::SmallGrid() const {
  return std::find(moves_.begin(), moves_.end(), "smaller_tiles") != moves_.end() ||
         std::find(moves_.begin(), moves_.end(), "smaller_block") != moves_.end();
}

void OptimizeRun::AddBlockSizeMoves() {
  auto has = [&](const char* m) { return std::find(moves_.begin(), moves_.end(), m) != moves_.end(); };
  const bool small_grid = SmallGrid();
  if (small_grid && !in_.space_given) ReachSmallerBlocks();
  for (const auto& p : in_.space.params()) {
    if (p.role != Role::kBlock) continue;
    auto it = in_.baseline.find(p.name);
    if (it == in_.baseline.end()) continue;
    if (const int64_t held = TileElements(p, it->second, in_.baseline, ran_with_); held >= o_.small_block) {
      if (it->second < o_.small_block)
        res_.notes.push_back(
            fmt::format("{}={} is one side of a tile of {} elements ({}): not grown first as a small "
                        "1-D block would be",
                        p.name, it->second, held, TileText(p, in_.baseline)));
      continue;
    }
    if (small_grid) {
      res_.notes.push_back(fmt::format("{}={} is below the block sizes 1-D kernels are tuned at, but the diagnosis "
                                       "asks for smaller tiles (the grid does not fill the GPU): it is not grown first",
                                       p.name, it->second));
      continue;
    }
    for (const char* m : {"bigger_block", "typical_block"})
      if (!has(m)) moves_.insert(moves_.begin(), m);
    res_.notes.push_back(
        fmt::format("{}={} is far below the block sizes 1-D kernels are tuned at (>= {}): "
                    "growing it is tried first",
                    p.name, it->second, o_.small_block));
  }
  if (has("coalesce_access") && !has("bigger_block"))
    for (const auto& p : in_.space.params())
      if (p.role == Role::kBlock) {
        moves_.push_back("bigger_block");
        break;
      }
  const auto& known = KnownMoves();
  const std::vector<std::string> proposed = d_.proposer ? d_.proposer->moves() : std::vector<std::string>{};
  for (const auto& m : moves_)
    if (std::find(known.begin(), known.end(), m) == known.end() &&
        std::find(proposed.begin(), proposed.end(), m) == proposed.end())
      res_.notes.push_back("move '" + m +
                           "' suggested by the diagnosis needs a source rewrite the search does not compose yet");
}

// "[BV=32, BK=32]": the largest known tile block `p` is a side of, with the values of `c` and the original's.
std::string OptimizeRun::TileText(const Param& p, const Config& c) const {
  auto v = c.find(p.name);
  const auto* tile = v == c.end() ? nullptr : LargestTile(p, v->second, c, ran_with_);
  if (!tile) return "";
  std::vector<std::string> sides;
  for (const auto& d : *tile) {
    if (auto x = c.find(d); x != c.end())
      sides.push_back(fmt::format("{}={}", d, x->second));
    else if (auto f = ran_with_.find(d); f != ran_with_.end())
      sides.push_back(fmt::format("{}={}", d, f->second));
    else
      sides.push_back(d);
  }
  return fmt::format("[{}]", fmt::join(sides, ", "));
}

// A block that is one side of a tile (fused_recurrent_rwkv6's BV in `tl.zeros([BV, BK])` beside BK=32) keeps the
// values whose tile holds at most SpaceOptions::block_max_1d elements, as a 1-D block does: BV=8192 there is a
// quarter of a million registers' worth of state per program.
void OptimizeRun::CapTiledBlocks() {
  if (in_.space_given) return;  // the user's grid is searched as given
  const int64_t cap = SpaceOptions{}.block_max_1d;
  std::vector<Param> ps = in_.space.params();
  bool capped = false;
  for (auto& p : ps) {
    auto it = in_.baseline.find(p.name);
    if (p.role != Role::kBlock || p.tiles.empty() || it == in_.baseline.end()) continue;
    std::vector<int64_t> kept;
    for (int64_t v : p.values)
      if (v == it->second || TileElements(p, v, in_.baseline, ran_with_) <= cap) kept.push_back(v);
    if (kept.size() == p.values.size()) continue;
    res_.notes.push_back(
        fmt::format("{}: values above {} left out: one side of the tile {}, which would hold more than "
                    "{} elements",
                    p.name, kept.back(), TileText(p, in_.baseline), cap));
    p.values = std::move(kept);
    capped = true;
  }
  if (!capped) return;
  in_.space = Space(std::move(ps));
  res_.space = in_.space;
}

// The diagnosis asks for smaller tiles (the grid does not fill the GPU): a block's values go down to
// an eighth of the original's, below the floor the space keeps otherwise (SpaceOptions::block_min), so
// that more, smaller programs are reachable (fused_recurrent_retention: 16 programs of BV=32 on 132
// SMs; BV=4 gives 128). Only 1-D blocks (Role::kBlock): tiles of a tl.dot keep their minimum.
void OptimizeRun::ReachSmallerBlocks() {
  std::vector<Param> ps = in_.space.params();
  bool grew = false;
  for (auto& p : ps) {
    auto it = in_.baseline.find(p.name);
    if (p.role != Role::kBlock || it == in_.baseline.end() || p.values.empty() || it->second <= 1) continue;
    std::vector<int64_t> added;
    for (int64_t q = std::max<int64_t>(1, it->second / SpaceOptions{}.block_span); q < p.values.front(); q <<= 1)
      added.push_back(q);
    if (added.empty()) continue;
    p.values.insert(p.values.begin(), added.begin(), added.end());
    grew = true;
    res_.notes.push_back(fmt::format("{}: the grid does not fill the GPU (the diagnosis asks for smaller tiles): "
                                     "{} to {} join its values",
                                     p.name, added.front(), added.back()));
  }
  if (!grew) return;
  in_.space = Space(std::move(ps));
  res_.space = in_.space;
}

Status OptimizeRun::ChooseStrategy() {
  StrategyContext sctx;
  sctx.space = in_.space;
  sctx.feasible = [this](const Config& cfg) {
    auto why_not = PruneBeforeCompile(in_.space, cfg, prune_);
    if (why_not) static_pruned_.emplace(ConfigKey(cfg), *why_not);
    return !why_not.has_value();
  };
  sctx.moves = moves_;
  sctx.seed = o_.seed;
  // The tiles tuned kernels use are measured first (the dry run checks a few candidates only).
  // Register pressure (the diagnosis's smaller_tiles: spills, occupancy held by registers) measures the seeds with
  // smaller tiles first: on an H200 context_attn_nopad, spilling 336 registers at 128x128, spent its search on
  // 128x128 and 128x256 seeds (89 ms each) before any smaller tile.
  const bool smaller_first = std::find(moves_.begin(), moves_.end(), "smaller_tiles") != moves_.end();
  if (!o_.dry_run && o_.tuned_seeds) sctx.seeds = TunedSeeds(in_.space, in_.baseline, smaller_first, ran_with_);
  if (SmallGrid()) {
    // The grid does not fill the GPU: seeds that grow a 1-D block (1024-4096) would leave more SMs idle.
    size_t before = sctx.seeds.size();
    std::erase_if(sctx.seeds, [&](const Config& c) {
      for (const auto& p : in_.space.params())
        if (p.role == Role::kBlock && c.count(p.name) && in_.baseline.count(p.name) &&
            c.at(p.name) > in_.baseline.at(p.name))
          return true;
      return false;
    });
    if (sctx.seeds.size() < before)
      res_.notes.push_back(fmt::format("{} tuned seed(s) with larger blocks not measured: the grid does not fill the GPU",
                                       before - sctx.seeds.size()));
  }
  sctx.accept_gain = o_.accept_gain;
  res_.strategy = o_.strategy.empty() || o_.strategy == "auto" ? ResolveAuto(sctx) : o_.strategy;
  auto made = MakeStrategy(res_.strategy, sctx);
  if (!made.ok()) return Fail("", made.status());
  strategy_ = std::move(*made);
  return Status::Ok();
}

// An autotuned original runs the config its autotuner picked for each shape in that process, so its
// time is no configuration's. The search starts from its first config measured as a fixed config:
// started from the autotuned time, every neighbour looked worse (on an H100, matmul_triton2's search
// stopped after 6 measurements, its pick 0.69x the exhaustive one). Then the early ends: nothing to
// search, or the original already at its roofline.
Status OptimizeRun::MeasureAutotunedStart() {
  start_score_ = o_.dry_run ? 1.0 : base_.score_ms;
  if (in_.autotuned && !o_.dry_run && !in_.space.empty() && res_.roofline_before < o_.roofline_stop) {
    CandidateRecord rec;
    rec.id = next_id_++;
    rec.config = in_.baseline;
    rec.origin = "baseline config";
    rec.at_s = Elapsed();
    auto src = d_.renderer->Render(in_.baseline);
    if (!src.ok()) {
      rec.verdict = "render_error";
      rec.message = src.status().message();
    } else {
      rec.source_hash = HashHex(*src);
      KILN_ASSIGN_OR_RETURN(exec::EvalResult r, TimeShort(*src, &rec));
      if (r.verdict == exec::Verdict::kOk && std::isfinite(rec.score_ms)) start_score_ = rec.score_ms;
    }
    Step("candidate", CandJson(rec));
    res_.candidates.push_back(rec);
  }
  strategy_->Start(in_.baseline, start_score_);
  if (in_.space.empty()) {
    res_.kept_reason = "no editable tunables: nothing to search";
    res_.stop_reason = "empty space";
    for (const auto& n : in_.notes) Say("kiln: " + n);
    finish_status_ = "kept";
    finished_ = true;
  } else if (res_.roofline_before >= o_.roofline_stop) {
    res_.kept_reason = fmt::format("the original already reaches {:.0f}% of its roofline", 100 * res_.roofline_before);
    res_.stop_reason = "at roofline";
    finish_status_ = "kept";
    finished_ = true;
  }
  return Status::Ok();
}

}  // namespace internal

}  // namespace kiln::search

#include "exec/evaluator.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/diag.h"
#include "exec/static_check.h"
#include "pyast/pyast.h"

namespace kiln::exec {

using nlohmann::json;

std::optional<EvalResult> StaticGate(const EvalRequest& req, std::vector<Reason>* warnings) {
  if (!req.candidate_source) return std::nullopt;  // the task's own code is trusted
  auto tree = pyast::Tree::Parse(*req.candidate_source, req.candidate_name);
  if (!tree.ok()) {
    return EvalResult::Make(Verdict::kCompileError, "syntax_error", tree.status().message());
  }
  const pyast::Tree& t = **tree;
  auto reason_at = [&](const std::string& code, const pyast::Span& span, const std::string& msg, const char* severity) {
    Reason r;
    r.code = code;
    r.message = msg;
    r.file = req.candidate_name;
    r.line = static_cast<int>(span.begin.line);
    r.column = static_cast<int>(span.begin.column);
    r.severity = severity;
    return r;
  };
  if (t.has_errors()) {
    // the parser may flag an error it locates nowhere (e.g. `import a.bt c`): then the file's first line
    auto errs = t.errors();
    pyast::SyntaxError e = errs.empty() ? pyast::SyntaxError{{t.PosOf(0), t.PosOf(0)}, "syntax error"} : errs.front();
    EvalResult r;
    r.verdict = Verdict::kCompileError;
    r.reasons.push_back(reason_at("syntax_error", e.span, e.message, "error"));
    r.message = FormatDiagnostic(t.MakeDiagnostic(e.span, e.message));
    return r;
  }
  StaticCheckOptions opts;
  opts.entry = RequiredEntry(task::FormatName(req.task.format), req.task.entry);
  auto findings = StaticCheck(t, opts);
  if (findings.empty()) return std::nullopt;
  EvalResult r;
  bool fatal = false;
  for (const auto& f : findings) {
    if (f.rule == "missing_entry") {
      r.verdict = Verdict::kCompileError;
      r.reasons.push_back(reason_at(f.rule, f.span, f.message, "error"));
      if (r.message.empty()) r.message = FormatDiagnostic(t.MakeDiagnostic(f.span, f.message));
      fatal = true;
    }
  }
  if (fatal) return r;
  if (req.policy == Policy::kTrusted) {
    for (const auto& f : findings) warnings->push_back(reason_at(f.rule, f.span, f.message, "warning"));
    return std::nullopt;
  }
  r.verdict = Verdict::kRejected;
  for (const auto& f : findings) {
    r.reasons.push_back(reason_at(f.rule, f.span, f.message, "error"));
    r.message += FormatDiagnostic(t.MakeDiagnostic(f.span, f.message + " [" + f.rule + "]"));
  }
  return r;
}

bool IsCacheable(Verdict v) {
  return v == Verdict::kOk || v == Verdict::kMismatch || v == Verdict::kCompileError || v == Verdict::kRuntimeError ||
         v == Verdict::kRejected;
}

store::CacheKey MakeCacheKey(const EvalRequest& req, const HelloInfo& hello, int device_index) {
  store::CacheKey k;
  k.task_hash = req.task.hash;
  k.candidate_hash = req.CandidateHash();
  k.device_uuid = hello.DeviceUuid(device_index);
  auto v = [&](const char* key) {
    auto it = hello.versions.find(key);
    return it != hello.versions.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  k.torch_version = v("torch");
  k.triton_version = v("triton");
  k.driver_version = v("driver");
  k.params_hash = req.ParamsHash() + (hello.interpreter ? "-interp" : "");
  return k;
}

Result<HelloInfo> Evaluator::Hello() {
  if (hello_) return *hello_;
  auto h = runner_->Hello();
  if (h.ok()) hello_ = *h;
  return h;
}

std::optional<EvalResult> Evaluator::Cached(const EvalRequest& req) {
  if (!store_ || !use_cache_) return std::nullopt;
  auto h = Hello();
  if (!h.ok()) return std::nullopt;
  auto rec = store_->Lookup(MakeCacheKey(req, *h));
  if (!rec.ok() || !rec->has_value()) return std::nullopt;
  auto r = EvalResult::FromResponse((*rec)->response);
  if (!r.ok() || !IsCacheable(r->verdict) || IsInfraOutOfMemory(*r)) return std::nullopt;
  r->from_cache = true;
  return std::move(*r);
}

namespace {

void RecordIn(store::Store* store, const EvalRequest& req, const store::CacheKey& key, const json& device,
              EvalResult* r) {
  if (!store) return;
  Status s = store->PutTask(req.task.hash, req.task.name, task::FormatName(req.task.format), req.task.ToJson());
  if (s.ok() && req.candidate_source)
    s = store->PutCandidate(key.candidate_hash, req.candidate_name, *req.candidate_source);
  if (s.ok() && !key.device_uuid.empty() && device.is_object() && !device.empty()) {
    s = store->PutDevice(key.device_uuid, device);
  }
  if (s.ok()) {
    store::EvaluationRecord rec;
    rec.key = key;
    rec.task_name = req.task.name;
    rec.verdict = VerdictName(r->verdict);
    rec.mode = ModeName(req.mode);
    rec.policy = PolicyName(req.policy);
    rec.speedup = r->GeomeanSpeedup();
    for (const auto& c : r->cases) {
      if (c.candidate_ms) {
        rec.candidate_ms = c.candidate_ms->median;
        if (c.reference_ms) rec.reference_ms = c.reference_ms->median;
        break;
      }
    }
    rec.elapsed_s = r->elapsed_s;
    rec.response = r->ToJson();
    auto id = store->PutEvaluation(rec);
    if (!id.ok()) s = id.status();
  }
  if (!s.ok())
    r->warnings.push_back(MakeReason("store_error", "the result was not recorded: " + s.message(), "warning"));
}

}  // namespace

void Evaluator::Record(const EvalRequest& req, const EvalResult& r_in) {
  auto h = Hello();
  if (!h.ok()) return;
  EvalResult r = r_in;
  json dev = h->devices.empty() ? json::object() : h->devices.front().raw;
  RecordIn(store_, req, MakeCacheKey(req, *h), dev, &r);
}

Result<EvalResult> Evaluator::Evaluate(const EvalRequest& req) {
  std::vector<Reason> warnings;
  if (auto gated = StaticGate(req, &warnings)) {
    // Static outcomes do not depend on the device: recorded under the device "static".
    store::CacheKey k;
    k.task_hash = req.task.hash;
    k.candidate_hash = req.CandidateHash();
    k.device_uuid = "static";
    k.params_hash = req.ParamsHash();
    RecordIn(store_, req, k, json::object(), &*gated);
    return std::move(*gated);
  }
  KILN_ASSIGN_OR_RETURN(HelloInfo hello, Hello());
  if (auto c = Cached(req)) {
    c->warnings.insert(c->warnings.begin(), warnings.begin(), warnings.end());
    return std::move(*c);
  }
  KILN_ASSIGN_OR_RETURN(EvalResult r, runner_->Evaluate(req));
  r.warnings.insert(r.warnings.begin(), warnings.begin(), warnings.end());
  json dev = r.device.is_object() && !r.device.empty() ? r.device
             : hello.devices.empty()                   ? json::object()
                                                       : hello.devices.front().raw;
  RecordIn(store_, req, MakeCacheKey(req, hello), dev, &r);
  return r;
}

// ---- EvalPool -----------------------------------------------------------------------------------

namespace {

template <typename T>
class Queue {
 public:
  void Push(T v) {
    {
      std::lock_guard<std::mutex> l(mu_);
      q_.push_back(std::move(v));
    }
    cv_.notify_one();
  }
  void Close() {
    {
      std::lock_guard<std::mutex> l(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }
  std::optional<T> Pop() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return std::nullopt;
    T v = std::move(q_.front());
    q_.pop_front();
    return v;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> q_;
  bool closed_ = false;
};

bool FinalAfterCompile(Verdict v) {
  return v == Verdict::kCompileError || v == Verdict::kRejected || v == Verdict::kTimeout || v == Verdict::kCrash;
}

// Runners made by `make` for slots 0..n-1, each with an evaluator, their hellos sent on threads
// added to `threads` (so measuring and check runners start at the same time; the caller joins). A
// slot whose runner cannot be made, or whose hello fails, keeps that Status.
struct Slots {
  std::vector<std::unique_ptr<Runner>> runners;
  std::vector<std::unique_ptr<Evaluator>> evals;
  std::vector<Status> status;
};

// Stops the runners of every slot at once when the pool's run ends. A runner's destructor stops its
// worker, which takes a second or more (the interpreter's teardown, a GPU context): one after another,
// the 17 workers of an H100 batch (16 check workers) kept `kiln eval` alive for tens of seconds after
// its last result. The evaluators go first (they point at the runners).
struct StopSlotsTogether {
  std::vector<Slots*> slots;
  ~StopSlotsTogether() {
    std::vector<std::thread> ts;
    for (Slots* s : slots) {
      s->evals.clear();
      for (auto& r : s->runners) {
        if (r) ts.emplace_back([&r] { r.reset(); });
      }
    }
    for (auto& t : ts) t.join();
  }
};

void StartSlots(int n, const std::function<std::unique_ptr<Runner>(int)>& make, const char* missing,
                const PoolConfig& cfg, Slots* s, std::vector<std::thread>* threads) {
  s->runners.resize(n);
  s->evals.resize(n);
  s->status.resize(n);
  for (int i = 0; i < n; ++i) {
    threads->emplace_back([&make, missing, &cfg, s, i] {
      s->runners[i] = make(i);
      if (!s->runners[i]) {
        s->status[i] = Internal(missing);
        return;
      }
      s->evals[i] = std::make_unique<Evaluator>(s->runners[i].get(), cfg.store, cfg.use_cache);
      auto h = s->evals[i]->Hello();
      if (!h.ok()) s->status[i] = h.status();
    });
  }
}

// Where an item runs whole (check + timing) alone on measuring slot `i`: on an idle check runner of
// this GPU (check slots i, i + n_measure, ...) when there is one, so it keeps the check stage's
// isolation (the measuring runner may be a shared process).
Evaluator* WholeEvaluator(int i, const Slots& measure, const Slots& check) {
  const int n_measure = static_cast<int>(measure.evals.size());
  for (size_t c = i; c < check.evals.size(); c += n_measure) {
    if (check.status[c].ok() && check.evals[c]) return check.evals[c].get();
  }
  return measure.evals[i].get();
}

// An evaluation alone on its GPU; an infrastructure out-of-memory outcome is retried once (on a fresh
// worker: a fork child, or the shared worker the runner replaced), and stands only when the retry fails too.
Result<EvalResult> EvaluateAlone(Evaluator* ev, const EvalRequest& req) {
  auto r = ev->Evaluate(req);
  if (!r.ok() || !IsInfraOutOfMemory(*r)) return r;
  auto again = ev->Evaluate(req);
  if (again.ok())
    again->warnings.push_back(MakeReason("oom_retry", IsInfraOutOfMemory(*again)
                                                          ? "out of memory again when retried alone on a fresh worker"
                                                          : "out of memory at first; retried alone on a fresh worker",
                                         "warning"));
  return again;
}

}  // namespace

bool ContentionSensitive(const EvalResult& r) {
  if (r.verdict == Verdict::kTimeout) return true;
  for (const auto& reason : r.reasons) {
    if (reason.code == "out_of_memory" || reason.code == "infra_out_of_memory") return true;
  }
  return false;
}

void MergeCheckStage(const EvalResult& check, EvalResult* timed) {
  std::map<std::string, const CaseResult*> by_name;
  for (const auto& c : check.cases) by_name[c.name] = &c;
  auto merge_max = [](std::optional<double>& into, const std::optional<double>& other) {
    if (other && (!into || *other > *into)) into = other;
  };
  for (auto& c : timed->cases) {
    auto it = by_name.find(c.name);
    if (it == by_name.end()) continue;
    c.trials += it->second->trials;
    merge_max(c.max_abs_err, it->second->max_abs_err);
    merge_max(c.rel_l2_err, it->second->rel_l2_err);
  }
  if (timed->raw.is_object() && timed->raw.contains("cases") && timed->raw["cases"].is_array()) {
    for (auto& cj : timed->raw["cases"]) {
      if (!cj.is_object() || !cj.contains("name") || !cj["name"].is_string()) continue;
      for (const auto& c : timed->cases) {
        if (c.name != cj["name"].get<std::string>()) continue;
        cj["trials"] = c.trials;
        if (c.max_abs_err) cj["max_abs_err"] = *c.max_abs_err;
        if (c.rel_l2_err) cj["rel_l2_err"] = *c.rel_l2_err;
      }
    }
  }
  if (check.raw.is_object() && check.raw.contains("legacy_stdout") && timed->raw.is_object())
    timed->raw["legacy_stdout"] = check.raw["legacy_stdout"];
  json stage = {{"verdict", VerdictName(check.verdict)}, {"elapsed_s", check.elapsed_s}};
  json cases = json::array();
  for (const auto& c : check.cases) {
    json cj = {{"name", c.name}, {"passed", c.passed}, {"trials", c.trials}};
    if (c.max_abs_err) cj["max_abs_err"] = *c.max_abs_err;
    if (c.rel_l2_err) cj["rel_l2_err"] = *c.rel_l2_err;
    cases.push_back(cj);
  }
  stage["cases"] = cases;
  if (check.raw.is_object()) {
    for (const char* k : {"runtime_checks", "kernels", "aten_ops"}) {
      if (check.raw.contains(k)) stage[k] = check.raw[k];
    }
  }
  if (!timed->raw.is_object()) timed->raw = json::object();
  timed->raw["check_stage"] = stage;
  timed->raw["time_stage_elapsed_s"] = timed->elapsed_s;
  timed->elapsed_s += check.elapsed_s;
  // The compile facts come from the check (every launch of every trial); the timing stage saw one.
  if (timed->kernels.empty() && !check.kernels.empty()) timed->kernels = check.kernels;
}

void EvalPool::Run(std::vector<PoolItem> items,
                   const std::function<void(const PoolItem&, const Result<EvalResult>&, int)>& done) {
  std::mutex done_mu;
  auto report = [&](const PoolItem& it, const Result<EvalResult>& r, int slot) {
    std::lock_guard<std::mutex> l(done_mu);
    done(it, r, slot);
  };

  const bool pipelined = cfg_.check_slots > 0 && static_cast<bool>(cfg_.make_check) && !items.empty();
  // Measuring runners first: their hellos name the devices the cache is keyed on. The check runners
  // start at the same time (importing torch is slow; they do it in parallel).
  const int n_measure = std::max(1, cfg_.measure_slots);
  const int n_check = pipelined ? cfg_.check_slots : 0;
  Slots measure, check;
  StopSlotsTogether stop_together{{&measure, &check}};
  {
    std::vector<std::thread> ts;
    StartSlots(n_measure, cfg_.make_measure, "no measuring runner", cfg_, &measure, &ts);
    StartSlots(n_check, cfg_.make_check, "no check runner", cfg_, &check, &ts);
    for (auto& t : ts) t.join();
  }
  auto& runners = measure.runners;
  auto& evals = measure.evals;
  const auto& hello_status = measure.status;
  auto& check_runners = check.runners;
  auto& check_evals = check.evals;
  const auto& check_status = check.status;
  std::vector<int> live;
  for (int i = 0; i < n_measure; ++i) {
    if (hello_status[i].ok()) live.push_back(i);
  }
  if (live.empty()) {
    for (const auto& it : items) report(it, hello_status[0], -1);
    return;
  }

  Queue<PoolItem> input, ready;
  for (auto& it : items) input.Push(std::move(it));
  input.Close();

  // Static gate and cache, against every measuring device; true when the item is finished.
  auto pre = [&](const PoolItem& it) -> bool {
    std::vector<Reason> warnings;
    if (StaticGate(it.request, &warnings)) {
      report(it, evals[live[0]]->Evaluate(it.request), -1);  // records the static outcome
      return true;
    }
    for (int i : live) {
      if (auto c = evals[i]->Cached(it.request)) {
        report(it, std::move(*c), i);
        return true;
      }
    }
    return false;
  };

  MemoryAdmission admit(n_measure, cfg_.gpu_memory_bytes);
  struct ReportAdmitted {
    const MemoryAdmission& a;
    int64_t* bytes;
    int* checks;
    ~ReportAdmitted() {
      if (bytes) *bytes = a.max_in_use();
      if (checks) *checks = a.max_running();
    }
  } report_admitted{admit, cfg_.max_admitted_bytes, cfg_.max_admitted_checks};
  std::vector<std::thread> threads;
  if (pipelined) {
    // Stage 1: every check and every time item's check on the check runners, in parallel.
    struct Staged {
      PoolItem item;
      std::optional<EvalResult> check;  // nullopt: run the item's own request whole, alone
      std::string why;                  // why it runs whole (a warning on its result)
      std::vector<Reason> warnings;     // the static gate's (policy trusted)
      bool is_retry = false;            // the check stage met an infrastructure out-of-memory: this is its retry
    };
    std::mutex staged_mu;
    std::vector<Staged> staged;
    auto to_stage2 = [&](PoolItem it, std::optional<EvalResult> check, std::string why,
                         std::vector<Reason> warnings = {}, bool is_retry = false) {
      std::lock_guard<std::mutex> l(staged_mu);
      staged.push_back({std::move(it), std::move(check), std::move(why), std::move(warnings), is_retry});
    };
    for (int c = 0; c < n_check; ++c) {
      if (!check_status[c].ok()) continue;  // a check runner that cannot start takes no items
      threads.emplace_back([&, c] {
        const int gpu_slot = c % n_measure;
        while (auto it = input.Pop()) {
          if (pre(*it)) continue;
          const Mode mode = it->request.mode;
          if (mode != Mode::kCheck && mode != Mode::kTime) {
            to_stage2(std::move(*it), std::nullopt, "");
            continue;
          }
          bool learned = false;
          const int64_t est = admit.Estimate(it->request, &learned);
          if (admit.Large(est)) {
            to_stage2(std::move(*it), std::nullopt,
                      fmt::format("{} {:.2f} GiB, more than half of the GPU's {:.2f} GiB: runs alone",
                                  learned ? "its task peaked at" : "its memory hint is", est / 1073741824.0,
                                  admit.capacity() / 1073741824.0));
            continue;
          }
          EvalRequest creq = it->request;
          creq.mode = Mode::kCheck;
          admit.Acquire(gpu_slot, est);
          auto r = check_runners[c]->Evaluate(creq);
          admit.Release(gpu_slot, est);
          if (r.ok()) admit.Learn(it->request, *r);
          std::vector<Reason> warnings;
          StaticGate(it->request, &warnings);  // passed in pre(); its warnings (policy trusted) go on
          if (r.ok()) r->warnings.insert(r->warnings.begin(), warnings.begin(), warnings.end());
          if (!r.ok()) {
            to_stage2(std::move(*it), std::nullopt, "the check worker failed (" + r.status().message() + ")");
            continue;
          }
          if (ContentionSensitive(*r)) {
            const bool oom = IsInfraOutOfMemory(*r);
            to_stage2(std::move(*it), std::nullopt,
                      oom ? std::string("out of memory on the shared GPU: retried alone on a fresh worker")
                          : fmt::format("the check worker's verdict {} (shared GPU) was re-evaluated alone",
                                        VerdictName(r->verdict)),
                      {}, oom);
            continue;
          }
          if (mode == Mode::kCheck) {
            check_evals[c]->Record(it->request, *r);
            report(*it, r, gpu_slot);
            continue;
          }
          if (!r->ok()) {
            // A time item that fails its check is finished: it never reaches a measuring worker.
            r->warnings.push_back(MakeReason("check_stage", "decided by a check worker before timing", "warning"));
            check_evals[c]->Record(it->request, *r);
            report(*it, r, gpu_slot);
            continue;
          }
          to_stage2(std::move(*it), std::move(*r), "", std::move(warnings));
        }
      });
    }
    if (threads.empty()) {  // no check runner started: everything runs whole on the measuring runners
      while (auto it = input.Pop()) {
        if (!pre(*it)) to_stage2(std::move(*it), std::nullopt, "");
      }
    }
    for (auto& t : threads) t.join();  // the barrier: no check request is in flight from here on
    threads.clear();

    // Stage 2: the measuring runners, each alone on its GPU.
    Queue<Staged> timing;
    for (auto& s : staged) timing.Push(std::move(s));
    timing.Close();
    for (int i : live) {
      threads.emplace_back([&, i] {
        while (auto s = timing.Pop()) {
          if (!s->check) {
            Evaluator* ev = WholeEvaluator(i, measure, check);
            auto r = s->is_retry ? ev->Evaluate(s->item.request) : EvaluateAlone(ev, s->item.request);
            if (r.ok() && !s->why.empty()) r->warnings.push_back(MakeReason("check_stage", s->why, "warning"));
            report(s->item, r, i);
            continue;
          }
          EvalRequest treq = s->item.request;
          treq.mode = Mode::kTimeOnly;
          treq.verify_trials = 1;
          treq.legacy_stdout = false;  // run once, on the check worker (MergeCheckStage keeps it)
          auto r = runners[i]->Evaluate(treq);
          if (r.ok()) {
            r->warnings.insert(r->warnings.begin(), s->warnings.begin(), s->warnings.end());
            MergeCheckStage(*s->check, &*r);
            evals[i]->Record(s->item.request, *r);
          }
          report(s->item, r, i);
        }
      });
    }
    for (auto& t : threads) t.join();
    return;
  }

  const bool staged = cfg_.compile_slots > 0 && cfg_.make_compile;
  std::atomic<int> compilers_left{staged ? cfg_.compile_slots : 0};
  if (staged) {
    for (int c = 0; c < cfg_.compile_slots; ++c) {
      threads.emplace_back([&, c] {
        std::unique_ptr<Runner> runner;
        while (auto it = input.Pop()) {
          if (pre(*it)) continue;
          if (it->request.mode == Mode::kTime) {
            if (!runner) runner = cfg_.make_compile(c);
            EvalRequest creq = it->request;
            creq.mode = Mode::kCompile;
            auto r = runner->Evaluate(creq);
            // The compile stage only warms the cache; a verdict it settles for good ends the item.
            if (r.ok() && FinalAfterCompile(r->verdict)) {
              r->warnings.push_back(
                  MakeReason("compile_stage", "decided by a compile worker before timing", "warning"));
              evals[live[0]]->Record(it->request, *r);
              report(*it, r, -1);
              continue;
            }
          }
          ready.Push(std::move(*it));
        }
        if (--compilers_left == 0) ready.Close();
      });
    }
  }
  for (int i : live) {
    threads.emplace_back([&, i] {
      Queue<PoolItem>& q = staged ? ready : input;
      while (auto it = q.Pop()) {
        if (!staged && pre(*it)) continue;
        report(*it, EvaluateAlone(evals[i].get(), it->request), i);
      }
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace kiln::exec

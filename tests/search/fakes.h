// Test doubles for the tuning loop: a renderer that writes the config into the source, and a
// measurer whose time is a deterministic function of the config parsed back from it.
#pragma once

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>

#include "search/interfaces.h"

namespace kiln::search::testing {

inline std::string RenderConfig(const Config& c) { return "# kiln-config " + ConfigKey(c) + "\nKERNEL_BODY\n"; }

inline Config ParseConfig(const std::string& src) {
  Config c;
  auto p = src.find("# kiln-config ");
  if (p == std::string::npos) return c;
  std::istringstream in(src.substr(p + 14, src.find('\n', p) - p - 14));
  std::string kv;
  while (in >> kv) {
    auto eq = kv.find('=');
    c[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
  }
  return c;
}

// Every "# kiln-config" line of a source (an autotuned source renders one per config).
inline std::vector<Config> ParseConfigs(const std::string& src) {
  std::vector<Config> out;
  size_t at = 0;
  while ((at = src.find("# kiln-config ", at)) != std::string::npos) {
    size_t end = src.find('\n', at);
    out.push_back(ParseConfig(src.substr(at, end == std::string::npos ? std::string::npos : end - at)));
    at = end == std::string::npos ? src.size() : end;
  }
  return out;
}

class FakeRenderer : public Renderer {
 public:
  Result<std::string> Render(const Config& c) override { return RenderConfig(c); }
  Result<std::string> RenderAutotune(const std::vector<Config>& cs) override {
    std::string s = "# autotune\n";
    for (auto& c : cs) s += RenderConfig(c);
    return s;
  }
  // Pinned shapes as "# kiln-pin <values>:first|rest" lines after the autotune's configs.
  Result<std::string> RenderPerShape(const Config& winner, const Config& baseline, const ShapePins& pins) override {
    KILN_ASSIGN_OR_RETURN(std::string s, RenderAutotune({winner, baseline}));
    for (const auto& [values, first] : pins.shapes)
      s += "# kiln-pin " + values.dump() + (first ? ":first" : ":rest") + "\n";
    return s;
  }
};

// The fake's autotune key of a case ("large": [4], any other: [1]), as the worker reports it.
inline nlohmann::json FakeCaseKey(const std::string& name) { return nlohmann::json::array({name == "large" ? 4 : 1}); }

// The pin of a case in a source (FakeRenderer::RenderPerShape): "first", "rest" or "" when not pinned.
inline std::string FakePin(const std::string& src, const std::string& name) {
  std::string line = "# kiln-pin " + FakeCaseKey(name).dump() + ":";
  size_t at = src.find(line);
  if (at == std::string::npos) return "";
  at += line.size();
  return src.substr(at, src.find('\n', at) - at);
}

struct FakeCall {
  exec::Mode mode;
  Config config;
  int trials;
  bool time_reference;
  std::vector<std::string> cases;
  bool baseline = false;  // the request timed the original (its baseline source) in the reference's place
  nlohmann::json autotune_picks = nlohmann::json::array();  // what the request carried
};

class FakeMeasurer : public Measurer {
 public:
  // time_ms(config, long_timing) -> candidate median; NaN: compile error.
  std::function<double(const Config&, bool)> time_ms;
  // Whether the config is wrong for a request with this many trials (e.g. only caught by >= 3).
  std::function<bool(const Config&, int trials)> wrong = [](const Config&, int) { return false; };
  std::function<int64_t(const Config&)> spills = [](const Config&) { return 0; };
  // Whether the config fails the task's own check (mode check on the default cases) while passing
  // every named case (a path the timed sizes do not take).
  std::function<bool(const Config&)> wrong_in_own_check = [](const Config&) { return false; };
  // Whether the worker dies on the config (a crash verdict).
  std::function<bool(const Config&)> crashes = [](const Config&) { return false; };
  // A timed request's failure on the config that the check mode does not meet (the issue-21 failures at the
  // perf harness's sizes: out of memory, in-place effects, a draw inside graph capture): its message, "" for none.
  std::function<std::string(const Config&)> fails_timed = [](const Config&) { return std::string(); };
  // Per-case times (instead of time_ms x the case's scale) when set; an autotuned source runs each
  // case with the fastest of its configs.
  std::function<double(const Config&, const std::string&)> case_ms;
  // An autotuned candidate runs its first config in every case its pins do not send to the others (an
  // autotuner whose benchmark disagrees with kiln's measurement), instead of each case's fastest; and
  // reports each case's autotune key for kernel "kernel" (exec::CaseResult::autotune_keys).
  bool autotune_runs_first = false;
  bool report_autotune_keys = true;  // with autotune_runs_first: whether cases carry their autotune keys
  // The original's time when a request carries it as the timing baseline (default: time_ms(config, true)).
  std::function<double(const Config&)> baseline_ms;
  // How much slower the original (the baseline source) and the candidate run in a request that times them
  // side by side than alone, per case (default 1: as alone). An autotuned original's per-process pick
  // shows as the first alone; both, as a slowdown each gives the other.
  std::function<double(const std::string&)> baseline_beside, candidate_beside;
  std::string timing_method = "cuda_graph";  // every timed case's method
  // Trusted responses report the worker's kept autotune picks (`autotune_picks`, one entry "orig" whose
  // single pick is keyed by the request's seed).
  bool report_picks = false;
  std::vector<std::string> cases = {"small", "large"};
  double reference_ms = 2.0;
  bool interpreter = false;
  std::string gpu = "NVIDIA H100 80GB HBM3";
  double* clock = nullptr;  // advanced by `cost_s` per timed request
  double cost_s = 1.0;
  std::mutex mu;
  std::vector<FakeCall> calls;
  // Whether the machinery fails on the request (an error Status, as when a worker cannot start).
  std::function<bool(const exec::EvalRequest&)> machinery_fails;
  // The task's own code fails on the request (the worker's task error): its message, "" for none.
  std::function<std::string(const exec::EvalRequest&)> task_error;
  double spread = 0.01;  // half-width of a timed case's per-round speedup spread, relative
  // Timed responses report this peak GPU memory per process and GPU size (raw "memory", "gpu_memory"), in GiB
  // (0: not reported).
  double peak_gib = 0, gpu_gib = 0;
  nlohmann::json constexprs = nlohmann::json::object();  // kernel "kernel"'s constexprs, as a worker reports them
  std::vector<int> compile_jobs_asked;  // each StartCompiles's jobs
  std::atomic<int> concurrent{0}, max_concurrent{0};

  Result<exec::HelloInfo> Hello() override {
    exec::HelloInfo h;
    h.interpreter = interpreter;
    exec::DeviceInfo d;
    d.name = interpreter ? "cpu" : gpu;
    d.uuid = "GPU-fake";
    d.raw = {{"smem_per_block_optin", 232448}};
    h.devices.push_back(d);
    h.versions = {{"triton", "3.6.0"}};
    return h;
  }

  std::unique_ptr<CompileBatch> StartCompiles(std::vector<exec::EvalRequest> requests, int jobs) override {
    {
      std::lock_guard<std::mutex> l(mu);
      compile_jobs_asked.push_back(jobs);
    }
    return Measurer::StartCompiles(std::move(requests), jobs);
  }

  Result<exec::EvalResult> Evaluate(const exec::EvalRequest& r) override {
    if (machinery_fails && machinery_fails(r)) return Unavailable("cannot start the worker (/nonexistent/python)");
    if (task_error) {
      if (std::string m = task_error(r); !m.empty()) return InvalidArgument("task error: " + m);
    }
    return Run(r);
  }

  // The fake's answer to a request (subclasses adjust it).
  virtual exec::EvalResult Run(const exec::EvalRequest& r) {
    int now = ++concurrent;
    int prev = max_concurrent.load();
    while (now > prev && !max_concurrent.compare_exchange_weak(prev, now)) {
    }
    Config cfg = ParseConfig(r.candidate_source.value_or(""));
    bool long_timing = r.timing.value("rounds", 1) > 1;
    {
      std::lock_guard<std::mutex> l(mu);
      calls.push_back({r.mode, cfg, r.trials, r.timing.value("time_reference", false), r.cases,
                       r.baseline_source.has_value(), r.autotune_picks});
      if (clock && r.mode != exec::Mode::kCompile) *clock += cost_s;
    }
    exec::EvalResult res;
    res.verdict = exec::Verdict::kOk;
    if (report_picks && r.policy == exec::Policy::kTrusted && r.mode != exec::Mode::kCompile)
      res.raw["autotune_picks"] = nlohmann::json::array(
          {{{"id", "orig"}, {"picks", nlohmann::json::array({{{r.seed}, 0}})}}});  // one pick per request seen
    double t = time_ms(cfg, long_timing);
    exec::KernelFacts k;
    k.name = "kernel";
    k.n_spills = spills(cfg);
    k.shared_bytes = 0;
    k.constexprs = constexprs;
    if (k.constexprs.is_object() && cfg.count("BV")) k.constexprs["BV"] = cfg.at("BV");
    res.kernels.push_back(k);
    if (std::isnan(t)) {
      res.verdict = exec::Verdict::kCompileError;
      res.message = "fake compile error";
    } else if (r.mode != exec::Mode::kCompile && crashes(cfg)) {
      res.verdict = exec::Verdict::kCrash;
      res.message = "the worker died without answering: killed by signal 11 (Segmentation fault)";
    } else if (r.mode == exec::Mode::kTime && !fails_timed(cfg).empty()) {
      res.verdict = exec::Verdict::kRuntimeError;
      res.message = fails_timed(cfg);
    } else if (r.mode == exec::Mode::kCheck && r.cases.empty() && wrong_in_own_check(cfg)) {
      res.verdict = exec::Verdict::kMismatch;
      res.message = "fake mismatch in the task's own test";
    } else if (r.mode != exec::Mode::kCompile && wrong(cfg, r.trials)) {
      res.verdict = exec::Verdict::kMismatch;
      res.message = "fake mismatch";
    } else if (r.mode == exec::Mode::kTime) {
      if (peak_gib > 0 && gpu_gib > 0) {
        const double gib = 1024.0 * 1024 * 1024;
        res.raw["memory"] = {{"peak_bytes", static_cast<int64_t>(peak_gib * gib * 0.8)},
                             {"peak_reserved_bytes", static_cast<int64_t>(peak_gib * gib)}};
        res.raw["gpu_memory"] = {{"total_bytes", static_cast<int64_t>(gpu_gib * gib)}};
      }
      for (const auto& name : cases) {
        if (!r.cases.empty() && std::find(r.cases.begin(), r.cases.end(), name) == r.cases.end()) continue;
        exec::CaseResult cr;
        cr.name = name;
        cr.passed = true;
        double scale = name == "large" ? 4.0 : 1.0;
        if (case_ms) {
          double best = std::numeric_limits<double>::infinity();
          const std::string src = r.candidate_source.value_or("");
          auto cs = ParseConfigs(src);
          if (autotune_runs_first && cs.size() > 1) {
            const std::string pin = FakePin(src, name);
            if (pin != "rest") cs.resize(1);
            if (pin == "rest") cs.erase(cs.begin());
            if (report_autotune_keys)
              cr.autotune_keys["kernel"] = {{"names", {"n"}}, {"keys", nlohmann::json::array({FakeCaseKey(name)})}};
          }
          for (const auto& c : cs) best = std::min(best, case_ms(c, name));
          t = best / scale;
        }
        cr.timing_method = timing_method;
        const double ct = r.baseline_source && candidate_beside ? t * candidate_beside(name) : t;
        exec::Timing tm{ct * scale, ct * scale * 0.99, ct * scale * 1.02, ct * scale * 0.995, ct * scale * 1.005, 100};
        cr.candidate_ms = tm;
        if (r.baseline_source) {
          Config bc = ParseConfig(*r.baseline_source);
          double b = baseline_ms ? baseline_ms(bc) : time_ms(bc, true);
          if (case_ms) {  // an autotuned baseline runs each case with the fastest of its configs
            b = std::numeric_limits<double>::infinity();
            for (const auto& c : ParseConfigs(*r.baseline_source)) b = std::min(b, case_ms(c, name) / scale);
          }
          if (baseline_beside) b *= baseline_beside(name);
          exec::Timing bt{b * scale, b * scale * 0.99, b * scale * 1.02, b * scale * 0.995, b * scale * 1.005, 100};
          cr.reference_ms = bt;
          cr.reference_is_baseline = true;
          cr.speedup = b / ct;
          cr.speedup_spread = std::make_pair(b / ct * (1 - spread), b / ct * (1 + spread));
        } else if (r.timing.value("time_reference", false)) {
          exec::Timing rt{reference_ms * scale, reference_ms * scale, reference_ms * scale,
                          reference_ms * scale, reference_ms * scale, 100};
          cr.reference_ms = rt;
          cr.speedup = reference_ms / t;
          cr.speedup_spread = std::make_pair(reference_ms / t * (1 - spread), reference_ms / t * (1 + spread));
        }
        res.cases.push_back(cr);
      }
    } else if (r.mode == exec::Mode::kCheck) {
      for (const auto& name : cases) {
        exec::CaseResult cr;
        cr.name = name;
        cr.passed = true;
        res.cases.push_back(cr);
      }
    }
    if (r.mode == exec::Mode::kCompile) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    --concurrent;
    return res;
  }

  int Count(exec::Mode m) {
    std::lock_guard<std::mutex> l(mu);
    int n = 0;
    for (auto& c : calls) n += c.mode == m;
    return n;
  }
  bool Timed(const Config& c) {
    std::lock_guard<std::mutex> l(mu);
    for (auto& x : calls)
      if (x.mode == exec::Mode::kTime && x.config == c) return true;
    return false;
  }
};

}  // namespace kiln::search::testing

#include "search/adapters.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/model.h"
#include "common/file.h"
#include "diagnose/findings.h"
#include "diagnose/report.h"
#include "profile/ncu_runner.h"
#include "profile/profile_task.h"
#include "pyast/pyast.h"
#include "rewrite/rewrite.h"
#include "task/task.h"

namespace kiln::search {

RunnerEvaluator::RunnerEvaluator(exec::Runner* measure, store::Store* store, bool use_cache,
                                 std::function<std::unique_ptr<exec::Runner>()> make_compile,
                                 int max_compile_runners)
    : measure_(measure), eval_(measure, store, use_cache), make_compile_(std::move(make_compile)),
      max_compile_(max_compile_runners) {}

RunnerEvaluator::~RunnerEvaluator() {
  for (auto& t : warming_) t.join();
  // Compile workers shut down at once, not one after another: each may take seconds to exit (a
  // request still finishing, Python and CUDA teardown), which added up at the end of every run.
  std::vector<std::thread> stopping;
  for (auto& r : idle_) stopping.emplace_back([r = std::move(r)]() mutable { r.reset(); });
  for (auto& t : stopping) t.join();
}

void RunnerEvaluator::Prewarm() {
  if (!make_compile_) return;
  std::lock_guard<std::mutex> l(pool_mu_);
  for (; created_ < max_compile_; ++created_) {
    warming_.emplace_back([this] {
      std::unique_ptr<exec::Runner> runner = make_compile_();
      (void)runner->Hello();  // starts the worker process and waits until it is ready
      {
        std::lock_guard<std::mutex> l2(pool_mu_);
        idle_.push_back(std::move(runner));
      }
      pool_cv_.notify_one();
    });
  }
}

Result<exec::HelloInfo> RunnerEvaluator::Hello() {
  std::lock_guard<std::mutex> l(measure_mu_);
  return eval_.Hello();
}

exec::EvalResult RunnerEvaluator::Evaluate(const exec::EvalRequest& r) {
  auto fail = [](const Status& s) {
    return exec::EvalResult::Make(exec::Verdict::kCrash, "machinery_error", s.message());
  };
  if (r.mode == exec::Mode::kCompile && make_compile_ && max_compile_ > 0) {
    std::unique_ptr<exec::Runner> runner;
    {
      std::unique_lock<std::mutex> l(pool_mu_);
      // All made and busy (or still starting): wait for one rather than load the measuring runner.
      pool_cv_.wait(l, [&] { return !idle_.empty() || created_ < max_compile_; });
      if (!idle_.empty()) {
        runner = std::move(idle_.back());
        idle_.pop_back();
      } else {
        ++created_;
      }
    }
    if (!runner) runner = make_compile_();  // outside the lock: spawning takes a while
    exec::Evaluator ev(runner.get(), nullptr, false);
    auto res = ev.Evaluate(r);
    {
      std::lock_guard<std::mutex> l(pool_mu_);
      idle_.push_back(std::move(runner));
    }
    pool_cv_.notify_one();
    return res.ok() ? *res : fail(res.status());
  }
  std::lock_guard<std::mutex> l(measure_mu_);
  auto res = eval_.Evaluate(r);
  return res.ok() ? *res : fail(res.status());
}

Result<std::string> RewriteRenderer::Render(const Config& c) {
  rewrite::SetParams sp;
  for (const auto& [k, v] : c) sp.values[k] = v;
  rewrite::Target t{kernel_, {}};
  auto r = rewrite::ApplySequence(source_, path_, t, {rewrite::Request(sp)});
  if (!r.ok()) return r.status();
  return r->source;
}

namespace {
rewrite::TuneConfig ToTuneConfig(const Config& c) {
  rewrite::TuneConfig tc;
  for (const auto& [k, v] : c) {
    if (k == "num_warps") tc.num_warps = static_cast<int>(v);
    else if (k == "num_stages") tc.num_stages = static_cast<int>(v);
    else if (k == "num_ctas") tc.num_ctas = static_cast<int>(v);
    else if (k == "maxnreg") tc.maxnreg = static_cast<int>(v);
    else tc.params[k] = v;
  }
  return tc;
}
}  // namespace

Result<std::string> RewriteRenderer::RenderPerShape(const Config& winner, const Config& baseline) {
  // An autotuned original keeps its own configs (the baseline config kiln searched from is only one
  // of them) and gains the winner in front.
  rewrite::InsertAutotune ext;
  ext.keep_existing = true;
  ext.configs.push_back(ToTuneConfig(winner));
  rewrite::Target t{kernel_, {}};
  auto r = rewrite::ApplySequence(source_, path_, t, {rewrite::Request(ext)});
  if (r.ok())
    for (const auto& n : r->notes)
      if (n.find("in front of the existing autotune configs") != std::string::npos) return r->source;
  return RenderAutotune({winner, baseline});
}

Result<std::string> RewriteRenderer::RenderAutotune(const std::vector<Config>& configs) {
  rewrite::InsertAutotune at;
  for (const auto& c : configs) at.configs.push_back(ToTuneConfig(c));
  rewrite::Target t{kernel_, {}};
  auto r = rewrite::ApplySequence(source_, path_, t, {rewrite::Request(at)});
  if (!r.ok()) return r.status();
  return r->source;
}

std::string SearchMoveName(const std::string& m) {
  if (m == "group_m_swizzle") return "group_m";
  if (m == "multiple_rows_per_program") return "bigger_block";
  return m;
}

bool NcuProfiler::Available(std::string* why) {
  auto ncu = profile::FindNcu(ncu_path_);
  if (!ncu.ok()) {
    if (why) *why = "ncu not found (" + ncu.status().message() + "); measuring only";
    return false;
  }
  ncu_path_ = *ncu;
  return true;
}

Result<ProfileSummary> NcuProfiler::Profile(const task::TaskSpec& task, const std::optional<std::string>& source,
                                            const std::string& case_name) {
  profile::ProfileOptions po;
  po.ncu.ncu_path = ncu_path_;
  po.python = python_;
  po.case_name = case_name;
  auto out = profile::ProfileTask(task, source, po, device_);
  if (!out.ok()) return out.status();
  auto rep = diagnose::DiagnoseRun(out->run);
  if (rep.run.kernels.empty()) return NotFound("ncu profiled no kernel");
  // The tuned kernel (by name), else the one with the largest share of the time.
  size_t pick = 0;
  double best_share = -1;
  for (size_t i = 0; i < rep.run.kernels.size(); ++i) {
    const auto& k = rep.run.kernels[i];
    bool named = !kernel_.empty() && k.name().find(kernel_) != std::string::npos;
    double score = k.time_share + (named ? 10 : 0);
    if (score > best_share) { best_share = score; pick = i; }
  }
  const auto& kp = rep.run.kernels[pick];
  ProfileSummary s;
  s.kernel = kp.name();
  if (kp.roofline.valid && kp.roofline.fraction_of_roof > 0) s.roofline_fraction = kp.roofline.fraction_of_roof;
  if (kp.roofline.valid) s.duration_ms = kp.roofline.seconds * 1e3;
  if (pick < rep.diagnoses.size()) {
    const auto& d = rep.diagnoses[pick];
    s.bound = diagnose::ClassName(d.cls);
    for (const auto& f : d.findings) {
      Finding x;
      x.rule = f.rule;
      x.severity = diagnose::SeverityName(f.severity);
      x.message = f.message;
      for (auto m : f.moves) x.moves.push_back(SearchMoveName(diagnose::MoveName(m)));
      x.evidence = diagnose::ToJson(f)["evidence"];
      s.findings.push_back(std::move(x));
    }
  }
  s.raw = diagnose::ToJson(rep);
  return s;
}

Result<OptimizeInput> PrepareInput(const task::TaskSpec& spec, const std::string& kernel, const SpaceOptions& so) {
  if (spec.format != task::Format::kTritonBenchG && spec.format != task::Format::kKiln)
    return InvalidArgument(fmt::format(
        "kiln optimize tunes Triton modules: tasks in kiln or TritonBench-G format (this one is {}); "
        "for other formats, evaluate a candidate with kiln eval",
        task::FormatName(spec.format)));
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(spec.path));
  OptimizeInput in;
  in.task = spec;
  in.original_source = spec.format == task::Format::kTritonBenchG ? task::StripTritonBenchTest(text) : text;
  KILN_ASSIGN_OR_RETURN(auto tree, pyast::Tree::Parse(in.original_source, spec.path));
  if (!tree->errors().empty()) return ParseError(spec.path + ": syntax error; fix the module first");
  KILN_ASSIGN_OR_RETURN(auto model, analysis::AnalyzeModule(*tree));
  // Candidates: launched kernels.
  std::vector<std::string> names;
  if (!kernel.empty()) {
    if (!model.FindKernel(kernel)) return NotFound("no @triton.jit kernel named '" + kernel + "' in " + spec.path);
    names.push_back(kernel);
  } else {
    for (const auto& k : model.kernels) if (k.launched) names.push_back(k.name);
  }
  if (names.empty()) return NotFound(spec.path + ": no kernel is launched from the module; nothing to tune");
  int best_n = -1;
  for (const auto& n : names) {
    auto t = analysis::ExtractTunables(*tree, model, {n, {}});
    if (!t.ok()) {
      in.notes.push_back(n + ": " + t.status().message());
      continue;
    }
    auto b = SpaceFromTunables(*t, so);
    int n_params = static_cast<int>(b.space.params().size());
    if (n_params > best_n) {
      best_n = n_params;
      in.kernel = n;
      in.space = b.space;
      in.baseline = b.baseline;
      in.autotuned = t->autotuned;
      in.notes.erase(std::remove_if(in.notes.begin(), in.notes.end(),
                                    [](const std::string& s) { return s.rfind("skipped ", 0) == 0; }),
                     in.notes.end());
      for (const auto& s : b.skipped) in.notes.push_back("skipped " + s);
    }
  }
  if (best_n < 0) return InvalidArgument(spec.path + ": no kernel's tunables could be extracted");
  if (names.size() > 1)
    in.notes.push_back(fmt::format("{} kernels are launched; tuning '{}' (use --kernel to choose)", names.size(), in.kernel));
  return in;
}

}  // namespace kiln::search

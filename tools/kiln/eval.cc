// `kiln eval`: verified execution of a candidate against a task (docs/eval.md).
//
//   kiln eval --task T [--candidate C] [--json] [--mode check|time] [--policy strict|trusted] ...
//   kiln eval --batch pairs.jsonl --out results.jsonl ...
//
// Exit codes: 0 the verdict is ok (batch: every pair got a result line), 1 the candidate failed
// (batch: some pairs could not be evaluated: bad task file, machinery error; their lines carry
// "error"), 2 usage or infrastructure error (bad flags, unreadable task, no worker).
// Argument handling only; the work is in src/task, src/exec and src/store.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "commands.h"
#include "common/file.h"
#include "common/hash.h"
#include "exec/evaluator.h"
#include "exec/runner.h"
#include "store/store.h"
#include "task/task.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct EvalFlags {
  std::string task, candidate, entry, bench, format;
  std::string baseline;  // mode time: timed in the reference's place (an A/B of two versions)
  std::vector<std::string> sizes;  // NAME=VALUE
  bool json = false;
  std::string mode = "check", policy = "strict", isolation = "fork";
  std::string protocol;  // tolerance protocol: kernelbench (worker default) or legacy
  std::string time_isolation = "shared";  // batch: the timing stage after check workers
  uint64_t seed = 1234;
  int trials = 3;
  std::vector<std::string> cases;
  double timeout_s = 60;
  std::string db;
  bool no_cache = false, no_db = false;
  std::string replay, record, python;
  bool interpret = false;
  std::string batch, out;
  int compile_workers = -1;  // -1: automatic
  int check_workers = -1;    // per GPU; -1: automatic
  int workers = 1;           // measuring workers when there is no GPU
  int gpus = -1;             // -1: all
  bool quiet = false;
  bool resume = false;
};

Result<json> ParseSizes(const std::vector<std::string>& sizes) {
  json out = json::object();
  for (const auto& s : sizes) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidArgument(fmt::format("--size {}: expected NAME=VALUE", s));
    json v = json::parse(s.substr(eq + 1), nullptr, false);
    if (v.is_discarded() || !(v.is_number() || v.is_string() || v.is_boolean())) v = s.substr(eq + 1);
    out[s.substr(0, eq)] = v;
  }
  return out;
}

// Everything of a request except the task and the candidate.
Result<exec::EvalRequest> BaseRequest(const EvalFlags& f) {
  exec::EvalRequest r;
  KILN_ASSIGN_OR_RETURN(r.mode, exec::ParseMode(f.mode));
  KILN_ASSIGN_OR_RETURN(r.policy, exec::ParsePolicy(f.policy));
  r.protocol = f.protocol;
  r.seed = f.seed;
  r.trials = f.trials;
  r.cases = f.cases;
  r.timeout_s = f.timeout_s;
  return r;
}

// A module file as the worker takes it: a TritonBench module without its test (the worker appends the
// task's own test function).
Result<std::string> ReadModule(const std::string& path, const exec::EvalRequest& r) {
  KILN_ASSIGN_OR_RETURN(std::string src, ReadFile(path));
  if (r.task.format == task::Format::kTritonBenchG || r.task.format == task::Format::kTritonBenchT)
    src = task::StripTritonBenchTest(src);
  return src;
}

Status LoadCandidate(const std::string& path, exec::EvalRequest* r) {
  if (path.empty()) return Status::Ok();  // the task's own code
  KILN_ASSIGN_OR_RETURN(std::string src, ReadModule(path, *r));
  r->candidate_source = std::move(src);
  r->candidate_name = fs::path(path).filename().string();
  return Status::Ok();
}

// --baseline / a batch line's "baseline": another version of the code, timed interleaved with the
// candidate in the reference's place (mode time; correctness is still the reference's).
Status LoadBaseline(const std::string& path, exec::EvalRequest* r) {
  if (path.empty()) return Status::Ok();
  if (r->mode != exec::Mode::kTime) return InvalidArgument("--baseline needs --mode time (it is a timing comparison)");
  KILN_ASSIGN_OR_RETURN(std::string src, ReadModule(path, *r));
  r->baseline_source = std::move(src);
  return Status::Ok();
}

Result<std::unique_ptr<store::Store>> OpenStore(const EvalFlags& f) {
  if (f.no_db || !f.replay.empty()) return std::unique_ptr<store::Store>();  // replays are not records
  return store::Store::Open(f.db.empty() ? store::DefaultDbPath() : f.db);
}

exec::WorkerOptions WorkerOpts(const EvalFlags& f) {
  exec::WorkerOptions o;
  o.python = f.python;
  o.isolation = exec::ParseIsolation(f.isolation).value();
  o.interpret = f.interpret;
  return o;
}

std::unique_ptr<exec::Runner> MakeRunner(const EvalFlags& f, exec::WorkerOptions o,
                                         std::unique_ptr<exec::Runner>* keep_inner) {
  std::unique_ptr<exec::Runner> inner = std::make_unique<exec::WorkerRunner>(std::move(o));
  if (f.record.empty()) return inner;
  auto rec = std::make_unique<exec::RecordingRunner>(inner.get(), f.record);
  *keep_inner = std::move(inner);
  return rec;
}

// A runner that owns the runner it wraps (recording over a worker).
class Owning : public exec::Runner {
 public:
  Owning(std::unique_ptr<exec::Runner> outer, std::unique_ptr<exec::Runner> inner)
      : inner_(std::move(inner)), outer_(std::move(outer)) {}
  Result<exec::HelloInfo> Hello() override { return outer_->Hello(); }
  Result<exec::EvalResult> Evaluate(const exec::EvalRequest& r) override { return outer_->Evaluate(r); }
  Result<json> DevicePeaks(const std::vector<std::string>& d) override { return outer_->DevicePeaks(d); }

 private:
  std::unique_ptr<exec::Runner> inner_;
  std::unique_ptr<exec::Runner> outer_;
};

std::unique_ptr<exec::Runner> NewRunner(const EvalFlags& f, exec::WorkerOptions o) {
  std::unique_ptr<exec::Runner> inner;
  auto outer = MakeRunner(f, std::move(o), &inner);
  if (!inner) return outer;
  return std::make_unique<Owning>(std::move(outer), std::move(inner));
}

json ResultLine(const exec::EvalResult& r, const exec::EvalRequest& req) {
  json j = r.ToJson();
  j["task"] = {{"name", req.task.name}, {"format", task::FormatName(req.task.format)}, {"hash", req.task.hash},
               {"path", req.task.path}};
  j["candidate"] = req.candidate_source ? json{{"name", req.candidate_name}, {"hash", req.CandidateHash()}}
                                        : json(nullptr);
  if (req.baseline_source) j["baseline"] = {{"hash", HashHex(*req.baseline_source)}};
  j["mode"] = exec::ModeName(req.mode);
  j["policy"] = exec::PolicyName(req.policy);
  return j;
}

int RunSingle(const EvalFlags& f) {
  task::LoadOptions lo;
  lo.format = f.format;
  lo.entry = f.entry;
  lo.bench = f.bench;
  auto sizes = ParseSizes(f.sizes);
  if (!sizes.ok()) {
    std::fprintf(stderr, "kiln eval: %s\n", sizes.status().message().c_str());
    return 2;
  }
  lo.sizes = *sizes;
  auto spec = task::LoadTask(f.task, lo);
  if (!spec.ok()) {
    std::fputs(spec.status().message().c_str(), stderr);
    if (spec.status().message().back() != '\n') std::fputs("\n", stderr);
    return 2;
  }
  auto req = BaseRequest(f);
  if (!req.ok()) {
    std::fprintf(stderr, "kiln eval: %s\n", req.status().message().c_str());
    return 2;
  }
  req->task = *spec;
  if (f.candidate.empty() && spec->format == task::Format::kKernelBench) {
    std::fprintf(stderr, "kiln eval: a KernelBench task needs --candidate (a module defining ModelNew)\n");
    return 2;
  }
  if (Status s = LoadCandidate(f.candidate, &*req); !s.ok()) {
    std::fprintf(stderr, "kiln eval: %s\n", s.message().c_str());
    return 2;
  }
  if (Status s = LoadBaseline(f.baseline, &*req); !s.ok()) {
    std::fprintf(stderr, "kiln eval: %s\n", s.message().c_str());
    return 2;
  }
  auto st = OpenStore(f);
  if (!st.ok()) {
    std::fprintf(stderr, "kiln eval: %s\n", st.status().message().c_str());
    return 2;
  }
  std::unique_ptr<exec::Runner> runner;
  if (!f.replay.empty()) {
    auto rp = exec::ReplayRunner::Open(f.replay);
    if (!rp.ok()) {
      std::fprintf(stderr, "kiln eval: %s\n", rp.status().message().c_str());
      return 2;
    }
    runner = std::move(*rp);
  } else {
    runner = NewRunner(f, WorkerOpts(f));
  }
  exec::Evaluator ev(runner.get(), st->get(), !f.no_cache);
  auto r = ev.Evaluate(*req);
  if (!r.ok()) {
    std::fprintf(stderr, "kiln eval: %s\n", r.status().message().c_str());
    return 2;
  }
  if (f.json) {
    std::printf("%s\n", ResultLine(*r, *req).dump(2).c_str());
  } else {
    std::fputs(exec::FormatSummary(*r, &*req).c_str(), stdout);
  }
  return r->ok() ? 0 : 1;
}

// ---- batch ----------------------------------------------------------------------------------------

class Progress {
 public:
  Progress(size_t total, bool quiet) : total_(total), quiet_(quiet), tty_(isatty(2)) {
    start_ = std::chrono::steady_clock::now();
  }
  void Done(bool ok, bool error) {
    ++done_;
    if (error) ++errors_;
    else if (ok) ++ok_;
    else ++failed_;
    if (quiet_) return;
    size_t step = std::max<size_t>(1, total_ / 20);
    if (!tty_ && done_ % step != 0 && done_ != total_) return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    double rate = s > 0 ? done_ / s * 60 : 0;
    double eta = rate > 0 ? (total_ - done_) / rate * 60 : 0;
    const int width = 30;
    int fill = total_ ? static_cast<int>(width * done_ / total_) : width;
    std::string bar = std::string(fill, '#') + std::string(width - fill, '.');
    std::fprintf(stderr, "%s[%s] %zu/%zu  ok %zu  failed %zu  errors %zu  %.1f/min  eta %.0fs%s",
                 tty_ ? "\r" : "", bar.c_str(), done_, total_, ok_, failed_, errors_, rate, eta,
                 tty_ ? (done_ == total_ ? "\n" : "") : "\n");
    std::fflush(stderr);
  }

 private:
  size_t total_, done_ = 0, ok_ = 0, failed_ = 0, errors_ = 0;
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point start_;
};

std::string ResolveRel(const std::string& p, const fs::path& base) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  std::error_code ec;
  if (fs::exists(base / p, ec)) return (base / p).lexically_normal().string();
  return p;
}

int RunBatch(const EvalFlags& f) {
  auto text = ReadFile(f.batch);
  if (!text.ok()) {
    std::fprintf(stderr, "kiln eval: %s\n", text.status().message().c_str());
    return 2;
  }
  auto base = BaseRequest(f);
  if (!base.ok()) {
    std::fprintf(stderr, "kiln eval: %s\n", base.status().message().c_str());
    return 2;
  }
  auto st = OpenStore(f);
  if (!st.ok()) {
    std::fprintf(stderr, "kiln eval: %s\n", st.status().message().c_str());
    return 2;
  }
  // --resume: pairs (by line of the pairs file) that already have a result in --out are skipped and
  // the new results are appended; error lines and a torn last line are evaluated again.
  std::set<size_t> done_lines;
  if (f.resume) {
    if (f.out.empty() || f.out == "-") {
      std::fprintf(stderr, "kiln eval: --resume needs --out FILE (the results so far)\n");
      return 2;
    }
    if (auto prev = ReadFile(f.out); prev.ok()) {
      std::string kept;
      size_t p = 0;
      while (p < prev->size()) {
        size_t nl = prev->find('\n', p);
        if (nl == std::string::npos) break;  // a torn last line: dropped
        std::string l = prev->substr(p, nl - p);
        p = nl + 1;
        json j = json::parse(l, nullptr, false);
        if (!j.is_object() || !j.contains("result") || !j["line"].is_number_unsigned()) continue;
        done_lines.insert(j["line"].get<size_t>());
        kept += l + "\n";
      }
      if (auto w = WriteFile(f.out, kept); !w.ok()) {
        std::fprintf(stderr, "kiln eval: %s\n", w.message().c_str());
        return 2;
      }
    }
  }
  if (f.resume && !f.quiet)
    std::fprintf(stderr, "kiln eval: resuming: %zu pair(s) already have results in %s\n", done_lines.size(),
                 f.out.c_str());
  std::FILE* out = stdout;
  if (!f.out.empty() && f.out != "-") {
    out = std::fopen(f.out.c_str(), f.resume ? "a" : "w");
    if (!out) {
      std::fprintf(stderr, "kiln eval: %s: cannot write: %s\n", f.out.c_str(), std::strerror(errno));
      return 2;
    }
  }
  auto write_line = [&](const json& j) {
    std::string s = j.dump() + "\n";
    std::fwrite(s.data(), 1, s.size(), out);
    std::fflush(out);  // results survive whatever happens next
  };

  // Parse the pairs; a bad line becomes an error line, never a stop.
  fs::path dir = fs::absolute(f.batch).parent_path();
  std::vector<exec::PoolItem> items;
  std::vector<json> echo;  // what each line asked for, to echo in its result
  size_t total = 0;
  int bad = 0;
  std::vector<json> early;  // error lines written before the pool starts
  {
    size_t pos = 0, line_no = 0;
    while (pos < text->size()) {
      size_t nl = text->find('\n', pos);
      if (nl == std::string::npos) nl = text->size();
      std::string line = text->substr(pos, nl - pos);
      pos = nl + 1;
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      if (done_lines.count(line_no)) continue;  // --resume: already has a result
      size_t index = total++;
      json in = json::parse(line, nullptr, false);
      json head = {{"index", index}, {"line", line_no}};
      auto fail = [&](const std::string& msg) {
        json e = head;
        std::string m = msg;
        while (!m.empty() && m.back() == '\n') m.pop_back();
        e["error"] = m;
        early.push_back(e);
        ++bad;
      };
      if (!in.is_object() || !in.contains("task") || !in["task"].is_string()) {
        fail(fmt::format("{}:{}:1: error: expected {{\"task\": PATH, \"candidate\": PATH|null, ...}}", f.batch,
                         line_no));
        continue;
      }
      if (in.contains("id")) head["id"] = in["id"];
      head["task"] = in["task"];
      head["candidate"] = in.value("candidate", json(nullptr));
      task::LoadOptions lo;
      lo.format = in.value("format", f.format);
      lo.entry = in.value("entry", f.entry);
      lo.bench = ResolveRel(in.value("bench", f.bench), dir);
      auto sizes = ParseSizes(f.sizes);
      lo.sizes = sizes.ok() ? *sizes : json::object();
      if (in.contains("sizes") && in["sizes"].is_object()) lo.sizes.update(in["sizes"]);
      auto spec = task::LoadTask(ResolveRel(in["task"].get<std::string>(), dir), lo);
      if (!spec.ok()) {
        fail(spec.status().message());
        continue;
      }
      exec::EvalRequest req = *base;
      req.task = *spec;
      if (in.contains("mode") && in["mode"].is_string()) {
        auto m = exec::ParseMode(in["mode"]);
        if (m.ok()) req.mode = *m;
      }
      if (in.contains("policy") && in["policy"].is_string()) {
        auto p = exec::ParsePolicy(in["policy"]);
        if (p.ok()) req.policy = *p;
      }
      if (in.contains("trials") && in["trials"].is_number_integer()) req.trials = in["trials"];
      if (in.contains("protocol") && in["protocol"].is_string()) req.protocol = in["protocol"];
      if (in.contains("seed") && in["seed"].is_number_unsigned()) req.seed = in["seed"];
      if (in.contains("timeout_s") && in["timeout_s"].is_number()) req.timeout_s = in["timeout_s"];
      Status cs = Status::Ok();
      if (in.contains("source") && in["source"].is_string()) {
        req.candidate_source = in["source"].get<std::string>();
        if (req.task.format == task::Format::kTritonBenchG || req.task.format == task::Format::kTritonBenchT) {
          req.candidate_source = task::StripTritonBenchTest(*req.candidate_source);
        }
        req.candidate_name = in.value("name", std::string("candidate.py"));
      } else if (in.contains("candidate") && in["candidate"].is_string()) {
        cs = LoadCandidate(ResolveRel(in["candidate"].get<std::string>(), dir), &req);
      }
      if (cs.ok() && in.contains("baseline") && in["baseline"].is_string()) {
        cs = LoadBaseline(ResolveRel(in["baseline"].get<std::string>(), dir), &req);
      }
      if (!cs.ok()) {
        fail(cs.message());
        continue;
      }
      echo.resize(index + 1);
      echo[index] = head;
      items.push_back({index, std::move(req)});
    }
  }
  Progress progress(total, f.quiet);
  for (const auto& e : early) {
    write_line(e);
    progress.Done(false, true);
  }

  // Devices: one probe worker says how many GPUs there are; each GPU gets one measuring worker.
  exec::PoolConfig cfg;
  cfg.store = st->get();
  cfg.use_cache = !f.no_cache;
  std::vector<std::string> gpu_uuids;
  std::unique_ptr<exec::Runner> probe;
  bool interpreter = true;
  if (!f.replay.empty()) {
    cfg.measure_slots = 1;
    std::string path = f.replay;
    cfg.make_measure = [path](int) -> std::unique_ptr<exec::Runner> {
      auto rp = exec::ReplayRunner::Open(path);
      if (!rp.ok()) return nullptr;
      return std::move(*rp);
    };
    if (!exec::ReplayRunner::Open(path).ok()) {
      std::fprintf(stderr, "kiln eval: %s\n", exec::ReplayRunner::Open(path).status().message().c_str());
      return 2;
    }
  } else if (!items.empty()) {
    probe = NewRunner(f, WorkerOpts(f));
    auto h = probe->Hello();
    if (!h.ok()) {
      std::fprintf(stderr, "kiln eval: %s\n", h.status().message().c_str());
      return 2;
    }
    interpreter = h->interpreter;
    for (const auto& d : h->devices) gpu_uuids.push_back(d.uuid.empty() ? std::to_string(d.index) : d.uuid);
    if (f.gpus >= 0 && static_cast<int>(gpu_uuids.size()) > f.gpus) gpu_uuids.resize(f.gpus);
    int slots = interpreter || gpu_uuids.empty() ? std::max(1, f.workers) : static_cast<int>(gpu_uuids.size());
    cfg.measure_slots = slots;
    auto probe_ptr = std::make_shared<std::unique_ptr<exec::Runner>>(std::move(probe));
    cfg.make_measure = [&, probe_ptr, slots](int slot) -> std::unique_ptr<exec::Runner> {
      // After a check stage the timing workers run candidates that already passed in an isolated
      // child: --time-isolation (default shared: no fork + CUDA init per candidate; the worker restores
      // replaced attributes after each one and restarts after a CUDA error or leftover threads/processes).
      const bool timing_stage = cfg.check_slots > 0 && f.isolation != f.time_isolation;
      if (slot == 0 && !timing_stage && (gpu_uuids.size() <= 1 || interpreter)) return std::move(*probe_ptr);
      if (slot == 0) probe_ptr->reset();  // it sees every GPU; each slot gets a worker of its own
      exec::WorkerOptions o = WorkerOpts(f);
      if (timing_stage) o.isolation = exec::ParseIsolation(f.time_isolation).value();
      if (!interpreter && slot < static_cast<int>(gpu_uuids.size())) {
        o.cuda_visible_devices = gpu_uuids[slot];
        o.device = 0;
      }
      return NewRunner(f, o);
    };
    // Check workers (the pipeline, docs/eval.md "Batch"): K per GPU share it for correctness; timing
    // follows on the measuring workers, alone, after the last check. Not under the interpreter (there
    // --workers measuring workers run in parallel) nor with --record (transcripts keep whole exchanges).
    // Under the interpreter only an explicit --check-workers K turns it on (K workers in all; tests).
    const bool on_gpus = !interpreter && !gpu_uuids.empty();
    const int n_gpus = static_cast<int>(gpu_uuids.size());
    int check_per_gpu = f.check_workers;
    if (!on_gpus) {
      check_per_gpu = std::max(0, f.check_workers);
    } else if (check_per_gpu < 0) {
      int ncpu = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
      check_per_gpu = f.record.empty() ? std::clamp(ncpu / (2 * n_gpus), 1, 8) : 0;
    }
    cfg.check_slots = on_gpus ? check_per_gpu * n_gpus : check_per_gpu;
    cfg.make_check = [&, on_gpus](int c) -> std::unique_ptr<exec::Runner> {
      exec::WorkerOptions o = WorkerOpts(f);
      if (on_gpus) {
        o.cuda_visible_devices = gpu_uuids[c % gpu_uuids.size()];
        o.device = 0;
      }
      return NewRunner(f, o);
    };
    int compile = f.compile_workers;
    if (cfg.check_slots > 0 && compile < 0) compile = 0;  // the check workers compile everything
    if (compile < 0) {
      int ncpu = static_cast<int>(std::thread::hardware_concurrency());
      compile = interpreter || base->mode != exec::Mode::kTime
                    ? 0
                    : std::clamp(ncpu / 2 - slots, 0, 2 * static_cast<int>(gpu_uuids.size()));
    }
    cfg.compile_slots = compile;
    cfg.make_compile = [&](int c) -> std::unique_ptr<exec::Runner> {
      exec::WorkerOptions o = WorkerOpts(f);
      if (!gpu_uuids.empty() && !interpreter) {
        o.cuda_visible_devices = gpu_uuids[c % gpu_uuids.size()];
        o.device = 0;
      }
      o.isolation = exec::Isolation::kFork;
      exec::WorkerOptions plain = o;
      return std::make_unique<exec::WorkerRunner>(plain);  // compile exchanges are not recorded
    };
    if (!f.quiet) {
      std::fprintf(stderr, "kiln eval: %zu pairs on %d measuring worker(s)%s, %d check worker(s), %d compile worker(s)\n",
                   total, slots, interpreter ? " (Triton interpreter, no GPU)" : "", cfg.check_slots, compile);
    }
  }

  exec::EvalPool pool(cfg);
  int machinery_errors = 0;
  pool.Run(std::move(items), [&](const exec::PoolItem& it, const Result<exec::EvalResult>& r, int slot) {
    json line = echo[it.index];
    if (r.ok()) {
      line["result"] = ResultLine(*r, it.request);
      line["verdict"] = exec::VerdictName(r->verdict);
      if (slot >= 0 && slot < static_cast<int>(gpu_uuids.size())) line["gpu"] = gpu_uuids[slot];
    } else {
      line["error"] = r.status().message();
      ++machinery_errors;
    }
    write_line(line);
    progress.Done(r.ok() && r->ok(), !r.ok());
  });
  if (out != stdout) std::fclose(out);
  return bad + machinery_errors > 0 ? 1 : 0;
}

Command RegisterEval(CLI::App& app) {
  auto* sub = app.add_subcommand("eval", "Verified execution of a candidate against a task (docs/eval.md)");
  auto f = std::make_shared<EvalFlags>();
  sub->add_option("--task", f->task, "Task file: KernelBench, TritonBench-G/T module, or kiln module (with --entry/--bench)");
  sub->add_option("--candidate", f->candidate, "Candidate source file (omit: the task's own code)");
  sub->add_option("--baseline", f->baseline,
                  "Mode time: time the candidate against this version of the code instead of the reference "
                  "(interleaved, same process; correctness is still checked against the reference)");
  sub->add_option("--entry", f->entry, "Entry function (kiln format; overrides TritonBench's)");
  sub->add_option("--bench", f->bench, "Bench file (kiln format)");
  sub->add_option("--format", f->format, "Task format (default: detect)")
      ->check(CLI::IsMember({"auto", "kernelbench", "tritonbench_g", "tritonbench_t", "kiln"}));
  sub->add_option("--size", f->sizes, "Override a size constant of the task, NAME=VALUE (repeatable)");
  sub->add_flag("--json", f->json, "Print the result as JSON");
  sub->add_option("--mode", f->mode, "check (correctness) or time (correctness, then timing)");
  sub->add_option("--policy", f->policy, "strict (untrusted code) or trusted (your own kernel)");
  sub->add_option("--isolation", f->isolation, "shared, fork (default) or fresh");
  sub->add_option("--protocol", f->protocol, "Tolerances: kernelbench (per dtype, default) or legacy (1e-2 everywhere)")
      ->check(CLI::IsMember({"kernelbench", "legacy"}));
  sub->add_option("--seed", f->seed, "Seed of the input trials");
  sub->add_option("--trials", f->trials, "Correctness trials per case (fresh inputs each)")->check(CLI::Range(1, 1000));
  sub->add_option("--case", f->cases, "Run only these cases (repeatable)");
  sub->add_option("--timeout", f->timeout_s, "Per-evaluation limit in seconds (the runner adds a grace)")
      ->check(CLI::Range(0.1, 86400.0));
  sub->add_option("--db", f->db, "Records database (default $XDG_CACHE_HOME/kiln/kiln.db or ~/.cache/kiln/kiln.db; env KILN_DB)");
  sub->add_flag("--no-cache", f->no_cache, "Evaluate even when a cached result exists (still recorded)");
  sub->add_flag("--no-db", f->no_db, "Neither read nor write the records database");
  sub->add_option("--replay", f->replay, "Answer from a transcript recorded on a GPU instead of running a worker");
  sub->add_option("--record", f->record, "Append every worker exchange to this transcript (JSON lines)");
  sub->add_option("--python", f->python, "Python interpreter for the worker (default $KILN_PYTHON, else python3)");
  sub->add_flag("--interpret", f->interpret, "Force Triton's interpreter (CPU; no timings)");
  sub->add_option("--batch", f->batch, "JSON-lines file of {\"task\", \"candidate\", ...} pairs");
  sub->add_option("--out", f->out, "Batch results (JSON lines; default stdout)");
  sub->add_option("--compile-workers", f->compile_workers, "Batch: compile workers (default automatic; 0: none)");
  sub->add_option("--check-workers", f->check_workers,
                  "Batch on GPUs: check workers per GPU, sharing it for correctness before exclusive timing "
                  "(default min(8, cores / (2 * GPUs)); 0: no pipeline)")
      ->check(CLI::Range(0, 64));
  sub->add_option("--time-isolation", f->time_isolation,
                  "Batch with check workers: isolation of the timing stage (shared (default), fork or fresh)");
  sub->add_option("--workers", f->workers, "Batch without a GPU: parallel interpreter workers")->check(CLI::Range(1, 256));
  sub->add_option("--gpus", f->gpus, "Batch: use at most this many GPUs");
  sub->add_flag("--quiet", f->quiet, "Batch: no progress on stderr");
  sub->add_flag("--resume", f->resume,
                "Batch: keep the results already in --out (by pairs-file line), evaluate the rest, append");
  return {sub, [f]() {
            // Usage errors exit 2 (CLI11's own parse errors keep its codes).
            for (auto [flag, value, allowed] :
                 {std::tuple<const char*, std::string, std::vector<std::string>>{"--mode", f->mode, {"check", "time"}},
                  {"--policy", f->policy, {"strict", "trusted"}},
                  {"--isolation", f->isolation, {"shared", "fork", "fresh"}},
                  {"--time-isolation", f->time_isolation, {"shared", "fork", "fresh"}}}) {
              if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
                std::string list;
                for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
                std::fprintf(stderr, "kiln eval: %s %s: expected one of %s\n", flag, value.c_str(), list.c_str());
                return 2;
              }
            }
            if (f->batch.empty() == f->task.empty()) {
              std::fprintf(stderr, "kiln eval: give either --task (one evaluation) or --batch (many)\n");
              return 2;
            }
            return f->batch.empty() ? RunSingle(*f) : RunBatch(*f);
          }};
}

Registrar reg(30, RegisterEval);

}  // namespace

}  // namespace kiln::cli

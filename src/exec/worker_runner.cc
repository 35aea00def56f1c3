#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "exec/race_probe.h"
#include "exec/runner.h"

#include "common/children.h"
#include "common/file.h"
#include "common/json.h"
#include "common/json_dump.h"

namespace kiln::exec {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr size_t kTailBytes = 4096;
constexpr size_t kGarbageBytes = 8192;

std::string Tail(const std::string& s, size_t n = kTailBytes) { return s.size() <= n ? s : s.substr(s.size() - n); }

milliseconds Ms(double seconds) { return milliseconds(static_cast<int64_t>(seconds * 1000)); }

bool IsWorkerDir(const fs::path& d) {
  std::error_code ec;
  return fs::exists(d / "kiln_worker" / "__init__.py", ec) || fs::exists(d / "kiln_worker" / "__main__.py", ec);
}

// A CUDA error (illegal address, launch failure) poisons the process's context for good.
bool MentionsCudaError(const EvalResult& r) {
  auto has = [](const std::string& s) {
    return s.find("CUDA error") != std::string::npos || s.find("illegal memory access") != std::string::npos ||
           s.find("cuda_error") != std::string::npos || s.find("device-side assert") != std::string::npos;
  };
  if (has(r.message)) return true;
  for (const auto& x : r.reasons) {
    if (has(x.code) || has(x.message)) return true;
  }
  return false;
}

}  // namespace

std::string ResolvePython(const std::string& explicit_python) {
  if (!explicit_python.empty()) return explicit_python;
  if (const char* e = std::getenv("KILN_PYTHON"); e && *e) return e;
  return "python3";
}

Result<std::string> FindWorkerDir() {
  if (const char* e = std::getenv("KILN_WORKER_DIR"); e && *e) {
    if (!IsWorkerDir(e)) return NotFound(fmt::format("KILN_WORKER_DIR={} holds no kiln_worker package", e));
    return std::string(e);
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return NotFound("cannot locate the kiln executable (/proc/self/exe); set KILN_WORKER_DIR");
  fs::path dir = exe.parent_path();
  std::vector<fs::path> tried = {dir / "worker", dir / ".." / ".." / "worker", dir / ".." / "worker",
                                 dir / ".." / "share" / "kiln" / "worker"};
  std::string list;
  for (const auto& t : tried) {
    if (IsWorkerDir(t)) return fs::weakly_canonical(t, ec).string();
    list += (list.empty() ? "" : ", ") + t.lexically_normal().string();
  }
  return NotFound(fmt::format("cannot find the kiln_worker package (looked in {}); set KILN_WORKER_DIR", list));
}

WorkerRunner::WorkerRunner(WorkerOptions opts) : opts_(std::move(opts)) {
  std::random_device rd;
  nonce_ = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(getpid());
}

WorkerRunner::~WorkerRunner() { Shutdown(); }

std::string WorkerRunner::NextId() {
  // Unpredictable ids: a candidate that prints a forged response on stdout cannot match one.
  const uint64_t n = ++seq_;
  return fmt::format("{}-{:016x}", n, nonce_ ^ (n * 0x9E3779B97F4A7C15ull));
}

bool WorkerRunner::up() const {
  const pid_t pid = live_pid_.load();
  if (pid <= 0) return false;
  // /proc/<pid>/stat: "pid (comm) STATE ..."; a zombie (Z) or dead (X) process is not up.
  std::string stat;
  if (std::FILE* f = std::fopen(fmt::format("/proc/{}/stat", pid).c_str(), "r")) {
    char buf[512];
    const size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    stat.assign(buf, n);
  }
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

void WorkerRunner::Kill() {
  live_pid_ = -1;
  if (!proc_) return;
  if (proc_->running()) KillTree(proc_->pid());
  proc_->Kill(SIGKILL);
  proc_->Wait(milliseconds(3000));
  proc_.reset();
  tmp_.Remove();
}

void WorkerRunner::Shutdown() {
  live_pid_ = -1;
  if (!proc_) return;
  if (proc_->running()) {
    (void)proc_->Write(json{{"id", NextId()}, {"op", "shutdown"}}.dump() + "\n");
    proc_->CloseStdin();
    if (!proc_->Wait(milliseconds(3000))) {
      KillTree(proc_->pid());
      proc_->Kill(SIGKILL);
    }
    proc_->Wait(milliseconds(2000));
  }
  proc_.reset();
  tmp_.Remove();
}

Status WorkerRunner::EnsureStarted() {
  if (proc_ && proc_->running()) return Status::Ok();
  live_pid_ = -1;
  proc_.reset();
  tmp_.Remove();
  SpawnOptions so;
  if (opts_.command.empty()) {
    so.argv = {ResolvePython(opts_.python), "-m", "kiln_worker"};
  } else {
    so.argv = opts_.command;
  }
  std::string wdir = opts_.worker_dir;
  if (wdir.empty() && opts_.command.empty()) {
    KILN_ASSIGN_OR_RETURN(wdir, FindWorkerDir());
  }
  so.argv.push_back("--isolation");
  so.argv.push_back(IsolationName(opts_.isolation));
  if (opts_.device >= 0) {
    so.argv.push_back("--device");
    so.argv.push_back(std::to_string(opts_.device));
  }
  if (opts_.interpret) so.argv.push_back("--interpret");
  if (!wdir.empty()) {
    const char* pp = std::getenv("PYTHONPATH");
    so.env_set["PYTHONPATH"] = pp && *pp ? wdir + ":" + pp : wdir;
  }
  so.env_set["PYTHONUNBUFFERED"] = "1";
  // A temporary directory per worker process: the candidates' module files (and anything else they
  // write to $TMPDIR) go there and are removed with the process, even after a kill.
  if (auto td = TempDir::Make("kiln-worker-"); td.ok()) {
    tmp_ = std::move(*td);
    so.env_set["TMPDIR"] = tmp_.path();
  }
  if (!opts_.cuda_visible_devices.empty()) so.env_set["CUDA_VISIBLE_DEVICES"] = opts_.cuda_visible_devices;
  for (const auto& [k, v] : opts_.env) so.env_set[k] = v;
  so.stderr_keep_bytes = 64 * 1024;
  auto p = Process::Spawn(so);
  if (!p.ok()) {
    return Unavailable(fmt::format("cannot start the worker ({}): {}", so.argv[0], p.status().message()));
  }
  proc_ = std::move(*p);
  ++starts_;
  live_pid_ = proc_->pid();
  garbage_.clear();
  Exchange ex = Send(json{{"id", NextId()}, {"op", "hello"}}, opts_.startup_s);
  if (ex.kind != Exchange::Kind::kOk) {
    Kill();
    std::string why = ex.kind == Exchange::Kind::kTimeout
                          ? fmt::format("no hello within {} s", opts_.startup_s)
                          : "the worker exited before answering hello (" + ex.detail + ")";
    return Unavailable(fmt::format("worker failed to start: {}\n{}", why, Tail(ex.stderr_tail, 2000)));
  }
  auto h = HelloInfo::FromResponse(ex.response);
  if (!h.ok()) {
    Kill();
    return Unavailable(h.status().message());
  }
  if (h->protocol != kProtocolVersion) {
    Kill();
    return Unavailable(
        fmt::format("the worker speaks protocol {}, this kiln speaks {}", h->protocol, kProtocolVersion));
  }
  hello_ = std::move(*h);
  return Status::Ok();
}

WorkerRunner::Exchange WorkerRunner::Send(json req, double deadline_s) {
  Exchange ex;
  const std::string id = req.value("id", "");
  Status w = proc_->Write(DumpJson(req) + "\n");
  if (!w.ok()) {
    ex.kind = Exchange::Kind::kWriteFailed;
    ex.detail = w.message();
    ex.stderr_tail = proc_->stderr_tail();
    return ex;
  }
  auto deadline = std::chrono::steady_clock::now() + Ms(deadline_s);
  while (true) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) left = milliseconds(0);
    auto line = proc_->ReadLine(left);
    if (!line.ok()) {
      if (line.status().code() == Code::kTimeout) {
        ex.kind = Exchange::Kind::kTimeout;
        KillTree(proc_->pid());  // the worker, its fork children and their groups
        proc_->Kill(SIGKILL);
        auto e = proc_->Wait(milliseconds(3000));
        ex.detail = e ? e->Describe() : "still running after SIGKILL";
      } else {
        ex.kind = Exchange::Kind::kDied;
        auto e = proc_->Wait(milliseconds(3000));
        if (!e) {
          proc_->Kill(SIGKILL);
          e = proc_->Wait(milliseconds(2000));
          ex.detail = "closed its stdout";
        } else {
          ex.detail = e->Describe();
        }
      }
      ex.stderr_tail = proc_->stderr_tail();
      if (!garbage_.empty()) ex.stderr_tail += "\n[stray stdout]\n" + garbage_;
      return ex;
    }
    json j = ParseJson(*line);
    if (j.is_object() && j.contains("id") && j["id"].is_string() && j["id"].get<std::string>() == id) {
      ex.response = std::move(j);
      ex.stderr_tail = proc_->stderr_tail();
      return ex;
    }
    // Not ours: a candidate printing on the protocol channel, or a forged response. Keep it for
    // the record and go on reading until the deadline.
    garbage_ += Tail(*line, 1024) + "\n";
    if (garbage_.size() > kGarbageBytes) garbage_ = garbage_.substr(garbage_.size() - kGarbageBytes);
  }
}

Result<HelloInfo> WorkerRunner::Hello() {
  if (!hello_ || opts_.isolation != Isolation::kFresh) KILN_RETURN_IF_ERROR(EnsureStarted());
  return *hello_;
}

namespace {

// {"ok": false, "error_code": "task_error", "error": "..."}: the worker blames the task, not the candidate.
bool IsTaskError(const json& r) {
  auto c = r.find("error_code");
  auto e = r.find("error");
  return r.is_object() && c != r.end() && c->is_string() && *c == "task_error" && e != r.end() && e->is_string();
}

}  // namespace

const std::optional<std::string>& WorkerRunner::ProbeFor(const task::TaskSpec& t) {
  auto it = probes_.find(t.hash);
  if (it != probes_.end()) return it->second;
  std::optional<std::string> probe;
  // TritonBench modules and kiln's own format: the reference is the module's code itself (a KernelBench
  // reference is PyTorch, whose kernels kiln does not rewrite)
  if (t.format != task::Format::kKernelBench && !t.hash.empty()) {
    if (auto text = ReadFile(t.path); text.ok()) probe = ReversedProgramOrder(*text).source;
  }
  return probes_.emplace(t.hash, std::move(probe)).first->second;
}

Result<EvalResult> WorkerRunner::Evaluate(const EvalRequest& request) {
  for (int attempt = 0;; ++attempt) {
    KILN_RETURN_IF_ERROR(EnsureStarted());
    garbage_.clear();
    const std::string id = NextId();
    json req = request.ToJson(id);
    if (const std::optional<std::string>& probe = ProbeFor(request.task); probe)
      req["reference_probe"] = {{"source", *probe}};
    const double limit = request.timeout_s + opts_.grace_s;
    auto t0 = std::chrono::steady_clock::now();
    Exchange ex = Send(req, limit);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EvalResult r;
    switch (ex.kind) {
      case Exchange::Kind::kWriteFailed:
        // The worker died between requests (not this candidate's doing): restart once and retry.
        Kill();
        if (attempt == 0) continue;
        return Unavailable(fmt::format("cannot send the request to the worker: {}", ex.detail));
      case Exchange::Kind::kTimeout:
        r = EvalResult::Make(Verdict::kTimeout, "timeout",
                             fmt::format("no answer within {:.0f} s (limit {:.0f} s + grace {:.0f} s); the "
                                         "worker's process group was killed",
                                         limit, request.timeout_s, opts_.grace_s));
        r.stderr_tail = Tail(ex.stderr_tail);
        r.elapsed_s = wall;
        Kill();
        break;
      case Exchange::Kind::kDied:
        r = EvalResult::Make(Verdict::kCrash, "no_response", "the worker died without answering: " + ex.detail);
        r.stderr_tail = Tail(ex.stderr_tail);
        r.elapsed_s = wall;
        Kill();
        break;
      case Exchange::Kind::kOk: {
        if (IsTaskError(ex.response)) {
          // The task's own code failed (docs/verdicts.md "Task errors"): no verdict for the candidate. A
          // shared worker imported the task itself: replace it; a fork zygote never ran it.
          if (opts_.isolation != Isolation::kFork) Kill();
          std::string m = ex.response["error"].get<std::string>();
          if (m.rfind("task_error: ", 0) == 0) m = m.substr(12);
          return InvalidArgument("task error: " + m);
        }
        if (auto oom = EvalResult::FromInfraOom(ex.response)) {
          // No verdict yet (docs/verdicts.md, out_of_memory): the pool retries the item alone on a fresh
          // worker; this outcome stands only when that fails too. A shared worker gives its memory back.
          if (opts_.isolation != Isolation::kFork) Kill();
          r = std::move(*oom);
          r.elapsed_s = wall;
          break;
        }
        auto parsed = EvalResult::FromResponse(ex.response);
        if (!parsed.ok()) {
          Kill();
          return Internal(fmt::format("bad response from the worker: {}", parsed.status().message()));
        }
        r = std::move(*parsed);
        if (r.elapsed_s <= 0) r.elapsed_s = wall;
        if (r.stderr_tail.empty() && r.verdict != Verdict::kOk) r.stderr_tail = Tail(ex.stderr_tail);
        if (!garbage_.empty()) {
          r.warnings.push_back(MakeReason(
              "stray_stdout", "the candidate wrote to the protocol channel: " + Tail(garbage_, 200), "warning"));
        }
        // A crash, or a response that asks for it, means the process is suspect (CUDA context
        // poisoned, half-dead zygote): replace it before the next request.
        if (r.restart_worker || r.verdict == Verdict::kCrash ||
            (opts_.isolation == Isolation::kShared && (r.verdict == Verdict::kTimeout || MentionsCudaError(r)))) {
          Kill();
        }
        break;
      }
    }
    if (r.versions.empty() && hello_) r.versions = hello_->versions;
    if (r.device.empty() && hello_ && !hello_->devices.empty()) r.device = hello_->devices.front().raw;
    if (opts_.isolation == Isolation::kFresh) Shutdown();
    return r;
  }
}

Result<json> WorkerRunner::DevicePeaks(const std::vector<std::string>& dtypes) {
  KILN_RETURN_IF_ERROR(EnsureStarted());
  json req = {{"id", NextId()}, {"op", "device_peaks"}};
  if (!dtypes.empty()) req["dtypes"] = dtypes;
  Exchange ex = Send(req, 600);
  if (ex.kind != Exchange::Kind::kOk) {
    Kill();
    return Unavailable(fmt::format("device_peaks failed: {}\n{}", ex.detail, Tail(ex.stderr_tail, 2000)));
  }
  if (!ex.response.value("ok", false)) {
    return Internal(fmt::format("device_peaks: {}", ex.response.value("error", std::string("worker error"))));
  }
  return ex.response;
}

}  // namespace kiln::exec

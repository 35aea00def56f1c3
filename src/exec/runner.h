// kiln/exec: the Runner interface (the GPU boundary) and its implementations.
//
//   WorkerRunner     owns one `python3 -m kiln_worker` process (or one per request under isolation
//                    `fresh`): JSON lines over pipes, a deadline per request (limits.timeout_s + grace),
//                    kill of the whole process group, restart after a crash, a timeout, garbage or a
//                    response that asks for it (CUDA context poisoned).
//   ReplayRunner     answers from a transcript recorded on a GPU ({"request", "response"} lines).
//   RecordingRunner  wraps another runner and appends every exchange to a transcript.
//
// Roadmap: outcomes are values (Evaluate returns an EvalResult with a verdict for every candidate
// failure); an error Status means the machinery failed (no python, no worker package, protocol
// mismatch, no recorded answer). Runners are not thread-safe: use one per thread (see pool.h).
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/file.h"
#include "common/status.h"
#include "common/subprocess.h"
#include "exec/result.h"

namespace kiln::exec {

class Runner {
 public:
  virtual ~Runner() = default;
  virtual Result<HelloInfo> Hello() = 0;
  virtual Result<EvalResult> Evaluate(const EvalRequest& request) = 0;
  virtual Result<nlohmann::json> DevicePeaks(const std::vector<std::string>& dtypes) = 0;
};

struct WorkerOptions {
  std::string python;      // empty: env KILN_PYTHON, else "python3"
  std::string worker_dir;  // prepended to PYTHONPATH; empty: FindWorkerDir()
  Isolation isolation = Isolation::kFork;
  int device = -1;                         // --device N; -1: the worker's default
  std::string cuda_visible_devices;        // set CUDA_VISIBLE_DEVICES when non-empty ("" leaves it alone)
  bool interpret = false;                  // --interpret
  double grace_s = 10;                     // added to limits.timeout_s for the outer deadline
  double startup_s = 180;                  // deadline for the hello after a (re)start: importing torch is slow
  std::map<std::string, std::string> env;  // extra environment
  // Replaces `<python> -m kiln_worker` (tests use fake workers); the isolation/device flags are
  // still appended.
  std::vector<std::string> command;
};

// Resolves the python interpreter: explicit, else $KILN_PYTHON, else "python3".
std::string ResolvePython(const std::string& explicit_python);

// Finds the directory holding the kiln_worker package: $KILN_WORKER_DIR, else relative to the
// running executable (<exe dir>/worker, <exe dir>/../../worker, <exe dir>/../share/kiln/worker).
Result<std::string> FindWorkerDir();

class WorkerRunner : public Runner {
 public:
  explicit WorkerRunner(WorkerOptions opts);
  ~WorkerRunner() override;

  Result<HelloInfo> Hello() override;
  Result<EvalResult> Evaluate(const EvalRequest& request) override;
  Result<nlohmann::json> DevicePeaks(const std::vector<std::string>& dtypes) override;

  // Number of worker processes started so far (tests: restart behaviour). Thread-safe, like up().
  int starts() const { return starts_.load(); }
  // Whether a worker process is running now (started, and neither exited nor killed); a dead one is
  // replaced on the next request. Safe to call while another thread uses the runner (metrics).
  bool up() const;
  pid_t pid() const { return proc_ ? proc_->pid() : -1; }
  void Shutdown();

 private:
  Status EnsureStarted();
  // The race probe of a task's reference module (cached per task hash; nullopt when it has none).
  const std::optional<std::string>& ProbeFor(const task::TaskSpec& t);
  // Sends `req` and reads the response with the matching id; kills the worker on any failure.
  // `deadline_s` bounds the wait.
  struct Exchange {
    enum class Kind { kOk, kTimeout, kDied, kWriteFailed } kind = Kind::kOk;
    nlohmann::json response;
    std::string detail;       // exit status, etc.
    std::string stderr_tail;  // worker stderr + stray stdout lines
  };
  Exchange Send(nlohmann::json req, double deadline_s);
  void Kill();
  std::string NextId();

  WorkerOptions opts_;
  std::unique_ptr<Process> proc_;
  TempDir tmp_;  // the worker's $TMPDIR (its candidate modules), removed with the process
  std::optional<HelloInfo> hello_;
  std::atomic<int> starts_{0};
  std::atomic<pid_t> live_pid_{-1};  // proc_'s pid while kiln holds it, for up()
  uint64_t seq_ = 0;
  uint64_t nonce_;
  std::string garbage_;  // stray stdout lines seen while waiting
  // The reference's race probe (exec/race_probe.h) per task hash: nullopt when it has none.
  std::map<std::string, std::optional<std::string>> probes_;
};

class ReplayRunner : public Runner {
 public:
  static Result<std::unique_ptr<ReplayRunner>> Open(const std::string& transcript_path);
  static Result<std::unique_ptr<ReplayRunner>> FromText(const std::string& text, const std::string& name);

  Result<HelloInfo> Hello() override;
  Result<EvalResult> Evaluate(const EvalRequest& request) override;
  Result<nlohmann::json> DevicePeaks(const std::vector<std::string>& dtypes) override;

  // Key used to match a request: op, task hash (or, with by_name or when the recording has no
  // hash, the task name), candidate source hash ("hash" in hand-written transcripts), mode.
  static std::string KeyOf(const nlohmann::json& request, bool by_name = false);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    nlohmann::json request, response;
  };
  std::vector<Entry> entries_;
  std::map<std::string, std::vector<size_t>> by_key_;
  std::map<std::string, size_t> cursor_;  // repeated requests take successive recordings
  std::string name_;
};

class RecordingRunner : public Runner {
 public:
  // Appends to `path` (created when missing). `inner` must outlive this runner. A transcript that cannot
  // be written is a machinery failure: the call returns an IoError (the inner answer is not lost silently).
  RecordingRunner(Runner* inner, std::string path) : inner_(inner), path_(std::move(path)) {}
  Result<HelloInfo> Hello() override;
  Result<EvalResult> Evaluate(const EvalRequest& request) override;
  Result<nlohmann::json> DevicePeaks(const std::vector<std::string>& dtypes) override;

 private:
  Status Append(const nlohmann::json& request, const nlohmann::json& response);
  Runner* inner_;
  std::string path_;
  static std::mutex mu_;
};

}  // namespace kiln::exec

// kiln/common: child processes with pipes, timeouts and process-group kill.
//
// Every untrusted thing kiln runs (the Python worker, ncu) runs in a child process in its own
// process group, so a timeout or crash kills the whole tree and never the kiln process itself. Every
// child also dies with kiln (PR_SET_PDEATHSIG SIGKILL, `kill -9` of kiln included): children are forked
// from one thread that lives as long as kiln (the death signal follows the forking thread, not the process).
//
// Roadmap: Process is the low-level handle (line-oriented reads with deadlines, stderr drained in
// the background of every read so a chatty child never blocks); RunCommand is the run-to-completion
// convenience. The Spawner interface lets tests substitute a fake.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace kiln {

struct SpawnOptions {
  std::vector<std::string> argv;               // argv[0] is looked up on PATH
  std::map<std::string, std::string> env_set;  // added to / overriding the inherited environment
  std::vector<std::string> env_unset;
  std::string cwd;                // empty: inherit
  bool new_process_group = true;  // child leads its own group (killed as a whole)
  bool pipe_stdin = true;
  bool pipe_stdout = true;
  enum class Stderr { kPipe, kInherit, kDiscard } stderr_mode = Stderr::kPipe;
  size_t stderr_keep_bytes = 64 * 1024;  // tail of stderr kept in memory
};

struct ExitInfo {
  bool exited = false;  // normal exit (code valid)
  int code = -1;
  int signal = 0;                // terminating signal, when !exited
  std::string Describe() const;  // "exit code 3", "killed by signal 9 (Killed)"
};

class Process {
 public:
  static Result<std::unique_ptr<Process>> Spawn(const SpawnOptions& opts);
  ~Process();  // kills the process group if still running, reaps the child
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Writes all of `data` to the child's stdin. Fails if the child closed it.
  Status Write(std::string_view data);
  void CloseStdin();
  // Reads one line from stdout (without the newline). Errors: kTimeout when the deadline passes,
  // kIo at end of file (the child closed stdout or died).
  Result<std::string> ReadLine(std::chrono::milliseconds timeout);
  // Everything left on stdout until EOF or the deadline.
  Result<std::string> ReadAll(std::chrono::milliseconds timeout);
  // Sends `sig` to the whole process group (or the child alone when it has no group).
  void Kill(int sig = 9);
  // Non-blocking poll; returns the exit status once the child has exited.
  std::optional<ExitInfo> TryWait();
  // Waits up to `timeout` for exit.
  std::optional<ExitInfo> Wait(std::chrono::milliseconds timeout);
  bool running();
  // Last stderr_keep_bytes of the child's stderr seen so far (when piped).
  std::string stderr_tail();

 private:
  Process() = default;
  // Pumps stdout/stderr into buffers until a line is available, EOF, or the deadline.
  enum class Pump { kData, kEof, kTimeout };
  Pump PumpOnce(std::chrono::steady_clock::time_point deadline);
  void DrainStderr();

  pid_t pid_ = -1;
  bool group_ = true;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  std::string out_buf_;
  std::string err_buf_;
  size_t err_keep_ = 64 * 1024;
  bool out_eof_ = false;
  std::optional<ExitInfo> exit_;
};

struct RunResult {
  ExitInfo exit;
  std::string out;
  std::string err;
  bool timed_out = false;
  double seconds = 0;
};

// Runs to completion (or kills at `timeout`), feeding `input` on stdin and capturing both streams.
// Fails only when the process cannot be started (e.g. program not found).
Result<RunResult> RunCommand(SpawnOptions opts, std::chrono::milliseconds timeout, std::string_view input = {});

// Finds `program` on PATH (or returns it when it contains a '/'); nullopt when not found.
std::optional<std::string> FindProgram(const std::string& program);

}  // namespace kiln

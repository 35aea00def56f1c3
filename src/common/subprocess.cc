#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/prctl.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/children.h"

extern char** environ;

namespace kiln {

std::string ExitInfo::Describe() const {
  if (exited) return fmt::format("exit code {}", code);
  if (signal) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  return "still running";
}

std::optional<std::string> FindProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return program;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string cand = dir + "/" + program;
    struct stat st;
    if (stat(cand.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(cand.c_str(), X_OK) == 0) return cand;
    start = end + 1;
  }
  return std::nullopt;
}

namespace {

void SetCloexecNonblock(int fd, bool nonblock) {
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  if (nonblock) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Every child is forked from this one thread. Children ask for PR_SET_PDEATHSIG (SIGKILL when kiln dies,
// kill -9 included), which fires when the *thread* that forked them ends, not the process: forked from a
// short-lived thread (EvalPool starts workers from such threads) a child would die with that thread. This
// thread lives as long as kiln (leaked on purpose: it must outlive static destruction at exit).
class ForkThread {
 public:
  static ForkThread& Get() {
    static ForkThread* t = new ForkThread();
    return *t;
  }
  // Runs `fn` on the fork thread and waits for it (one job at a time).
  void Run(const std::function<void()>& fn) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return !busy_; });
    busy_ = true;
    job_ = &fn;
    const uint64_t mine = ++submitted_;
    cv_.notify_all();
    cv_.wait(l, [&] { return finished_ >= mine; });
    busy_ = false;
    cv_.notify_all();
  }

 private:
  ForkThread() {
    std::thread([this] { Loop(); }).detach();
  }
  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      cv_.wait(l, [&] { return job_ != nullptr; });
      const std::function<void()>* job = job_;
      job_ = nullptr;
      l.unlock();
      (*job)();
      l.lock();
      ++finished_;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void()>* job_ = nullptr;
  bool busy_ = false;
  uint64_t submitted_ = 0, finished_ = 0;
};

// The forked child up to execve (only async-signal-safe calls: other threads may hold locks). Never returns.
[[noreturn]] void ChildAfterFork(const SpawnOptions& opts, const std::string& prog, const int in_pipe[2],
                                 const int out_pipe[2], const int err_pipe[2], int exec_err_w, char** argv,
                                 char** envp) {
  if (opts.new_process_group) setpgid(0, 0);
  // Default signal dispositions for the child.
  signal(SIGPIPE, SIG_DFL);
  // dup2 gives the target a descriptor without close-on-exec; when the pipe end already is the
  // target, clear the flag instead.
  auto move_fd = [](int fd, int target) {
    if (fd == target)
      fcntl(target, F_SETFD, 0);
    else
      dup2(fd, target);
  };
  if (in_pipe[0] >= 0)
    move_fd(in_pipe[0], 0);
  else {
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0) dup2(nul, 0);
  }
  if (out_pipe[1] >= 0) move_fd(out_pipe[1], 1);
  if (err_pipe[1] >= 0)
    move_fd(err_pipe[1], 2);
  else if (opts.stderr_mode == SpawnOptions::Stderr::kDiscard) {
    int nul = open("/dev/null", O_WRONLY);
    if (nul >= 0) dup2(nul, 2);
  }
  for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
    if (fd > 2) close(fd);
  }
  if (!opts.cwd.empty() && chdir(opts.cwd.c_str()) != 0) {
    int e = errno;
    (void)!write(exec_err_w, &e, sizeof e);
    _exit(127);
  }
  execve(prog.c_str(), argv, envp);
  int e = errno;
  (void)!write(exec_err_w, &e, sizeof e);
  _exit(127);
}

}  // namespace

Result<std::unique_ptr<Process>> Process::Spawn(const SpawnOptions& opts) {
  if (opts.argv.empty()) return InvalidArgument("empty command line");
  auto prog = FindProgram(opts.argv[0]);
  if (!prog) return NotFound(fmt::format("{}: program not found", opts.argv[0]));

  // Prepare everything before fork: only async-signal-safe calls in the child.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string s(*e);
    std::string key = s.substr(0, s.find('='));
    if (opts.env_set.count(key)) continue;
    bool drop = false;
    for (const auto& u : opts.env_unset) drop |= (u == key);
    if (!drop) env_strings.push_back(std::move(s));
  }
  for (const auto& [k, v] : opts.env_set) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = opts.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  auto close_all = [&]() {
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  // Close-on-exec from the start: other threads may spawn at the same time, and a child must never
  // inherit another child's pipe ends (a dead worker would then not show as end-of-file).
  if ((opts.pipe_stdin && pipe2(in_pipe, O_CLOEXEC) != 0) || (opts.pipe_stdout && pipe2(out_pipe, O_CLOEXEC) != 0) ||
      (opts.stderr_mode == SpawnOptions::Stderr::kPipe && pipe2(err_pipe, O_CLOEXEC) != 0)) {
    close_all();
    return IoError(fmt::format("pipe: {}", std::strerror(errno)));
  }
  int exec_err[2];
  if (pipe2(exec_err, O_CLOEXEC) != 0) {
    close_all();
    return IoError(fmt::format("pipe: {}", std::strerror(errno)));
  }

  const pid_t parent = getpid();
  pid_t pid = -1;
  int fork_errno = 0;
  ForkThread::Get().Run([&] {
    pid = fork();
    fork_errno = errno;
    if (pid != 0) return;
    // The child: dies with kiln (see ForkThread); kiln may already be gone by now.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    ChildAfterFork(opts, *prog, in_pipe, out_pipe, err_pipe, exec_err[1], argv.data(), envp.data());
  });
  errno = fork_errno;
  if (pid < 0) {
    close_all();
    close(exec_err[0]);
    close(exec_err[1]);
    return IoError(fmt::format("fork: {}", std::strerror(errno)));
  }
  if (opts.new_process_group) setpgid(pid, pid);  // avoid the race with the child's own setpgid
  RegisterChild(pid);                             // killed with its tree if kiln is interrupted (common/children.h)
  close(exec_err[1]);
  int child_errno = 0;
  ssize_t n = read(exec_err[0], &child_errno, sizeof child_errno);
  close(exec_err[0]);
  std::unique_ptr<Process> p(new Process());
  p->pid_ = pid;
  p->group_ = opts.new_process_group;
  p->err_keep_ = opts.stderr_keep_bytes;
  if (in_pipe[0] >= 0) close(in_pipe[0]);
  if (out_pipe[1] >= 0) close(out_pipe[1]);
  if (err_pipe[1] >= 0) close(err_pipe[1]);
  p->in_fd_ = in_pipe[1];
  p->out_fd_ = out_pipe[0];
  p->err_fd_ = err_pipe[0];
  if (p->in_fd_ >= 0) SetCloexecNonblock(p->in_fd_, false);
  if (p->out_fd_ >= 0) SetCloexecNonblock(p->out_fd_, true);
  if (p->err_fd_ >= 0) SetCloexecNonblock(p->err_fd_, true);
  if (p->out_fd_ < 0) p->out_eof_ = true;
  if (n == sizeof child_errno) {
    p->Wait(std::chrono::milliseconds(1000));
    return NotFound(fmt::format("{}: cannot execute: {}", opts.argv[0], std::strerror(child_errno)));
  }
  return p;
}

Process::~Process() {
  if (pid_ > 0 && !exit_) {
    Kill(SIGKILL);
    Wait(std::chrono::milliseconds(2000));
  }
  for (int fd : {in_fd_, out_fd_, err_fd_}) {
    if (fd >= 0) close(fd);
  }
}

Status Process::Write(std::string_view data) {
  if (in_fd_ < 0) return IoError("child stdin is closed");
  // Ignore SIGPIPE for this process; a dead child shows as EPIPE.
  static bool ignored = [] {
    signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)ignored;
  while (!data.empty()) {
    ssize_t n = write(in_fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError(fmt::format("write to child: {}", std::strerror(errno)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

void Process::CloseStdin() {
  if (in_fd_ >= 0) close(in_fd_);
  in_fd_ = -1;
}

void Process::DrainStderr() {
  if (err_fd_ < 0) return;
  char buf[8192];
  while (true) {
    ssize_t n = read(err_fd_, buf, sizeof buf);
    if (n > 0) {
      err_buf_.append(buf, static_cast<size_t>(n));
      if (err_buf_.size() > 2 * err_keep_) err_buf_.erase(0, err_buf_.size() - err_keep_);
      continue;
    }
    if (n == 0) {
      close(err_fd_);
      err_fd_ = -1;
    }
    break;
  }
}

Process::Pump Process::PumpOnce(std::chrono::steady_clock::time_point deadline) {
  auto now = std::chrono::steady_clock::now();
  if (now >= deadline) return Pump::kTimeout;
  int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
  pollfd fds[2];
  int nfds = 0;
  if (out_fd_ >= 0 && !out_eof_) fds[nfds++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[nfds++] = {err_fd_, POLLIN, 0};
  if (nfds == 0) return Pump::kEof;
  int r = poll(fds, nfds, std::max(ms, 1));
  if (r < 0) return errno == EINTR ? Pump::kData : Pump::kEof;
  if (r == 0) return Pump::kTimeout;
  DrainStderr();
  if (out_fd_ >= 0 && !out_eof_) {
    char buf[65536];
    while (true) {
      ssize_t n = read(out_fd_, buf, sizeof buf);
      if (n > 0) {
        out_buf_.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) out_eof_ = true;
      break;
    }
  }
  return Pump::kData;
}

Result<std::string> Process::ReadLine(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    size_t nl = out_buf_.find('\n');
    if (nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return line;
    }
    if (out_eof_) {
      DrainStderr();
      return IoError("end of output");
    }
    if (PumpOnce(deadline) == Pump::kTimeout) return Timeout("no output before the deadline");
  }
}

Result<std::string> Process::ReadAll(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!out_eof_ || err_fd_ >= 0) {
    Pump p = PumpOnce(deadline);
    if (p == Pump::kTimeout) return Timeout("output not finished before the deadline");
    if (p == Pump::kEof) break;
  }
  std::string out = std::move(out_buf_);
  out_buf_.clear();
  return out;
}

void Process::Kill(int sig) {
  if (pid_ <= 0 || exit_) return;
  if (group_) ::kill(-pid_, sig);
  ::kill(pid_, sig);
}

std::optional<ExitInfo> Process::TryWait() {
  if (exit_) return exit_;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) {
    ExitInfo e;
    if (WIFEXITED(st)) {
      e.exited = true;
      e.code = WEXITSTATUS(st);
    } else if (WIFSIGNALED(st)) {
      e.signal = WTERMSIG(st);
    }
    exit_ = e;
    UnregisterChild(pid_);
    // Reap what is left of the group (grandchildren) so nothing outlives a killed worker.
    if (group_) ::kill(-pid_, SIGKILL);
  }
  return exit_;
}

std::optional<ExitInfo> Process::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto e = TryWait()) return e;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    DrainStderr();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool Process::running() { return !TryWait().has_value(); }

std::string Process::stderr_tail() {
  DrainStderr();
  if (err_buf_.size() > err_keep_) return err_buf_.substr(err_buf_.size() - err_keep_);
  return err_buf_;
}

Result<RunResult> RunCommand(SpawnOptions opts, std::chrono::milliseconds timeout, std::string_view input) {
  opts.pipe_stdin = !input.empty();
  opts.pipe_stdout = true;
  opts.stderr_mode = SpawnOptions::Stderr::kPipe;
  if (opts.stderr_keep_bytes < (1u << 22)) opts.stderr_keep_bytes = 1u << 22;
  auto start = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Process> p, Process::Spawn(opts));
  RunResult r;
  if (!input.empty()) {
    (void)p->Write(input);
    p->CloseStdin();
  }
  auto out = p->ReadAll(timeout);
  if (!out.ok()) {
    r.timed_out = true;
    p->Kill(SIGKILL);
  } else {
    r.out = std::move(*out);
  }
  auto remaining =
      timeout - std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  auto e = p->Wait(std::max(remaining, std::chrono::milliseconds(r.timed_out ? 2000 : 1)));
  if (!e) {
    r.timed_out = true;
    p->Kill(SIGKILL);
    e = p->Wait(std::chrono::milliseconds(2000));
  }
  if (e) r.exit = *e;
  r.err = p->stderr_tail();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kiln

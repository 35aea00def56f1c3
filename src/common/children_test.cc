#include "common/children.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace kiln {
namespace {

// Alive: /proc/<pid> exists and is not a zombie (an orphan's zombie may wait for a busy init to reap it).
bool Alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return false;
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

bool GoneWithin(pid_t pid, std::chrono::milliseconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    waitpid(pid, nullptr, WNOHANG);  // reaps it when it is ours
    if (!Alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

pid_t ReadPid(int fd) {
  pid_t pid = 0;
  size_t got = 0;
  while (got < sizeof pid) {
    ssize_t r = read(fd, reinterpret_cast<char*>(&pid) + got, sizeof pid - got);
    if (r <= 0) return -1;
    got += static_cast<size_t>(r);
  }
  return pid;
}

// Forks `sleep 30` leading a process group of its own (as Process::Spawn makes every child); with
// `grandchild_fd`, that child first forks a grandchild `sleep 30` in yet another process group (as the
// fork zygote does for each candidate) and writes the grandchild's pid there.
pid_t SpawnSleeper(int grandchild_fd = -1) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setpgid(0, 0);
  if (grandchild_fd >= 0) {
    pid_t g = fork();
    if (g == 0) {
      setpgid(0, 0);
      execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
      _exit(127);
    }
    setpgid(g, g);  // as well as in the grandchild: its group is set before its pid is reported
    (void)!write(grandchild_fd, &g, sizeof g);
    close(grandchild_fd);
  }
  execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
  _exit(127);
}

TEST(KillTree, KillsTheChildAndADescendantInAnotherProcessGroup) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = SpawnSleeper(fds[1]);
  close(fds[1]);
  pid_t grandchild = ReadPid(fds[0]);
  close(fds[0]);
  ASSERT_GT(grandchild, 0);
  ASSERT_NE(getpgid(grandchild), getpgid(child));              // a group kill of the child alone would miss it
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the child has exec'd sleep
  ASSERT_TRUE(Alive(child) && Alive(grandchild));
  KillTree(child);
  EXPECT_TRUE(GoneWithin(child, std::chrono::seconds(5)));
  EXPECT_TRUE(GoneWithin(grandchild, std::chrono::seconds(5)));
  if (Alive(grandchild)) kill(grandchild, SIGKILL);
}

TEST(KillTree, OrdersFromTheRootDownWhateverThePids) {
  // pids wrapped around: the root's descendants have lower pids than it, and /proc lists them first
  const ProcLink procs[] = {{50, 100, 100}, {100, 700, 100}, {300, 500, 300}, {500, 1, 500},
                            {700, 500, 700}, {999, 1, 999}, {60, 999, 999}};
  int order[7];
  const int n = TopDownOrder(procs, 7, 500, order);
  std::vector<pid_t> pids;
  for (int k = 0; k < n; ++k) pids.push_back(procs[order[k]].pid);
  EXPECT_EQ(pids, (std::vector<pid_t>{500, 300, 700, 100, 50}));  // unrelated 999 and its child left alone
}

TEST(KillTree, OrdersTheDescendantsOfARootAlreadyGone) {
  const ProcLink procs[] = {{80, 90, 80}, {90, 40, 90}};  // 40 exited: its child 90 is still listed under it
  int order[2];
  ASSERT_EQ(TopDownOrder(procs, 2, 40, order), 2);
  EXPECT_EQ(procs[order[0]].pid, 90);
  EXPECT_EQ(procs[order[1]].pid, 80);
}

// A parent that watches its child (as a batch child watches its workers) never sees it die when its tree is
// killed: the parent is stopped before anything below it is killed.
TEST(KillTree, AParentNeverSeesItsChildDie) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t parent = fork();
  if (parent == 0) {
    close(fds[0]);
    setpgid(0, 0);
    pid_t w = fork();
    if (w == 0) {
      setpgid(0, 0);
      execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
      _exit(127);
    }
    char ready = 'r';
    (void)!write(fds[1], &ready, 1);
    waitpid(w, nullptr, 0);
    char seen = 'X';  // the child died while this process still ran
    (void)!write(fds[1], &seen, 1);
    _exit(0);
  }
  close(fds[1]);
  char c = 0;
  ASSERT_EQ(read(fds[0], &c, 1), 1);
  ASSERT_EQ(c, 'r');
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  KillTree(parent);
  EXPECT_TRUE(GoneWithin(parent, std::chrono::seconds(5)));
  EXPECT_EQ(read(fds[0], &c, 1), 0) << "the parent saw its child die: " << c;
  close(fds[0]);
}

TEST(KillTree, IgnoresNonPositivePids) {
  // kill(-0) / kill(-(-1)) would hit our own group or every process we may signal.
  KillTree(0);
  KillTree(-1);
  SUCCEED();
}

// In a forked copy of the test (the registry and the handlers are process-wide): registers a sleeper
// (unregistering it again with `unregister`), installs the cleanup, raises `sig`. Returns the copy's wait
// status and the sleeper's pid.
std::pair<int, pid_t> RaiseWithRegisteredChild(int sig, bool unregister) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, -1};
  pid_t copy = fork();
  if (copy == 0) {
    close(fds[0]);
    pid_t sleeper = SpawnSleeper();
    RegisterChild(sleeper);
    if (unregister) UnregisterChild(sleeper);
    InstallChildCleanupOnSignal();
    (void)!write(fds[1], &sleeper, sizeof sleeper);
    close(fds[1]);
    raise(sig);
    _exit(0);  // not reached: the handler exits 128 + sig
  }
  close(fds[1]);
  pid_t sleeper = ReadPid(fds[0]);
  close(fds[0]);
  int status = 0;
  waitpid(copy, &status, 0);
  return {status, sleeper};
}

TEST(ChildCleanup, SignalKillsRegisteredChildrenAndExits128PlusSignal) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    auto [status, sleeper] = RaiseWithRegisteredChild(sig, false);
    ASSERT_GT(sleeper, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "signal " << sig;
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    EXPECT_TRUE(GoneWithin(sleeper, std::chrono::seconds(5))) << "signal " << sig;
    if (Alive(sleeper)) kill(sleeper, SIGKILL);
  }
}

TEST(ChildCleanup, UnregisteredChildIsLeftAlone) {
  auto [status, sleeper] = RaiseWithRegisteredChild(SIGTERM, true);
  ASSERT_GT(sleeper, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_TRUE(Alive(sleeper));
  kill(sleeper, SIGKILL);
  EXPECT_TRUE(GoneWithin(sleeper, std::chrono::seconds(5)));
}

// A thread waiting for a registered child that the handler kills must find Interrupted() already true
// when it sees the child die (kiln eval --batch then writes no false crash line for it). The handler exits
// the process, so a copy may end before its thread reports: a few copies, at least one report.
TEST(ChildCleanup, InterruptedIsSetBeforeTheFirstKill) {
  int reported = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t copy = fork();
    if (copy == 0) {
      close(fds[0]);
      pid_t watched = SpawnSleeper();
      RegisterChild(watched);
      for (int i = 0; i < 20; ++i) RegisterChild(SpawnSleeper());  // more to kill after the watched one
      InstallChildCleanupOnSignal();
      const char before = Interrupted() ? 'T' : 'F';
      std::thread([&] {
        int st = 0;
        waitpid(watched, &st, 0);
        const char report[2] = {before, Interrupted() ? '1' : '0'};
        (void)!write(fds[1], report, 2);
      }).detach();
      raise(SIGINT);
      _exit(0);  // not reached
    }
    close(fds[1]);
    char buf[2] = {0, 0};
    ssize_t n = read(fds[0], buf, 2);
    close(fds[0]);
    int status = 0;
    waitpid(copy, &status, 0);
    if (n != 2) continue;
    ++reported;
    EXPECT_EQ(buf[0], 'F');  // not set before the signal
    EXPECT_EQ(buf[1], '1');  // set when the child died of it
  }
  EXPECT_GT(reported, 0);
}

}  // namespace
}  // namespace kiln

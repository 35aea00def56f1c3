#include "common/children.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace kiln {
namespace {

// Live children, for the signal handler (async-signal-safe: a fixed array of atomics).
constexpr int kMaxChildren = 1024;
std::atomic<pid_t> g_children[kMaxChildren];

// Every descendant of `root` and its process group, found through /proc with raw system calls only
// (no allocation: usable from a signal handler). The fork zygote puts each candidate child in a process
// group of its own, so killing the worker's group alone would orphan a running candidate.
constexpr int kMaxProcs = 32768;
ProcLink g_procs[kMaxProcs];
int g_order[kMaxProcs];
std::atomic<bool> g_procs_busy{false};

int ParseInt(const char*& p) {
  while (*p == ' ') ++p;
  int sign = 1;
  if (*p == '-') {
    sign = -1;
    ++p;
  }
  int v = 0;
  while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
  return sign * v;
}

int ScanProcs() {
  int n = 0;
  int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  alignas(8) char buf[8192];
  while (true) {
    long got = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + off);
      off += d->d_reclen;
      const char* name = d->d_name;
      if (*name < '0' || *name > '9') continue;
      char path[64] = "/proc/";
      size_t len = 6;
      for (const char* c = name; *c && len < 50; ++c) path[len++] = *c;
      const char* tail = "/stat";
      for (const char* c = tail; *c; ++c) path[len++] = *c;
      path[len] = 0;
      int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char st[512];
      ssize_t r = ::read(fd, st, sizeof st - 1);
      ::close(fd);
      if (r <= 0) continue;
      st[r] = 0;
      const char* close_paren = nullptr;
      for (const char* c = st; *c; ++c) {
        if (*c == ')') close_paren = c;
      }
      if (!close_paren || n >= kMaxProcs) continue;
      const char* q = st;
      pid_t pid = ParseInt(q);
      q = close_paren + 1;
      while (*q == ' ') ++q;
      if (*q) ++q;  // state
      pid_t ppid = ParseInt(q);
      pid_t pgid = ParseInt(q);
      g_procs[n++] = {pid, ppid, pgid};
    }
  }
  ::close(dir);
  return n;
}

std::atomic<const char*> g_interrupt_note{nullptr};
std::atomic<bool> g_interrupted{false};

void KillChildrenAndExit(int sig) {
  g_interrupted.store(true);  // before the first kill (Interrupted())
  for (auto& slot : g_children) {
    pid_t p = slot.load();
    if (p > 0) KillTree(p);
  }
  if (const char* note = g_interrupt_note.load()) (void)!::write(2, note, std::strlen(note));
  _exit(128 + sig);
}

}  // namespace

void RegisterChild(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return;
  }
}

void UnregisterChild(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

int TopDownOrder(const ProcLink* procs, int n, pid_t root, int* order) {
  int cnt = 0;
  for (int i = 0; i < n; ++i) {
    if (procs[i].pid == root) order[cnt++] = i;
  }
  // Parents in breadth-first order: the root itself (listed or not), then each process queued.
  for (int head = (cnt > 0 ? 0 : -1); head < cnt; ++head) {
    const pid_t parent = head < 0 ? root : procs[order[head]].pid;
    for (int j = 0; j < n; ++j) {
      if (procs[j].ppid != parent || procs[j].pid == root) continue;
      bool seen = false;  // a pid listed twice (reused while /proc was read) is queued once
      for (int k = 0; k < cnt && !seen; ++k) seen = procs[order[k]].pid == procs[j].pid;
      if (!seen) order[cnt++] = j;
    }
  }
  return cnt;
}

namespace {

// Sends `sig` to each process of the order and to its process group (not ours, not init's).
void SignalInOrder(int cnt, int sig, pid_t self_group) {
  for (int k = 0; k < cnt; ++k) {
    const ProcLink& p = g_procs[g_order[k]];
    if (p.pgid > 1 && p.pgid != self_group) ::kill(-p.pgid, sig);
    ::kill(p.pid, sig);
  }
}

}  // namespace

void KillTree(pid_t root) {
  if (root <= 0) return;
  ::kill(root, SIGSTOP);  // first: the root sees nothing below it die
  const pid_t self_group = ::getpgrp();
  bool expected = false;
  // One scan at a time (the tables are static); a concurrent caller falls back to the group kill.
  if (g_procs_busy.compare_exchange_strong(expected, true)) {
    int cnt = 0;
    // Stop level by level; a process that forked between a scan and its stop shows up in the next scan.
    for (int pass = 0; pass < 8; ++pass) {
      const int before = cnt;
      cnt = TopDownOrder(g_procs, ScanProcs(), root, g_order);
      SignalInOrder(cnt, SIGSTOP, self_group);
      if (pass > 0 && cnt <= before) break;
    }
    SignalInOrder(cnt, SIGKILL, self_group);
    g_procs_busy.store(false);
  }
  ::kill(root, SIGKILL);
  if (root != self_group) ::kill(-root, SIGKILL);
}

void InstallChildCleanupOnSignal() {
  struct sigaction sa = {};
  sa.sa_handler = KillChildrenAndExit;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

void SetInterruptNote(const char* text) { g_interrupt_note.store(text); }
void ClearInterruptNote() { g_interrupt_note.store(nullptr); }
bool Interrupted() { return g_interrupted.load(); }

}  // namespace kiln

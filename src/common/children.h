// kiln/common: every child process kiln starts, and what happens to them when kiln is interrupted.
//
// Process::Spawn registers each child; reaping it unregisters it. InstallChildCleanupOnSignal() makes
// SIGINT, SIGTERM and SIGHUP kill the whole tree of every live child (the worker, the fork zygote's
// candidates in their own process groups, ncu and the program it profiles) and exit 128 + signal:
// children lead process groups of their own, so a Ctrl-C at the terminal does not reach them, and an
// interrupted kiln must leave nothing running on the GPU.
#pragma once

#include <sys/types.h>

namespace kiln {

void RegisterChild(pid_t pid);
void UnregisterChild(pid_t pid);

// Kills `root`, every descendant of it and their process groups from the root down (found through /proc with
// raw system calls only, no allocation: usable from a signal handler): `root` is stopped first (SIGSTOP), then
// each level of its descendants, top-down, until a scan finds no new one; then all are SIGKILLed root first. So
// no process of the tree runs while one below it dies (a `kiln eval --batch` child never sees its workers die,
// to record them as crashes, before it is killed itself).
void KillTree(pid_t root);

// A process as /proc/<pid>/stat describes it.
struct ProcLink {
  pid_t pid, ppid, pgid;
};

// KillTree's order: the indices into procs[0, n) of `root` (when listed) and its descendants, the root first,
// then its children, their children, ... (breadth first, whatever the pids' order); writes them to `order`
// (room for n) and returns their number. No allocation.
int TopDownOrder(const ProcLink* procs, int n, pid_t root, int* order);

// Installs the SIGINT/SIGTERM/SIGHUP handlers described above (every kiln command, from main).
void InstallChildCleanupOnSignal();

// A note the handlers write to stderr before exiting (e.g. how to resume a batch); `text` must outlive it
// (until ClearInterruptNote).
void SetInterruptNote(const char* text);
void ClearInterruptNote();

// True once a handler above has begun: set before any child is killed, so a thread that sees its child die
// of the interruption sees this too (a batch must not record the killed candidates as crashes).
bool Interrupted();

}  // namespace kiln

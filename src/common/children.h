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

// SIGKILLs every descendant of `root` and their process groups (found through /proc with raw system
// calls only, no allocation: usable from a signal handler), then `root`'s own group.
void KillTree(pid_t root);

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

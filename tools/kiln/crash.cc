// Crash reporter: a fatal signal in the kiln process (a bug in kiln itself: candidates never run here)
// prints the signal, the load address of the executable and a raw backtrace to stderr, so a crash seen
// on another machine can be symbolized with `addr2line -e kiln -f -C <address - base>`.
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace {

uintptr_t g_base = 0;

int FirstObject(struct dl_phdr_info* info, size_t, void* data) {
  *static_cast<uintptr_t*>(data) = info->dlpi_addr;  // the first entry is the executable
  return 1;
}

void WriteStr(const char* s) {
  ssize_t r = write(STDERR_FILENO, s, std::strlen(s));
  (void)r;
}

void WriteHex(uintptr_t v) {
  char buf[2 + 16 + 1];
  int n = 0;
  buf[n++] = '0';
  buf[n++] = 'x';
  bool started = false;
  for (int shift = 60; shift >= 0; shift -= 4) {
    int d = static_cast<int>((v >> shift) & 0xF);
    if (d || started || shift == 0) {
      buf[n++] = "0123456789abcdef"[d];
      started = true;
    }
  }
  buf[n] = 0;
  WriteStr(buf);
}

void OnFatal(int sig) {
  WriteStr("kiln: internal error: fatal signal ");
  WriteStr(sig == SIGSEGV   ? "SIGSEGV"
           : sig == SIGABRT ? "SIGABRT"
           : sig == SIGBUS  ? "SIGBUS"
           : sig == SIGFPE  ? "SIGFPE"
           : sig == SIGILL  ? "SIGILL"
                            : "?");
  WriteStr(" (a bug in kiln; please report it with the lines below)\nkiln: executable base ");
  WriteHex(g_base);
  WriteStr("\nkiln: backtrace (addresses; subtract the base for addr2line):\n");
  void* frames[64];
  int n = backtrace(frames, 64);
  for (int i = 0; i < n; ++i) {
    WriteStr("  #");
    char idx[4] = {static_cast<char>('0' + i / 10), static_cast<char>('0' + i % 10), ' ', 0};
    WriteStr(idx);
    WriteHex(reinterpret_cast<uintptr_t>(frames[i]));
    WriteStr(" (+");
    WriteHex(reinterpret_cast<uintptr_t>(frames[i]) - g_base);
    WriteStr(")\n");
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

namespace kiln::cli {

void InstallCrashReporter() {
  dl_iterate_phdr(FirstObject, &g_base);
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  static char stack[1 << 16];
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = sizeof(stack);
  sigaltstack(&ss, nullptr);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction sa {};
    sa.sa_handler = OnFatal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace kiln::cli

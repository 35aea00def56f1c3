#include "common/subprocess.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

namespace kiln {
namespace {

using std::chrono::milliseconds;

TEST(Subprocess, RunCapturesOutputAndExitCode) {
  SpawnOptions o;
  o.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"};
  auto r = RunCommand(o, milliseconds(5000));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_TRUE(r->exit.exited);
  EXPECT_EQ(r->exit.code, 3);
  EXPECT_FALSE(r->timed_out);
}

TEST(Subprocess, TimeoutKillsWholeGroup) {
  SpawnOptions o;
  // The grandchild would outlive a kill of the child alone.
  o.argv = {"sh", "-c", "sleep 30 & sleep 30; echo never"};
  auto r = RunCommand(o, milliseconds(300));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->exit.exited);
  EXPECT_EQ(r->exit.signal, SIGKILL);
  EXPECT_LT(r->seconds, 5.0);
}

TEST(Subprocess, MissingProgramIsAnError) {
  SpawnOptions o;
  o.argv = {"kiln-no-such-program-xyz"};
  auto r = RunCommand(o, milliseconds(1000));
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
}

TEST(Subprocess, LineProtocolWithDeadline) {
  SpawnOptions o;
  o.argv = {"sh", "-c", "while read l; do echo \"got $l\"; done"};
  auto p = Process::Spawn(o);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE((*p)->Write("a\nb\n").ok());
  EXPECT_EQ(*(*p)->ReadLine(milliseconds(2000)), "got a");
  EXPECT_EQ(*(*p)->ReadLine(milliseconds(2000)), "got b");
  auto none = (*p)->ReadLine(milliseconds(100));
  EXPECT_EQ(none.status().code(), Code::kTimeout);
  (*p)->CloseStdin();
  auto eof = (*p)->ReadLine(milliseconds(2000));
  EXPECT_EQ(eof.status().code(), Code::kIo);
  auto e = (*p)->Wait(milliseconds(2000));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, 0);
}

TEST(Subprocess, EnvironmentAndCrashSignal) {
  SpawnOptions o;
  o.argv = {"sh", "-c", "echo $KILN_T; kill -SEGV $$"};
  o.env_set["KILN_T"] = "v1";
  auto r = RunCommand(o, milliseconds(5000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "v1\n");
  EXPECT_EQ(r->exit.signal, SIGSEGV);
  EXPECT_NE(r->exit.Describe().find("signal 11"), std::string::npos);
}

// PR_SET_PDEATHSIG fires when the thread that forked a child ends: a child started from a short-lived thread
// (as EvalPool starts workers) must outlive that thread. Death with kiln: tests/cli (kill -9 kiln).
TEST(Subprocess, ChildOutlivesTheThreadThatStartedIt) {
  std::unique_ptr<Process> p;
  std::thread([&] {
    SpawnOptions o;
    o.argv = {"sh", "-c", "read l; echo alive"};
    auto r = Process::Spawn(o);
    ASSERT_TRUE(r.ok());
    p = std::move(*r);
  }).join();
  ASSERT_TRUE(p);
  std::this_thread::sleep_for(milliseconds(200));
  ASSERT_TRUE(p->running());
  ASSERT_TRUE(p->Write("go\n").ok());
  EXPECT_EQ(*p->ReadLine(milliseconds(2000)), "alive");
}

}  // namespace
}  // namespace kiln

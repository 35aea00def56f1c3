#include "exec/runner.h"
#include "exec/evaluator.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/file.h"

namespace kiln::exec {
namespace {

namespace fs = std::filesystem;

const std::string kFake = std::string(KILN_SOURCE_DIR) + "/src/exec/testdata/fake_worker.py";

class WorkerRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    log_ = (fs::temp_directory_path() / ("kiln_fake_" + std::to_string(getpid()) + "_" + name)).string();
    fs::remove(log_);
    opts_.command = {"python3", kFake};
    opts_.env["FAKE_WORKER_LOG"] = log_;
    opts_.grace_s = 1;
    opts_.startup_s = 20;
  }
  void TearDown() override {
    fs::remove(log_);
    fs::remove(log_ + ".child");
  }
  EvalRequest Req(const std::string& behaviour, double timeout_s = 2) {
    EvalRequest r;
    r.task.name = "t";
    r.task.hash = "0123456789abcdef";
    r.candidate_source = "# fake: " + behaviour + "\n";
    r.timeout_s = timeout_s;
    return r;
  }
  int Starts() {
    auto t = ReadFile(log_);
    if (!t.ok()) return 0;
    return static_cast<int>(std::count(t->begin(), t->end(), '\n'));
  }
  WorkerOptions opts_;
  std::string log_;
};

TEST_F(WorkerRunnerTest, HelloAndOk) {
  WorkerRunner w(opts_);
  auto h = w.Hello();
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->protocol, 1);
  EXPECT_TRUE(h->interpreter);
  EXPECT_EQ(h->raw["argv"], nlohmann::json({"--isolation", "fork"}));
  EXPECT_EQ(h->DeviceUuid(), "cpu-interpreter");
  auto r = w.Evaluate(Req("ok"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict, Verdict::kOk);
  ASSERT_EQ(r->cases.size(), 1u);
  EXPECT_DOUBLE_EQ(*r->cases[0].speedup, 2.0);
  EXPECT_EQ(r->cases[0].candidate_ms->n, 10);
  ASSERT_EQ(r->kernels.size(), 1u);
  EXPECT_EQ(*r->kernels[0].n_regs, 32);
  EXPECT_EQ(r->kernels[0].grid, (std::vector<int64_t>{4, 1, 1}));
  EXPECT_EQ(r->aten_ops["aten::empty_like"], 1);
  // Same process for the next request (shared/fork keep the worker).
  auto r2 = w.Evaluate(Req("ok"));
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r->raw["pid"], r2->raw["pid"]);
  EXPECT_EQ(w.starts(), 1);
  std::string summary = FormatSummary(*r);
  EXPECT_NE(summary.find("verdict: ok"), std::string::npos);
  EXPECT_NE(summary.find("speedup: 2.000x [1.800, 2.200]"), std::string::npos) << summary;
  EXPECT_NE(summary.find("kernel k: launches 1  regs 32"), std::string::npos) << summary;
}

TEST_F(WorkerRunnerTest, HangIsTimeoutAndWorkerRestarts) {
  WorkerRunner w(opts_);
  auto t0 = std::chrono::steady_clock::now();
  auto r = w.Evaluate(Req("hang", 1));
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict, Verdict::kTimeout);
  EXPECT_EQ(r->reasons[0].code, "timeout");
  EXPECT_LT(s, 10);
  EXPECT_GE(s, 1.9);  // 1 s limit + 1 s grace
  auto ok = w.Evaluate(Req("ok"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->verdict, Verdict::kOk);
  EXPECT_EQ(w.starts(), 2);
}

TEST_F(WorkerRunnerTest, UpWhileTheWorkerRunsNotAfterItDiesOrShutsDown) {
  WorkerRunner w(opts_);
  EXPECT_FALSE(w.up());  // not started yet
  ASSERT_TRUE(w.Hello().ok());
  EXPECT_TRUE(w.up());
  const pid_t pid = w.pid();
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGKILL);  // killed from outside: a zombie until the runner notices
  bool down = false;
  for (int i = 0; i < 200 && !down; ++i) {
    down = !w.up();
    if (!down) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(down) << "a killed worker still counts as up";
  auto ok = w.Evaluate(Req("ok"));  // replaced on the next request
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(w.up());
  EXPECT_EQ(w.starts(), 2);
  w.Shutdown();
  EXPECT_FALSE(w.up());
}

class KillTest : public WorkerRunnerTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(KillTest, TimeoutKillsEveryDescendant) {
  WorkerRunner w(opts_);
  auto r = w.Evaluate(Req(GetParam(), 1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kTimeout);
  auto pid_text = ReadFile(log_ + ".child");
  ASSERT_TRUE(pid_text.ok());
  pid_t child = std::stoi(*pid_text);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream st("/proc/" + std::to_string(child) + "/stat");
    std::string line;
    std::getline(st, line);
    // Gone, or a zombie waiting for init to reap it.
    gone = line.empty() || line.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "grandchild " << child << " outlived the killed worker";
}

// A child in the worker's group, and one in a group of its own (as the fork zygote's children are).
INSTANTIATE_TEST_SUITE_P(Groups, KillTest, ::testing::Values("sleep_child", "sleep_child_own_group"));

TEST_F(WorkerRunnerTest, CrashIsVerdictWithStderrAndRestart) {
  WorkerRunner w(opts_);
  auto r = w.Evaluate(Req("crash"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict, Verdict::kCrash);
  EXPECT_EQ(r->reasons[0].code, "no_response");
  EXPECT_NE(r->message.find("exit code 139"), std::string::npos) << r->message;
  EXPECT_NE(r->stderr_tail.find("Segmentation fault"), std::string::npos) << r->stderr_tail;
  auto ok = w.Evaluate(Req("ok"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->verdict, Verdict::kOk);
  EXPECT_EQ(Starts(), 2);
}

TEST_F(WorkerRunnerTest, SilentExitIsCrash) {
  WorkerRunner w(opts_);
  auto r = w.Evaluate(Req("exit_silently"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kCrash);
}

TEST_F(WorkerRunnerTest, GarbageAndForgedLinesAreIgnored) {
  WorkerRunner w(opts_);
  auto r = w.Evaluate(Req("garbage_then_ok"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict, Verdict::kOk);
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_EQ(r->warnings[0].code, "stray_stdout");
  // Forged responses with guessed ids do not count: the real one (with kiln's random id) does.
  auto f = w.Evaluate(Req("forged_then_ok"));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->verdict, Verdict::kOk);
  EXPECT_TRUE(f->raw.contains("pid"));
  // Garbage and then silence: a timeout, not a hang of the engine.
  auto g = w.Evaluate(Req("bad_json_only", 1));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->verdict, Verdict::kTimeout);
  EXPECT_NE(g->stderr_tail.find("garbage"), std::string::npos) << g->stderr_tail;
}

TEST_F(WorkerRunnerTest, RestartRequestedByResponse) {
  WorkerRunner w(opts_);
  auto r = w.Evaluate(Req("restart"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kRuntimeError);
  EXPECT_TRUE(r->restart_worker);
  auto ok = w.Evaluate(Req("ok"));
  ASSERT_TRUE(ok.ok());
  EXPECT_NE(r->raw["pid"], ok->raw["pid"]);
  EXPECT_EQ(w.starts(), 2);
}

TEST_F(WorkerRunnerTest, EachWorkerProcessGetsATmpdirRemovedWithIt) {
  std::string first;
  {
    WorkerRunner w(opts_);
    auto a = w.Evaluate(Req("tmpfile"));
    ASSERT_TRUE(a.ok()) << a.status().message();
    first = a->raw.value("tmpdir", "");
    ASSERT_FALSE(first.empty());
    EXPECT_TRUE(fs::exists(first + "/candidate.py"));
    auto b = w.Evaluate(Req("crash"));  // the process dies: its directory goes, the next one gets a new one
    ASSERT_TRUE(b.ok());
    auto c = w.Evaluate(Req("tmpfile"));
    ASSERT_TRUE(c.ok());
    const std::string second = c->raw.value("tmpdir", "");
    EXPECT_NE(second, first);
    EXPECT_FALSE(fs::exists(first));
    EXPECT_TRUE(fs::exists(second + "/candidate.py"));
    first = second;
  }
  EXPECT_FALSE(fs::exists(first));  // shut down with the runner
}

TEST(TempDir, RemovedWithEverythingInIt) {
  std::string p;
  {
    auto d = TempDir::Make("kiln-test-");
    ASSERT_TRUE(d.ok()) << d.status().message();
    p = d->path();
    fs::create_directories(p + "/a/b");
    ASSERT_TRUE(WriteFile(p + "/a/b/f.txt", "x").ok());
    TempDir moved = std::move(*d);
    EXPECT_TRUE(d->path().empty());
    EXPECT_TRUE(fs::exists(p + "/a/b/f.txt"));
  }
  EXPECT_FALSE(fs::exists(p));
}

TEST_F(WorkerRunnerTest, StderrFloodDoesNotBlock) {
  WorkerRunner w(opts_);
  auto r = w.Evaluate(Req("stderr_flood", 20));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kOk);
}

TEST_F(WorkerRunnerTest, FreshIsolationStartsOnePerCandidate) {
  opts_.isolation = Isolation::kFresh;
  WorkerRunner w(opts_);
  auto a = w.Evaluate(Req("ok"));
  auto b = w.Evaluate(Req("ok"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->raw["pid"], b->raw["pid"]);
  EXPECT_EQ(w.starts(), 2);
}

TEST_F(WorkerRunnerTest, StartupFailuresAreErrors) {
  {
    WorkerOptions o = opts_;
    o.command = {"/nonexistent/python3"};
    WorkerRunner w(o);
    auto r = w.Evaluate(Req("ok"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Code::kUnavailable);
  }
  {
    WorkerOptions o = opts_;
    o.env["FAKE_WORKER_PROTOCOL"] = "2";
    WorkerRunner w(o);
    auto h = w.Hello();
    ASSERT_FALSE(h.ok());
    EXPECT_NE(h.status().message().find("protocol 2"), std::string::npos);
  }
  {
    WorkerOptions o = opts_;
    o.env["FAKE_WORKER_NO_HELLO"] = "1";
    o.startup_s = 1;
    WorkerRunner w(o);
    auto h = w.Hello();
    ASSERT_FALSE(h.ok());
    EXPECT_NE(h.status().message().find("no hello"), std::string::npos) << h.status().message();
  }
}

TEST_F(WorkerRunnerTest, RecordThenReplay) {
  std::string transcript = log_ + ".jsonl";
  fs::remove(transcript);
  {
    WorkerRunner w(opts_);
    RecordingRunner rec(&w, transcript);
    ASSERT_TRUE(rec.Hello().ok());
    ASSERT_TRUE(rec.Evaluate(Req("ok")).ok());
    auto t = rec.Evaluate(Req("hang", 1));
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->verdict, Verdict::kTimeout);
  }
  auto rp = ReplayRunner::Open(transcript);
  ASSERT_TRUE(rp.ok()) << rp.status().message();
  EXPECT_EQ((*rp)->size(), 3u);
  auto h = (*rp)->Hello();
  ASSERT_TRUE(h.ok());
  auto r = (*rp)->Evaluate(Req("ok"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->verdict, Verdict::kOk);
  EXPECT_DOUBLE_EQ(*r->cases[0].speedup, 2.0);
  auto t = (*rp)->Evaluate(Req("hang", 1));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->verdict, Verdict::kTimeout);
  auto miss = (*rp)->Evaluate(Req("something else"));
  EXPECT_FALSE(miss.ok());
  EXPECT_EQ(miss.status().code(), Code::kNotFound);
  fs::remove(transcript);
}

// A transcript that cannot be written is a machinery failure (an error Status), never a verdict, and
// never dropped silently.
TEST(RecordingRunner, UnwritableTranscriptIsAnIoError) {
  nlohmann::json hand = {
      {"request", {{"op", "eval"}, {"task", {{"name", "t"}}}, {"candidate", nullptr}, {"mode", "check"}}},
      {"response", {{"id", "x"}, {"ok", true}, {"verdict", "ok"}}}};
  auto inner = ReplayRunner::FromText(hand.dump() + "\n", "hand.jsonl");
  ASSERT_TRUE(inner.ok()) << inner.status().message();
  EvalRequest req;
  req.task.name = "t";
  ASSERT_TRUE((*inner)->Evaluate(req).ok());
  RecordingRunner rec(inner->get(), "/nonexistent-kiln-dir/transcript.jsonl");
  auto r = rec.Evaluate(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kIo);
  EXPECT_NE(r.status().message().find("/nonexistent-kiln-dir/transcript.jsonl: error: cannot open the transcript"),
            std::string::npos)
      << r.status().message();
  EXPECT_FALSE(rec.Hello().ok());
}

TEST(ReplayRunner, HandWrittenTranscript) {
  EvalRequest req;
  req.task.name = "level1/19_ReLU";
  req.task.hash = "aaaaaaaaaaaaaaaa";
  req.candidate_source = "x = 1\n";
  req.mode = Mode::kTime;
  nlohmann::json line1 = {{"request", req.ToJson("7")},
                          {"response",
                           {{"id", "7"},
                            {"ok", true},
                            {"verdict", "ok"},
                            {"cases", {{{"name", "default"}, {"passed", true}, {"speedup", 1.5}}}}}}};
  nlohmann::json line2 = line1;
  line2["response"]["cases"][0]["speedup"] = 1.7;
  // Seeds and ids differ run to run: they do not take part in matching.
  line2["request"]["seed"] = 99;
  line2["request"]["id"] = "8";
  std::string text = line1.dump() + "\n\n" + line2.dump() + "\n";
  auto rp = ReplayRunner::FromText(text, "hand.jsonl");
  ASSERT_TRUE(rp.ok()) << rp.status().message();
  auto a = (*rp)->Evaluate(req);
  auto b = (*rp)->Evaluate(req);
  auto c = (*rp)->Evaluate(req);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_DOUBLE_EQ(*a->cases[0].speedup, 1.5);
  EXPECT_DOUBLE_EQ(*b->cases[0].speedup, 1.7);
  EXPECT_DOUBLE_EQ(*c->cases[0].speedup, 1.7);  // past the end: the last recording again
  req.mode = Mode::kCheck;
  EXPECT_FALSE((*rp)->Evaluate(req).ok());
  // Hand-written: no task hash (matched by name), the candidate given by its hash.
  nlohmann::json hand = {{"request",
                          {{"op", "eval"},
                           {"task", {{"name", "level1/19_ReLU"}}},
                           {"candidate", {{"hash", req.CandidateHash()}}},
                           {"mode", "check"}}},
                         {"response", {{"id", "x"}, {"ok", true}, {"verdict", "mismatch"}}}};
  auto rh = ReplayRunner::FromText(hand.dump() + "\n", "hand2.jsonl");
  ASSERT_TRUE(rh.ok());
  auto m = (*rh)->Evaluate(req);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->verdict, Verdict::kMismatch);
  auto bad = ReplayRunner::FromText("{\"request\": 1}\n", "bad.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.jsonl:1:1: error:"), std::string::npos);
}

// A recorded infra_out_of_memory answer (a GPU shared with other batches, issue 16's run 6) replays as the
// live runner gave it: the provisional runtime_error the pool retries, not a machinery error.
TEST(ReplayRunner, InfraOutOfMemoryReplaysAsTheLiveRunnerGaveIt) {
  EvalRequest req;
  req.task.name = "tritonbench_g/rotary_transform";
  req.task.hash = "bbbbbbbbbbbbbbbb";
  req.mode = Mode::kTime;
  nlohmann::json oom = {{"request", req.ToJson("1")},
                        {"response",
                         {{"id", "1"},
                          {"ok", false},
                          {"error", "out of memory (OutOfMemoryError): not the candidate's alone"},
                          {"error_code", "infra_out_of_memory"}}}};
  nlohmann::json ok = {{"request", req.ToJson("2")}, {"response", {{"id", "2"}, {"ok", true}, {"verdict", "ok"}}}};
  auto rp = ReplayRunner::FromText(oom.dump() + "\n" + ok.dump() + "\n", "oom.jsonl");
  ASSERT_TRUE(rp.ok()) << rp.status().message();
  auto first = (*rp)->Evaluate(req);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->verdict, Verdict::kRuntimeError);
  ASSERT_EQ(first->reasons.size(), 1u);
  EXPECT_EQ(first->reasons[0].code, "infra_out_of_memory");
  EXPECT_EQ(first->raw["reasons"][0]["code"], "infra_out_of_memory");
  EXPECT_NE(first->message.find("not the candidate's alone"), std::string::npos);
  auto retry = (*rp)->Evaluate(req);  // the pool's retry takes the next recording
  ASSERT_TRUE(retry.ok()) << retry.status().message();
  EXPECT_EQ(retry->verdict, Verdict::kOk);
  // Any other worker error still replays as a machinery error.
  nlohmann::json err = oom;
  err["response"]["error_code"] = "something_else";
  auto re = ReplayRunner::FromText(err.dump() + "\n", "err.jsonl");
  ASSERT_TRUE(re.ok());
  EXPECT_FALSE((*re)->Evaluate(req).ok());
  EXPECT_FALSE(EvalResult::FromInfraOom(nlohmann::json::array()).has_value());
}

TEST(EvalResult, LenientParsingAndRoundTrip) {
  auto r = EvalResult::FromResponse({{"id", "1"},
                                     {"ok", true},
                                     {"verdict", "mismatch"},
                                     {"reasons", {"shape_mismatch"}},
                                     {"cases", {{{"name", "a"}, {"max_abs_err", "nan?"}}}}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kMismatch);
  EXPECT_EQ(r->reasons[0].code, "shape_mismatch");
  EXPECT_FALSE(r->cases[0].max_abs_err.has_value());
  auto j = r->ToJson();
  EXPECT_EQ(j["verdict"], "mismatch");
  EXPECT_FALSE(j.contains("id"));
  EXPECT_FALSE(EvalResult::FromResponse({{"ok", true}, {"verdict", "great"}}).ok());
  EXPECT_FALSE(EvalResult::FromResponse({{"ok", false}, {"error", "bad request"}}).ok());
}

// The per-case autotune keys a trusted request reports (kiln optimize pins them) survive parsing and ToJson;
// a malformed value is dropped, not an error.
TEST(EvalResult, CaseAutotuneKeysRoundTrip) {
  nlohmann::json keys = {{"kernel", {{"names", {"M", "N"}}, {"keys", {{64, 128}}}}}};
  auto r = EvalResult::FromResponse({{"ok", true},
                                     {"verdict", "ok"},
                                     {"cases", {{{"name", "a"}, {"autotune_keys", keys}},
                                                {{"name", "b"}, {"autotune_keys", "oops"}}}}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->cases[0].autotune_keys, keys);
  EXPECT_TRUE(r->cases[1].autotune_keys.empty());
  r->raw = nlohmann::json();
  auto j = r->ToJson();
  EXPECT_EQ(j["cases"][0]["autotune_keys"], keys);
  EXPECT_FALSE(j["cases"][1].contains("autotune_keys"));
}

TEST(EvalRequest, ParamsHashCoversProtocolParameters) {
  EvalRequest a;
  EvalRequest b = a;
  EXPECT_EQ(a.ParamsHash(), b.ParamsHash());
  b.trials = 5;
  EXPECT_NE(a.ParamsHash(), b.ParamsHash());
  b = a;
  b.mode = Mode::kTime;
  EXPECT_NE(a.ParamsHash(), b.ParamsHash());
  b = a;
  b.candidate_source = "changed";  // the candidate is its own key component
  EXPECT_EQ(a.ParamsHash(), b.ParamsHash());
}

TEST(EvalRequest, ToleranceProtocolIsSentAndKeyed) {
  EvalRequest a;
  EXPECT_FALSE(a.ToJson("1").contains("protocol"));
  EvalRequest b = a;
  b.protocol = "legacy";
  EXPECT_EQ(b.ToJson("1")["protocol"], "legacy");
  EXPECT_NE(a.ParamsHash(), b.ParamsHash());  // a legacy verdict is not a kernelbench one
  b.protocol = "kernelbench";                 // the worker's default: same key as unset
  EXPECT_EQ(a.ParamsHash(), b.ParamsHash());
}

TEST(EvalRequest, LegacyStdoutIsSentInCheckAndTimeAndKeyed) {
  EvalRequest a;
  EXPECT_FALSE(a.ToJson("1").contains("legacy_stdout"));
  EvalRequest b = a;
  b.legacy_stdout = true;
  EXPECT_EQ(b.ToJson("1")["legacy_stdout"], true);
  EXPECT_NE(a.ParamsHash(), b.ParamsHash());  // a cached result without the legacy check is not reused
  b.mode = Mode::kTimeOnly;                   // the measuring stage: the check worker ran it
  EXPECT_FALSE(b.ToJson("1").contains("legacy_stdout"));
}

// Autotune picks of an earlier trusted response (kiln optimize across worker restarts): sent only under policy
// trusted (a strict request's worker never reads them), and not part of the cache key.
TEST(EvalRequest, AutotunePicksAreSentOnlyWhenTrustedAndNotKeyed) {
  EvalRequest a;
  a.policy = Policy::kTrusted;
  EXPECT_FALSE(a.ToJson("1").contains("autotune_picks"));
  EvalRequest b = a;
  b.autotune_picks = nlohmann::json::array({{{"id", "e7da"}, {"picks", {{{128, "torch.float32"}, 0}}}}});
  EXPECT_EQ(b.ToJson("1")["autotune_picks"], b.autotune_picks);
  EXPECT_EQ(a.ParamsHash(), b.ParamsHash());
  b.policy = Policy::kStrict;
  EXPECT_FALSE(b.ToJson("1").contains("autotune_picks"));
}

TEST(MergeCheckStage, KeepsTheCheckWorkersLegacyStdout) {
  EvalResult check, timed;
  check.verdict = timed.verdict = Verdict::kOk;
  check.raw = {{"legacy_stdout", {{"passed", true}, {"equal", true}}}};
  timed.raw = {{"verdict", "ok"}};
  MergeCheckStage(check, &timed);
  EXPECT_EQ(timed.ToJson()["legacy_stdout"]["passed"], true);
}

}  // namespace
}  // namespace kiln::exec

// kiln/app: `kiln eval --batch`: JSON-lines pairs over exec::EvalPool, results as JSON lines
// (docs/eval.md "Batch").
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "app/eval_internal.h"
#include "app/pairs.h"
#include "app/progress.h"
#include "common/children.h"
#include "common/file.h"
#include "common/strings.h"
#include "exec/evaluator.h"
#include "task/task.h"

namespace kiln::app::eval_internal {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int Fail(const std::string& message) {
  std::fprintf(stderr, "kiln eval: %s\n", message.c_str());
  return 2;
}

std::string ResolveRel(const std::string& p, const fs::path& base) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  std::error_code ec;
  if (fs::exists(base / p, ec)) return (base / p).lexically_normal().string();
  return p;
}

struct Pairs {
  std::vector<exec::PoolItem> items;
  std::map<size_t, json> echo;  // index -> what its line asked for, echoed in its result
  std::vector<json> early;      // error lines written before the pool starts
  size_t total = 0;
};

// One valid pair's request (app/pairs.h validated its keys and types); an error becomes the line's "error".
Result<exec::EvalRequest> PairRequest(const EvalOptions& o, const json& in, const exec::EvalRequest& base,
                                      const fs::path& dir) {
  task::LoadOptions lo = o.task_options.ToLoadOptions();
  lo.format = in.value("format", lo.format);
  lo.entry = in.value("entry", lo.entry);
  lo.bench = ResolveRel(in.value("bench", lo.bench), dir);
  auto sizes = ParseSizes(o.sizes);
  lo.sizes = sizes.ok() ? *sizes : json::object();
  if (in.contains("sizes")) lo.sizes.update(in["sizes"]);
  KILN_ASSIGN_OR_RETURN(task::TaskSpec spec, task::LoadTask(ResolveRel(in["task"].get<std::string>(), dir), lo));
  exec::EvalRequest req = base;
  req.task = spec;
  if (in.contains("mode")) {
    KILN_ASSIGN_OR_RETURN(req.mode, exec::ParseMode(in["mode"].get<std::string>()));
  }
  if (in.contains("policy")) {
    KILN_ASSIGN_OR_RETURN(req.policy, exec::ParsePolicy(in["policy"].get<std::string>()));
  }
  if (in.contains("trials")) req.trials = in["trials"];
  if (in.contains("protocol")) req.protocol = in["protocol"];
  if (in.contains("seed")) req.seed = in["seed"];
  if (in.contains("timeout_s")) req.timeout_s = in["timeout_s"];
  if (in.contains("legacy_stdout")) req.legacy_stdout = in["legacy_stdout"];
  if (in.contains("memory_hint_bytes")) req.memory_hint_bytes = in["memory_hint_bytes"].get<int64_t>();
  if (in.contains("source")) {
    req.candidate_source = WorkerModule(in["source"].get<std::string>(), req);
    req.candidate_name = in.value("name", std::string("candidate.py"));
  } else if (in.contains("candidate") && in["candidate"].is_string()) {
    KILN_RETURN_IF_ERROR(LoadCandidate(ResolveRel(in["candidate"].get<std::string>(), dir), &req));
  }
  if (in.contains("baseline"))
    KILN_RETURN_IF_ERROR(LoadBaseline(ResolveRel(in["baseline"].get<std::string>(), dir), &req));
  return req;
}

// The requests of the pairs without a result yet; an invalid line, or a pair whose task or candidate cannot
// be loaded, becomes an error line, never a stop. Indices follow the lines of the pairs file, continuing
// after the results kept by --resume.
Pairs BuildPairs(const EvalOptions& o, const PairsFile& pf, const PreviousResults& prev,
                 const exec::EvalRequest& base) {
  Pairs out;
  const fs::path dir = fs::absolute(o.batch).parent_path();
  std::map<size_t, const Pair*> todo;
  std::map<size_t, const PairError*> bad;
  for (const auto& p : pf.pairs)
    if (!prev.Done(p)) todo[p.line] = &p;
  for (const auto& e : pf.errors) bad[e.line] = &e;
  size_t next_index = prev.next_index;
  auto fail = [&](json head, std::string m) {
    while (!m.empty() && m.back() == '\n') m.pop_back();
    head["error"] = m;
    head["gpu"] = nullptr;
    out.early.push_back(head);
  };
  for (size_t line_no = 1; line_no <= pf.last_line; ++line_no) {
    if (auto e = bad.find(line_no); e != bad.end()) {
      json head = e->second->echo;
      head["index"] = next_index++;
      head["line"] = line_no;
      ++out.total;
      fail(head, e->second->message);
      continue;
    }
    auto it = todo.find(line_no);
    if (it == todo.end()) continue;
    const json& in = it->second->in;
    const size_t index = next_index++;
    ++out.total;
    json head = {{"index", index}, {"line", line_no}, {"pair_hash", it->second->hash}};
    if (in.contains("id")) head["id"] = in["id"];
    head["task"] = in["task"];
    head["candidate"] = in.value("candidate", json(nullptr));
    auto req = PairRequest(o, in, base, dir);
    if (!req.ok()) {
      fail(head, req.status().message());
      continue;
    }
    out.echo[index] = head;
    out.items.push_back({index, std::move(*req)});
  }
  return out;
}

std::unique_ptr<exec::Runner> Make(const RunnerSpec& spec) {
  auto r = MakeRunner(spec);
  return r.ok() ? std::move(*r) : nullptr;
}

// The workers of a batch: measuring workers (one per GPU, or --workers under the interpreter), check
// workers (the pipeline) and compile workers, sized from the probe worker's hello.
struct Workers {
  exec::PoolConfig cfg;
  std::vector<std::string> gpu_uuids;
  bool interpreter = true;
  int slots = 1;
};

// Check workers (the pipeline, docs/eval.md "Batch"): K per GPU share it for correctness; timing
// follows on the measuring workers, alone, after the last check. Not under the interpreter (there
// --workers measuring workers run in parallel) nor with --record (transcripts keep whole exchanges).
// Under the interpreter only an explicit --check-workers K turns it on (K workers in all; tests).
// Compile workers: automatic only for mode time on GPUs without check workers.
void SizeStages(const EvalOptions& o, const exec::EvalRequest& base, Workers* w) {
  const bool on_gpus = !w->interpreter && !w->gpu_uuids.empty();
  const int n_gpus = static_cast<int>(w->gpu_uuids.size());
  int check_per_gpu = o.check_workers;
  if (!on_gpus) {
    check_per_gpu = std::max(0, o.check_workers);
  } else if (check_per_gpu < 0) {
    int ncpu = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    check_per_gpu = o.worker.record.empty() ? std::clamp(ncpu / (2 * n_gpus), 1, 8) : 0;
  }
  w->cfg.check_slots = on_gpus ? check_per_gpu * n_gpus : check_per_gpu;
  int compile = o.compile_workers;
  if (w->cfg.check_slots > 0 && compile < 0) compile = 0;  // the check workers compile everything
  if (compile < 0) {
    int ncpu = static_cast<int>(std::thread::hardware_concurrency());
    compile = w->interpreter || base.mode != exec::Mode::kTime
                  ? 0
                  : std::clamp(ncpu / 2 - w->slots, 0, 2 * static_cast<int>(w->gpu_uuids.size()));
  }
  w->cfg.compile_slots = compile;
}

// Sets up the pool's runner factories; `w` and `o` must outlive the pool's run.
Status SetUpWorkers(const EvalOptions& o, const exec::EvalRequest& base, size_t total, Workers* w) {
  if (!o.worker.replay.empty()) {
    KILN_RETURN_IF_ERROR(exec::ReplayRunner::Open(o.worker.replay).status());
    w->cfg.measure_slots = 1;
    w->cfg.make_measure = [&o](int) { return Make(SpecOf(o)); };
    return Status::Ok();
  }
  auto probe = std::make_shared<std::unique_ptr<exec::Runner>>(Make(SpecOf(o)));
  KILN_ASSIGN_OR_RETURN(exec::HelloInfo h, (*probe)->Hello());
  w->interpreter = h.interpreter;
  for (const auto& d : h.devices) w->gpu_uuids.push_back(d.uuid.empty() ? std::to_string(d.index) : d.uuid);
  if (o.gpus >= 0 && static_cast<int>(w->gpu_uuids.size()) > o.gpus) w->gpu_uuids.resize(o.gpus);
  // Admission of check work by GPU memory (exec/admission.h): 90% of the smallest GPU's memory.
  if (!h.interpreter) {
    for (const auto& d : h.devices) {
      const int64_t total = d.raw.value("total_mem_bytes", int64_t{0});
      if (total > 0 && (w->cfg.gpu_memory_bytes == 0 || total * 9 / 10 < w->cfg.gpu_memory_bytes))
        w->cfg.gpu_memory_bytes = total * 9 / 10;
    }
  }
  w->slots = w->interpreter || w->gpu_uuids.empty() ? std::max(1, o.workers) : static_cast<int>(w->gpu_uuids.size());
  w->cfg.measure_slots = w->slots;
  // A worker of its own per GPU slot (it sees only that GPU, as device 0).
  auto on_slot_gpu = [w](RunnerSpec s, int slot) {
    if (!w->interpreter && !w->gpu_uuids.empty()) s.cuda_visible_devices = w->gpu_uuids[slot % w->gpu_uuids.size()];
    if (!s.cuda_visible_devices.empty()) s.device = 0;
    return s;
  };
  w->cfg.make_measure = [&o, w, probe, on_slot_gpu](int slot) -> std::unique_ptr<exec::Runner> {
    // After a check stage the timing workers run candidates that already passed in an isolated
    // child: --time-isolation (default shared: no fork + CUDA init per candidate; the worker restores
    // replaced attributes after each one and restarts after a CUDA error or leftover threads/processes).
    const bool timing_stage = w->cfg.check_slots > 0 && o.isolation != o.time_isolation;
    if (slot == 0 && !timing_stage && (w->gpu_uuids.size() <= 1 || w->interpreter)) return std::move(*probe);
    if (slot == 0) probe->reset();  // it sees every GPU; each slot gets a worker of its own
    RunnerSpec s = SpecOf(o);
    if (timing_stage) s.isolation = exec::ParseIsolation(o.time_isolation).value();
    if (w->interpreter || slot >= static_cast<int>(w->gpu_uuids.size())) return Make(s);
    return Make(on_slot_gpu(s, slot));
  };
  w->cfg.make_check = [&o, on_slot_gpu](int c) { return Make(on_slot_gpu(SpecOf(o), c)); };
  w->cfg.make_compile = [&o, on_slot_gpu](int c) {
    RunnerSpec s = on_slot_gpu(SpecOf(o), c);
    s.isolation = exec::Isolation::kFork;
    s.record.clear();  // compile exchanges are not recorded
    return Make(s);
  };
  SizeStages(o, base, w);
  if (!o.quiet)
    std::fprintf(stderr, "kiln eval: %zu pairs on %d measuring worker(s)%s, %d check worker(s), %d compile worker(s)\n",
                 total, w->slots, w->interpreter ? " (Triton interpreter, no GPU)" : "", w->cfg.check_slots,
                 w->cfg.compile_slots);
  return Status::Ok();
}

// --resume: the results kept in --out (matched on the pairs' hashes; error lines and a torn last line
// dropped, so they run again), or an error.
Result<PreviousResults> Resume(const EvalOptions& o, const PairsFile& pf) {
  PreviousResults prev;
  if (!o.resume) return prev;
  if (o.out.empty() || o.out == "-") return InvalidArgument("--resume needs --out FILE (the results so far)");
  if (auto old = ReadFile(o.out); old.ok()) {
    prev = ReadPreviousResults(*old);
    KILN_RETURN_IF_ERROR(WriteFile(o.out, prev.kept));
  }
  size_t already = 0;
  for (const auto& p : pf.pairs) already += prev.Done(p);
  if (!o.quiet)
    std::fprintf(stderr, "kiln eval: resuming: %zu pair(s) already have results in %s\n", already, o.out.c_str());
  return prev;
}

}  // namespace

int RunBatch(const EvalOptions& o) {
  auto text = ReadFile(o.batch);
  if (!text.ok()) return Fail(text.status().message());
  auto base = BaseRequest(o);
  if (!base.ok()) return Fail(base.status().message());
  auto st = OpenStore(o);
  if (!st.ok()) return Fail(st.status().message());
  const PairsFile pf = ParsePairs(o.batch, *text);
  auto prev = Resume(o, pf);
  if (!prev.ok()) return Fail(prev.status().message());
  std::FILE* out = stdout;
  if (!o.out.empty() && o.out != "-") {
    out = std::fopen(o.out.c_str(), o.resume ? "a" : "w");
    if (!out) return Fail(fmt::format("{}: cannot write: {}", o.out, std::strerror(errno)));
    // a buffer larger than a result line: each line goes out in one write() at its fflush, so that a reader
    // polling the file (a test, `tail -f`) does not see half a line of a long verdict
    std::setvbuf(out, nullptr, _IOFBF, 1 << 20);
  }
  auto write_line = [&](const json& j) {
    // An interruption kills the workers: the pairs they were running died of it, not of their code, so they
    // get no line (--resume runs them again) rather than a false crash verdict.
    if (Interrupted()) return;
    std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::fwrite(s.data(), 1, s.size(), out);
    std::fflush(out);  // results survive whatever happens next
  };
  // Interrupted (Ctrl-C, SIGTERM), kiln says how to go on (common/children.h prints it on the way out).
  static std::string interrupt_note;
  interrupt_note = out != stdout ? fmt::format(
                                       "\nkiln eval: interrupted; the results so far are in {}: run the "
                                       "same command with --resume to evaluate the rest\n",
                                       o.out)
                                 : "\nkiln eval: interrupted; with --out FILE, --resume continues a batch\n";
  SetInterruptNote(interrupt_note.c_str());
  Pairs pairs = BuildPairs(o, pf, *prev, *base);
  BatchProgress progress(pairs.total, o.quiet, isatty(2) != 0);
  for (const auto& e : pairs.early) {
    write_line(e);
    progress.Done("");
  }
  auto finish = [&](int rc) {
    ClearInterruptNote();
    if (out != stdout) std::fclose(out);
    if (!o.quiet)
      std::fprintf(stderr, "kiln eval: %s%s\n", progress.Summary().c_str(),
                   out != stdout ? (" (results in " + o.out + ")").c_str() : "");
    return rc;
  };
  if (pairs.items.empty()) return finish(pairs.early.empty() ? 0 : 1);  // nothing to evaluate: no worker
  Workers w;
  w.cfg.store = st->get();
  w.cfg.use_cache = !o.no_cache;
  if (Status s = SetUpWorkers(o, *base, pairs.total, &w); !s.ok()) {
    finish(2);
    return Fail(s.message());
  }
  int machinery_errors = 0;
  exec::EvalPool(w.cfg).Run(std::move(pairs.items), [&](const exec::PoolItem& it, const Result<exec::EvalResult>& r,
                                                        int slot) {
    json line = pairs.echo[it.index];
    // every line names the GPU whose worker answered it (null: none did, e.g. a static rejection)
    line["gpu"] = slot >= 0 && slot < static_cast<int>(w.gpu_uuids.size()) ? json(w.gpu_uuids[slot]) : json(nullptr);
    if (r.ok()) {
      line["result"] = ResultLine(*r, it.request);
      line["verdict"] = exec::VerdictName(r->verdict);
    } else {
      line["error"] = r.status().message();
      ++machinery_errors;
    }
    write_line(line);
    progress.Done(r.ok() ? exec::VerdictName(r->verdict) : "");
  });
  return finish(pairs.early.size() + machinery_errors > 0 ? 1 : 0);
}

}  // namespace kiln::app::eval_internal

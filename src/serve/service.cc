#include "serve/service.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "response/extract.h"

namespace kiln::serve {

using nlohmann::json;

namespace {

constexpr size_t kKeepFinished = 4096;  // finished jobs kept in memory (older ones: from the journal)
constexpr size_t kMessageMax = 2000;    // a reason's message in a response

// Lends a persistent runner to one EvalPool::Run (the pool owns what its factories return).
class Lent : public exec::Runner {
 public:
  explicit Lent(exec::Runner* r) : r_(r) {}
  Result<exec::HelloInfo> Hello() override { return r_->Hello(); }
  Result<exec::EvalResult> Evaluate(const exec::EvalRequest& q) override { return r_->Evaluate(q); }
  Result<json> DevicePeaks(const std::vector<std::string>& d) override { return r_->DevicePeaks(d); }

 private:
  exec::Runner* r_;
};

std::string Clip(const std::string& s) { return s.size() > kMessageMax ? s.substr(0, kMessageMax) + "..." : s; }

// The worker died without answering (not a candidate's verdict unless it happens again).
bool WorkerDied(const exec::EvalResult& r) {
  if (r.verdict != exec::Verdict::kCrash) return false;
  for (const auto& x : r.reasons)
    if (x.code == "no_response") return true;
  return false;
}

std::string GroupKey(const json& g) { return g.is_string() ? g.get<std::string>() : g.dump(); }

}  // namespace

Service::Service(ServiceConfig cfg, TaskSet* tasks) : cfg_(std::move(cfg)), tasks_(tasks) {
  measure_.resize(std::max(1, cfg_.measure_slots));
  check_.resize(std::max(0, cfg_.check_slots));
}

Service::~Service() { Stop(); }

void Service::Start() {
  loop_ = std::thread([this] { Loop(); });
}

void Service::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  done_cv_.notify_all();
  if (loop_.joinable()) loop_.join();
}

std::string Service::NewId() {
  static std::mt19937_64 rng(std::random_device{}() ^ static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
  return fmt::format("j-{:016x}-{}", rng(), ++seq_);
}

Status Service::ParseItem(const json& in, size_t index, const json& request, Item* it) {
  auto bad = [&](const std::string& m) { return InvalidArgument(fmt::format("items[{}]: {}", index, m)); };
  if (!in.is_object()) return bad("expected an object {\"task\", \"response\" | \"code\", ...}");
  for (const auto& [k, v] : in.items()) {
    static const std::vector<std::string> kKeys = {"id",    "task", "response", "code",
                                                   "group", "mode", "reward",   "deadline_s"};
    if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end()) return bad(fmt::format("unknown key '{}'", k));
  }
  if (!in.contains("task")) return bad("missing \"task\" (a task name, or {\"reference\": SOURCE})");
  Result<task::TaskSpec> spec =
      in["task"].is_string() ? tasks_->Find(in["task"].get<std::string>())
      : in["task"].is_object()
          ? tasks_->Inline(in["task"])
          : Result<task::TaskSpec>(InvalidArgument("task: expected a name or {\"reference\": SOURCE}"));
  if (!spec.ok()) return bad(spec.status().message());
  const bool has_response = in.contains("response"), has_code = in.contains("code");
  if (has_response == has_code) return bad("give exactly one of \"response\" (raw model text) and \"code\"");
  const json& text = has_response ? in["response"] : in["code"];
  if (!text.is_string()) return bad(fmt::format("\"{}\" must be a string", has_response ? "response" : "code"));
  json reward = in.contains("reward") ? in["reward"] : request.value("reward", json(nullptr));
  if (!reward.is_null()) {
    auto f = FormulaFromJson(reward);
    if (!f.ok()) return bad(f.status().message());
    it->formula = *f;
  } else {
    it->formula = cfg_.reward;
  }
  exec::EvalRequest req = cfg_.base;
  req.task = *spec;
  json mode = in.contains("mode") ? in["mode"] : request.value("mode", json(nullptr));
  if (!mode.is_null()) {
    if (!mode.is_string() || (mode != "check" && mode != "time")) return bad("mode: expected \"check\" or \"time\"");
    req.mode = *exec::ParseMode(mode.get<std::string>());
  }
  json deadline = in.contains("deadline_s") ? in["deadline_s"] : request.value("deadline_s", json(nullptr));
  if (!deadline.is_null()) {
    if (!deadline.is_number() || deadline.get<double>() <= 0) return bad("deadline_s: expected a positive number");
    it->deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(deadline.get<double>() * 1000));
  }
  it->echo = {{"index", index}, {"task", req.task.name}};
  if (in.contains("id")) it->echo["id"] = in["id"];
  if (in.contains("group")) {
    if (!in["group"].is_string() && !in["group"].is_number_integer()) return bad("group: expected a string or integer");
    it->echo["group"] = in["group"];
  }
  response::Extracted e;
  if (has_code) {
    e.code = text.get<std::string>();
    e.has_code = e.code.find_first_not_of(" \t\r\n") != std::string::npos;
    e.format_ok = e.has_code;
    e.how = "code";
  } else {
    e = response::ExtractCode(text.get<std::string>());
  }
  it->comp.has_code = e.has_code;
  it->comp.format = e.format_ok;
  it->echo["extracted"] = e.how;
  response::Gate g = e.has_code ? response::TritonGate(e.code) : response::Gate{false, "no code found in the response"};
  it->comp.gate = g.pass;
  if (!g.pass) it->echo["gate"] = g.reason;
  if (!g.pass && it->formula.require_gate) return Status::Ok();  // decided without a worker
  if (!e.has_code) return Status::Ok();
  if (req.task.format == task::Format::kTritonBenchG || req.task.format == task::Format::kTritonBenchT)
    e.code = task::StripTritonBenchTest(e.code);
  req.candidate_source = e.code;
  req.candidate_name = "response.py";
  it->request = std::move(req);
  return Status::Ok();
}

Result<Service::JobPtr> Service::Parse(const json& request, Clock::time_point started) {
  if (!request.is_object() || !request.contains("items") || !request["items"].is_array())
    return InvalidArgument("expected {\"items\": [{\"task\", \"response\" | \"code\", ...}, ...]}");
  const json& items = request["items"];
  if (items.empty()) return InvalidArgument("items: empty");
  auto job = std::make_shared<JobState>();
  job->request = request;
  job->accepted = started;
  if (request.contains("advantages") && !request["advantages"].is_boolean())
    return InvalidArgument("advantages: expected true or false");
  job->advantages = request.value("advantages", false);
  job->items.resize(items.size());
  for (size_t i = 0; i < items.size(); ++i) KILN_RETURN_IF_ERROR(ParseItem(items[i], i, request, &job->items[i]));
  job->remaining = items.size();
  return job;
}

void Service::Admit(const JobPtr& job) {
  jobs_[job->id] = job;
  if (!job->key.empty()) by_key_[job->key] = job->id;
  for (size_t i = 0; i < job->items.size(); ++i) {
    if (job->items[i].request && !job->items[i].result) queue_.push_back({job, i});
  }
  work_cv_.notify_all();
}

Answer Service::Submit(const json& request, const std::string& idem_key, double wait_s) {
  const auto now = Clock::now();
  if (request.is_object() && request.contains("items") && request["items"].is_array() &&
      request["items"].size() > cfg_.max_items)
    return {413,
            {{"error", fmt::format("{} items in one request; the limit is {} (--max-items)", request["items"].size(),
                                   cfg_.max_items)}}};
  JobPtr existing;
  if (!idem_key.empty()) {
    std::unique_lock<std::mutex> l(mu_);
    if (auto k = by_key_.find(idem_key); k != by_key_.end()) existing = jobs_[k->second];
    l.unlock();
    if (!existing && cfg_.store) {
      auto rec = cfg_.store->ServeJobByKey(idem_key);
      if (rec.ok() && rec->has_value()) return Job((*rec)->id);
    }
    if (existing) return WaitFor(existing, wait_s);
  }
  auto parsed = Parse(request, now);
  if (!parsed.ok()) return {400, {{"error", parsed.status().message()}}};
  JobPtr job = *parsed;
  job->key = idem_key;
  size_t need = 0;
  for (const auto& it : job->items) need += it.request ? 1 : 0;
  JobPtr raced;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_) return {503, {{"error", "the server is stopping"}}};
    if (!idem_key.empty() && by_key_.count(idem_key)) raced = jobs_[by_key_[idem_key]];  // the same key raced in
  }
  if (raced) return WaitFor(raced, wait_s);
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!idem_key.empty() && by_key_.count(idem_key)) {
      raced = jobs_[by_key_[idem_key]];
    } else {
      if (queue_.size() + in_flight_ + need > cfg_.queue_limit) {
        metrics_.Rejected429();
        const double per_s = std::max(1.0, metrics_.EvaluationsPerMinute()) / 60.0;
        int retry = static_cast<int>(std::clamp(std::ceil((queue_.size() + need) / per_s / 4), 1.0, 60.0));
        return {429,
                {{"error", fmt::format("the queue is full ({} items waiting or running, limit {}); retry later",
                                       queue_.size() + in_flight_, cfg_.queue_limit)}},
                retry};
      }
      job->id = NewId();
      if (cfg_.store) {
        Status s = cfg_.store->PutServeJob(job->id, idem_key, request);
        if (!s.ok()) return {500, {{"error", "cannot journal the job: " + s.message()}}};
      }
      metrics_.Accepted(1, job->items.size());
      Admit(job);
    }
  }
  if (raced) return WaitFor(raced, wait_s);
  // Items decided without a worker finish now (journalled like the others).
  for (size_t i = 0; i < job->items.size(); ++i) {
    if (!job->items[i].request) Finish(job, i, ResultJson(job->items[i], InvalidArgument("unused"), ""));
  }
  if (wait_s < 0) {
    std::lock_guard<std::mutex> l(mu_);
    return {202, Running(*job)};
  }
  return WaitFor(job, wait_s);
}

Answer Service::WaitFor(const JobPtr& job, double wait_s) {
  std::unique_lock<std::mutex> l(mu_);
  if (wait_s > 0)
    done_cv_.wait_for(l, std::chrono::milliseconds(static_cast<int64_t>(wait_s * 1000)),
                      [&] { return job->response.has_value() || stop_; });
  if (job->response) return {200, *job->response};
  return {202, Running(*job)};
}

Answer Service::Job(const std::string& id) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (auto it = jobs_.find(id); it != jobs_.end())
      return {200, it->second->response ? *it->second->response : Running(*it->second)};
  }
  if (cfg_.store) {
    auto rec = cfg_.store->ServeJob(id);
    if (rec.ok() && rec->has_value() && (*rec)->state == "done") return {200, (*rec)->response};
  }
  return {404, {{"error", fmt::format("no job '{}'", id)}}};
}

json Service::Running(const JobState& job) const {
  size_t done = job.items.size() - job.remaining;
  return {{"job", job.id},
          {"status", "running"},
          {"items_done", done},
          {"items", job.items.size()},
          {"location", "/v1/jobs/" + job.id}};
}

json Service::ResultJson(Item& it, const Result<exec::EvalResult>& r, const std::string& error) {
  json out = it.echo;
  out["attempts"] = it.attempts;
  out["reward_formula"] = it.formula.name;
  Components c = it.comp;
  json reasons = json::array();
  out["times"] = json::object();
  if (!error.empty()) {  // never a wrong answer: no reward at all
    out["verdict"] = "error";
    out["error"] = error;
    out["reward"] = nullptr;
    out["components"] = c.ToJson();
    out["reasons"] = json::array({{{"code", "infrastructure"}, {"message", Clip(error)}}});
    out["speedup"] = nullptr;
    return out;
  }
  if (!it.request) {  // decided by the format rules / gate
    out["verdict"] = "format_error";
    reasons.push_back({{"code", c.has_code ? "gate" : "no_code"},
                       {"message", it.echo.value("gate", std::string("no code found in the response"))}});
  } else {
    const exec::EvalResult& e = *r;
    out["verdict"] = exec::VerdictName(e.verdict);
    c.correct = e.verdict == exec::Verdict::kOk;
    c.compiled = c.correct || e.verdict == exec::Verdict::kMismatch;
    c.hacked = e.verdict == exec::Verdict::kRejected;
    if (c.correct) c.speedup = e.GeomeanSpeedup();
    if (c.correct && e.raw.contains("attribution") && e.raw["attribution"].is_object() &&
        e.raw["attribution"].value("own_share", json()).is_number())
      c.coverage = e.raw["attribution"]["own_share"].get<double>();
    for (const auto& x : e.reasons) reasons.push_back({{"code", x.code}, {"message", Clip(x.message)}});
    json times = {{"eval_s", e.elapsed_s}};
    for (const auto& cs : e.cases) {
      if (cs.candidate_ms) {
        times["candidate_ms"] = cs.candidate_ms->median;
        if (cs.reference_ms) times["reference_ms"] = cs.reference_ms->median;
        break;
      }
    }
    out["times"] = times;
    out["from_cache"] = e.from_cache;
  }
  out["components"] = c.ToJson();
  out["reasons"] = reasons;
  out["speedup"] = c.speedup ? json(*c.speedup) : json(nullptr);
  out["reward"] = Reward(it.formula, c);
  return out;
}

void Service::Finish(const JobPtr& job, size_t index, json result) {
  std::unique_lock<std::mutex> l(mu_);
  Item& it = job->items[index];
  if (it.result) return;  // answered already: exactly once
  const double latency = std::chrono::duration<double>(Clock::now() - job->accepted).count();
  if (result.contains("times") && result["times"].is_object()) {
    result["times"]["total_s"] = latency;
    result["times"]["queue_s"] = it.dispatched == Clock::time_point{}
                                     ? 0.0
                                     : std::chrono::duration<double>(it.dispatched - job->accepted).count();
  }
  if (cfg_.store) {
    auto inserted = cfg_.store->PutServeItem(job->id, static_cast<int64_t>(index), result);
    if (inserted.ok() && !*inserted) {  // journalled before (a restart): that result stands
      auto items = cfg_.store->ServeItems(job->id);
      if (items.ok() && items->count(index)) result = items->at(index);
    }
  }
  metrics_.Finished(result.value("verdict", std::string("error")), latency);
  it.result = std::move(result);
  if (--job->remaining > 0) return;
  job->response = Response(*job);
  if (cfg_.store) (void)cfg_.store->FinishServeJob(job->id, *job->response);
  finished_order_.push_back(job->id);
  while (finished_order_.size() > kKeepFinished && cfg_.store) {  // older ones stay in the journal
    auto old = jobs_.find(finished_order_.front());
    if (old != jobs_.end()) {
      if (!old->second->key.empty()) by_key_.erase(old->second->key);
      jobs_.erase(old);
    }
    finished_order_.pop_front();
  }
  done_cv_.notify_all();
}

json Service::Response(const JobState& job) const {
  json items = json::array();
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < job.items.size(); ++i) {
    items.push_back(*job.items[i].result);
    if (job.items[i].echo.contains("group")) groups[GroupKey(job.items[i].echo["group"])].push_back(i);
  }
  json out = {{"job", job.id}, {"status", "done"}, {"items", items}};
  if (!job.advantages) return out;
  json gs = json::object();
  for (const auto& [key, idx] : groups) {
    std::vector<std::optional<double>> rewards;
    for (size_t i : idx) {
      const json& r = items[i]["reward"];
      rewards.push_back(r.is_number() ? std::optional<double>(r.get<double>()) : std::nullopt);
    }
    auto adv = GroupAdvantages(rewards);
    json a = json::array(), members = json::array();
    double sum = 0;
    int n = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
      a.push_back(adv[k] ? json(*adv[k]) : json(nullptr));
      members.push_back(idx[k]);
      out["items"][idx[k]]["advantage"] = a.back();
      if (rewards[k]) sum += *rewards[k], ++n;
    }
    gs[key] = {{"items", members}, {"advantages", a}, {"mean_reward", n ? json(sum / n) : json(nullptr)}};
  }
  out["groups"] = gs;
  return out;
}

exec::Runner* Service::Persistent(bool check, int slot) {
  std::lock_guard<std::mutex> l(runners_mu_);
  auto& v = check ? check_ : measure_;
  if (!v[slot]) v[slot] = check ? cfg_.make_check(slot) : cfg_.make_measure(slot);
  return v[slot].get();
}

exec::PoolConfig Service::PoolCfg() {
  exec::PoolConfig pc;
  pc.measure_slots = static_cast<int>(measure_.size());
  pc.make_measure = [this](int slot) -> std::unique_ptr<exec::Runner> {
    exec::Runner* r = Persistent(false, slot);
    return r ? std::make_unique<Lent>(r) : nullptr;
  };
  pc.check_slots = static_cast<int>(check_.size());
  if (pc.check_slots > 0)
    pc.make_check = [this](int slot) -> std::unique_ptr<exec::Runner> {
      exec::Runner* r = Persistent(true, slot);
      return r ? std::make_unique<Lent>(r) : nullptr;
    };
  pc.store = cfg_.store;
  pc.use_cache = cfg_.use_cache;
  return pc;
}

void Service::Loop() {
  for (;;) {
    std::vector<Queued> batch;
    {
      std::unique_lock<std::mutex> l(mu_);
      work_cv_.wait(l, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      while (!queue_.empty() && batch.size() < cfg_.batch_max) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      in_flight_ = batch.size();
    }
    RunBatch(std::move(batch));
    std::lock_guard<std::mutex> l(mu_);
    in_flight_ = 0;
  }
}

void Service::RunBatch(std::vector<Queued> batch) {
  std::vector<exec::PoolItem> items;
  const auto now = Clock::now();
  for (size_t i = 0; i < batch.size(); ++i) {
    Item& it = batch[i].job->items[batch[i].index];
    if (it.deadline && *it.deadline <= now) {
      Finish(batch[i].job, batch[i].index,
             ResultJson(it, InvalidArgument("unused"), "deadline: the item waited in the queue past its deadline_s"));
      continue;
    }
    exec::EvalRequest r = *it.request;
    if (it.deadline)
      r.timeout_s = std::max(1.0, std::min(r.timeout_s, std::chrono::duration<double>(*it.deadline - now).count()));
    ++it.attempts;
    it.dispatched = now;
    metrics_.Evaluation();
    items.push_back({i, std::move(r)});
  }
  if (items.empty()) return;
  std::vector<Queued> again;
  exec::EvalPool(PoolCfg()).Run(std::move(items), [&](const exec::PoolItem& p, const Result<exec::EvalResult>& r, int) {
    Queued& q = batch[p.index];
    Item& it = q.job->items[q.index];
    if (r.ok()) NoteGpuMemory(*r);
    const bool died = !r.ok() || WorkerDied(*r);
    if (died && it.attempts < cfg_.max_attempts) {
      metrics_.Retry();
      again.push_back(q);
      return;
    }
    Finish(q.job, q.index, ResultJson(it, r, r.ok() ? "" : r.status().message()));
  });
  if (again.empty()) return;
  std::lock_guard<std::mutex> l(mu_);
  for (auto it = again.rbegin(); it != again.rend(); ++it) queue_.push_front(*it);
  work_cv_.notify_all();
}

Result<size_t> Service::Recover() {
  if (!cfg_.store) return size_t{0};
  KILN_ASSIGN_OR_RETURN(auto open, cfg_.store->UnfinishedServeJobs());
  size_t n = 0;
  for (auto& rec : open) {
    auto parsed = Parse(rec.request, Clock::now());
    KILN_ASSIGN_OR_RETURN(auto stored, cfg_.store->ServeItems(rec.id));
    JobPtr job;
    if (parsed.ok()) {
      job = *parsed;
    } else {  // the task set changed: every item without a result gets an error
      job = std::make_shared<JobState>();
      job->request = rec.request;
      job->accepted = Clock::now();
      size_t count = rec.request.contains("items") && rec.request["items"].is_array() ? rec.request["items"].size() : 0;
      job->items.resize(count);
      for (size_t i = 0; i < count; ++i) job->items[i].echo = {{"index", i}};
      job->remaining = count;
    }
    job->id = rec.id;
    job->key = rec.idem_key;
    for (auto& [idx, result] : stored) {
      if (idx >= 0 && static_cast<size_t>(idx) < job->items.size() && !job->items[idx].result) {
        job->items[idx].result = result;
        --job->remaining;
      }
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      Admit(job);
    }
    for (size_t i = 0; i < job->items.size(); ++i) {
      Item& it = job->items[i];
      if (it.result) continue;
      if (!parsed.ok())
        Finish(job, i, ResultJson(it, InvalidArgument("unused"), "after a restart: " + parsed.status().message()));
      else if (!it.request)
        Finish(job, i, ResultJson(it, InvalidArgument("unused"), ""));
    }
    if (job->remaining == 0 && !job->response) {  // every item was journalled before the restart
      std::lock_guard<std::mutex> l(mu_);
      job->response = Response(*job);
      (void)cfg_.store->FinishServeJob(job->id, *job->response);
    }
    ++n;
  }
  return n;
}

json Service::Health() const {
  std::lock_guard<std::mutex> l(mu_);
  json h = {{"status", "ok"},          {"queue_depth", queue_.size()},           {"in_flight", in_flight_},
            {"tasks", tasks_->size()}, {"reward_formula", cfg_.reward.ToJson()}, {"journal", cfg_.store != nullptr}};
  for (const auto& [k, v] : cfg_.describe.items()) h[k] = v;
  return h;
}

std::string Service::MetricsText() const {
  size_t depth, flight, open = 0;
  {
    std::lock_guard<std::mutex> l(mu_);
    depth = queue_.size();
    flight = in_flight_;
    for (const auto& [id, j] : jobs_) open += j->response ? 0 : 1;
  }
  return metrics_.Render(depth, flight, open, Workers());
}

WorkerCounts Service::Workers() const {
  WorkerCounts w;
  std::lock_guard<std::mutex> l(runners_mu_);
  w.measure = measure_.size();
  w.check = check_.size();
  auto count = [&w](const std::vector<std::unique_ptr<exec::Runner>>& v, size_t* up) {
    for (const auto& r : v) {
      const auto* worker = dynamic_cast<const exec::WorkerRunner*>(r.get());
      if (!worker) {  // another runner (a transcript): up once made
        *up += r ? 1 : 0;
        continue;
      }
      *up += worker->up() ? 1 : 0;
      w.starts += static_cast<size_t>(worker->starts());
    }
  };
  count(measure_, &w.measure_up);
  count(check_, &w.check_up);
  return w;
}

void Service::NoteGpuMemory(const std::string& gpu, double free_bytes, double total_bytes) {
  metrics_.GpuMemory(gpu, free_bytes, total_bytes);
}

// The worker's `gpu_memory` after a fresh evaluation (a cached result's is old news).
void Service::NoteGpuMemory(const exec::EvalResult& r) {
  if (r.from_cache || !r.raw.contains("gpu_memory") || !r.raw["gpu_memory"].is_object()) return;
  const json& m = r.raw["gpu_memory"];
  if (!m.contains("free_bytes") || !m["free_bytes"].is_number() || !m.contains("total_bytes") ||
      !m["total_bytes"].is_number())
    return;
  std::string gpu;
  if (m.contains("uuid") && m["uuid"].is_string()) gpu = m["uuid"].get<std::string>();
  if (gpu.empty() && r.device.contains("index") && r.device["index"].is_number_integer())
    gpu = std::to_string(r.device["index"].get<int>());
  metrics_.GpuMemory(gpu, m["free_bytes"].get<double>(), m["total_bytes"].get<double>());
}

}  // namespace kiln::serve

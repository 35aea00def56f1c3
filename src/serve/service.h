// kiln/serve: the reward service behind `kiln serve` (docs/serve.md): jobs of reward items, a bounded
// queue, a dispatcher that feeds the batch pipeline (exec::EvalPool: check workers, then exclusive
// timing) over persistent workers, per-item deadlines, idempotency keys, and the journal in the
// records database so a restarted server finishes what it accepted.
//
// Roadmap: Accept parses a request whole (any bad item: 400), decides the items that need no worker
// (no code, the rule-based gate fails) at once, and queues the rest. The dispatcher takes up to
// batch_max queued items at a time and runs them through one EvalPool::Run whose runner factories lend
// the service's persistent runners (a WorkerRunner restarts its worker after it dies). An item whose
// worker died without answering, or that hit a machinery failure, runs once more; then it keeps its
// verdict (crash) or gets verdict "error" (reward null: an infrastructure failure is never a wrong
// answer). Each item's first result is journalled (store::PutServeItem keeps one), so a result is
// answered exactly once even across restarts. Candidate code only ever reaches the workers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "exec/evaluator.h"
#include "exec/runner.h"
#include "serve/metrics.h"
#include "serve/reward.h"
#include "serve/tasks.h"
#include "store/store.h"

namespace kiln::serve {

struct ServiceConfig {
  exec::EvalRequest base;         // mode, policy, seed, trials, timeout_s of every item
  RewardFormula reward;           // default formula
  size_t queue_limit = 1024;      // items waiting or in flight; beyond: 429
  size_t max_items = 256;         // per request; beyond: 413
  size_t batch_max = 64;          // items per EvalPool run
  int max_attempts = 2;           // a dead worker's item runs once more, then gets a verdict
  store::Store* store = nullptr;  // journal, cache and records; null: none (no restart recovery)
  bool use_cache = true;
  int measure_slots = 1, check_slots = 0;
  std::function<std::unique_ptr<exec::Runner>(int slot)> make_measure, make_check;
  nlohmann::json describe = nlohmann::json::object();  // workers, devices: shown by /v1/health
};

struct Answer {
  int http = 200;
  nlohmann::json body;
  int retry_after_s = 0;  // 429
};

class Service {
 public:
  Service(ServiceConfig cfg, TaskSet* tasks);
  ~Service();
  // Re-queues the journal's unfinished jobs (a restarted server); returns how many.
  Result<size_t> Recover();
  void Start();
  void Stop();

  // POST /v1/rewards. `wait_s` < 0: asynchronous (202 + job id); else waits up to wait_s for the result
  // (200), or answers 202 with the job id when the deadline passes first.
  Answer Submit(const nlohmann::json& request, const std::string& idem_key, double wait_s);
  // GET /v1/jobs/{id}: 200 with the job (status done or running), 404.
  Answer Job(const std::string& id);
  nlohmann::json Health() const;
  nlohmann::json Tasks() const { return tasks_->List(); }
  std::string MetricsText() const;
  // A GPU's memory (device-wide, bytes) seen outside an evaluation (the workers' hello at start);
  // evaluations report theirs as they finish.
  void NoteGpuMemory(const std::string& gpu, double free_bytes, double total_bytes);

 private:
  using Clock = std::chrono::steady_clock;
  struct Item {
    nlohmann::json echo;                       // index, id, group, task
    std::optional<exec::EvalRequest> request;  // nullopt: decided without a worker
    Components comp;
    RewardFormula formula;
    std::optional<nlohmann::json> result;
    int attempts = 0;
    std::optional<Clock::time_point> deadline;
    Clock::time_point dispatched{};
  };
  struct JobState {
    std::string id, key;
    nlohmann::json request;
    std::vector<Item> items;
    size_t remaining = 0;
    bool advantages = false;
    Clock::time_point accepted;
    std::optional<nlohmann::json> response;
  };
  using JobPtr = std::shared_ptr<JobState>;
  struct Queued {
    JobPtr job;
    size_t index;
  };

  // Builds a job from a request; an error names the item. `started`: when it was accepted.
  Result<JobPtr> Parse(const nlohmann::json& request, Clock::time_point started);
  Status ParseItem(const nlohmann::json& in, size_t index, const nlohmann::json& request, Item* it);
  void Admit(const JobPtr& job);                                        // queues its items (mu_ held)
  void Finish(const JobPtr& job, size_t index, nlohmann::json result);  // mu_ not held
  nlohmann::json ResultJson(Item& it, const Result<exec::EvalResult>& r, const std::string& error);
  nlohmann::json Response(const JobState& job) const;  // mu_ held
  nlohmann::json Running(const JobState& job) const;   // mu_ held
  Answer WaitFor(const JobPtr& job, double wait_s);
  void Loop();
  void RunBatch(std::vector<Queued> batch);
  exec::PoolConfig PoolCfg();
  exec::Runner* Persistent(bool check, int slot);
  WorkerCounts Workers() const;
  void NoteGpuMemory(const exec::EvalResult& r);
  std::string NewId();

  ServiceConfig cfg_;
  TaskSet* tasks_;
  Metrics metrics_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Queued> queue_;
  size_t in_flight_ = 0;
  bool stop_ = false;
  std::map<std::string, JobPtr> jobs_;
  std::map<std::string, std::string> by_key_;
  std::deque<std::string> finished_order_;
  mutable std::mutex runners_mu_;
  std::vector<std::unique_ptr<exec::Runner>> measure_, check_;
  std::thread loop_;
  uint64_t seq_ = 0;
};

}  // namespace kiln::serve

// kiln/exec: admission of check work by GPU memory (admission.h).
#include "exec/admission.h"

#include <algorithm>

namespace kiln::exec {

MemoryAdmission::MemoryAdmission(int n_gpus, int64_t capacity_bytes)
    : capacity_(std::max<int64_t>(0, capacity_bytes)),
      in_use_(std::max(1, n_gpus), 0),
      running_(std::max(1, n_gpus), 0) {}

std::string MemoryAdmission::Key(const EvalRequest& req) {
  std::string k = req.task.hash.empty() ? req.task.path + req.task.sizes.dump() : req.task.hash;
  for (const auto& c : req.cases) k += "|" + c;
  return k;
}

int64_t MemoryAdmission::Estimate(const EvalRequest& req, bool* learned) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = peaks_.find(Key(req));
  if (learned) *learned = it != peaks_.end();
  return it != peaks_.end() ? it->second : std::max<int64_t>(0, req.memory_hint_bytes);
}

void MemoryAdmission::Acquire(int gpu, int64_t estimate) {
  std::unique_lock<std::mutex> l(mu_);
  const size_t g = static_cast<size_t>(gpu) % in_use_.size();
  if (enabled()) {
    cv_.wait(l, [&] { return running_[g] == 0 || in_use_[g] + estimate <= capacity_; });
  }
  in_use_[g] += estimate;
  running_[g] += 1;
  max_in_use_ = std::max(max_in_use_, in_use_[g]);
  max_running_ = std::max(max_running_, running_[g]);
}

void MemoryAdmission::Release(int gpu, int64_t estimate) {
  {
    std::lock_guard<std::mutex> l(mu_);
    const size_t g = static_cast<size_t>(gpu) % in_use_.size();
    in_use_[g] -= estimate;
    running_[g] -= 1;
  }
  cv_.notify_all();
}

void MemoryAdmission::Learn(const EvalRequest& req, const EvalResult& r) {
  const int64_t peak = ReportedPeakBytes(r);
  if (peak <= 0) return;
  std::lock_guard<std::mutex> l(mu_);
  int64_t& p = peaks_[Key(req)];
  p = std::max(p, peak);
}

int64_t MemoryAdmission::max_in_use() const {
  std::lock_guard<std::mutex> l(mu_);
  return max_in_use_;
}

int MemoryAdmission::max_running() const {
  std::lock_guard<std::mutex> l(mu_);
  return max_running_;
}

int64_t ReportedPeakBytes(const EvalResult& r) {
  if (!r.raw.is_object()) return 0;
  auto m = r.raw.find("memory");
  if (m == r.raw.end() || !m->is_object()) return 0;
  // an infrastructure out-of-memory outcome reports what was in use and asked for instead
  for (const char* k : {"peak_bytes", "in_use_bytes"}) {
    auto v = m->find(k);
    if (v != m->end() && v->is_number_integer()) {
      int64_t b = v->get<int64_t>();
      if (std::string(k) == "in_use_bytes") {
        auto req = m->find("requested_bytes");
        if (req != m->end() && req->is_number_integer()) b += req->get<int64_t>();
      }
      if (b > 0) return b;
    }
  }
  return 0;
}

bool IsInfraOutOfMemory(const EvalResult& r) {
  return std::any_of(r.reasons.begin(), r.reasons.end(),
                     [](const Reason& x) { return x.code == "infra_out_of_memory"; });
}

}  // namespace kiln::exec

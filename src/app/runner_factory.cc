#include "app/runner_factory.h"

namespace kiln::app {

namespace {

// A recording runner that owns the worker it records.
class RecordedWorker : public exec::Runner {
 public:
  RecordedWorker(std::unique_ptr<exec::Runner> inner, const std::string& path)
      : inner_(std::move(inner)), recording_(inner_.get(), path) {}
  Result<exec::HelloInfo> Hello() override { return recording_.Hello(); }
  Result<exec::EvalResult> Evaluate(const exec::EvalRequest& r) override { return recording_.Evaluate(r); }
  Result<nlohmann::json> DevicePeaks(const std::vector<std::string>& d) override { return recording_.DevicePeaks(d); }
  exec::Runner* inner() { return inner_.get(); }

 private:
  std::unique_ptr<exec::Runner> inner_;
  exec::RecordingRunner recording_;
};

}  // namespace

exec::WorkerOptions ToWorkerOptions(const RunnerSpec& spec) {
  exec::WorkerOptions o;
  o.python = spec.python;
  o.isolation = spec.isolation;
  o.interpret = spec.interpret;
  o.device = spec.device;
  o.cuda_visible_devices = spec.cuda_visible_devices;
  return o;
}

Result<std::unique_ptr<exec::Runner>> MakeRunner(const RunnerSpec& spec) {
  if (!spec.replay.empty()) {
    KILN_ASSIGN_OR_RETURN(auto replay, exec::ReplayRunner::Open(spec.replay));
    return std::unique_ptr<exec::Runner>(std::move(replay));
  }
  std::unique_ptr<exec::Runner> worker = std::make_unique<exec::WorkerRunner>(ToWorkerOptions(spec));
  if (spec.record.empty()) return worker;
  return std::unique_ptr<exec::Runner>(std::make_unique<RecordedWorker>(std::move(worker), spec.record));
}

exec::Runner* Unrecorded(exec::Runner* r) {
  if (auto* rec = dynamic_cast<RecordedWorker*>(r)) return rec->inner();
  return r;
}

}  // namespace kiln::app

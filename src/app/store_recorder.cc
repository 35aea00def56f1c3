#include "app/store_recorder.h"

#include <cstdio>

namespace kiln::app {

void StoreRecorder::Warn(const Status& s) {
  if (s.ok()) return;
  std::call_once(warned_, [&] { std::fprintf(stderr, "kiln: warning: optimize records: %s\n", s.message().c_str()); });
}

int64_t StoreRecorder::BeginRun(const nlohmann::json& info) {
  auto id = store_->BeginOptimizeRun(info);
  if (!id.ok()) {
    Warn(id.status());
    return 0;
  }
  return *id;
}

void StoreRecorder::Step(int64_t run, const std::string& kind, const nlohmann::json& detail) {
  if (run > 0) Warn(store_->AddOptimizeStep(run, kind, detail));
}

void StoreRecorder::EndRun(int64_t run, const std::string& status, const nlohmann::json& result) {
  if (run > 0) Warn(store_->EndOptimizeRun(run, status, result));
}

}  // namespace kiln::app

// kiln/app: the tuning loop's Recorder over the records store (store::Store's optimize runs). A
// failed write is reported once on stderr and the run goes on: records never stop a job.
#pragma once

#include <mutex>
#include <string>

#include "search/interfaces.h"
#include "store/store.h"

namespace kiln::app {

class StoreRecorder : public search::Recorder {
 public:
  explicit StoreRecorder(store::Store* store) : store_(store) {}
  int64_t BeginRun(const nlohmann::json& info) override;
  void Step(int64_t run, const std::string& kind, const nlohmann::json& detail) override;
  void EndRun(int64_t run, const std::string& status, const nlohmann::json& result) override;

 private:
  void Warn(const Status& s);
  store::Store* store_;
  std::once_flag warned_;
};

}  // namespace kiln::app

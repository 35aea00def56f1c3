// kiln/common: whole-file reads and writes with clear errors.
#pragma once

#include <string>

#include "common/status.h"

namespace kiln {

Result<std::string> ReadFile(const std::string& path);
Status WriteFile(const std::string& path, const std::string& content);  // atomic: temp + rename

// A fresh directory under $TMPDIR (else /tmp), removed with everything in it when the object goes away
// (KILN_KEEP_TMP=1 keeps it, for debugging). Move-only.
class TempDir {
 public:
  static Result<TempDir> Make(const std::string& prefix);
  TempDir() = default;
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&& o) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { Remove(); }
  const std::string& path() const { return path_; }
  void Remove();

 private:
  std::string path_;
};

}  // namespace kiln

#include "common/file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <stdlib.h>

namespace kiln {

Result<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(path + ": error: no such file");
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument(path + ": error: is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": error: cannot read file: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError(path + ": error: read failed");
  return ss.str();
}

Status WriteFile(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError(path + ": error: cannot write file: " + std::strerror(errno));
    out << content;
    if (!out) return IoError(path + ": error: write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return IoError(path + ": error: cannot rename into place: " + ec.message());
  return Status::Ok();
}

Result<TempDir> TempDir::Make(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return IoError(tmpl + ": cannot create a temporary directory: " + std::strerror(errno));
  TempDir d;
  d.path_ = buf.data();
  return d;
}

TempDir& TempDir::operator=(TempDir&& o) noexcept {
  if (this != &o) {
    Remove();
    path_ = std::move(o.path_);
    o.path_.clear();
  }
  return *this;
}

void TempDir::Remove() {
  if (path_.empty()) return;
  const char* keep = std::getenv("KILN_KEEP_TMP");
  if (!(keep && std::string(keep) == "1")) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  path_.clear();
}

}  // namespace kiln

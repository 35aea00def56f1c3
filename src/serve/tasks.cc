#include "serve/tasks.h"

#include <filesystem>

#include <fmt/format.h>

#include "common/file.h"
#include "common/hash.h"
#include "common/json.h"

namespace kiln::serve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The first of `keys` present in `t` with a value that is not a string (nlohmann's value() would throw), or null.
const char* NonStringKey(const json& t, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (t.contains(k) && !t[k].is_string()) return k;
  return nullptr;
}

std::string FirstLine(const std::string& m) {
  std::string s = m.substr(0, m.find('\n'));
  return s;
}

}  // namespace

Status TaskSet::Add(const std::string& name, const task::TaskSpec& spec) {
  std::lock_guard<std::mutex> l(mu_);
  by_name_[name] = spec;
  if (!spec.name.empty() && spec.name != name) by_name_.emplace(spec.name, spec);
  return Status::Ok();
}

Status TaskSet::Load(const std::string& path, std::vector<std::string>* warnings) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file() && it->path().extension() == ".py") files.push_back(it->path());
    }
    if (ec) return IoError(fmt::format("{}: cannot list: {}", path, ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto spec = task::LoadTask(f.string());
      if (!spec.ok()) {
        warnings->push_back(fmt::format("skipped {}", FirstLine(spec.status().message())));
        continue;
      }
      std::string name = fs::relative(f, path).replace_extension().generic_string();
      KILN_RETURN_IF_ERROR(Add(name, *spec));
    }
    return Status::Ok();
  }
  if (fs::path(path).extension() == ".json") {
    KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    json j = ParseJson(text);
    if (!j.is_object() || !j.contains("tasks") || !j["tasks"].is_array())
      return InvalidArgument(fmt::format("{}:1:1: error: expected {{\"tasks\": [{{\"name\", \"path\", ...}}]}}", path));
    const fs::path dir = fs::absolute(path).parent_path();
    for (size_t i = 0; i < j["tasks"].size(); ++i) {
      const json& t = j["tasks"][i];
      if (!t.is_object() || !t.contains("path") || !t["path"].is_string())
        return InvalidArgument(fmt::format("{}:1:1: error: tasks[{}]: expected an object with \"path\"", path, i));
      if (const char* k = NonStringKey(t, {"format", "entry", "name", "bench"}))
        return InvalidArgument(fmt::format("{}:1:1: error: tasks[{}]: \"{}\" must be a string", path, i, k));
      task::LoadOptions lo;
      lo.format = t.value("format", "");
      lo.entry = t.value("entry", "");
      fs::path p = t["path"].get<std::string>();
      if (p.is_relative()) p = dir / p;
      if (t.contains("sizes")) {  // KernelBench module constants to override (batch_size, dim, ...)
        if (!t["sizes"].is_object())
          return InvalidArgument(
              fmt::format("{}:1:1: error: tasks[{}].sizes: expected an object {{\"NAME\": number}}", path, i));
        lo.sizes = t["sizes"];
      }
      if (t.contains("bench") && t["bench"].is_string()) {
        fs::path b = t["bench"].get<std::string>();
        lo.bench = (b.is_relative() ? dir / b : b).string();
      }
      auto spec = task::LoadTask(p.lexically_normal().string(), lo);
      if (!spec.ok())
        return Status(spec.status().code(), fmt::format("{}: tasks[{}]: {}", path, i, spec.status().message()));
      KILN_RETURN_IF_ERROR(Add(t.value("name", spec->name), *spec));
    }
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(task::TaskSpec spec, task::LoadTask(path));
  return Add(fs::path(path).stem().string(), spec);
}

Result<task::TaskSpec> TaskSet::Find(const std::string& name) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = by_name_.find(name);
  if (it == by_name_.end())
    return NotFound(fmt::format("unknown task '{}' (the server loaded {} task name(s); GET /v1/tasks lists them)", name,
                                by_name_.size()));
  return it->second;
}

Result<task::TaskSpec> TaskSet::Inline(const json& t) {
  if (!t.contains("reference") || !t["reference"].is_string() || t["reference"].get<std::string>().empty())
    return InvalidArgument("task: an inline task needs \"reference\": the reference module's source");
  if (const char* k = NonStringKey(t, {"format", "name"}))
    return InvalidArgument(fmt::format("task.{}: expected a string", k));
  const std::string src = t["reference"].get<std::string>();
  const std::string format = t.value("format", "kernelbench");
  if (format != "kernelbench" && format != "tritonbench_g" && format != "tritonbench_t")
    return InvalidArgument(
        fmt::format("task.format '{}': inline tasks are kernelbench, tritonbench_g or tritonbench_t", format));
  std::string name = t.value("name", "inline");
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  const fs::path dir = fs::path(inline_dir_) / (HashHex(format + "\n" + src));
  const fs::path file = dir / (name + ".py");
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    fs::create_directories(dir, ec);
    KILN_RETURN_IF_ERROR(WriteFile(file.string(), src));
  }
  task::LoadOptions lo;
  lo.format = format;
  lo.name = "inline/" + name;
  return task::LoadTask(file.string(), lo);
}

json TaskSet::List() const {
  std::lock_guard<std::mutex> l(mu_);
  json out = json::array();
  for (const auto& [name, spec] : by_name_)
    out.push_back({{"name", name}, {"format", task::FormatName(spec.format)}, {"hash", spec.hash}});
  return out;
}

size_t TaskSet::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return by_name_.size();
}

}  // namespace kiln::serve

#include "app/pairs.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "common/strings.h"

namespace kiln::app {

namespace {

using nlohmann::json;

std::string Show(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string OneOf(const json& v, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (v.is_string() && v.get<std::string>() == a) return "";
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  return fmt::format("expected one of {}, got {}", list, Show(v));
}

// "" when `v` is valid for `key`, else what is wrong with it.
std::string CheckValue(const std::string& key, const json& v) {
  if (key == "task" || key == "source" || key == "name" || key == "entry" || key == "bench" || key == "baseline")
    return v.is_string() ? "" : "expected a string, got " + Show(v);
  if (key == "candidate") return v.is_string() || v.is_null() ? "" : "expected a path or null, got " + Show(v);
  if (key == "id")
    return v.is_string() || v.is_number_integer() ? "" : "expected a string or an integer, got " + Show(v);
  if (key == "mode") return OneOf(v, {"check", "time"});
  if (key == "policy") return OneOf(v, {"strict", "trusted"});
  if (key == "protocol") return OneOf(v, {"kernelbench", "legacy"});
  if (key == "format") return OneOf(v, {"auto", "kernelbench", "tritonbench_g", "tritonbench_t", "kiln"});
  if (key == "trials") {
    return v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 1000
               ? ""
               : "expected an integer from 1 to 1000, got " + Show(v);
  }
  if (key == "seed") return v.is_number_unsigned() ? "" : "expected an integer >= 0, got " + Show(v);
  if (key == "timeout_s") {
    bool ok = v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0.1 && v.get<double>() <= 86400;
    return ok ? "" : "expected seconds from 0.1 to 86400, got " + Show(v);
  }
  if (key == "sizes") return v.is_object() ? "" : "expected an object {NAME: VALUE}, got " + Show(v);
  if (key == "legacy_stdout") return v.is_boolean() ? "" : "expected true or false, got " + Show(v);
  if (key == "memory_hint_bytes")
    return v.is_number_unsigned() && v.get<uint64_t>() <= uint64_t{1} << 62
               ? ""
               : "expected an integer number of bytes >= 0, got " + Show(v);
  return "unknown key (known: task, candidate, source, name, id, mode, policy, protocol, trials, seed, timeout_s, "
         "sizes, format, entry, bench, baseline, legacy_stdout, memory_hint_bytes)";
}

json Echo(const json& in) {
  json e = json::object();
  for (const char* k : {"id", "task", "candidate"}) {
    if (in.contains(k)) e[k] = in[k];
  }
  return e;
}

}  // namespace

PairsFile ParsePairs(const std::string& path, const std::string& text) {
  PairsFile f;
  std::map<std::string, size_t> ids;  // id (as JSON) -> its first line
  size_t line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    f.last_line = ++line_no;
    if (IsBlankLine(line)) continue;
    ++f.lines;
    auto fail = [&](const std::string& what, const json& echo) {
      f.errors.push_back({line_no, fmt::format("{}:{}:1: error: {}", path, line_no, what), echo});
    };
    json in = ParseJson(line);
    if (!in.is_object()) {
      fail("expected a JSON object {\"task\": PATH, \"candidate\": PATH|null, ...}", json::object());
      continue;
    }
    std::string bad;
    for (const auto& [k, v] : in.items()) {
      if (std::string why = CheckValue(k, v); !why.empty()) {
        bad = fmt::format("key '{}': {}", k, why);
        break;
      }
    }
    if (bad.empty() && !in.contains("task")) bad = "missing key 'task' (the task file)";
    if (bad.empty() && in.contains("id")) {
      auto [it, fresh] = ids.emplace(in["id"].dump(), line_no);
      if (!fresh) bad = fmt::format("key 'id': duplicate id {} (first on line {})", Show(in["id"]), it->second);
    }
    if (!bad.empty()) {
      fail(bad, Echo(in));
      continue;
    }
    // the memory hint schedules the pair, it does not change its result: --resume matches without it
    json hashed = in;
    hashed.erase("memory_hint_bytes");
    f.pairs.push_back({line_no, HashHex(DumpJson(hashed)), in});
  }
  return f;
}

PreviousResults ReadPreviousResults(const std::string& text) {
  PreviousResults r;
  size_t p = 0;
  while (p < text.size()) {
    size_t nl = text.find('\n', p);
    if (nl == std::string::npos) break;  // a torn last line: dropped
    std::string l = text.substr(p, nl - p);
    p = nl + 1;
    json j = ParseJson(l);
    if (!j.is_object() || !j.contains("result")) continue;
    if (auto h = j.find("pair_hash"); h != j.end() && h->is_string()) {
      r.hashes.insert(h->get<std::string>());
    } else if (auto ln = j.find("line"); ln != j.end() && ln->is_number_unsigned()) {
      r.legacy_lines.insert(ln->get<size_t>());
    } else {
      continue;
    }
    if (auto ix = j.find("index"); ix != j.end() && ix->is_number_unsigned())
      r.next_index = std::max(r.next_index, ix->get<size_t>() + 1);
    r.kept += l + "\n";
  }
  return r;
}

}  // namespace kiln::app

#include "task/task.h"

#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "common/diag.h"
#include "common/file.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/json_dump.h"
#include "pyast/pyast.h"
#include "pyast/syntax.h"

namespace kiln::task {

namespace fs = std::filesystem;
using nlohmann::json;
using pyast::Definition;

const char* FormatName(Format f) {
  switch (f) {
    case Format::kKernelBench: return "kernelbench";
    case Format::kTritonBenchG: return "tritonbench_g";
    case Format::kTritonBenchT: return "tritonbench_t";
    case Format::kKiln: return "kiln";
  }
  return "kernelbench";
}

Result<Format> ParseFormat(const std::string& name) {
  if (name == "kernelbench") return Format::kKernelBench;
  if (name == "tritonbench_g" || name == "tritonbench-g") return Format::kTritonBenchG;
  if (name == "tritonbench_t" || name == "tritonbench-t") return Format::kTritonBenchT;
  if (name == "kiln") return Format::kKiln;
  return InvalidArgument(
      fmt::format("unknown task format '{}' (expected kernelbench, tritonbench_g, tritonbench_t or kiln)", name));
}

json TaskSpec::ToJson() const {
  json j = {{"format", FormatName(format)}, {"name", name}, {"path", path}};
  if (!perf_path.empty()) j["perf_path"] = perf_path;
  if (!bench_path.empty()) j["bench_path"] = bench_path;
  if (!entry.empty()) j["entry"] = entry;
  if (!sizes.empty()) j["sizes"] = sizes;
  j["hash"] = hash;
  return j;
}

Result<TaskSpec> TaskSpec::FromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("task spec is not a JSON object");
  TaskSpec t;
  try {
    KILN_ASSIGN_OR_RETURN(t.format, ParseFormat(j.value("format", "")));
    t.name = j.value("name", "");
    t.path = j.value("path", "");
    t.perf_path = j.value("perf_path", "");
    t.bench_path = j.value("bench_path", "");
    t.entry = j.value("entry", "");
    if (j.contains("sizes") && j["sizes"].is_object()) t.sizes = j["sizes"];
    t.hash = j.value("hash", "");
  } catch (const json::exception& e) {
    return InvalidArgument(fmt::format("bad task spec: {}", e.what()));
  }
  return t;
}

size_t FindSeparator(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(pos, end - pos);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    if (line.size() == kTritonBenchSeparatorWidth && line.find_first_not_of('#') == std::string_view::npos) {
      return pos;
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return std::string_view::npos;
}

std::string StripTritonBenchTest(std::string_view text) {
  size_t sep = FindSeparator(text);
  return std::string(sep == std::string_view::npos ? text : text.substr(0, sep));
}

namespace {

std::string Abs(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  if (ec) return p;
  return a.lexically_normal().string();
}

Status DiagError(const pyast::Tree& tree, const pyast::Span& span, const std::string& msg) {
  return InvalidArgument(FormatDiagnostic(tree.MakeDiagnostic(span, msg)));
}

Status FileError(const std::string& file, const std::string& msg) {
  Diagnostic d;
  d.file = file;
  d.message = msg;
  return InvalidArgument(FormatDiagnostic(d));
}

bool IsTritonKernel(const pyast::Node& n) {
  if (n.type() != "decorated_definition") return false;
  for (const auto& c : n.named_children()) {
    if (c.type() != "decorator") continue;
    std::string_view t = c.text();
    if (t.find("jit") != std::string_view::npos || t.find("autotune") != std::string_view::npos ||
        t.find("heuristics") != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

struct TopLevel {
  std::map<std::string, pyast::Node> classes;
  std::map<std::string, pyast::Node> functions;  // non-kernel functions
  std::vector<std::string> function_order;
  std::set<std::string> kernels;
  std::map<std::string, pyast::Node> constants;  // NAME = <number or numeric expression, e.g. 2048 * 2>
  std::set<std::string> tuples;                  // those of `constants` that are tuples: NAME = (32768,)
  std::set<std::string> assigned;                // NAME = <anything>
  bool Defines(const std::string& n) const {
    return functions.count(n) || classes.count(n) || kernels.count(n) || assigned.count(n);
  }
};

// A number, or arithmetic on numbers and names (`2048 * 2`, `-(1 << 10)`, `4 * dim`): what --size may
// override with a number. Bounded depth: deeper expressions are not size constants.
bool IsNumericExpr(const pyast::Node& v, int depth = 0) {
  if (v.is_null() || depth > 16) return false;
  const std::string_view t = v.type();
  if (t == "integer" || t == "float") return true;
  if (t == "identifier") return depth > 0;  // a name inside arithmetic (a bare alias is not a constant)
  if (t == "unary_operator") return IsNumericExpr(v.field("argument"), depth + 1);
  if (t == "parenthesized_expression") return v.named_child_count() == 1 && IsNumericExpr(v.named_child(0), depth + 1);
  if (t == "binary_operator") {
    return IsNumericExpr(v.field("left"), depth + 1) && IsNumericExpr(v.field("right"), depth + 1);
  }
  return false;
}

// A tuple or list of numeric expressions (`input_shape = (32768,)`).
bool IsNumberTuple(const pyast::Node& v) {
  if (v.is_null() || (v.type() != "tuple" && v.type() != "list") || v.named_child_count() == 0) return false;
  for (const auto& c : v.named_children()) {
    if (!IsNumericExpr(c, 1)) return false;
  }
  return true;
}

// A --size value for a constant: a number for a number; for a tuple, an array of numbers, given as JSON
// (`[1024]`) or as Python (`(1024,)`, `1024,`). nullopt when it does not fit.
std::optional<json> SizeValue(const json& v, bool tuple) {
  if (!tuple) return v.is_number() ? std::optional<json>(v) : std::nullopt;
  json arr = v;
  if (v.is_string()) {
    std::string t = v.get<std::string>();
    for (char& c : t) {
      if (c == '(') c = '[';
      if (c == ')') c = ']';
    }
    if (t.empty() || t.front() != '[') t = "[" + t + "]";
    size_t comma = t.find_last_not_of(" ]");  // a trailing comma, as in (1024,)
    if (comma != std::string::npos && t[comma] == ',') t.erase(comma, 1);
    arr = ParseJson(t);
  } else if (v.is_number()) {
    arr = json::array({v});
  }
  if (!arr.is_array() || arr.empty()) return std::nullopt;
  for (const auto& x : arr) {
    if (!x.is_number()) return std::nullopt;
  }
  return arr;
}

// Top-level definitions whose start lies in [begin, end).
TopLevel Scan(const pyast::Tree& tree, uint32_t begin, uint32_t end) {
  TopLevel out;
  for (const auto& stmt : tree.root().named_children()) {
    uint32_t b = stmt.span().begin.byte;
    if (b < begin || b >= end) continue;
    pyast::Node def = Definition(stmt);
    std::string name(def.field("name").text());
    if (def.type() == "class_definition") {
      out.classes.emplace(name, stmt);
    } else if (def.type() == "function_definition") {
      if (IsTritonKernel(stmt)) {
        out.kernels.insert(name);
      } else if (!out.functions.count(name)) {
        out.functions.emplace(name, stmt);
        out.function_order.push_back(name);
      }
    } else if (stmt.type() == "expression_statement" && stmt.named_child_count() == 1 &&
               stmt.named_child(0).type() == "assignment") {
      pyast::Node a = stmt.named_child(0);
      pyast::Node left = a.field("left"), right = a.field("right");
      if (left.type() == "identifier") out.assigned.insert(std::string(left.text()));
      if (left.type() == "identifier" && !right.is_null()) {
        std::string name(left.text());
        if (IsNumericExpr(right)) {
          out.constants.emplace(name, right);
        } else if (IsNumberTuple(right)) {
          out.constants.emplace(name, right);
          out.tuples.insert(name);
        }
      }
    }
  }
  return out;
}

// Names called anywhere inside `node` (identifiers in call position), in order.
std::vector<std::string> CalledNames(const pyast::Node& node) {
  std::vector<std::string> out;
  node.Walk([&](const pyast::Node& n) {
    if (n.type() == "call") {
      pyast::Node f = n.field("function");
      if (f.type() == "identifier") out.emplace_back(f.text());
    }
    return true;
  });
  return out;
}

// `from <pkg>.<stem> import a, b` in a TritonBench perf harness: the first imported name.
std::string EntryFromPerf(const std::string& perf_path) {
  auto tree = pyast::Tree::ParseFile(perf_path);
  if (!tree.ok()) return "";
  for (const auto& stmt : (*tree)->root().named_children()) {
    if (stmt.type() != "import_from_statement") continue;
    std::string_view mod = stmt.field("module_name").text();
    if (mod.rfind("TritonBench_v1.", 0) != 0 && mod.rfind("TorchBench_v1.", 0) != 0) continue;
    for (const auto& c : stmt.named_children()) {
      if (c == stmt.field("module_name")) continue;
      if (c.type() == "dotted_name") return std::string(c.text());
      if (c.type() == "aliased_import") return std::string(c.field("name").text());
    }
  }
  return "";
}

std::string DeriveName(const fs::path& p, Format f) {
  std::string stem = p.stem().string();
  std::string parent = p.parent_path().filename().string();
  if (f == Format::kKernelBench && !parent.empty()) return parent + "/" + stem;
  if (f == Format::kTritonBenchG) return "tritonbench_g/" + stem;
  if (f == Format::kTritonBenchT) return "tritonbench_t/" + stem;
  return stem;
}

Result<TaskSpec> LoadManifest(const std::string& path, const LoadOptions& opts) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e+3084
    return FileError(path, fmt::format("bad kiln task manifest: {}", e.what()));
  }
  if (!j.is_object()) return FileError(path, "bad kiln task manifest: expected a JSON object");
  for (const char* key : {"module", "bench", "entry", "name"}) {  // strings, or nlohmann's value() throws
    if (j.contains(key) && !j[key].is_string())
      return FileError(path, fmt::format("bad kiln task manifest: \"{}\" must be a string", key));
  }
  if (j.contains("sizes") && !j["sizes"].is_object())
    return FileError(path, "bad kiln task manifest: \"sizes\" must be an object {NAME: VALUE}");
  fs::path dir = fs::path(Abs(path)).parent_path();
  auto rel = [&](const std::string& key) -> std::string {
    std::string v = j.value(key, "");
    if (v.empty()) return "";
    fs::path q(v);
    return (q.is_absolute() ? q : dir / q).lexically_normal().string();
  };
  TaskSpec t;
  t.format = Format::kKiln;
  t.path = rel("module");
  t.bench_path = rel("bench");
  t.entry = opts.entry.empty() ? j.value("entry", "") : opts.entry;
  t.name = !opts.name.empty() ? opts.name : j.value("name", fs::path(path).stem().string());
  if (j.contains("sizes") && j["sizes"].is_object()) t.sizes = j["sizes"];
  for (auto& [k, v] : opts.sizes.items()) t.sizes[k] = v;
  if (t.path.empty()) return FileError(path, "kiln task manifest lacks \"module\"");
  if (t.entry.empty()) return FileError(path, "kiln task manifest lacks \"entry\"");
  if (t.bench_path.empty()) return FileError(path, "kiln task manifest lacks \"bench\"");
  return t;
}

}  // namespace

Result<json> ModuleConstants(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<pyast::Tree> tree, pyast::Tree::ParseFile(path));
  json out = json::object();
  TopLevel top = Scan(*tree, 0, static_cast<uint32_t>(tree->text().size()));
  for (const auto& [name, node] : top.constants) {
    try {
      out[name] = json::parse(std::string(node.text()));
    } catch (const json::exception&) {
    }
  }
  return out;
}

Status ComputeHash(TaskSpec* spec) {
  json j = spec->ToJson();
  j.erase("hash");
  // Paths are not part of the identity: the same task in two checkouts hashes the same.
  j.erase("path");
  j.erase("perf_path");
  j.erase("bench_path");
  std::string acc = DumpJson(j);
  for (const std::string* p : {&spec->path, &spec->perf_path, &spec->bench_path}) {
    acc += '\0';
    if (p->empty()) continue;
    KILN_ASSIGN_OR_RETURN(std::string content, ReadFile(*p));
    acc += HashHex(content);
  }
  spec->hash = HashHex(acc);
  return Status::Ok();
}

Result<TaskSpec> LoadTask(const std::string& path_in, const LoadOptions& opts) {
  std::error_code ec;
  if (!fs::exists(path_in, ec)) return NotFound(FileError(path_in, "no such task file").message());
  std::string path = Abs(path_in);
  std::string want = opts.format == "auto" ? "" : opts.format;
  std::optional<Format> forced;
  if (!want.empty()) {
    KILN_ASSIGN_OR_RETURN(Format f, ParseFormat(want));
    forced = f;
  }

  TaskSpec spec;
  if (fs::is_directory(path, ec)) {
    // A kiln task directory (examples/softmax/): <dir>/<name>.py, <dir>/bench.py, entry <name>.
    std::string name = fs::path(path).filename().string();
    fs::path mod = fs::path(path) / (name + ".py"), bench = fs::path(path) / "bench.py";
    if (!fs::exists(mod, ec) || !fs::exists(bench, ec)) {
      return NotFound(FileError(path, fmt::format("a kiln task directory needs {}.py and bench.py", name)).message());
    }
    LoadOptions o = opts;
    o.format = "kiln";
    if (o.entry.empty()) o.entry = name;
    if (o.bench.empty()) o.bench = bench.string();
    return LoadTask(mod.string(), o);
  }
  if (fs::path(path).extension() == ".json") {
    KILN_ASSIGN_OR_RETURN(spec, LoadManifest(path, opts));
    for (const std::string* p : {&spec.path, &spec.bench_path}) {
      if (!fs::exists(*p, ec)) return NotFound(FileError(path, fmt::format("{}: no such file", *p)).message());
    }
    KILN_RETURN_IF_ERROR(ComputeHash(&spec));
    return spec;
  }

  KILN_ASSIGN_OR_RETURN(std::unique_ptr<pyast::Tree> tree, pyast::Tree::ParseFile(path));
  if (tree->has_errors()) {
    auto errs = tree->errors();
    std::string msg;
    for (size_t i = 0; i < errs.size() && i < 3; ++i) {
      msg += FormatDiagnostic(tree->MakeDiagnostic(errs[i].span, errs[i].message));
    }
    if (msg.empty()) msg = FileError(path, "syntax error").message();  // the parser located none
    return ParseError(msg);
  }
  const std::string& text = tree->text();
  const uint32_t n = static_cast<uint32_t>(text.size());
  pyast::Span top_span{tree->PosOf(0), tree->PosOf(0)};

  spec.path = path;
  for (auto& [k, v] : opts.sizes.items()) spec.sizes[k] = v;

  bool kiln_flags = !opts.bench.empty();
  size_t sep = FindSeparator(text);
  Format format;
  if (forced) {
    format = *forced;
  } else if (kiln_flags) {
    format = Format::kKiln;
  } else if (sep != std::string_view::npos) {
    TopLevel above = Scan(*tree, 0, static_cast<uint32_t>(sep));
    format = above.kernels.empty() ? Format::kTritonBenchT : Format::kTritonBenchG;
  } else {
    TopLevel top = Scan(*tree, 0, n);
    if (!top.classes.count("Model") && !top.functions.count("get_inputs")) {
      return DiagError(*tree, top_span,
                       "cannot tell the task format: expected a KernelBench module (class Model, "
                       "get_inputs, get_init_inputs), a TritonBench file (module, a line of 146 '#', a "
                       "test_* function), or kiln's format (--entry and --bench, or a .json manifest)");
    }
    format = Format::kKernelBench;
  }
  spec.format = format;

  switch (format) {
    case Format::kKernelBench: {
      TopLevel top = Scan(*tree, 0, n);
      if (!top.classes.count("Model")) {
        return DiagError(*tree, top_span, "kernelbench task has no top-level 'class Model'");
      }
      for (const char* fn : {"get_inputs", "get_init_inputs"}) {
        if (!top.functions.count(fn)) {
          return DiagError(*tree, top.classes.at("Model").span(),
                           fmt::format("kernelbench task has no top-level function '{}()'", fn));
        }
      }
      for (auto& [k, v] : opts.sizes.items()) {
        if (!top.constants.count(k)) {
          std::string known;
          for (const auto& [c, _] : top.constants) known += (known.empty() ? "" : ", ") + c;
          return DiagError(*tree, top_span,
                           fmt::format("size '{}' is not a module-level numeric constant of the task "
                                       "(have: {})",
                                       k, known.empty() ? "none" : known));
        }
        auto value = SizeValue(v, top.tuples.count(k) > 0);
        if (!value) {
          return DiagError(
              *tree, top.constants.at(k).span(),
              fmt::format("size '{}' must be {} like the task's `{} = {}`, got {}", k,
                          top.tuples.count(k) ? "a tuple of numbers, e.g. '(1024,)' or '[1024]'" : "a number", k,
                          top.constants.at(k).text(), v.dump(-1, ' ', false, json::error_handler_t::replace)));
        }
        spec.sizes[k] = *value;
      }
      break;
    }
    case Format::kTritonBenchG:
    case Format::kTritonBenchT: {
      if (sep == std::string_view::npos) {
        return DiagError(*tree, top_span,
                         "tritonbench task has no separator line of 146 '#' between the module and its "
                         "test function");
      }
      TopLevel above = Scan(*tree, 0, static_cast<uint32_t>(sep));
      TopLevel below = Scan(*tree, static_cast<uint32_t>(sep), n);
      std::string test_fn;
      for (const auto& f : below.function_order) {
        if (f.rfind("test_", 0) == 0) {
          test_fn = f;
          break;
        }
      }
      pyast::Span sep_span{tree->PosOf(static_cast<uint32_t>(sep)), tree->PosOf(static_cast<uint32_t>(sep))};
      if (test_fn.empty()) {
        return DiagError(*tree, sep_span, "tritonbench task has no test_* function below the separator line");
      }
      if (format == Format::kTritonBenchG && above.kernels.empty()) {
        return DiagError(*tree, top_span, "tritonbench_g task has no @triton.jit kernel above the separator");
      }
      if (opts.find_perf) {
        fs::path p(path);
        fs::path perf = p.parent_path().parent_path() / "perf" / (p.stem().string() + "_perf.py");
        if (!fs::exists(perf, ec)) perf = p.parent_path() / (p.stem().string() + "_perf.py");
        if (fs::exists(perf, ec)) spec.perf_path = perf.lexically_normal().string();
      }
      spec.entry = opts.entry;
      if (spec.entry.empty() && !spec.perf_path.empty()) {
        std::string e = EntryFromPerf(spec.perf_path);
        if (above.Defines(e)) spec.entry = e;
      }
      if (spec.entry.empty()) {
        for (const auto& c : CalledNames(below.functions.at(test_fn))) {
          if (above.functions.count(c) || above.classes.count(c) || above.assigned.count(c)) {
            spec.entry = c;
            break;
          }
        }
      }
      if (spec.entry.empty() && above.functions.count(fs::path(path).stem().string())) {
        spec.entry = fs::path(path).stem().string();
      }
      if (spec.entry.empty()) {
        return DiagError(*tree, below.functions.at(test_fn).span(),
                         fmt::format("cannot find the entry point: {}() calls no function defined above "
                                     "the separator (give --entry)",
                                     test_fn));
      }
      if (!above.Defines(spec.entry)) {
        return DiagError(*tree, top_span,
                         fmt::format("entry '{}' is not defined above the separator line", spec.entry));
      }
      break;
    }
    case Format::kKiln: {
      if (opts.entry.empty()) return FileError(path, "kiln task needs --entry (the entry function)");
      if (opts.bench.empty()) return FileError(path, "kiln task needs --bench (the bench file)");
      TopLevel top = Scan(*tree, 0, n);
      if (!top.Defines(opts.entry)) {
        return DiagError(*tree, top_span, fmt::format("entry '{}' is not defined at the top level", opts.entry));
      }
      spec.entry = opts.entry;
      spec.bench_path = Abs(opts.bench);
      if (!fs::exists(spec.bench_path, ec)) return NotFound(FileError(opts.bench, "no such bench file").message());
      auto btree = pyast::Tree::ParseFile(spec.bench_path);
      if (!btree.ok()) return btree.status();
      if ((*btree)->has_errors()) {
        auto e = (*btree)->errors().front();
        return ParseError(FormatDiagnostic((*btree)->MakeDiagnostic(e.span, e.message)));
      }
      break;
    }
  }
  spec.name = opts.name.empty() ? DeriveName(fs::path(path), format) : opts.name;
  KILN_RETURN_IF_ERROR(ComputeHash(&spec));
  return spec;
}

}  // namespace kiln::task

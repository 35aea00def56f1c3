#include "analysis/driver.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "analysis/json.h"
#include "common/file.h"
#include "pyast/pyast.h"
#include "pyast/syntax.h"

namespace kiln::analysis {

namespace {

Diagnostic FileError(const std::string& path, std::string message) {
  Diagnostic d;
  d.file = path;
  d.message = std::move(message);
  return d;
}

// Strips the "path: error: " prefix common/file.h puts on its messages.
std::string StripPrefix(const std::string& path, std::string msg) {
  std::string p = path + ": error: ";
  if (msg.rfind(p, 0) == 0) msg = msg.substr(p.size());
  return msg;
}

}  // namespace

FileReport AnalyzeText(std::string text, const std::string& path) {
  FileReport r;
  r.path = path;
  // Undecodable text, a NUL byte, nesting too deep: a located diagnostic from the parser.
  Diagnostic why;
  auto tree = pyast::Tree::Parse(std::move(text), path, &why);
  if (!tree.ok()) {
    if (why.message.empty()) why = FileError(path, StripPrefix(path, tree.status().message()));
    r.diagnostics.push_back(std::move(why));
    return r;
  }
  const pyast::Tree& t = **tree;
  if (t.has_errors()) {
    auto errs = t.errors();
    for (const auto& e : errs) r.diagnostics.push_back(t.MakeDiagnostic(e.span, e.message));
    if (errs.empty()) r.diagnostics.push_back(FileError(path, "syntax error"));
    return r;
  }
  auto m = AnalyzeModule(t);
  if (!m.ok()) {
    r.diagnostics.push_back(FileError(path, m.status().message()));
    return r;
  }
  r.model = std::move(m).value();
  return r;
}

FileReport AnalyzeFile(const std::string& path) {
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(st)) {
    FileReport r;
    r.path = path;
    r.diagnostics.push_back(FileError(path, "is a directory (expected a Python file)"));
    return r;
  }
  auto text = ReadFile(path);
  if (!text.ok()) {
    FileReport r;
    r.path = path;
    r.diagnostics.push_back(FileError(path, StripPrefix(path, text.status().message())));
    return r;
  }
  return AnalyzeText(std::move(text).value(), path);
}

namespace {

std::string Loc(const Span& s) { return fmt::format("{}:{}", s.begin.line, s.begin.column); }

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string Short(const std::string& s, size_t n = 70) {
  std::string out;
  for (char c : s) out += (c == '\n' ? ' ' : c);
  // Collapse runs of spaces.
  std::string c2;
  for (char c : out) {
    if (c == ' ' && !c2.empty() && c2.back() == ' ') continue;
    c2 += c;
  }
  if (c2.size() > n) c2 = std::string(pyast::Prefix(c2, n - 3)) + "...";
  return c2;
}

std::string OriginText(const Binding& b) {
  const Origin& o = b.origin;
  std::string s = OriginKindName(o.kind);
  switch (o.kind) {
    case OriginKind::kLiteral: s += " " + o.value + " at " + Loc(o.at_launch.span); break;
    case OriginKind::kVariable:
      s += " " + o.variable + " = " + o.value;
      if (o.assignment) s += " (" + o.scope + " line " + std::to_string(o.assignment->span.begin.line) + ")";
      break;
    case OriginKind::kComputed:
      s += " " + Short(o.expression.text, 60);
      if (o.assignment) s += " (via " + o.variable + ", line " + std::to_string(o.assignment->span.begin.line) + ")";
      break;
    case OriginKind::kFunctionParam:
      s += " " + o.function_param;
      if (o.function_param_default.present()) s += " (default " + o.function_param_default.text + ")";
      break;
    case OriginKind::kAutotune: s += " (decorator at line " + std::to_string(o.decorator_span.begin.line) + ")"; break;
    case OriginKind::kHeuristics: s += " " + Short(o.expression.text, 60); break;
    case OriginKind::kDefault: s += " " + o.value; break;
    case OriginKind::kMissing: break;
  }
  if (o.multiple_assignments) s += " [assigned more than once]";
  if (!o.note.empty()) s += " [" + o.note + "]";
  return s;
}

}  // namespace

std::string FormatSummary(const ModuleModel& m) {
  std::string out =
      fmt::format("{}: {} jit function(s), {} launch site(s)\n", m.path, m.kernels.size(), m.launches.size());
  for (const auto& k : m.kernels) {
    out += fmt::format("\nkernel {} (line {}) class {}{}\n", k.name, k.def_span.begin.line, KernelClassName(k.cls),
                       k.is_helper ? " [helper, called from other jit functions]"
                                   : (!k.launched ? " [not launched in this module]" : ""));
    if (!k.class_evidence.empty()) out += "  evidence: " + Join(k.class_evidence, "; ") + "\n";
    std::vector<std::string> ps;
    for (const auto& p : k.params) {
      std::string s = p.name + " " + ParamKindName(p.kind);
      if (p.default_value.present()) s += "=" + p.default_value.text;
      if (p.kind == ParamKind::kPointer) s += std::string(" (") + ParamEvidenceName(p.evidence) + ")";
      if (p.do_not_specialize) s += " [do_not_specialize]";
      ps.push_back(s);
    }
    out += "  params: " + Join(ps) + "\n";
    if (k.autotune) {
      const Autotune& a = *k.autotune;
      out +=
          fmt::format("  autotune: {} config(s){} over {}; key [{}]", a.configs.size(),
                      a.configs_generated ? " (plus generated ones)" : "",
                      a.tuned_names.empty() ? "no constexpr (launch options only)" : Join(a.tuned_names), Join(a.key));
      if (a.prune_configs_by.present()) out += "; prune_configs_by";
      if (a.reset_to_zero.present()) out += "; reset_to_zero " + Short(a.reset_to_zero.text, 40);
      if (a.restore_value.present()) out += "; restore_value " + Short(a.restore_value.text, 40);
      out += "\n";
      for (const auto& c : a.configs) {
        std::vector<std::string> kv;
        for (const auto& kw : c.kwargs) kv.push_back(kw.name + "=" + kw.value.text);
        if (c.num_warps) kv.push_back("num_warps=" + c.num_warps->value.text);
        if (c.num_stages) kv.push_back("num_stages=" + c.num_stages->value.text);
        if (c.num_ctas) kv.push_back("num_ctas=" + c.num_ctas->value.text);
        if (c.maxnreg) kv.push_back("maxnreg=" + c.maxnreg->value.text);
        if (c.has_pre_hook) kv.push_back("pre_hook");
        out += "    config " + Join(kv) + "\n";
      }
    }
    if (k.heuristics) {
      for (const auto& h : k.heuristics->entries) {
        out += "  heuristics: " + h.name + " = " + Short(h.value.text, 60) + "\n";
      }
    }
    if (k.jit && !k.jit->do_not_specialize.empty()) {
      out += "  do_not_specialize: " + Join(k.jit->do_not_specialize) + "\n";
    }
    std::vector<std::string> facts;
    if (!k.program_ids.empty()) {
      std::vector<std::string> ax;
      for (const auto& p : k.program_ids) ax.push_back(p.axis >= 0 ? std::to_string(p.axis) : p.axis_expr.text);
      facts.push_back("program_id axes " + Join(ax, "/"));
    }
    if (!k.aranges.empty()) {
      std::vector<std::string> ar;
      for (const auto& r : k.aranges) ar.push_back("[" + r.start.text + ", " + r.end.text + ")");
      facts.push_back("arange " + Join(ar));
    }
    size_t loads = 0, stores = 0, masked = 0, hints = 0;
    for (const auto& mo : k.memops) {
      (mo.kind == MemOp::Kind::kLoad ? loads : stores)++;
      if (mo.mask.present() || mo.boundary_check.present()) ++masked;
      if (mo.eviction_policy.present() || mo.cache_modifier.present()) ++hints;
    }
    if (loads + stores) {
      facts.push_back(fmt::format("{} load(s), {} store(s) ({} masked, {} with cache/eviction hints)", loads, stores,
                                  masked, hints));
    }
    if (!k.block_ptrs.empty()) {
      std::map<std::string, int> ops;
      for (const auto& b : k.block_ptrs) ops[b.op]++;
      std::vector<std::string> v;
      for (const auto& [op, n] : ops) v.push_back(fmt::format("{}x{}", op, n));
      facts.push_back("block pointers/descriptors: " + Join(v));
    }
    for (const auto& d : k.dots) {
      std::string s = fmt::format("{} at line {}{}", d.form, d.span.begin.line, d.loop >= 0 ? " in loop" : "");
      if (d.input_precision.present()) s += " input_precision=" + d.input_precision.text;
      if (d.allow_tf32.present()) s += " allow_tf32=" + d.allow_tf32.text;
      if (d.out_dtype.present()) s += " out_dtype=" + d.out_dtype.text;
      facts.push_back(s);
    }
    auto red = [&](const std::vector<Reduction>& v, const char* what) {
      if (v.empty()) return;
      std::vector<std::string> ops;
      for (const auto& r : v) ops.push_back(r.op + (r.axis.present() ? "(axis=" + r.axis.text + ")" : ""));
      facts.push_back(std::string(what) + " " + Join(ops));
    };
    red(k.reductions, "reductions");
    red(k.scans, "scans");
    if (!k.atomics.empty()) {
      std::vector<std::string> ops;
      for (const auto& a : k.atomics) ops.push_back("atomic_" + a.op);
      facts.push_back(Join(ops));
    }
    for (const auto& l : k.loops) {
      std::string s = "loop " + (l.depth > 1 ? std::string(l.depth - 1, '>') + " " : std::string()) + l.kind;
      if (l.kind != "while" && l.kind != "iter") {
        s += "(" + (l.start.present() ? l.start.text + ", " : "") + l.end.text +
             (l.step.present() ? ", " + l.step.text : "") + ")";
        for (const auto& o : l.options) s += " " + o.name + "=" + o.value.text;
      }
      s += " at line " + std::to_string(l.span.begin.line);
      facts.push_back(s);
    }
    if (!k.calls.empty()) {
      std::vector<std::string> v;
      for (const auto& c : k.calls) v.push_back(c.callee);
      facts.push_back("calls " + Join(v));
    }
    if (!k.libdevice.empty()) {
      std::vector<std::string> v;
      for (const auto& c : k.libdevice) v.push_back(c.via + "." + c.name);
      facts.push_back("libdevice " + Join(v));
    }
    for (const auto& f : facts) out += "  " + f + "\n";
  }
  for (const auto& l : m.launches) {
    out += fmt::format("\nlaunch {}[{}] at line {} in {}{}\n", l.kernel, Short(l.grid.expr.text, 50), l.span.begin.line,
                       l.enclosing_function, l.in_lambda ? " (inside a lambda)" : "");
    if (!l.kernel_candidates.empty()) out += "  kernel chosen at run time among " + Join(l.kernel_candidates) + "\n";
    std::string g = std::string("  grid: ") + GridKindName(l.grid.kind);
    if (l.grid.kind == GridKind::kVariable) {
      g += std::string(" -> ") + GridKindName(l.grid.resolved_kind) + " " + Short(l.grid.resolved.text, 60);
    }
    if (!l.grid.names.empty()) g += "; uses " + Join(l.grid.names);
    if (!l.grid.meta_keys.empty()) g += "; meta " + Join(l.grid.meta_keys);
    if (!l.grid.constexprs.empty()) g += "; depends on constexpr " + Join(l.grid.constexprs);
    out += g + "\n";
    for (const auto& b : l.bindings) {
      out += fmt::format("  {}: {}\n", b.name, OriginText(b));
    }
    if (!l.unmapped.empty()) out += "  unmapped keyword(s): " + Join(l.unmapped) + "\n";
  }
  for (const auto& n : m.notes) out += "note: " + n + "\n";
  return out;
}

nlohmann::json ReportsToJson(const std::vector<FileReport>& reports) {
  nlohmann::json j{{"schema_version", kSchemaVersion}};
  nlohmann::json mods = nlohmann::json::array();
  nlohmann::json errs = nlohmann::json::array();
  for (const auto& r : reports) {
    if (r.model) mods.push_back(ModuleToJson(*r.model));
    for (const auto& d : r.diagnostics) {
      nlohmann::json e{{"file", d.file}, {"message", d.message}};
      if (d.line > 0) e["line"] = d.line;
      if (d.column > 0) e["col"] = d.column;
      errs.push_back(e);
    }
  }
  j["modules"] = mods;
  j["errors"] = errs;
  return j;
}

}  // namespace kiln::analysis

// Inductor's output -> a standalone ModelNew: the kernels (inductor_kernels.cc) and the launches of
// `call`, rewritten as a forward that allocates with torch and launches with explicit grids.
#include "datagen/inductor.h"

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "common/json.h"
#include "common/strings.h"
#include "datagen/inductor_dynamic.h"
#include "datagen/inductor_kernels.h"
#include "pyast/pyast.h"
#include "pyast/syntax.h"

namespace kiln::datagen {

namespace {

struct Reject {
  std::string code, message;
};

struct OutputModule {
  std::unique_ptr<pyast::Tree> tree;
  std::map<std::string, RawKernel> kernels;
  pyast::Node call;  // the function_definition of call
};

std::string StringBody(const pyast::Node& s) {
  std::string t(s.text());
  size_t q = t.find_first_of("'\"");
  if (q == std::string::npos) return "";
  std::string quote = t.substr(q, 3);
  size_t len = (quote == "'''" || quote == "\"\"\"") ? 3 : 1;
  if (t.size() < q + 2 * len) return "";
  return t.substr(q + len, t.size() - q - 2 * len);
}

std::optional<Reject> ReadOutputModule(const std::string& code, OutputModule* m) {
  auto tree = pyast::Tree::Parse(code, "<inductor output>");
  if (!tree.ok() || (*tree)->has_errors()) return Reject{"unparsable_output", "Inductor's output does not parse"};
  m->tree = std::move(*tree);
  std::string aten;
  for (const pyast::Node& s : m->tree->root().named_children()) {
    if (s.type() == "comment") {
      std::string_view t = s.text();
      if (size_t p = t.find("Original ATen: "); p != std::string_view::npos) aten = std::string(Trim(t.substr(p + 15)));
      continue;
    }
    pyast::Node def = pyast::Definition(s);
    if (def.type() == "function_definition" && def.field("name").text() == "call") m->call = def;
    if (def.type() == "class_definition") {
      for (const pyast::Node& c : def.field("body").named_children()) {
        pyast::Node d = pyast::Definition(c);
        if (d.type() == "function_definition" && d.field("name").text() == "call") m->call = d;
      }
    }
    if (s.type() != "expression_statement" || s.named_child(0).type() != "assignment") continue;
    pyast::Node a = s.named_child(0), v = a.field("right");
    if (v.type() != "call") continue;
    std::string f = pyast::Dotted(v.field("function"));
    if (!StartsWith(f, "async_compile.")) continue;
    if (f != "async_compile.triton")
      return Reject{"non_triton_kernel", "Inductor compiled a kernel with " + f + " (not Triton)"};
    pyast::Node args = v.field("arguments");
    if (args.named_child_count() < 2 || args.named_child(1).type() != "string")
      return Reject{"unparsable_output", "async_compile.triton without a source string"};
    RawKernel k;
    k.name = std::string(a.field("left").text());
    k.source = StringBody(args.named_child(1));
    k.aten = aten;
    aten.clear();
    if (Contains(k.source, "\\")) return Reject{"unparsable_output", "kernel " + k.name + " holds escapes"};
    m->kernels[k.name] = std::move(k);
  }
  if (m->call.is_null()) return Reject{"unparsable_output", "no call function in Inductor's output"};
  return std::nullopt;
}

// The forward being written.
struct Forward {
  std::vector<std::string> params;           // the forward's parameter names (self excluded)
  std::map<std::string, std::string> bound;  // call's names -> expressions in the forward
  std::vector<std::string> lines;
  std::vector<std::string> returned;         // call's return expressions
  std::map<std::string, int> launches_seen;  // kernel -> launches translated so far
  std::vector<std::string> launch_order;     // kernels in launch order (first launch)
  std::map<std::string, PointerNames> pointers;
  bool uses_view = false;
  std::vector<std::string> output_buffers;   // call's returned buffers (and what they reuse), for names
  std::map<std::string, std::string> grids;  // kernel -> its first launch's grid, for its comment
};

// The buffers call returns, in order, and (as the same output) the buffers they were reused from.
std::vector<std::string> ReturnedBuffers(const pyast::Node& body) {
  std::vector<std::string> out;
  std::vector<std::pair<std::string, std::string>> reuse;  // (new, old)
  body.Walk([&](const pyast::Node& n) {
    if (n.type() == "return_statement" && !n.named_child(0).is_null()) {
      pyast::Node v = n.named_child(0);
      if (v.type() == "identifier") out.push_back(std::string(v.text()));
      for (const pyast::Node& e : v.named_children()) out.push_back(std::string(e.text()));
    }
    if (n.type() == "assignment" && n.field("left").type() == "identifier" && n.field("right").type() == "identifier")
      reuse.push_back({std::string(n.field("left").text()), std::string(n.field("right").text())});
    return true;
  });
  size_t n = out.size();
  for (size_t i = 0; i < n; ++i) {
    std::string cur = out[i];
    for (auto it = reuse.rbegin(); it != reuse.rend(); ++it) {
      if (it->first == cur) {
        cur = it->second;
        out.push_back(cur + "=" + std::to_string(i));
      }
    }
  }
  return out;
}

struct Context {
  const OutputModule& out;
  const nlohmann::json& capture;
  std::map<std::string, std::vector<nlohmann::json>> records;  // kernel -> launch records, in order
  std::map<std::string, std::vector<std::string>> params, constexprs;
  bool dynamic = false;  // capture["dynamic"]: size symbols (inductor_dynamic.h)
  SymbolTable symbols;
};

Result<std::string> SizeExpr(const pyast::Node& expr, const Forward& f);
std::string Translate(const pyast::Node& expr, Forward* f);

// A value in a dynamic call: a name (a buffer, an input), a view of one (reinterpret_tensor(buf, sizes, strides,
// offset) -> _view(...), its sizes checked as size arithmetic) or size arithmetic.
Result<std::string> DynamicValue(const pyast::Node& v, Forward* f) {
  if (v.type() == "identifier") return Translate(v, f);
  if (v.type() == "call" && pyast::Dotted(v.field("function")) == "reinterpret_tensor") {
    std::vector<pyast::Node> args;
    for (const pyast::Node& a : v.field("arguments").named_children()) args.push_back(a);
    if (args.size() != 4 || args[0].type() != "identifier")
      return InvalidArgument("untranslated_size_expression: a reinterpret_tensor of " + std::string(v.text()));
    std::string out = "_view(" + Translate(args[0], f);
    for (size_t i = 1; i < 4; ++i) {
      KILN_ASSIGN_OR_RETURN(std::string e, SizeExpr(args[i], *f));
      out += ", " + e;
    }
    f->uses_view = true;
    return out + ")";
  }
  return SizeExpr(v, *f);
}

// The reject of an inductor_dynamic.h error ("<reason>: <details>").
Reject DynamicReject(const Status& st) {
  const std::string& m = st.message();
  size_t colon = m.find(": ");
  if (colon == std::string::npos) return Reject{"untranslated_size_expression", m};
  return Reject{m.substr(0, colon), m.substr(colon + 2)};
}

// Size arithmetic of a dynamic call in the forward's names (symbols, numels bound so far).
Result<std::string> SizeExpr(const pyast::Node& expr, const Forward& f) {
  return TranslateSizeExpression(expr, [&](std::string_view id) -> std::optional<std::string> {
    auto it = f.bound.find(std::string(id));
    if (it != f.bound.end()) return it->second;
    return std::nullopt;
  });
}

std::string Translate(const pyast::Node& expr, Forward* f) {
  return pyast::SubstituteIdentifiers(expr, [&](std::string_view id) -> std::optional<std::string> {
    if (id == "reinterpret_tensor") {
      f->uses_view = true;
      return std::string("_view");
    }
    auto it = f->bound.find(std::string(id));
    if (it != f->bound.end()) return it->second;
    return std::nullopt;
  });
}

std::optional<Reject> BindArgs(const pyast::Node& assign, Context& c, Forward* f) {
  const nlohmann::json& args = c.capture.at("call_args");
  pyast::Node left = assign.field("left");
  std::vector<std::string> names;
  for (const pyast::Node& n : left.named_children()) names.push_back(std::string(n.text()));
  if (left.type() == "identifier") names = {std::string(left.text())};
  if (names.size() != args.size())
    return Reject{"unmapped_argument", fmt::format("call takes {} arguments, the capture mapped {}", names.size(), args.size())};
  if (c.dynamic) {  // the size symbols first: int arguments are bound to them
    std::map<std::string, std::string> inputs;
    for (size_t i = 0; i < names.size(); ++i) {
      auto idx = JsonInt(args[i], "index");
      if (JsonString(args[i], "kind") == "input" && idx && *idx >= 0 && static_cast<size_t>(*idx) < f->params.size())
        inputs[names[i]] = f->params[*idx];
    }
    auto table = BindSymbols(c.out.call.field("body"), inputs);
    if (!table.ok()) return DynamicReject(table.status());
    c.symbols = std::move(*table);
    for (const auto& s : c.symbols.order) f->bound[s] = s;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const nlohmann::json& a = args[i];
    std::string kind = JsonString(a, "kind");
    if (kind == "input") {
      auto idx = JsonInt(a, "index");
      if (!idx || *idx < 0 || static_cast<size_t>(*idx) >= f->params.size())
        return Reject{"unmapped_argument", "call argument " + names[i] + " is an input the forward does not name"};
      f->bound[names[i]] = f->params[*idx];
    } else if (kind == "param" || kind == "buffer") {
      f->bound[names[i]] = "self." + JsonString(a, "name");
    } else if (kind == "scalar" && c.dynamic && c.symbols.int_args.count(names[i])) {
      f->bound[names[i]] = c.symbols.int_args.at(names[i]);  // a size symbol: bound from an input's shape
    } else if (kind == "scalar" && a.contains("value")) {
      f->bound[names[i]] = a["value"].dump();
    } else {
      return Reject{"unmapped_argument", "call argument " + names[i] + " is neither an input nor a weight (" + a.dump() + ")"};
    }
  }
  return std::nullopt;
}

std::string Stem(const std::string& expr, const Forward& f) {
  std::string e = expr;
  if (StartsWith(e, "_view(")) e = e.substr(6, e.find(',') - 6);
  if (StartsWith(e, "self.")) e = e.substr(5);
  for (char& ch : e) {
    if (ch == '.') ch = '_';
  }
  size_t outputs = 0;
  for (const auto& b : f.output_buffers) outputs += b.find('=') == std::string::npos;
  for (size_t i = 0; i < f.output_buffers.size(); ++i) {
    const std::string& b = f.output_buffers[i];
    size_t eq = b.find('=');
    size_t index = eq == std::string::npos ? i : std::stoul(b.substr(eq + 1));
    if (b.substr(0, eq) == e) return outputs == 1 ? "out" : fmt::format("out{}", index);
  }
  return pyast::IsIdentifier(e) ? e : "";
}

// Inductor's counter at the end of a kernel's name ("triton_poi_fused_add_3" -> "3"), for the names of the
// sizes a dynamic forward computes for it (xnumel_3).
std::string KernelIndex(const std::string& kernel) {
  size_t u = kernel.rfind('_');
  std::string tail = u == std::string::npos ? "" : kernel.substr(u + 1);
  return !tail.empty() && tail.find_first_not_of("0123456789") == std::string::npos ? tail : "k";
}

// A dynamic launch's grid: FixedGrid's (templates) from the launch's three trailing arguments, the others from
// the numels the launch passes, as Inductor's launcher computes it; lines it needs go before the launch.
std::optional<Reject> DynamicGrid(const std::string& kernel, const std::vector<std::string>& runtime,
                                  const std::vector<std::string>& args, const std::vector<std::string>& extra,
                                  const nlohmann::json& cfg, const Context& c, Forward* f, std::string* grid) {
  std::string type = GridType(c.out.kernels.at(kernel).source);
  if (type == "FixedGrid") {
    if (extra.size() != 3)
      return Reject{"grid_type_unsupported", fmt::format("{}: a FixedGrid launch with {} grid arguments", kernel, extra.size())};
    *grid = fmt::format("({}, {}, {})", extra[0], extra[1], extra[2]);
    return std::nullopt;
  }
  std::map<std::string, std::string> numels;
  for (size_t i = 0; i < runtime.size(); ++i) numels[runtime[i]] = args[i];
  auto g = LaunchGrid(type, numels, cfg, KernelIndex(kernel));
  if (!g.ok()) return DynamicReject(g.status());
  for (const auto& l : g->prefix) f->lines.push_back(l);
  *grid = g->grid;
  return std::nullopt;
}

std::optional<Reject> Launch(const pyast::Node& call, const std::string& kernel, Context& c, Forward* f) {
  auto rec_it = c.records.find(kernel);
  int n = f->launches_seen[kernel]++;
  if (rec_it == c.records.end() || n >= static_cast<int>(rec_it->second.size()))
    return Reject{"launch_not_recorded", "no recorded launch for " + kernel + " (launch " + std::to_string(n + 1) + ")"};
  const nlohmann::json& rec = rec_it->second[n];
  if (!rec.contains("grid") || !rec["grid"].is_array() || rec["grid"].size() != 3)
    return Reject{"grid_unknown", kernel + ": " + JsonString(rec, "grid_error")};
  if (n == 0) f->launch_order.push_back(kernel);
  const auto& params = c.params[kernel];
  const auto& cx = c.constexprs[kernel];
  std::vector<std::string> runtime;
  for (const auto& p : params) {
    if (std::find(cx.begin(), cx.end(), p) == cx.end()) runtime.push_back(p);
  }
  std::vector<std::string> args;
  for (const pyast::Node& a : call.field("arguments").named_children()) {
    if (a.type() == "keyword_argument") continue;  // stream=
    if (c.dynamic && a.type() != "identifier") {  // numels, ks, FixedGrid's grid, views: size arithmetic
      auto e = DynamicValue(a, f);
      if (!e.ok()) return DynamicReject(e.status());
      args.push_back(*e);
      continue;
    }
    args.push_back(Translate(a, f));
  }
  if (args.size() < runtime.size())
    return Reject{"launch_mismatch", fmt::format("{} takes {} arguments, the launch passes {}", kernel, runtime.size(), args.size())};
  std::vector<std::string> extra(args.begin() + static_cast<long>(runtime.size()), args.end());
  args.resize(runtime.size());  // what follows are FixedGrid's grid arguments, now explicit
  if (n == 0) {
    for (size_t i = 0; i < runtime.size(); ++i) {
      const std::string& p = runtime[i];
      if (!(StartsWith(p, "in_ptr") || StartsWith(p, "out_ptr") || StartsWith(p, "in_out_ptr"))) continue;
      std::string stem = Stem(args[i], *f);
      if (!stem.empty()) f->pointers[kernel][p] = stem;
    }
  }
  std::string kw;
  const nlohmann::json cfg = JsonObject(rec, "config");
  for (const auto& [k, v] : cfg.items()) {
    if (std::find(cx.begin(), cx.end(), k) != cx.end()) kw += fmt::format(", {}={}", k, v.dump());
  }
  auto warps = JsonInt(rec, "num_warps"), stages = JsonInt(rec, "num_stages");
  if (warps) kw += fmt::format(", num_warps={}", *warps);
  if (stages) kw += fmt::format(", num_stages={}", *stages);
  std::string grid;
  if (c.dynamic) {
    if (auto r = DynamicGrid(kernel, runtime, args, extra, cfg, c, f, &grid)) return r;
  } else {
    const auto& g = rec["grid"];
    grid = fmt::format("({}, {}, {})", g[0].dump(), g[1].dump(), g[2].dump());
  }
  if (n == 0) f->grids[kernel] = grid;
  std::string joined;
  for (const auto& a : args) joined += (joined.empty() ? "" : ", ") + a;
  std::string name = ReadableName(kernel);
  f->lines.push_back(fmt::format("{}[{}]({}{})", name, grid, joined, kw));
  return std::nullopt;
}

std::optional<Reject> Statements(const pyast::Node& block, Context& c, Forward* f);

std::optional<Reject> CallStatement(const pyast::Node& call, const pyast::Node& stmt, Context& c, Forward* f) {
  std::string fn = pyast::Dotted(call.field("function"));
  if (fn == "args.clear" || fn == "assert_size_stride" || fn == "assert_alignment" || fn == "torch.cuda.set_device")
    return std::nullopt;
  if (EndsWith(fn, ".run")) {
    std::string kernel = fn.substr(0, fn.size() - 4);
    if (c.out.kernels.count(kernel)) return Launch(call, kernel, c, f);
  }
  if (StartsWith(fn, "extern_kernels."))
    return Reject{"extern_kernel", "Inductor called " + fn + " (no Triton template): " + std::string(Trim(stmt.text()))};
  if (StartsWith(fn, "aten.") || StartsWith(fn, "torch.ops."))
    return Reject{"aten_fallback", "Inductor fell back to " + fn};
  return Reject{"unsupported_statement", std::string(pyast::Prefix(Trim(stmt.text()), 160))};
}

std::optional<Reject> Assignment(const pyast::Node& a, const pyast::Node& stmt, Context& c, Forward* f) {
  pyast::Node left = a.field("left"), right = a.field("right");
  if (Trim(right.text()) == "args") return BindArgs(a, c, f);
  if (c.dynamic && left.type() == "identifier" && c.symbols.prologue_names.count(std::string(left.text())))
    return std::nullopt;  // s77 = arg0_1, arg2_1_size = arg2_1.size(): bound from the inputs' shapes (the prologue)
  if (right.type() == "call") {
    std::string fn = pyast::Dotted(right.field("function"));
    if (fn == "get_raw_stream") return std::nullopt;
    if (fn == "empty_strided_cuda" || fn == "empty_strided_cpu" || fn == "empty_strided") {
      pyast::Node args = right.field("arguments");
      if (args.named_child_count() != 3) return Reject{"unsupported_statement", std::string(stmt.text())};
      if (c.dynamic) {
        auto size = SizeExpr(args.named_child(0), *f);
        auto stride = size.ok() ? SizeExpr(args.named_child(1), *f) : size;
        if (!stride.ok()) return DynamicReject(stride.status());
        f->lines.push_back(fmt::format("{} = torch.empty_strided({}, {}, dtype={}, device=device)", left.text(), *size,
                                       *stride, args.named_child(2).text()));
        return std::nullopt;
      }
      f->lines.push_back(fmt::format("{} = torch.empty_strided({}, {}, dtype={}, device=device)", left.text(),
                                     Translate(args.named_child(0), f), Translate(args.named_child(1), f),
                                     args.named_child(2).text()));
      return std::nullopt;
    }
    if (fn == "reinterpret_tensor") {
      if (c.dynamic) {
        auto v = DynamicValue(right, f);
        if (!v.ok()) return DynamicReject(v.status());
        f->lines.push_back(std::string(left.text()) + " = " + *v);
        return std::nullopt;
      }
      f->lines.push_back(std::string(left.text()) + " = " + Translate(right, f));
      return std::nullopt;
    }
    return CallStatement(right, stmt, c, f);
  }
  if (c.dynamic && left.type() == "identifier" && right.type() != "identifier") {  // xnumel = s77*s27
    auto e = SizeExpr(right, *f);
    if (!e.ok()) return DynamicReject(e.status());
    std::string name(left.text());
    for (const auto& [k, _] : c.out.kernels) {  // triton_poi_fused_..._0_xnumel -> xnumel_0
      if (StartsWith(name, k + "_")) name = name.substr(k.size() + 1) + "_" + KernelIndex(k);
    }
    f->bound[std::string(left.text())] = name;
    f->lines.push_back(name + " = " + *e);
    return std::nullopt;
  }
  if (right.type() == "identifier" && left.type() == "identifier") {  // buffer reuse: buf4 = buf3
    f->lines.push_back(std::string(left.text()) + " = " + Translate(right, f));
    return std::nullopt;
  }
  return Reject{"unsupported_statement", std::string(pyast::Prefix(Trim(stmt.text()), 160))};
}

std::optional<Reject> Statement(const pyast::Node& s, Context& c, Forward* f) {
  std::string_view t = s.type();
  if (t == "comment" || t == "pass_statement" || t == "delete_statement") return std::nullopt;
  if (t == "with_statement") return Statements(s.field("body"), c, f);
  if (t == "return_statement") {
    pyast::Node v = s.named_child(0);
    if (!v.is_null() && (v.type() == "tuple" || v.type() == "parenthesized_expression")) {
      for (const pyast::Node& e : v.named_children()) f->returned.push_back(Translate(e, f));
    } else if (!v.is_null()) {
      f->returned.push_back(Translate(v, f));
    }
    return std::nullopt;
  }
  if (t == "expression_statement") {
    pyast::Node e = s.named_child(0);
    if (e.type() == "assignment") return Assignment(e, s, c, f);
    if (e.type() == "call") return CallStatement(e, s, c, f);
  }
  return Reject{"unsupported_statement", std::string(pyast::Prefix(Trim(s.text()), 160))};
}

std::optional<Reject> Statements(const pyast::Node& block, Context& c, Forward* f) {
  for (const pyast::Node& s : block.named_children()) {
    if (auto r = Statement(s, c, f)) return r;
  }
  return std::nullopt;
}

// The launches recorded, kernel by kernel, in order.
std::optional<Reject> IndexRecords(Context* c) {
  const nlohmann::json& launches = c->capture.value("launches", nlohmann::json::array());
  for (const auto& l : launches) c->records[JsonString(l, "kernel")].push_back(l);
  for (const auto& [name, k] : c->out.kernels) {
    std::vector<std::string> p, cx;
    Status st = KernelSignature(k, &p, &cx);
    if (!st.ok()) return Reject{"unparsable_output", name + ": " + st.message()};
    c->params[name] = p;
    c->constexprs[name] = cx;
  }
  return std::nullopt;
}

// The program's Model: its __init__ text, its forward parameters, module constants.
struct ProgramParts {
  std::string init;                  // `def __init__...` at 4 spaces, or ""
  std::string forward_params;        // "(self, x, y)"
  std::vector<std::string> params;   // x, y
  std::string constants;             // NAME = literal lines
};

std::optional<Reject> ReadProgram(const std::string& text, ProgramParts* p) {
  auto tree = pyast::Tree::Parse(text, "<program>");
  if (!tree.ok() || (*tree)->has_errors()) return Reject{"unparsable_program", "the program does not parse"};
  const std::string& src = (*tree)->text();
  for (const pyast::Node& s : (*tree)->root().named_children()) {
    if (s.type() == "expression_statement" && s.named_child(0).type() == "assignment") {
      bool has_call = false;
      s.Walk([&](const pyast::Node& n) {
        if (n.type() == "call") has_call = true;
        return !has_call;
      });
      if (!has_call) p->constants += std::string(s.text()) + "\n";
    }
    pyast::Node cls = pyast::Definition(s);
    if (cls.type() != "class_definition" || cls.field("name").text() != "Model") continue;
    for (const pyast::Node& m : cls.field("body").named_children()) {
      pyast::Node d = pyast::Definition(m);
      if (d.type() != "function_definition") continue;
      if (d.field("name").text() == "__init__") {
        uint32_t b = pyast::LineStart(src, m.span().begin.byte);
        std::string indent = src.substr(b, m.span().begin.byte - b);
        p->init = indent + pyast::SubstituteIdentifiers(m, [](std::string_view id) -> std::optional<std::string> {
          if (id == "Model") return std::string("ModelNew");  // super(Model, self).__init__()
          return std::nullopt;
        }) + "\n";
      } else if (d.field("name").text() == "forward") {
        p->forward_params = std::string(d.field("parameters").text());
        for (const pyast::Node& q : d.field("parameters").named_children()) {
          std::string name(q.type() == "identifier" ? q.text() : q.named_child(0).text());
          if (q.type() != "identifier" && q.type() != "default_parameter" && q.type() != "typed_parameter")
            return Reject{"unsupported_program", "forward takes " + std::string(q.text())};
          if (name != "self") p->params.push_back(name);
        }
      }
    }
  }
  if (p->forward_params.empty()) return Reject{"unsupported_program", "no Model.forward"};
  return std::nullopt;
}

std::string WrapComment(const std::string& text, size_t width) {
  std::string out, line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t sp = text.find(' ', pos);
    std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    pos = sp == std::string::npos ? text.size() : sp + 1;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += "# " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += "# " + line + "\n";
  return out;
}

std::string DescribeKernel(const ReadableKernel& k, const RawKernel& raw, const nlohmann::json& rec,
                           const PointerNames& ptrs, const std::string& grid) {
  std::string what = raw.aten.empty() ? "" : " computing " + raw.aten;
  std::string reads, writes;
  for (const auto& [p, stem] : ptrs) {
    std::string& into = StartsWith(p, "out_ptr") ? writes : (StartsWith(p, "in_out_ptr") ? writes : reads);
    into += (into.empty() ? "" : ", ") + stem;
  }
  std::string io;
  if (!reads.empty()) io += "; reads " + reads;
  if (!writes.empty()) io += "; writes " + writes;
  std::string cfg;
  const nlohmann::json config = JsonObject(rec, "config");
  for (const auto& [key, v] : config.items()) cfg += (cfg.empty() ? "" : ", ") + key + "=" + v.dump();
  std::string text = fmt::format("{}: a {} kernel{}{}. Launch: grid {}{}{}.", k.name, k.kind, what, io, grid,
                                 cfg.empty() ? "" : ", ", cfg);
  return WrapComment(text, 110);
}

std::string ShapeGuard(const ProgramParts& p, const nlohmann::json& capture) {
  const nlohmann::json inputs = JsonObject(capture, "eager").value("inputs", nlohmann::json::array());
  std::string out;
  for (size_t i = 0; i < inputs.size() && i < p.params.size(); ++i) {
    if (!inputs[i].is_object() || !inputs[i].contains("shape")) continue;
    std::string shape;
    for (const auto& d : inputs[i]["shape"]) shape += (shape.empty() ? "" : ", ") + d.dump();
    if (inputs[i]["shape"].size() == 1) shape += ",";
    out += fmt::format(
        "        if tuple({0}.shape) != ({1}):\n"
        "            raise ValueError(f\"the kernels were compiled for {0} of shape ({1}), got {{tuple({0}.shape)}}\")\n",
        p.params[i], shape);
  }
  return out;
}

std::optional<Reject> Assemble(const ProgramParts& p, Context& c, Forward& f, Conversion* conv) {
  std::string kernels;
  std::vector<std::string> helpers;
  bool libdevice = false;
  for (const auto& name : f.launch_order) {
    const RawKernel& raw = c.out.kernels.at(name);
    auto k = MakeReadable(raw, f.pointers[name]);
    if (!k.ok()) {
      std::string msg = k.status().message();
      std::string code = StartsWith(msg, "helper_not_lowered") ? "helper_not_lowered" : "unparsable_output";
      return Reject{code, name + ": " + msg};
    }
    std::string comment = DescribeKernel(*k, raw, c.records[name][0], f.pointers[name], f.grids[name]);
    conv->kernels.push_back({k->name, name, k->kind, comment});
    kernels += "\n\n" + comment + k->text;
    libdevice |= k->uses_libdevice;
    for (const auto& h : k->helpers) {
      if (std::find(helpers.begin(), helpers.end(), h) == helpers.end()) helpers.push_back(h);
    }
  }
  const nlohmann::json outs = c.capture.value("outputs", nlohmann::json::array());
  std::vector<std::string> ret;
  for (const auto& o : outs) {
    auto idx = JsonInt(o, "call_output");
    if (!idx || *idx < 0 || static_cast<size_t>(*idx) >= f.returned.size())
      return Reject{"output_not_from_call", "a forward output is not one of call's outputs (a view or an input)"};
    ret.push_back(f.returned[*idx]);
  }
  bool single = JsonObject(c.capture, "eager").value("output", nlohmann::json()).is_object();
  if (ret.empty()) return Reject{"output_not_from_call", "the capture maps no output"};
  std::string ret_line = single && ret.size() == 1 ? ret[0] : "(" + [&] {
    std::string s;
    for (const auto& r : ret) s += r + ", ";
    return s;
  }() + ")";
  std::string src =
      "# Triton implementation generated by kiln datagen from TorchInductor's output: plain @triton.jit kernels\n"
      "# launched with explicit grids; verified against the PyTorch program by kiln eval.\n"
      "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport triton\n"
      "import triton.language as tl\n";
  if (libdevice) src += "from triton.language.extra import libdevice\n";
  if (!p.constants.empty()) src += "\n" + p.constants;
  for (const auto& h : helpers) src += "\n\n" + HelperSource(h);
  src += kernels + "\n";
  if (f.uses_view) {
    src += "\n\ndef _view(t, size, stride, offset):\n"
           "    \"\"\"A view of t's storage with the given size and stride, offset elements further.\"\"\"\n"
           "    return t.as_strided(size, stride, t.storage_offset() + offset)\n";
  }
  std::string first_tensor = p.params.empty() ? "" : p.params[0];
  src += "\n\nclass ModelNew(nn.Module):\n";
  src += p.init.empty() ? "    def __init__(self, *args):\n        super().__init__()\n" : p.init;
  src += "\n    def forward" + p.forward_params + ":\n";
  if (c.dynamic) {
    for (const auto& l : DynamicPrologue(c.symbols)) src += "        " + l + "\n";
    for (const auto& s : c.symbols.order) conv->symbols.push_back(s + " = " + c.symbols.symbols.at(s));
    conv->dynamic = true;
  } else {
    src += ShapeGuard(p, c.capture);
  }
  src += "        device = " + first_tensor + ".device\n";
  // the returned buffers by their role: out (out0, out1, ... for several)
  std::map<std::string, std::string> names;
  for (size_t i = 0; i < f.output_buffers.size(); ++i) {
    const std::string& b = f.output_buffers[i];
    if (b.find('=') != std::string::npos || !StartsWith(b, "buf")) continue;
    names[b] = ret.size() == 1 ? "out" : fmt::format("out{}", i);
  }
  auto rename = [&](std::string line) {
    for (const auto& [from, to] : names) line = std::regex_replace(line, std::regex("\\b" + from + "\\b"), to);
    return line;
  };
  for (const auto& l : f.lines) src += "        " + rename(l) + "\n";
  src += "        return " + rename(ret_line) + "\n";
  conv->source = std::move(src);
  return std::nullopt;
}

std::optional<Reject> Convert(const std::string& program_text, const nlohmann::json& capture, Conversion* conv) {
  if (!capture.is_object() || !JsonBool(capture, "ok")) return Reject{"not_captured", "the capture failed"};
  const nlohmann::json codes = capture.value("codes", nlohmann::json::array());
  if (codes.size() != 1 || !codes[0].is_string())
    return Reject{"graph_breaks", fmt::format("{} output modules (one compiled graph is needed)", codes.size())};
  if (!capture.contains("call_args") || !capture["call_args"].is_array())
    return Reject{"unmapped_argument", "the capture has no call_args"};
  ProgramParts parts;
  if (auto r = ReadProgram(program_text, &parts)) return r;
  if (parts.params.empty()) return Reject{"unsupported_program", "forward takes no input"};
  OutputModule out;
  if (auto r = ReadOutputModule(codes[0].get<std::string>(), &out)) return r;
  if (out.kernels.empty()) return Reject{"no_triton_kernel", "Inductor generated no Triton kernel"};
  Context c{out, capture, {}, {}, {}, false, {}};
  c.dynamic = JsonBool(capture, "dynamic");
  if (auto r = IndexRecords(&c)) return r;
  Forward f;
  f.params = parts.params;
  pyast::Node body = out.call.field("body");
  f.output_buffers = ReturnedBuffers(body);
  if (auto r = Statements(body, c, &f)) return r;
  for (const auto& [k, recs] : c.records) {
    if (f.launches_seen[k] != static_cast<int>(recs.size()))
      return Reject{"launch_mismatch", fmt::format("{} was recorded {} times, call launches it {} times", k,
                                                   recs.size(), f.launches_seen[k])};
  }
  return Assemble(parts, c, f, conv);
}

}  // namespace

Conversion ConvertCapture(const std::string& program_text, const nlohmann::json& capture) {
  Conversion conv;
  std::optional<Reject> r;
  try {
    r = Convert(program_text, capture, &conv);
  } catch (const nlohmann::json::exception& e) {
    r = Reject{"malformed_capture", e.what()};
  }
  if (r) {
    conv.ok = false;
    conv.reason = r->code;
    conv.message = r->message;
    conv.source.clear();
    conv.kernels.clear();
    conv.dynamic = false;
    conv.symbols.clear();
  } else {
    conv.ok = true;
  }
  return conv;
}

}  // namespace kiln::datagen

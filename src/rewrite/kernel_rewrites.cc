// kiln/rewrite: rewrites of kernel bodies (GROUP_M swizzle, eviction hints, dot precision, loop
// pipelining, split-K, persistent grid, rows per program, mask removal).
#include <fmt/format.h>
#include <algorithm>

#include "rewrite/plan.h"

namespace kiln::rewrite::internal {

using analysis::GridKind;
using analysis::MemOp;
using analysis::ParamKind;

namespace {

// Statement containing the node covering `span`.
Node StatementAt(const Ctx& c, const Span& s) { return EnclosingStatement(NodeAt(c.tree, s)); }

bool InBody(const Node& stmt, const Node& body) { return !stmt.is_null() && stmt.parent() == body; }

int CountAssigns(const std::vector<SimpleAssign>& as, std::string_view name) {
  int n = 0;
  for (const auto& a : as) n += a.name == name;
  return n;
}

bool HasParamLike(const Kernel& k, std::string_view needle) {
  for (const auto& p : k.params)
    if (p.name.find(needle) != std::string::npos) return true;
  return false;
}

std::string StripParens(std::string s) {
  s = Trim(s);
  while (s.size() >= 2 && s.front() == '(' && s.back() == ')') {
    int depth = 0;
    bool wraps = true;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '(') ++depth;
      if (s[i] == ')') --depth;
      if (depth == 0 && i + 1 < s.size()) {
        wraps = false;
        break;
      }
    }
    if (!wraps) break;
    s = Trim(s.substr(1, s.size() - 2));
  }
  return s;
}

std::string NoSpace(std::string_view s) {
  std::string o;
  for (char ch : s)
    if (!std::isspace(static_cast<unsigned char>(ch))) o += ch == '"' ? '\'' : ch;
  return o;
}

std::string StringLiteralValueOf(std::string_view s) {
  std::string t = Trim(s);
  if (t.size() >= 2 && (t.front() == '\'' || t.front() == '"') && t.back() == t.front())
    return t.substr(1, t.size() - 2);
  return t;
}

}  // namespace

// GroupMSwizzle -----------------------------------------------------------------------------------

Result<Plan> PlanGroupMSwizzle(const Ctx& c, const GroupMSwizzle& r) {
  const Kernel& k = c.kernel;
  if (r.group_m < 1) return Refuse("GROUP_M must be at least 1");
  if (HasParamLike(k, "GROUP")) return Refuse("kernel already has a GROUP parameter (already swizzled)");
  if (k.dots.empty() && k.cls != analysis::KernelClass::kGemm)
    return Refuse("not a 2-D tiled product (no tl.dot): grouping programs gains no L2 reuse");
  const analysis::ProgramId *p0 = nullptr, *p1 = nullptr;
  for (const auto& p : k.program_ids) {
    if (p.axis == 0 && !p0)
      p0 = &p;
    else if (p.axis == 1 && !p1)
      p1 = &p;
    else if (p.axis == 0 || p.axis == 1)
      return Refuse("program_id read more than once per axis");
  }
  if (!p0 || !p1) {
    if (p0 && !p1)
      return Refuse(
          "one program id: a linear pid split is not rewritten (needs num_pid_m; most such kernels are already "
          "grouped)");
    return Refuse("needs two program ids (axis 0 and 1)");
  }
  if (p0->target.empty() || p1->target.empty()) return Refuse("program ids are not assigned to variables");
  Node def = KernelDef(c.tree, k);
  Node body = def.field("body");
  Node s0 = StatementAt(c, p0->span), s1 = StatementAt(c, p1->span);
  if (!InBody(s0, body) || !InBody(s1, body)) return Refuse("program ids are not read at the top of the kernel body");
  auto as = AssignmentsIn(body);
  if (CountAssigns(as, p0->target) != 1 || CountAssigns(as, p1->target) != 1)
    return Refuse("program id variables are reassigned");
  std::string tl = TlAlias(c.model);
  const std::string& pm = p0->target;
  const std::string& pn = p1->target;
  Node last = s0.span().end.byte > s1.span().end.byte ? s0 : s1;
  std::string ind = IndentOf(c.text(), last.span().begin.byte);
  std::string code = fmt::format(
      "\n{i}# kiln: grouped program ordering (GROUP_M rows of tiles share L2)\n"
      "{i}_kiln_npm = {tl}.num_programs(0)\n"
      "{i}_kiln_npn = {tl}.num_programs(1)\n"
      "{i}_kiln_pid = {pn} * _kiln_npm + {pm}\n"
      "{i}_kiln_width = GROUP_M * _kiln_npn\n"
      "{i}_kiln_first_m = (_kiln_pid // _kiln_width) * GROUP_M\n"
      "{i}_kiln_gsize = min(_kiln_npm - _kiln_first_m, GROUP_M)\n"
      "{i}{pm} = _kiln_first_m + ((_kiln_pid % _kiln_width) % _kiln_gsize)\n"
      "{i}{pn} = (_kiln_pid % _kiln_width) // _kiln_gsize",
      fmt::arg("i", ind), fmt::arg("tl", tl), fmt::arg("pm", pm), fmt::arg("pn", pn));
  Plan plan;
  KILN_RETURN_IF_ERROR(plan.edits.Insert(last.span().end.byte, code));
  KILN_RETURN_IF_ERROR(AppendKernelParam(c, plan.edits, fmt::format("GROUP_M: {}.constexpr = {}", tl, r.group_m)));
  plan.notes.push_back(
      fmt::format("{}/{} remapped to grouped order with GROUP_M={} (kernel default)", pm, pn, r.group_m));
  return plan;
}

// EvictionHints ------------------------------------------------------------------------------------

Result<Plan> PlanEvictionHints(const Ctx& c, const EvictionHints& r) {
  const Kernel& k = c.kernel;
  static const std::set<std::string> kPolicies = {"evict_first", "evict_last", "evict_normal"};
  static const std::set<std::string> kCache = {".cg", ".ca", ".cv"};
  if (r.eviction_policy.empty() && r.cache_modifier.empty()) return Refuse("no hint requested");
  if (!r.eviction_policy.empty() && !kPolicies.count(r.eviction_policy)) return Refuse("unknown eviction policy");
  if (!r.cache_modifier.empty() && !kCache.count(r.cache_modifier)) return Refuse("unknown cache modifier");
  // ptxas (sm_90, Triton 3.6) rejects the pair: "Modifier '.evict_first' cannot be combined with modifier
  // '.cg'" (found by compiling the rewrite for sm_90 on the CPU, tests/rewrite/compile_check.py).
  if (!r.eviction_policy.empty() && !r.cache_modifier.empty())
    return Refuse("an eviction policy cannot be combined with a cache modifier (ptxas rejects '." +
                  r.eviction_policy + "' with '" + r.cache_modifier + "'): request one of them");
  if (!r.switch_param.empty()) {
    if (!IsIdentifier(r.switch_param)) return Refuse("switch '" + r.switch_param + "' is not a Python identifier");
    if (k.FindParam(r.switch_param)) return Refuse("kernel already has a parameter '" + r.switch_param + "'");
  }
  if (k.cls == analysis::KernelClass::kGemm || k.cls == analysis::KernelClass::kAttention || !k.dots.empty())
    return Refuse("tiles of a product are re-read by other programs through L2: not streaming");
  auto pids = PidVars(c.tree, k);
  Node body = KernelDef(c.tree, k).field("body");
  auto as = AssignmentsIn(body);
  std::map<std::string, int> loads_per_base;
  auto base_of = [&](const MemOp& m) { return m.base.empty() ? PointerBase(c.tree, k, m.pointer.span) : m.base; };
  for (const auto& m : k.memops)
    if (m.kind == MemOp::Kind::kLoad) ++loads_per_base[base_of(m)];
  Plan plan;
  std::string skipped;
  for (const auto& m : k.memops) {
    if (m.kind != MemOp::Kind::kLoad) continue;
    auto skip = [&](const std::string& why) {
      skipped += fmt::format("{}line {}: {}", skipped.empty() ? "" : "; ", m.span.begin.line, why);
    };
    if (m.eviction_policy.present() || m.cache_modifier.present() || m.volatile_.present()) {
      skip("has hints");
      continue;
    }
    std::string base = base_of(m);
    if (base.empty()) {
      skip("pointer base unknown");
      continue;
    }
    if (loads_per_base[base] > 1) {
      skip(base + " is loaded more than once (re-read)");
      continue;
    }
    Node ptr = NodeAt(c.tree, m.pointer.span);
    auto ids = IdentifierNames(ptr);
    bool per_program = m.pointer.text.find("program_id") != std::string::npos;
    for (const auto& n : ids) per_program |= pids.count(n) > 0;
    if (!per_program) {
      skip("address does not depend on the program id (shared by all programs)");
      continue;
    }
    if (m.loop >= 0) {
      const auto& L = k.loops[m.loop];
      bool moves = ids.count(L.target) > 0;
      for (const auto& a : as) {
        uint32_t b = a.stmt.span().begin.byte;
        if (b >= L.span.begin.byte && b < L.span.end.byte && ids.count(a.name)) moves = true;
      }
      if (!moves) {
        skip("re-read in every loop iteration");
        continue;
      }
    }
    // Switched: the hint when the constexpr is set, the default ('') otherwise (a constexpr condition
    // is folded at compile time, so the kwarg stays a constant string).
    auto hint = [&](const std::string& v) {
      return r.switch_param.empty() ? "'" + v + "'" : "'" + v + "' if " + r.switch_param + " else ''";
    };
    if (!r.eviction_policy.empty())
      KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), m.args_span, "eviction_policy=" + hint(r.eviction_policy)));
    if (!r.cache_modifier.empty())
      KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), m.args_span, "cache_modifier=" + hint(r.cache_modifier)));
    plan.notes.push_back(fmt::format("load at line {} ({}): streaming hint", m.span.begin.line, base));
  }
  if (plan.edits.empty()) return Refuse("no streaming load read once" + (skipped.empty() ? "" : " (" + skipped + ")"));
  if (!r.switch_param.empty()) {
    KILN_RETURN_IF_ERROR(AppendKernelParam(
        c, plan.edits, fmt::format("{}: {}.constexpr = 0", r.switch_param, analysis::TlAlias(c.model))));
    plan.notes.push_back("the hints are on when " + r.switch_param +
                         " is set (kernel default 0: the original's loads)");
  }
  return plan;
}

// DotPrecision ---------------------------------------------------------------------------------------

Result<Plan> PlanDotPrecision(const Ctx& c, const DotPrecision& r) {
  if (r.precision != "tf32" && r.precision != "ieee" && r.precision != "tf32x3")
    return Refuse("precision must be tf32, tf32x3 or ieee");
  const Kernel& k = c.kernel;
  if (k.dots.empty()) return Refuse("kernel has no tl.dot");
  Plan plan;
  std::string kw = "input_precision='" + r.precision + "'";
  for (const auto& d : k.dots) {
    if (d.form != "tl.dot") continue;
    if (d.input_precision.present()) {
      if (StringLiteralValueOf(d.input_precision.text) == r.precision) continue;
      KILN_RETURN_IF_ERROR(plan.edits.Replace(d.input_precision.span, "'" + r.precision + "'"));
    } else if (d.allow_tf32.present()) {
      bool found = false;
      for (const Node& a : NodeAt(c.tree, d.args_span).named_children())
        if (a.type() == "keyword_argument" && a.field("name").text() == "allow_tf32") {
          KILN_RETURN_IF_ERROR(plan.edits.Replace(a.span(), kw));
          found = true;
        }
      if (!found) return Refuse("allow_tf32 not found as a keyword");
    } else {
      KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), d.args_span, kw));
    }
    plan.notes.push_back(fmt::format("tl.dot at line {}: {}", d.span.begin.line, kw));
  }
  if (plan.edits.empty()) return Refuse("every tl.dot already uses input_precision='" + r.precision + "'");
  return plan;
}

// PipelineLoop ----------------------------------------------------------------------------------------

namespace {

// Every pointer parameter an address expression can derive from, following the kernel's simple
// assignments (`p = x + offs`, `p += step`, block pointers built from `x`) transitively. Unlike
// PointerBase this keeps all of them (a superset is the conservative answer for hazards).
std::set<std::string> PointerBases(const Kernel& k, const std::vector<SimpleAssign>& as, const Node& expr) {
  std::set<std::string> bases, seen;
  if (expr.is_null()) return bases;
  std::vector<std::string> work;
  for (const auto& n : IdentifierNames(expr)) work.push_back(n);
  while (!work.empty()) {
    std::string n = work.back();
    work.pop_back();
    if (!seen.insert(n).second) continue;
    if (const Param* p = k.FindParam(n)) {
      if (p->kind == ParamKind::kPointer) bases.insert(n);
      continue;
    }
    for (const auto& a : as)
      if (a.name == n)
        for (const auto& m : IdentifierNames(a.value)) work.push_back(m);
  }
  return bases;
}

// Buffers a loop body (nested loops included) both loads from and writes to (tl.store or
// tl.atomic_*). Software pipelining issues later iterations' loads before earlier iterations'
// stores, so such a loop may read memory before it is written.
std::set<std::string> LoadStoreHazards(const Ctx& c, const std::vector<SimpleAssign>& as, const analysis::Loop& L) {
  const Kernel& k = c.kernel;
  std::set<std::string> loaded, written, out;
  auto bases = [&](const Span& ptr) { return PointerBases(k, as, NodeAt(c.tree, ptr)); };
  for (const auto& m : k.memops) {
    if (!L.span.Contains(m.span) || m.pointer.span.size() == 0) continue;
    auto b = bases(m.pointer.span);
    (m.kind == MemOp::Kind::kLoad ? loaded : written).insert(b.begin(), b.end());
  }
  for (const auto& a : k.atomics) {
    if (!L.span.Contains(a.span) || a.pointer.span.size() == 0) continue;
    auto b = bases(a.pointer.span);
    written.insert(b.begin(), b.end());
  }
  for (const auto& b : written)
    if (loaded.count(b)) out.insert(b);
  return out;
}

std::string JoinNames(const std::set<std::string>& s) {
  std::string o;
  for (const auto& n : s) o += (o.empty() ? "" : ", ") + n;
  return o;
}

}  // namespace

Result<Plan> PlanPipelineLoop(const Ctx& c, const PipelineLoop& r) {
  const Kernel& k = c.kernel;
  if (r.num_stages < 1) return Refuse("num_stages must be at least 1");
  std::string tl = TlAlias(c.model);
  Plan plan;
  std::string why, hazards;
  std::vector<std::string> skipped;
  auto as = AssignmentsIn(KernelDef(c.tree, k).field("body"));
  for (size_t i = 0; i < k.loops.size(); ++i) {
    if (r.loop >= 0 && static_cast<int>(i) != r.loop) continue;
    const auto& L = k.loops[i];
    bool work = false;
    for (const auto& d : k.dots) work |= d.loop == static_cast<int>(i);
    for (const auto& m : k.memops) work |= m.loop == static_cast<int>(i) && m.kind == MemOp::Kind::kLoad;
    if (!work) {
      why = "no load or tl.dot directly inside";
      continue;
    }
    if (auto hz = LoadStoreHazards(c, as, L); !hz.empty()) {
      std::string note = fmt::format(
          "loop at line {} loads and stores {}: prefetched loads could read before earlier iterations' stores",
          L.span.begin.line, JoinNames(hz));
      hazards += (hazards.empty() ? "" : "; ") + note;
      skipped.push_back("skipped " + note);
      continue;
    }
    std::string_view it = c.text().substr(L.iter_span.begin.byte, L.iter_span.size());
    if (L.kind == "range" && it.substr(0, 6) == "range(") {
      KILN_RETURN_IF_ERROR(plan.edits.Replace(L.iter_span.begin.byte, L.iter_span.begin.byte + 5, tl + ".range"));
      KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), L.args_span, fmt::format("num_stages={}", r.num_stages)));
    } else if (L.kind == "tl.range") {
      bool done = false;
      for (const auto& o : L.options)
        if (o.name == "num_stages") {
          if (ParseIntLiteral(o.value.text) == r.num_stages) {
            done = true;
            why = "already at num_stages";
            break;
          }
          KILN_RETURN_IF_ERROR(plan.edits.Replace(o.value.span, std::to_string(r.num_stages)));
          done = true;
          plan.notes.push_back(fmt::format("loop at line {}: num_stages={}", L.span.begin.line, r.num_stages));
        }
      if (done) continue;
      KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), L.args_span, fmt::format("num_stages={}", r.num_stages)));
    } else {
      why = "loop kind '" + L.kind + "' is not a range loop";
      continue;
    }
    plan.notes.push_back(
        fmt::format("loop at line {}: {}.range(..., num_stages={})", L.span.begin.line, tl, r.num_stages));
  }
  if (plan.edits.empty()) {
    if (k.loops.empty()) return Refuse("kernel has no loop");
    if (!hazards.empty()) return Refuse("no loop to pipeline (" + hazards + (why.empty() ? "" : "; " + why) + ")");
    return Refuse("no loop to pipeline (" + why + ")");
  }
  plan.notes.insert(plan.notes.end(), skipped.begin(), skipped.end());
  return plan;
}

// Launch helpers ----------------------------------------------------------------------------------------

namespace {

// Where to insert a host statement before the launch (line start) and its indentation.
Result<std::pair<uint32_t, std::string>> BeforeLaunch(const Ctx& c, const Launch& l) {
  if (l.in_lambda) return Refuse("launch is inside a lambda");
  Node st = StatementAt(c, l.span);
  if (st.is_null() || st.parent().is_null()) return Refuse("launch statement not found");
  uint32_t b = st.span().begin.byte;
  if (LineStart(c.text(), b) + IndentOf(c.text(), b).size() != b) return Refuse("launch shares a line with other code");
  return std::pair{LineStart(c.text(), b), IndentOf(c.text(), b)};
}

// Whether `text` names the identifier `name` (not as part of a longer identifier or an attribute).
bool NamesIdentifier(std::string_view text, std::string_view name) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    const bool starts = at == 0 || (!ident(text[at - 1]) && text[at - 1] != '.');
    const bool ends = at + name.size() >= text.size() || !ident(text[at + name.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// A grid held by a variable: assigned in the launching function before the launch (its text is valid there).
bool AssignedBeforeLaunch(const Launch& l) {
  const auto& a = l.grid.assignment;
  return a && a->span.begin.byte >= l.enclosing_span.begin.byte && a->span.end.byte <= l.span.begin.byte;
}

// The grid's dimensions as host text evaluated at the launch: a tuple (written there or held by a
// variable), or a lambda whose dimensions do not read META (`lambda meta: (x.shape[0],)`, written at the
// launch or assigned in the launching function).
Result<std::vector<std::string>> GridDimsAtLaunch(const Launch& l) {
  const analysis::Grid& g = l.grid;
  const bool variable = g.kind == GridKind::kVariable;
  const GridKind gk = variable ? g.resolved_kind : g.kind;
  if (!g.meta_keys.empty()) return Refuse("grid reads META");
  if (g.dims.empty()) return Refuse("grid (" + g.expr.text + ") has no dimensions kiln can read");
  std::vector<std::string> dims;
  if (gk == GridKind::kTuple) {
    for (size_t i = 0; i < g.dims.size(); ++i)
      dims.push_back(variable ? fmt::format("{}[{}]", g.expr.text, i) : g.dims[i].text);
    return dims;
  }
  if (gk != GridKind::kLambda)
    return Refuse("grid (" + g.expr.text + ") is not a tuple or a lambda (it cannot be computed at the launch)");
  for (const auto& d : g.dims) {
    if (!g.meta_param.empty() && NamesIdentifier(d.text, g.meta_param))
      return Refuse("grid reads " + g.meta_param + " (a lambda over META cannot be precomputed)");
    dims.push_back(d.text);
  }
  if (variable && !AssignedBeforeLaunch(l))
    return Refuse("grid lambda '" + g.expr.text + "' is not assigned in the launching function before the launch");
  return dims;
}

// A grid lambda over META (`lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),)`) made a grid of plain host
// text at the launch: each key the grid reads must be a keyword argument of this launch (its value is what META
// holds there; a key the autotuner or a heuristic sets is refused). A value that is not a plain name is held by a
// variable assigned just before the launch (`_kiln_meta_BLOCK_SIZE = 1024`) that the keyword argument and the
// grid both read, so a later change of the value (the search's) changes both. -> the dimensions, with the edits
// that hoist values added to `plan`.
Result<std::vector<std::string>> GridDimsFromLaunchMeta(const Ctx& c, const Launch& l, Plan& plan) {
  const analysis::Grid& g = l.grid;
  const GridKind gk = g.kind == GridKind::kVariable ? g.resolved_kind : g.kind;
  if (gk != GridKind::kLambda || g.meta_param.empty())
    return Refuse("grid (" + g.expr.text + ") reads META but is not a lambda kiln can read");
  if (g.kind == GridKind::kVariable && !AssignedBeforeLaunch(l))
    return Refuse("grid lambda '" + g.expr.text + "' is not assigned in the launching function before the launch");
  std::vector<std::pair<std::string, const analysis::LaunchArg*>> keys;
  for (const std::string& key : g.meta_keys) {
    const analysis::LaunchArg* arg = nullptr;
    for (const auto& a : l.args) {
      if (a.splat) return Refuse("grid reads " + g.meta_param + " and the launch passes *args/**kwargs");
      if (a.keyword == key) arg = &a;
    }
    if (!arg)
      return Refuse("grid reads " + g.meta_param + "['" + key +
                    "'], which this launch does not pass (set by an autotuner, a heuristic or a default)");
    keys.push_back({key, arg});
  }
  std::optional<std::pair<uint32_t, std::string>> where;
  std::map<std::string, std::string> values;  // key -> the host text META holds it as at this launch
  for (const auto& [key, arg] : keys) {
    std::string value = Trim(arg->value.text);
    if (!IsIdentifier(value)) {
      Node v = Unparen(NodeAt(c.tree, arg->value.span));
      if (v.type() != "integer" && v.type() != "attribute")
        return Refuse("grid reads " + g.meta_param + "['" + key + "'], passed as '" + value +
                      "' (not a name, an attribute or an integer)");
      if (!where) {
        KILN_ASSIGN_OR_RETURN(auto w, BeforeLaunch(c, l));
        where = w;
      }
      std::string var = "_kiln_meta_" + key;
      KILN_RETURN_IF_ERROR(plan.edits.Insert(where->first, fmt::format("{}{} = {}\n", where->second, var, value)));
      KILN_RETURN_IF_ERROR(plan.edits.Replace(arg->value.span, var));
      value = var;
    }
    values[key] = value;
  }
  std::vector<std::string> dims;
  for (const auto& d : g.dims) {
    // `meta['K']`: a subscript of the lambda's parameter by a string literal
    dims.push_back(pyast::SubstituteNodes(NodeAt(c.tree, d.span), [&](const Node& n) -> std::optional<std::string> {
      if (n.type() != "subscript" || n.named_child_count() != 2) return std::nullopt;
      if (n.named_child(0).type() != "identifier" || n.named_child(0).text() != g.meta_param) return std::nullopt;
      auto it = values.find(pyast::StringLiteralValue(n.named_child(1)));
      if (it == values.end()) return std::nullopt;
      return "(" + it->second + ")";
    }));
  }
  for (const auto& d : dims)
    if (NamesIdentifier(d, g.meta_param))
      return Refuse("grid reads " + g.meta_param + " other than as " + g.meta_param + "['KEY'] (" + d + ")");
  return dims;
}

// A 1-D grid's size as host text ("" + reason when not a plain tuple).
Result<std::string> GridSize1D(const Launch& l) {
  GridKind gk = l.grid.kind == GridKind::kVariable ? l.grid.resolved_kind : l.grid.kind;
  if (gk != GridKind::kTuple)
    return Refuse("grid (" + l.grid.expr.text + ") is not a tuple (a lambda over META cannot be precomputed)");
  if (l.grid.dims.size() != 1) return Refuse(fmt::format("grid has {} dimensions, needs 1", l.grid.dims.size()));
  KILN_ASSIGN_OR_RETURN(auto dims, GridDimsAtLaunch(l));
  return dims[0];
}

// A bare `return` (no value).
bool IsBareReturn(const Node& n) { return n.type() == "return_statement" && n.named_child_count() == 0; }

// The statements of a block, comments left out.
std::vector<Node> Statements(const Node& block) {
  std::vector<Node> out;
  for (const Node& n : block.named_children())
    if (n.type() != "comment") out.push_back(n);
  return out;
}

// A top-level early exit `if C: return` (no elif or else, nothing else in the branch).
bool IsExitGuard(const Node& n) {
  if (n.type() != "if_statement") return false;
  for (const Node& ch : n.named_children())
    if (ch.type() == "elif_clause" || ch.type() == "else_clause") return false;
  auto inner = Statements(n.field("consequence"));
  return inner.size() == 1 && IsBareReturn(inner[0]);
}

// Kernel body wrapped in a loop over tiles replacing tl.program_id(0). Program ids of other axes are refused,
// or stay as they are with `other_axes_stay` (the grid keeps those dimensions). Early exits a loop iteration
// can keep: a bare `return` as the body's last statement becomes `pass`, and each top-level guard
// `if C: return` becomes `if C: pass` with the statements after it moved into its `else:` (so a tile that exits
// skips only its own iteration); any other `return` is refused (Triton has no `continue`).
Status WrapBodyInTileLoop(const Ctx& c, Plan& plan, const std::string& header, bool other_axes_stay = false) {
  const Kernel& k = c.kernel;
  Node def = KernelDef(c.tree, k);
  Node body = def.field("body");
  const std::vector<Node> stmts = Statements(body);
  std::vector<Node> guards;
  Node trailing;
  std::set<uint32_t> kept_returns;  // start bytes of the returns handled above
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (i + 1 == stmts.size() && IsBareReturn(stmts[i])) {
      trailing = stmts[i];
      kept_returns.insert(stmts[i].span().begin.byte);
    } else if (IsExitGuard(stmts[i])) {
      guards.push_back(stmts[i]);
      kept_returns.insert(Statements(stmts[i].field("consequence"))[0].span().begin.byte);
    }
  }
  bool bad = false;
  std::string why;
  body.Walk([&](const Node& n) {
    if (n.type() == "return_statement" && !kept_returns.count(n.span().begin.byte)) {
      bad = true;
      why = "kernel body returns early";
    }
    if (n.type() == "function_definition" && !(n == def)) {
      bad = true;
      why = "nested function";
    }
    if (n.type() == "string" && n.span().begin.line != n.span().end.line) {
      Node st = EnclosingStatement(n);
      if (!(st == body.named_child(0))) {
        bad = true;
        why = "multi-line string in the body";
      }
    }
    return !bad;
  });
  if (bad) return Refuse(why);
  if (std::string(body.text()).find("num_programs") != std::string::npos) return Refuse("kernel reads tl.num_programs");
  std::vector<const analysis::ProgramId*> ps;
  for (const auto& p : k.program_ids) {
    if (p.axis < 0) return Refuse("kernel reads a program id whose axis is not a literal");
    if (p.axis != 0 && !other_axes_stay) return Refuse("kernel reads a program id other than axis 0 (2-D grid)");
    if (p.axis == 0) ps.push_back(&p);
  }
  if (ps.empty()) return Refuse("kernel reads no program id of axis 0");
  for (const auto& call : k.calls) {
    const Kernel* h = c.model.FindKernel(call.callee);
    if (h && !h->program_ids.empty()) return Refuse("a called jit function reads the program id");
  }
  uint32_t b = LineStart(c.text(), body.span().begin.byte), e = body.span().end.byte;
  std::string text(c.text().substr(b, e - b));
  const std::string unit = "    ";
  // Edits of the body's text in its own coordinates (offset from b), applied from the end.
  struct Edit {
    size_t at, len;
    std::string with;
  };
  std::vector<Edit> edits;
  // `tl.program_id(0).to(tl.int64)` (Liger's kernels): the loop variable is a tensor when compiled but a
  // Python int under Triton's interpreter, which has no `.to`; a cast makes it a tensor on both paths.
  const std::string tile_tensor = fmt::format("{}.cast(_kiln_tile, {}.int32)", TlAlias(c.model), TlAlias(c.model));
  for (auto* p : ps) {
    const size_t at = p->span.begin.byte - b;
    const bool method = at + p->span.size() < text.size() && text[at + p->span.size()] == '.';
    edits.push_back({at, p->span.size(), method ? tile_tensor : "_kiln_tile"});
  }
  if (!trailing.is_null()) edits.push_back({trailing.span().begin.byte - b, trailing.span().size(), "pass"});
  for (size_t gi = 0; gi < guards.size(); ++gi) {
    const Node& g = guards[gi];
    const Node ret = Statements(g.field("consequence"))[0];
    edits.push_back({ret.span().begin.byte - b, ret.span().size(), "pass"});
    std::string indent = IndentOf(c.text(), g.span().begin.byte);
    for (size_t j = 0; j < gi; ++j) indent += unit;  // inside the else of each guard before it
    const bool last = stmts.back() == g;             // nothing after it: the else needs a statement
    edits.push_back({g.span().end.byte - b, 0, "\n" + indent + "else:" + (last ? "\n" + indent + unit + "pass" : "")});
    for (size_t at = text.find('\n', g.span().end.byte - b); at != std::string::npos && at + 1 < text.size();
         at = text.find('\n', at + 1))
      edits.push_back({at + 1, 0, unit});
  }
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& x, const Edit& y) { return x.at > y.at; });
  for (const auto& ed : edits) text.replace(ed.at, ed.len, ed.with);
  std::string ind = IndentOf(c.text(), body.span().begin.byte);
  // Parameters the body reassigns (X += row * stride) restart from their value at entry in every
  // iteration.
  std::string save, restore;
  std::set<std::string> done;
  for (const auto& a : AssignmentsIn(body))
    if (k.FindParam(a.name) && done.insert(a.name).second) {
      save += fmt::format("{}_kiln_{}0 = {}\n", ind, a.name, a.name);
      restore += fmt::format("{}{}{} = _kiln_{}0\n", ind, unit, a.name, a.name);
    }
  std::string out = save + ind + header + "\n" + restore + ReindentBlock(text, unit);
  return plan.edits.Replace(b, e, out);
}

}  // namespace

// PersistentGrid -----------------------------------------------------------------------------------------

Result<Plan> PlanPersistentGrid(const Ctx& c, const PersistentGrid& r) {
  const Kernel& k = c.kernel;
  if (k.FindParam("_kiln_num_tiles")) return Refuse("kernel is already persistent or rows-per-program");
  if (k.autotune) return Refuse("kernel is autotuned: the grid would depend on META");
  std::string tl = TlAlias(c.model);
  Plan plan;
  std::string nsms;
  if (r.num_programs > 0) {
    nsms = std::to_string(r.num_programs);
  } else {
    if (c.text().find("import torch") == std::string_view::npos)
      return Refuse("module does not import torch (needed to read the SM count)");
    nsms =
        "(torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count "
        "if torch.cuda.is_available() else 4)";
  }
  for (int li : c.launches) {
    const Launch& l = c.model.launches[li];
    KILN_ASSIGN_OR_RETURN(std::string size, GridSize1D(l));
    KILN_RETURN_IF_ERROR(plan.edits.Replace(GridEditSpan(c.text(), l), fmt::format("(min({}, {}),)", nsms, size)));
    KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), l.args_span, "_kiln_num_tiles=" + size));
    plan.notes.push_back(fmt::format("launch at line {}: grid = min(SMs, {})", l.span.begin.line, size));
  }
  KILN_RETURN_IF_ERROR(WrapBodyInTileLoop(
      c, plan,
      fmt::format("for _kiln_tile in range({tl}.program_id(0), _kiln_num_tiles, {tl}.num_programs(0)):",
                  fmt::arg("tl", tl))));
  KILN_RETURN_IF_ERROR(AppendKernelParam(c, plan.edits, "_kiln_num_tiles=1"));
  plan.notes.push_back("kernel body loops over tiles with a stride of the number of programs");
  return plan;
}

// RowsPerProgram ------------------------------------------------------------------------------------------

// Any kernel whose programs are independent: consecutive programs of axis 0 run one after another in one
// program (other axes stay). Programs that wait on one another (a lock or flag through atomic_cas/xchg)
// could deadlock once serialised, and tiles of tl.dot are the tile rewrites' business: both refused.
Result<Plan> PlanRowsPerProgram(const Ctx& c, const RowsPerProgram& r) {
  const Kernel& k = c.kernel;
  if (r.rows < 1) return Refuse("rows must be at least 1");
  if (r.stages < 0 || r.stages > 8) return Refuse("stages must be 0 (a plain range) to 8");
  if (k.FindParam("_kiln_num_tiles")) return Refuse("kernel is already persistent or rows-per-program");
  if (k.FindParam("ROWS_PER_PROGRAM")) return Refuse("kernel already has ROWS_PER_PROGRAM");
  if (!k.dots.empty()) return Refuse("kernel has tl.dot: tiles, not rows");
  for (const auto& a : k.atomics)
    if (a.op == "cas" || a.op == "xchg")
      return Refuse(fmt::format("atomic_{} at line {}: programs may wait on one another, and would run in turn", a.op,
                                a.span.begin.line));
  std::string tl = TlAlias(c.model), triton = TritonAlias(c.model);
  Plan plan;
  for (int li : c.launches) {
    const Launch& l = c.model.launches[li];
    std::vector<std::string> dims;
    if (l.grid.meta_keys.empty()) {
      KILN_ASSIGN_OR_RETURN(dims, GridDimsAtLaunch(l));
    } else {
      KILN_ASSIGN_OR_RETURN(dims, GridDimsFromLaunchMeta(c, l, plan));
    }
    if (dims.empty()) return Refuse("grid (" + l.grid.expr.text + ") has no dimensions kiln can read");
    std::string grid = fmt::format("lambda META: ({}.cdiv({}, META['ROWS_PER_PROGRAM'])", triton, dims[0]);
    for (size_t i = 1; i < dims.size(); ++i) grid += ", " + dims[i];
    grid += dims.size() == 1 ? ",)" : ")";
    KILN_RETURN_IF_ERROR(plan.edits.Replace(GridEditSpan(c.text(), l), grid));
    KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), l.args_span,
                                   fmt::format("_kiln_num_tiles={}, ROWS_PER_PROGRAM={}", dims[0], r.rows)));
    plan.notes.push_back(fmt::format("launch at line {}: {} rows per program", l.span.begin.line, r.rows));
  }
  KILN_RETURN_IF_ERROR(WrapBodyInTileLoop(
      c, plan,
      fmt::format("for _kiln_tile in {range}({tl}.program_id(0) * ROWS_PER_PROGRAM, "
                  "{tl}.minimum({tl}.program_id(0) * ROWS_PER_PROGRAM + ROWS_PER_PROGRAM, _kiln_num_tiles){stages}):",
                  fmt::arg("tl", tl), fmt::arg("range", r.stages > 0 ? tl + ".range" : std::string("range")),
                  fmt::arg("stages", r.stages > 0 ? fmt::format(", num_stages={}", r.stages) : "")),
      /*other_axes_stay=*/true));
  KILN_RETURN_IF_ERROR(
      AppendKernelParam(c, plan.edits, fmt::format("_kiln_num_tiles=1, ROWS_PER_PROGRAM: {}.constexpr = 1", tl)));
  return plan;
}

// SplitK ------------------------------------------------------------------------------------------------

Result<Plan> PlanSplitK(const Ctx& c, const SplitK& r) {
  const Kernel& k = c.kernel;
  if (r.split_k < 1) return Refuse("SPLIT_K must be at least 1");
  if (k.FindParam("SPLIT_K")) return Refuse("kernel already has SPLIT_K");
  if (k.autotune) return Refuse("kernel is autotuned: apply split-K before inserting autotune");
  if (k.dots.size() != 1) return Refuse(fmt::format("needs exactly one tl.dot (has {})", k.dots.size()));
  if (!k.atomics.empty()) return Refuse("kernel already uses atomics");
  if (!k.block_ptrs.empty()) return Refuse("block pointers / descriptors are not rewritten");
  const auto& d = k.dots[0];
  if (d.loop < 0) return Refuse("tl.dot is not inside a K loop");
  const auto& L = k.loops[d.loop];
  if (L.depth != 1 || L.kind != "range") return Refuse("K loop is not a top-level `for ... in range(...)`");
  for (const auto& p : k.program_ids)
    if (p.axis == 2) return Refuse("kernel already uses program id axis 2");
  if (L.start.present() && Trim(L.start.text) != "0") return Refuse("K loop does not start at 0");
  std::string tl = TlAlias(c.model);
  Node def = KernelDef(c.tree, k);
  Node body = def.field("body");
  Node loop_stmt = StatementAt(c, L.span);
  if (!InBody(loop_stmt, body)) return Refuse("K loop is not at the top of the kernel body");
  // The accumulator.
  Node dstmt = StatementAt(c, d.span);
  Node asg = dstmt.named_child(0);
  std::string acc;
  if (asg.type() == "augmented_assignment" && asg.field("operator").text() == "+=" &&
      Unparen(asg.field("right")).span() == d.span) {
    acc = std::string(asg.field("left").text());
  } else if (asg.type() == "assignment" && d.acc.present() && Trim(d.acc.text) == asg.field("left").text() &&
             Unparen(asg.field("right")).span() == d.span) {
    acc = std::string(asg.field("left").text());
  } else {
    return Refuse("tl.dot result is not accumulated as `acc += tl.dot(a, b)` or `acc = tl.dot(a, b, acc)`");
  }
  if (!IsIdentifier(acc)) return Refuse("accumulator is not a variable");
  auto as = AssignmentsIn(body);
  uint32_t lb = L.span.begin.byte, le = L.span.end.byte;
  // acc initialised as fp32 zeros before the loop.
  bool fp32 = false;
  for (const auto& a : as)
    if (a.name == acc && a.stmt.span().end.byte <= lb) {
      std::string v(a.value.text());
      fp32 = v.find("zeros") != std::string::npos && v.find("float32") != std::string::npos;
    }
  if (!fp32) return Refuse("accumulator is not initialised as float32 zeros before the loop");
  // Loop-carried state: only the accumulator and pointer advances by loop-invariant steps.
  std::set<std::string> before_loop, in_loop;
  for (const auto& p : k.params) before_loop.insert(p.name);
  for (const auto& a : as) {
    uint32_t b = a.stmt.span().begin.byte;
    if (b < lb)
      before_loop.insert(a.name);
    else if (b < le)
      in_loop.insert(a.name);
  }
  in_loop.insert(L.target);
  std::vector<std::pair<std::string, std::string>> advances;
  for (const auto& a : as) {
    uint32_t b = a.stmt.span().begin.byte;
    if (b < lb || b >= le || a.name == acc || !before_loop.count(a.name)) continue;
    std::string step;
    if (a.augmented && a.stmt.named_child(0).field("operator").text() == "+=") {
      step = std::string(a.value.text());
    } else if (!a.augmented) {
      Node v = Unparen(a.value);
      if (v.type() == "binary_operator" && v.field("operator").type() == "+" && v.field("left").text() == a.name)
        step = std::string(v.field("right").text());
    }
    if (step.empty()) return Refuse("loop carries '" + a.name + "' (not a pointer advance)");
    for (const auto& n : IdentifierNames(a.value))
      if (in_loop.count(n) && n != a.name) return Refuse("advance of '" + a.name + "' is not loop-invariant");
    if (in_loop.count(a.name) && std::count_if(as.begin(), as.end(), [&](const SimpleAssign& x) {
                                   return x.name == a.name && x.stmt.span().begin.byte >= lb &&
                                          x.stmt.span().begin.byte < le;
                                 }) > 1)
      return Refuse("'" + a.name + "' is advanced more than once per iteration");
    advances.push_back({a.name, step});
  }
  // Epilogue: one store of the accumulator after the loop, nothing else uses it.
  const MemOp* store = nullptr;
  for (const auto& m : k.memops)
    if (m.kind == MemOp::Kind::kStore) {
      if (store) return Refuse("kernel stores more than once");
      store = &m;
    }
  if (!store || store->span.begin.byte < le) return Refuse("no store of the result after the K loop");
  if (store->loop_depth != 0) return Refuse("result store is inside a loop");
  if (Trim(store->value.text) != acc) {
    std::string v = Trim(store->value.text);
    if (v.find("16") != std::string::npos || v.find("8") != std::string::npos)
      return Refuse("output is stored in a narrower dtype (" + v +
                    "): partial sums would be rounded before the atomic add");
    return Refuse("stored value is not the accumulator itself (an epilogue would be applied per split)");
  }
  if (store->eviction_policy.present() || store->cache_modifier.present()) return Refuse("store has cache hints");
  Node sstmt = StatementAt(c, store->span);
  if (!InBody(sstmt, body)) return Refuse("result store is not at the top of the kernel body");
  int uses = 0;
  body.Walk([&](const Node& n) {
    if (n.type() == "identifier" && n.text() == acc && n.span().begin.byte >= le) ++uses;
    return true;
  });
  if (uses != 1) return Refuse("accumulator is used after the K loop other than by the store");
  std::string out_param = store->base.empty() ? PointerBase(c.tree, k, store->pointer.span) : store->base;
  if (out_param.empty() || !k.FindParam(out_param)) return Refuse("output pointer parameter unknown");
  for (const auto& m : k.memops)
    if (m.kind == MemOp::Kind::kLoad && (m.base.empty() ? PointerBase(c.tree, k, m.pointer.span) : m.base) == out_param)
      return Refuse("output is also read by the kernel");

  Plan plan;
  std::string ind = IndentOf(c.text(), L.span.begin.byte);
  std::string end = Trim(L.end.text), step = L.step.present() ? Trim(L.step.text) : "";
  std::string pre = fmt::format(
      "{i}# kiln: split-K, program axis 2 takes one contiguous chunk of the K iterations\n"
      "{i}_kiln_pid_k = {tl}.program_id(2)\n"
      "{i}_kiln_iters = {iters}\n"
      "{i}_kiln_chunk = {tl}.cdiv(_kiln_iters, SPLIT_K)\n"
      "{i}_kiln_k0 = _kiln_pid_k * _kiln_chunk\n",
      fmt::arg("i", ind), fmt::arg("tl", tl),
      fmt::arg("iters", step.empty() ? end : fmt::format("{}.cdiv({}, {})", tl, end, step)));
  for (const auto& [name, st] : advances) pre += fmt::format("{}{} += _kiln_k0 * ({})\n", ind, name, st);
  KILN_RETURN_IF_ERROR(plan.edits.Insert(LineStart(c.text(), L.span.begin.byte), pre));
  std::string args = step.empty()
                         ? fmt::format("(_kiln_k0, {}.minimum(_kiln_k0 + _kiln_chunk, {}))", tl, end)
                         : fmt::format("(_kiln_k0 * ({s}), {tl}.minimum((_kiln_k0 + _kiln_chunk) * ({s}), {e}), {s})",
                                       fmt::arg("s", step), fmt::arg("tl", tl), fmt::arg("e", end));
  KILN_RETURN_IF_ERROR(plan.edits.Replace(L.args_span, args));
  // Store -> atomic add when split.
  std::string st_text(sstmt.text());
  std::string callee(NodeAt(c.tree, store->span).field("function").text());
  std::string atomic = st_text;
  size_t at = atomic.find(callee);
  if (at == std::string::npos || callee.find("store") == std::string::npos) return Refuse("store call not understood");
  atomic.replace(at, callee.size(), tl + ".atomic_add");
  std::string sind = IndentOf(c.text(), sstmt.span().begin.byte);
  std::string repl = fmt::format("if SPLIT_K == 1:\n{i}    {s}\n{i}else:\n{i}    {a}", fmt::arg("i", sind),
                                 fmt::arg("s", ReindentBlock(st_text, "    ").substr(4)),
                                 fmt::arg("a", ReindentBlock(atomic, "    ").substr(4)));
  KILN_RETURN_IF_ERROR(plan.edits.Replace(sstmt.span(), repl));
  KILN_RETURN_IF_ERROR(AppendKernelParam(c, plan.edits, fmt::format("SPLIT_K: {}.constexpr = 1", tl)));
  // Launches: third grid axis, SPLIT_K, zeroed output.
  for (int li : c.launches) {
    const Launch& l = c.model.launches[li];
    const analysis::LaunchArg* out = nullptr;
    for (const auto& a : l.args) {
      if (a.splat) return Refuse("launch passes *args/**kwargs");
      if (a.param == out_param) out = &a;
    }
    if (!out) return Refuse("launch does not pass the output pointer");
    Node ov = Unparen(NodeAt(c.tree, out->value.span));
    if (ov.type() != "identifier" && ov.type() != "attribute")
      return Refuse("output argument is not a plain tensor variable");
    KILN_ASSIGN_OR_RETURN(auto where, BeforeLaunch(c, l));
    std::string grid;
    GridKind gk = l.grid.kind == GridKind::kVariable ? l.grid.resolved_kind : l.grid.kind;
    size_t nd = l.grid.dims.size();
    if (nd == 0 || nd > 2) return Refuse(fmt::format("grid has {} dimensions, needs 1 or 2", nd));
    std::string pad = nd == 1 ? "1, " : "";
    if (l.grid.kind == GridKind::kTuple) {
      std::string dims;
      for (const auto& d : l.grid.dims) dims += d.text + ", ";
      grid = fmt::format("lambda META: ({}{}META['SPLIT_K'])", dims, pad);
    } else if (l.grid.kind == GridKind::kLambda) {
      std::string m = l.grid.meta_param.empty() ? "META" : l.grid.meta_param;
      std::string dims;
      for (const auto& d : l.grid.dims) dims += d.text + ", ";
      grid =
          fmt::format("lambda {m}: ({d}{p}{m}['SPLIT_K'])", fmt::arg("m", m), fmt::arg("d", dims), fmt::arg("p", pad));
    } else if (l.grid.kind == GridKind::kVariable && gk == GridKind::kTuple) {
      grid = fmt::format("lambda META: (*{}, {}META['SPLIT_K'])", l.grid.expr.text, pad);
    } else if (l.grid.kind == GridKind::kVariable && gk == GridKind::kLambda) {
      grid = fmt::format("lambda META: (*{}(META), {}META['SPLIT_K'])", l.grid.expr.text, pad);
    } else {
      return Refuse("grid (" + l.grid.expr.text + ") not understood");
    }
    KILN_RETURN_IF_ERROR(plan.edits.Replace(GridEditSpan(c.text(), l), grid));
    KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), l.args_span, fmt::format("SPLIT_K={}", r.split_k)));
    KILN_RETURN_IF_ERROR(plan.edits.Insert(
        where.first, fmt::format("{}{}.zero_()  # kiln: split-K accumulates with atomics\n", where.second, ov.text())));
    plan.notes.push_back(fmt::format("launch at line {}: grid {} , SPLIT_K={}, {} zeroed", l.span.begin.line, grid,
                                     r.split_k, ov.text()));
  }
  plan.notes.push_back("K loop split in SPLIT_K chunks; result accumulated with atomic_add when SPLIT_K > 1");
  return plan;
}

// RemoveMasks ------------------------------------------------------------------------------------------------

Result<Plan> PlanRemoveMasks(const Ctx& c, const RemoveMasks& r) {
  const Kernel& k = c.kernel;
  if (r.guarantees.empty()) return Refuse("needs a divisibility guarantee (e.g. n_elements % BLOCK_SIZE == 0)");
  Node body = KernelDef(c.tree, k).field("body");
  auto as = AssignmentsIn(body);
  auto pids = PidVars(c.tree, k);
  auto single = [&](const std::string& n) -> const SimpleAssign* {
    const SimpleAssign* s = nullptr;
    int cnt = 0;
    for (const auto& a : as)
      if (a.name == n) {
        s = &a;
        ++cnt;
      }
    return cnt == 1 && !s->augmented ? s : nullptr;
  };
  // Offsets variables: O = S + tl.arange(0, B) with S = pid * B -> B.
  auto tile_block = [&](const std::string& o) -> std::string {
    const SimpleAssign* a = single(o);
    if (!a) return "";
    Node v = Unparen(a->value);
    if (v.type() != "binary_operator" || v.field("operator").type() != "+") return "";
    Node l = Unparen(v.field("left")), rr = Unparen(v.field("right"));
    for (auto [s, ar] : {std::pair{l, rr}, std::pair{rr, l}}) {
      if (ar.type() != "call" || ar.field("function").text().find("arange") == std::string_view::npos) continue;
      Node args = ar.field("arguments");
      if (args.named_child_count() != 2 || Trim(args.named_child(0).text()) != "0") continue;
      std::string B = Trim(args.named_child(1).text());
      Node sv = s;
      if (sv.type() == "identifier") {
        const SimpleAssign* sa = single(std::string(sv.text()));
        if (!sa) continue;
        sv = Unparen(sa->value);
      }
      if (sv.type() != "binary_operator" || sv.field("operator").type() != "*") continue;
      Node x = Unparen(sv.field("left")), y = Unparen(sv.field("right"));
      auto is_pid = [&](const Node& n) {
        return n.text().find("program_id") != std::string_view::npos ||
               (n.type() == "identifier" && pids.count(std::string(n.text())));
      };
      if ((Trim(y.text()) == B && is_pid(x)) || (Trim(x.text()) == B && is_pid(y))) return B;
    }
    return "";
  };
  auto guaranteed = [&](const std::string& e, const std::string& b) {
    for (const auto& g : r.guarantees)
      if (g.expr == e && g.multiple == b) return true;
    return false;
  };
  Plan plan;
  std::set<std::pair<std::string, std::string>> used;
  for (const auto& m : k.memops) {
    if (!m.mask.present() || m.block_pointer) continue;
    const analysis::KwArg* mk = nullptr;
    const analysis::KwArg* ok = nullptr;
    for (const auto& kw : m.kwargs) {
      if (kw.name == "mask") mk = &kw;
      if (kw.name == "other") ok = &kw;
    }
    if (!mk) continue;  // positional masks are left alone
    Node mn = Unparen(NodeAt(c.tree, m.mask.span));
    if (mn.type() == "identifier") {
      const SimpleAssign* a = single(std::string(mn.text()));
      if (!a) continue;
      mn = Unparen(a->value);
    }
    // Conjuncts split on top-level '&'.
    std::vector<Node> conj;
    std::function<void(Node)> split = [&](Node n) {
      n = Unparen(n);
      if (n.type() == "binary_operator" && n.field("operator").type() == "&") {
        split(n.field("left"));
        split(n.field("right"));
      } else {
        conj.push_back(n);
      }
    };
    split(mn);
    std::vector<std::string> kept;
    bool any = false;
    for (const Node& cj : conj) {
      bool cov = false;
      if (cj.type() == "comparison_operator" && cj.named_child_count() == 2 && cj.child(1).type() == "<") {
        Node lhs = Unparen(cj.named_child(0));
        std::string rhs = Trim(cj.named_child(1).text());
        if (lhs.type() == "subscript") lhs = lhs.field("value");
        if (lhs.type() == "identifier") {
          std::string B = tile_block(std::string(lhs.text()));
          if (!B.empty() && guaranteed(rhs, B)) {
            cov = true;
            used.insert({rhs, B});
          }
        }
      }
      if (cov)
        any = true;
      else
        kept.push_back(std::string(cj.text()));
    }
    if (!any) continue;
    if (kept.empty()) {
      std::vector<Span> spans;
      std::vector<bool> rm;
      for (const Node& a : NodeAt(c.tree, m.args_span).named_children()) {
        spans.push_back(a.span());
        bool is =
            a.type() == "keyword_argument" && (a.field("name").text() == "mask" || a.field("name").text() == "other");
        rm.push_back(is);
      }
      KILN_RETURN_IF_ERROR(RemoveArgs(plan.edits, spans, rm));
      plan.notes.push_back(fmt::format("{} at line {}: mask removed", m.kind == MemOp::Kind::kLoad ? "load" : "store",
                                       m.span.begin.line));
    } else {
      std::string t;
      for (const auto& s : kept) t += (t.empty() ? "" : " & ") + ("(" + s + ")");
      KILN_RETURN_IF_ERROR(plan.edits.Replace(mk->value.span, t));
      plan.notes.push_back(fmt::format("line {}: mask reduced to {}", m.span.begin.line, t));
    }
    (void)ok;
  }
  if (plan.edits.empty()) return Refuse("no mask is implied true by the guarantees");
  // Grid check and host guard per launch.
  for (int li : c.launches) {
    const Launch& l = c.model.launches[li];
    KILN_ASSIGN_OR_RETURN(auto where, BeforeLaunch(c, l));
    for (const auto& [e, B] : used) {
      const analysis::Param* ep = k.FindParam(e);
      if (!ep) return Refuse("guarantee '" + e + "' is not a kernel parameter");
      const analysis::LaunchArg* ea = nullptr;
      for (const auto& a : l.args)
        if (a.param == e) ea = &a;
      if (!ea) return Refuse("launch does not pass " + e);
      std::string bval;
      if (auto lit = ParseIntLiteral(B)) {
        bval = B;
      } else {
        const analysis::Binding* b = l.FindBinding(B);
        if (!b) return Refuse(B + " is not bound at the launch");
        if (b->origin.at_launch.present())
          bval = b->origin.at_launch.text;
        else if (b->origin.kind == analysis::OriginKind::kDefault)
          bval = b->origin.value;
        else
          return Refuse(B + " is not a fixed value at the launch (autotuned or heuristics): cannot guard");
      }
      // The grid launches exactly E / B programs along the tile axis.
      bool exact = false;
      std::string ev = NoSpace(ea->value.text), bv = NoSpace(bval);
      std::vector<std::string> forms = {"cdiv(" + ev + "," + bv + ")", "(" + ev + "+" + bv + "-1)//" + bv,
                                        ev + "//" + bv};
      for (const auto& d : l.grid.dims) {
        Node dn = NodeAt(c.tree, d.span);
        std::string t = NoSpace(d.text);
        // Inline one level of a plain variable.
        if (dn.type() == "identifier") {
          for (const auto& a : AssignmentsIn(EnclosingFunction(c.tree, l.span.begin.byte).field("body")))
            if (a.name == d.text && a.stmt.span().begin.byte < l.span.begin.byte) t = NoSpace(a.value.text());
        }
        t = StripParens(t);
        for (const auto& f : forms)
          if (t.size() >= f.size() && t.compare(t.size() - f.size(), f.size(), f) == 0) exact = true;
      }
      if (!exact)
        return Refuse(fmt::format("launch at line {}: grid ({}) is not cdiv({}, {})", l.span.begin.line,
                                  l.grid.expr.text, ea->value.text, bval));
      if (r.guard)
        KILN_RETURN_IF_ERROR(plan.edits.Insert(
            where.first, fmt::format("{}assert ({}) % ({}) == 0, \"kiln: masks removed assuming {} % {} == 0\"\n",
                                     where.second, ea->value.text, bval, e, B)));
    }
  }
  return plan;
}

}  // namespace kiln::rewrite::internal

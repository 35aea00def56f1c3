// kiln/analysis: ExtractTunables (see tunables.h).
#include "analysis/tunables.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <set>

#include "analysis/dataflow.h"
#include "pyast/syntax.h"

namespace kiln::analysis {

using namespace pyast;  // NOLINT: the syntax helpers

const char* TunableSiteName(TunableSite s) {
  switch (s) {
    case TunableSite::kLaunchLiteral: return "launch_literal";
    case TunableSite::kVariable: return "variable";
    case TunableSite::kKernelDefault: return "kernel_default";
    case TunableSite::kAutotune: return "autotune";
    case TunableSite::kOptionDefault: return "option_default";
    case TunableSite::kLaunchOverride: return "launch_override";
    case TunableSite::kAssignOverride: return "assign_override";
    case TunableSite::kParamRebind: return "param_rebind";
    case TunableSite::kNotEditable: return "not_editable";
  }
  return "?";
}

bool IsLaunchOption(std::string_view n) {
  for (const char* o : kLaunchOptionNames)
    if (n == o) return true;
  return false;
}

std::vector<int> TargetLaunches(const ModuleModel& m, const Target& t) {
  if (!t.launches.empty()) return t.launches;
  std::vector<int> out;
  for (size_t i = 0; i < m.launches.size(); ++i)
    if (m.launches[i].kernel == t.kernel) out.push_back(static_cast<int>(i));
  return out;
}

namespace {

// Whether `id` is read by an assert statement (`assert BTL % BTS == 0`)
bool InsideAssert(const Node& id) {
  for (Node n = id.parent(); !n.is_null(); n = n.parent()) {
    if (n.type() == "assert_statement") return true;
    if (n.type() == "function_definition" || n.type() == "module" || n.type() == "block") return false;
  }
  return false;
}

// Where variable `var` (the one assignment `assign` binds it at the target launches) is read other than
// as constexpr `name` of a target launch or in a target launch's grid, directly or through variables
// computed from it (`num_blocks = cdiv(n, BLOCK)` read only by the grid is fine; `NT = cdiv(T, BT)`
// sizing a buffer, or `BT` passed to another kernel, is not). Empty when nothing else reads it.
// A read that is another block-size constexpr argument of a target launch (one of `blocks`: `BLOCK_M=BLOCK,
// BLOCK_N=BLOCK`, or `BLOCK_N = BLOCK_M` passed as BLOCK_N) is not an other reader: its name goes to
// `siblings`. A flag derived from it (`EVEN_K = K % BLOCK_K == 0`) is one: the caller relies on the value; an
// assert that checks it is not.
std::string OtherReader(const pyast::Tree& tree, const ModuleModel& model, const std::vector<int>& launches,
                        const std::string& name, const std::string& var, const Assignment& assign,
                        const std::set<std::string>& blocks, std::set<std::string>* siblings, int depth = 0) {
  Node scope = EnclosingFunction(tree, assign.span.begin.byte);
  if (scope.is_null()) scope = tree.root();
  auto inside = [](const Node& n, const Span& s) { return s.size() > 0 && s.Contains(n.span()); };
  // `NK, NV = cdiv(K, BK), cdiv(V, BV)`: NV is followed as `NV = cdiv(V, BV)` would be
  auto assigns = AssignmentsIn(scope.type() == "function_definition" ? scope.field("body") : scope, true);
  for (const Node& id : Identifiers(scope)) {
    if (id.text() != var) continue;
    Node p = id.parent();
    if (!p.is_null() && (p.type() == "assignment" || p.type() == "augmented_assignment") && p.field("left") == id)
      continue;  // a write
    if (!p.is_null() && (p.type() == "pattern_list" || p.type() == "tuple_pattern")) {
      Node g = p.parent();
      if (!g.is_null() && g.type() == "assignment" && g.field("left") == p) continue;  // `A, B = 1, 2`
    }
    if (!p.is_null() &&
        (p.type() == "parameters" || p.type() == "global_statement" || p.type() == "nonlocal_statement"))
      continue;
    // `assert BTL % BTS == 0`: a guard, not a use. A value it rejects makes the candidate raise, and a failing
    // candidate is never accepted (parallel_attention's tile sizes, 2 of the 22 block sizes fixed on
    // development modules by another reader, session 23).
    if (InsideAssert(id)) continue;
    if (!p.is_null() && (p.type() == "default_parameter" || p.type() == "typed_default_parameter" ||
                         p.type() == "typed_parameter") &&
        p.named_child(0) == id)
      continue;  // the wrapper's own parameter list
    bool ok = false;
    for (int li : launches) {
      const Launch& l = model.launches[li];
      const Binding* b = l.FindBinding(name);
      if (b && b->origin.at_launch.present() && inside(id, b->origin.at_launch.span)) ok = true;
      const Kernel* lk = model.FindKernel(l.kernel);
      for (const auto& ob : l.bindings) {
        if (!ob.origin.at_launch.present() || !inside(id, ob.origin.at_launch.span)) continue;
        if (ob.launch_option) ok = true;  // a launch option computed from it (`num_warps=nw`): never changes results
        const Param* p = lk ? lk->FindParam(ob.name) : nullptr;
        if (!ob.launch_option && ob.name != name && p && p->kind == ParamKind::kConstexpr && blocks.count(ob.name)) {
          ok = true;  // another constexpr of the same launch: the caller decides who owns the variable
          siblings->insert(ob.name);
        }
      }
      if (l.grid.expr.present() && inside(id, l.grid.expr.span)) ok = true;
      // kiln's own arguments of a rewrite (`_kiln_num_tiles=triton.cdiv(n, _kiln_meta_BLOCK)` of rows per
      // program): written to follow the value, as the grid does
      for (const auto& a : l.args)
        if (!a.splat && a.keyword.rfind("_kiln_", 0) == 0 && inside(id, a.value.span)) ok = true;
    }
    if (ok) continue;
    for (const auto& l : model.launches)
      if (inside(id, l.span) &&
          std::find(launches.begin(), launches.end(), &l - model.launches.data()) == launches.end())
        return fmt::format("line {}: passed to the launch of {}", id.span().begin.line, l.kernel);
    // Read by an assignment `w = f(var)`: fine when w itself is only read by the target grids.
    const SimpleAssign* via = nullptr;
    for (const auto& a : assigns)
      if (!a.augmented && inside(id, a.value.span())) via = &a;
    if (via && depth < 4 && via->name != var) {
      int count = 0;
      for (const auto& a : assigns) count += a.name == via->name;
      if (count == 1) {
        Assignment w;
        w.name = via->name;
        w.span = via->stmt.span();
        std::string r = OtherReader(tree, model, launches, "", via->name, w, blocks, siblings, depth + 1);
        if (r.empty()) continue;
        return fmt::format("{} = ... at line {}, then {}", via->name, via->stmt.span().begin.line, r);
      }
    }
    Node st = EnclosingStatement(id);
    std::string t(st.text());
    if (t.find('\n') != std::string::npos) t = t.substr(0, t.find('\n')) + " ...";
    if (t.size() > 70) t = std::string(Prefix(t, 67)) + "...";
    return fmt::format("line {}: {}", id.span().begin.line, Trim(t));
  }
  return "";
}

// Names read by a condition in the kernel body (if/elif/while, conditional expressions, comparisons).
std::set<std::string> FlagNames(const Tree& tree, const Kernel& k) {
  std::set<std::string> flags;
  KernelDef(tree, k).field("body").Walk([&](const Node& n) {
    Node cond;
    if (n.type() == "if_statement" || n.type() == "elif_clause" || n.type() == "conditional_expression" ||
        n.type() == "while_statement")
      cond = n.type() == "conditional_expression" ? n.named_child(1) : n.field("condition");
    if (n.type() == "comparison_operator") cond = n;
    if (!cond.is_null())
      for (const auto& id : IdentifierNames(cond)) flags.insert(id);
    return true;
  });
  return flags;
}

// The kernel-wide facts ExtractTunables judges each name by.
struct KernelFacts {
  std::set<std::string> tiles, pow2, flags, stepping;
  std::set<std::string> blocks;  // block sizes: pow2, not flags
  std::map<std::string, std::string> values, block_index;
  std::map<std::string, DivisorUse> divisors;
  std::map<std::string, std::vector<TileShape>> tile_shapes;
};

// Where one launch sets `name`, and why that cannot be edited (empty when it can).
struct LaunchSite {
  TunableSite site = TunableSite::kNotEditable;
  OriginKind origin = OriginKind::kMissing;
  std::string why, value_text;
  // The host variable also sets these constexprs of the launch; this one owns it (editing the variable
  // sets it, the others are pinned at the launch).
  std::set<std::string> siblings;
  // This one does not own the variable it shares with `owner`: its launch argument becomes the literal.
  std::string owner;
};

// `name` shares one host variable with `siblings`, other constexprs of the same launch (`BLOCK_M=BLOCK,
// BLOCK_N=BLOCK`). One of them owns the variable: the one the kernel uses with the program id (the grid
// can follow only that one), else the first declared. Editing the variable sets the owner, and the others
// are pinned at the launch to their own values; a non-owner is set by writing its launch argument as a
// literal. Two of them used with the program id: the grid reads the variable for both, so an edit of it
// would move a pinned one's grid too, and all stay fixed. Returns false (with `s.why`) when `name` cannot
// be edited.
bool ShareVariable(const Kernel& k, const KernelFacts& f, const std::string& name, const std::string& var,
                   const std::set<std::string>& siblings, LaunchSite& s) {
  std::set<std::string> all = siblings;
  all.insert(name);
  std::string owner;
  std::vector<std::string> tiled;
  for (const auto& p : k.params)
    if (all.count(p.name) && f.tiles.count(p.name)) tiled.push_back(p.name);
  if (tiled.size() > 1) {
    s.why = "variable '" + var + "' sets " + tiled[0] + " and " + tiled[1] +
            ", both used with the program id: the grid cannot follow one without the other, so they stay fixed";
    return false;
  }
  if (!tiled.empty()) owner = tiled[0];
  if (owner.empty())
    for (const auto& p : k.params)
      if (all.count(p.name)) {
        owner = p.name;
        break;
      }
  if (owner == name) {
    s.siblings = siblings;
    return true;
  }
  s.owner = owner;
  s.site = TunableSite::kLaunchOverride;
  return true;
}

// A value the wrapper computes or takes from its caller (origin kComputed / kFunctionParam), made tunable
// when it only changes performance. Launch options never change results: the launch argument becomes the
// literal. A constexpr must be a block size that steps over its extent (a block covering a row in one
// piece, BLOCK = next_power_of_2(N), is right only from N up) and must reach nothing else on the host
// (a buffer sized by it, another kernel's launch): then the launch argument, the variable's computed
// right-hand side, or the wrapper's parameter (rebound as the wrapper's first statement) takes the
// value. The data constraints (ApplyDataConstraints) still apply.
void HiddenSite(const Tree& tree, const ModuleModel& model, const Kernel& k, const KernelFacts& f, const Tunables& t,
                const Launch& l, const Binding& b, bool option, LaunchSite& s) {
  const std::string& name = b.name;
  const bool param = b.origin.kind == OriginKind::kFunctionParam;
  const std::string what = param ? "passed in by the caller (parameter '" + b.origin.function_param + "' of " +
                                       l.enclosing_function + ")"
                                 : "computed at run time (" + b.origin.expression.text + ")";
  s.why = what;
  if (!b.origin.at_launch.present()) return;
  if (b.origin.at_launch.text.rfind('*', 0) == 0) {  // `**config.kwargs`: no text of its own to replace or rebind
    s.why = what + "; it comes through " + b.origin.at_launch.text +
            ", a mapping kiln does not rewrite, so it stays fixed";
    return;
  }
  if (option) {
    s.site = TunableSite::kLaunchOverride;
    return;
  }
  const bool group = name == "GROUP_M" || name == "GROUP_SIZE_M";  // a program order: performance only
  if (!f.pow2.count(name) && !group) return;  // not a block size: a flag, a size the data has
  if (!f.stepping.count(name) && !group) {
    s.why = what + "; it covers its extent in one block (not stepped by the program id or a loop), so a "
                   "smaller value would drop elements: it stays fixed";
    return;
  }
  std::string var = param ? b.origin.function_param : b.origin.variable;
  if (var.empty()) {  // an expression written at the launch: only the launch reads it
    s.site = TunableSite::kLaunchOverride;
    return;
  }
  if (!param && (!b.origin.assignment || b.origin.multiple_assignments)) {
    s.why = what + "; variable '" + var + "' is assigned more than once";
    return;
  }
  Assignment scope;
  scope.name = var;
  scope.span = param ? l.span : b.origin.assignment->span;
  std::set<std::string> siblings;
  if (std::string r = OtherReader(tree, model, t.launches, name, var, scope, f.blocks, &siblings); !r.empty()) {
    s.why = what + "; '" + var + "' is also read by other host code (" + r +
            "): the caller relies on it, so it stays fixed";
    return;
  }
  if (!siblings.empty()) {
    if (!ShareVariable(k, f, name, var, siblings, s)) {
      s.why = what + "; " + s.why;
      return;
    }
    if (s.site == TunableSite::kLaunchOverride) return;
  }
  if (param) {
    bool assigned = false;
    Node fn = EnclosingFunction(tree, l.span.begin.byte);
    if (!fn.is_null())
      for (const auto& a : AssignmentsIn(fn.field("body"), true)) assigned = assigned || a.name == var;
    if (assigned || fn.is_null()) {
      s.why = what + "; the wrapper assigns '" + var + "' too";
      return;
    }
  }
  s.site = param ? TunableSite::kParamRebind : TunableSite::kAssignOverride;
}

LaunchSite SiteAt(const Tree& tree, const ModuleModel& model, const Kernel& k, const KernelFacts& f, const Tunables& t,
                  const Launch& l, const std::string& name, bool option) {
  LaunchSite s;
  const Binding* b = l.FindBinding(name);
  s.origin = b ? b->origin.kind : OriginKind::kMissing;
  // A **kwargs splat may carry a launch option itself; a *args splat only fills kernel parameters, so a
  // launch option keyword can still be added beside it (matrix_transpose: `kernel[grid](m, o, *m.stride(), ...)`).
  bool has_splat = std::any_of(l.args.begin(), l.args.end(),
                               [](const auto& a) { return a.splat && a.value.text.rfind("**", 0) == 0; });
  switch (s.origin) {
    case OriginKind::kLiteral:
      s.site = TunableSite::kLaunchLiteral;
      s.value_text = b->origin.value;
      break;
    case OriginKind::kVariable:
      s.site = TunableSite::kVariable;
      s.value_text = b->origin.value;
      if (option && (b->origin.multiple_assignments || !b->origin.assignment)) {
        // A launch option never changes results: whatever the wrapper computed (softmax's `num_warps = 4`,
        // then 8 or 16 by the block size), the launch argument becomes the literal, and the value the
        // original ran with is read from its compile facts.
        s.site = TunableSite::kLaunchOverride;
        s.value_text.clear();
      } else if (b->origin.multiple_assignments) {
        s.site = TunableSite::kNotEditable;
        s.why = "variable '" + b->origin.variable + "' is assigned more than once";
      } else if (!b->origin.assignment) {
        s.site = TunableSite::kNotEditable;
        s.why = "variable '" + b->origin.variable + "' has no assignment to edit";
      } else {
        std::set<std::string> siblings;
        std::string r = option ? ""
                               : OtherReader(tree, model, t.launches, name, b->origin.variable,
                                             *b->origin.assignment, f.blocks, &siblings);
        if (!r.empty()) {
          // Buffers sized with it, other kernels launched with it, values derived from it: they
          // would change with the edit while this kernel's facts are all that was checked.
          s.site = TunableSite::kNotEditable;
          s.why = "variable '" + b->origin.variable + "' is also read by other host code (" + r +
                  "): editing it changes more than this kernel's " + name;
        } else if (!siblings.empty() && !ShareVariable(k, f, name, b->origin.variable, siblings, s)) {
          s.site = TunableSite::kNotEditable;
        }
      }
      break;
    case OriginKind::kAutotune:
      s.site = TunableSite::kAutotune;
      if (!k.autotune->configs_resolved || k.autotune->configs_generated) {
        s.site = TunableSite::kNotEditable;
        s.why = "autotune configs are generated, not a literal list";
      }
      break;
    case OriginKind::kDefault:
      s.value_text = b->origin.value;
      if (option) {
        s.site = has_splat ? TunableSite::kNotEditable : TunableSite::kOptionDefault;
        if (has_splat) s.why = "the launch passes **kwargs";
      } else {
        s.site = TunableSite::kKernelDefault;
      }
      break;
    case OriginKind::kComputed:
    case OriginKind::kFunctionParam:
      HiddenSite(tree, model, k, f, t, l, *b, option, s);
      break;
    case OriginKind::kHeuristics: s.why = "set by @triton.heuristics"; break;
    case OriginKind::kMissing: s.why = "not bound at the launch"; break;
  }
  if (s.site != TunableSite::kNotEditable && s.site != TunableSite::kAutotune && !IsHiddenSite(s.site) &&
      !s.value_text.empty() &&
      s.value_text != "None" && !ParseIntLiteral(s.value_text)) {
    s.why = "value '" + s.value_text + "' is not an integer";
    s.site = TunableSite::kNotEditable;
  }
  // A launch whose callee is chosen at run time (`fx = a if c else b; fx[grid](...)`): an edit at the launch
  // itself can be gated on the callee (`(NEW if fx is K else OLD)`, rewrite::SetParams), so it reaches this
  // kernel only: a literal or computed argument, or num_warps/num_stages not given, when no candidate is
  // autotuned or has heuristics (they may set the option). Edits away from the launch (a variable's
  // assignment, the wrapper's parameter) would reach the others too.
  auto plain = [&] {
    for (const auto& n : l.kernel_candidates) {
      const Kernel* c = model.FindKernel(n);
      if (!c || c->autotune || c->heuristics) return false;
    }
    return true;
  };
  const bool gateable =
      IsIdentifier(l.kernel_ref.text) &&
      (s.site == TunableSite::kLaunchLiteral || s.site == TunableSite::kLaunchOverride ||
       (s.site == TunableSite::kOptionDefault && (name == "num_warps" || name == "num_stages") && plain()));
  if (l.kernel_candidates.size() > 1 && !gateable &&
      (s.site == TunableSite::kLaunchLiteral || s.site == TunableSite::kVariable ||
       s.site == TunableSite::kOptionDefault || IsHiddenSite(s.site))) {
    s.site = TunableSite::kNotEditable;
    s.why = fmt::format(
        "the launch at line {} calls a kernel chosen at run time (one of {}): the edit would "
        "reach the others too",
        l.span.begin.line, l.kernel_candidates.size());
  }
  return s;
}

// Grid consistency for tile sizes: a constexpr the grid depends on must be edited with it.
void CheckGrid(const Tree& tree, const Launch& l, const std::string& name, const KernelFacts& f, Tunable& u,
               LaunchSite& s, Tunables& t) {
  GridRelation g = RelateGrid(tree, l, name);
  // A constexpr pinned at the launch while another owns the variable they share: the grid reads the
  // owner's variable, not this argument (which the kernel does not use with the program id).
  if (!s.owner.empty()) return;
  if (g.depends) {
    u.in_grid = true;
    const Binding* b = l.FindBinding(name);
    const std::string& var = s.site == TunableSite::kParamRebind ? b->origin.function_param : b->origin.variable;
    const bool edits_var = s.site == TunableSite::kVariable || s.site == TunableSite::kAssignOverride ||
                           s.site == TunableSite::kParamRebind;
    bool follows =
        g.via_meta || (edits_var && DependsOn(tree, NodeAt(tree, l.grid.expr.span), var, l.span.begin.byte));
    if (follows)
      u.grid_follows = true;
    else if (s.site != TunableSite::kAutotune) {
      s.site = TunableSite::kNotEditable;
      s.why = "the grid depends on it through a value that is not edited with it";
    }
  } else if (f.tiles.count(name) && f.pow2.count(name) && s.site != TunableSite::kAutotune) {
    u.in_grid = true;
    if (!g.literal) {
      s.site = TunableSite::kNotEditable;
      s.why = "tile size used with the program id, but the grid (" + l.grid.expr.text + ") does not follow it";
    } else {
      t.notes.push_back(fmt::format("{}: grid literal at line {} is updated with it", name, g.literal->begin.line));
    }
  }
}

// The distinct values of `name` across the kernel's autotune configs (Triton's defaults where unset).
// The values `name` takes across the configs; `first` gets the first config's (where a search starts).
std::set<int64_t> AutotuneValues(const Kernel& k, const std::string& name, bool option, std::optional<int64_t>* first) {
  std::set<int64_t> vals;
  for (const auto& cfg : k.autotune->configs) {
    std::optional<int64_t> v;
    if (option) {
      const std::optional<KwArg>* o = name == "num_warps"    ? &cfg.num_warps
                                      : name == "num_stages" ? &cfg.num_stages
                                      : name == "num_ctas"   ? &cfg.num_ctas
                                                             : &cfg.maxnreg;
      if (*o)
        v = ParseIntLiteral((*o)->value.text);
      else if (name == "num_warps")
        v = 4;
      else if (name == "num_stages")
        v = 3;
      else if (name == "num_ctas")
        v = 1;
    } else {
      for (const auto& kw : cfg.kwargs)
        if (kw.name == name) v = ParseIntLiteral(kw.value.text);
    }
    if (v) vals.insert(*v);
    if (&cfg == &k.autotune->configs.front()) *first = v;
  }
  return vals;
}

// Constraints from what the kernel computes with a constexpr (values, per-block data, divisors).
void ApplyDataConstraints(const KernelFacts& f, Tunable& u, bool& editable, std::string& reason) {
  const std::string& name = u.name;
  if (f.values.count(name)) {
    // Not a performance knob: its value is part of what the kernel computes.
    editable = false;
    reason = "its value enters the computed data (" + f.values.at(name) + "): changing it changes the results";
  } else if (f.block_index.count(name) && editable) {
    // The data is laid out per block of the written value (one scale per BLOCK_M rows).
    editable = false;
    reason = "it sets the granularity of per-block data the kernel indexes (" + f.block_index.at(name) +
             "): another value reads other elements";
  } else if (f.divisors.count(name) && editable) {
    // The kernel relies on B dividing an extent (unmasked accesses, `E // B`): the inputs it was written for
    // satisfy that for the values it was written with, hence for their divisors, not for larger values.
    const DivisorUse& d = f.divisors.at(name);
    int64_t top = u.value.value_or(0);
    for (int64_t v : u.autotune_values) top = std::max(top, v);
    if (!d.tiled) {
      editable = false;
      reason = "it covers an extent in one piece and " + d.where +
               ": the kernel is right only for the value it was written with";
    } else if (top > 0) {
      u.divides_max = true;
      u.max_value = u.max_value ? std::min(u.max_value, top) : top;
      u.bound = fmt::format(
          "at most {} and a divisor of it: {}, so the kernel assumes the extent is a multiple "
          "of {}",
          top, d.where, name);
    } else {
      editable = false;
      reason = d.where + ", and its current value is unknown";
    }
  }
}

// One constexpr or launch option across the target launches.
Tunable MakeTunable(const Tree& tree, const ModuleModel& model, const Kernel& k, const KernelFacts& f,
                    const std::string& name, bool option, Tunables& t) {
  Tunable u;
  u.name = name;
  u.launch_option = option;
  u.power_of_two = f.pow2.count(name) || name == "num_warps" || name == "num_ctas";
  u.role = option                ? TunableRole::kLaunchOption
           : f.pow2.count(name)  ? TunableRole::kBlock
           : f.flags.count(name) ? TunableRole::kFlag
                                 : TunableRole::kOther;
  if (auto it = f.tile_shapes.find(name); it != f.tile_shapes.end()) u.tiles = it->second;
  if (name == "num_stages") u.min_value = 1;
  if (name == "num_warps") u.max_value = 32;
  if (name == "maxnreg") {
    u.min_value = 24;
    u.max_value = 255;
  }
  bool first = true, consistent = true, editable = true;
  std::string reason, hidden;
  std::set<std::string> siblings;  // across the target launches
  for (int li : t.launches) {
    const Launch& l = model.launches[li];
    LaunchSite s = SiteAt(tree, model, k, f, t, l, name, option);
    if (!option && s.site != TunableSite::kNotEditable) CheckGrid(tree, l, name, f, u, s, t);
    if (s.site == TunableSite::kNotEditable) {
      editable = false;
      if (reason.empty()) reason = s.why;
    } else if (IsHiddenSite(s.site) && hidden.empty()) {
      hidden = s.why;  // where the value comes from, for a data constraint's refusal
    }
    siblings.insert(s.siblings.begin(), s.siblings.end());
    if (!s.owner.empty()) u.shares_owner = s.owner;
    if (first) {
      u.origin = s.origin;
      u.site = s.site;
      u.value_text = s.value_text;
      first = false;
    } else {
      if (s.site != u.site)
        u.site = TunableSite::kNotEditable, editable = false,
        reason = reason.empty() ? "set differently at different launches" : reason;
      if (s.value_text != u.value_text) consistent = false;
    }
  }
  u.pinned_siblings.assign(siblings.begin(), siblings.end());
  if (u.site == TunableSite::kAutotune) {
    std::set<int64_t> vals = AutotuneValues(k, name, option, &u.autotune_first);
    u.autotune_values.assign(vals.begin(), vals.end());
    if (vals.size() == 1) u.value = *vals.begin();
  } else if (consistent && u.value_text != "None") {
    u.value = ParseIntLiteral(u.value_text);
    u.boolean = (Trim(u.value_text) == "True" || Trim(u.value_text) == "False");
  }
  if (u.boolean && !option) u.role = TunableRole::kFlag;
  if (!option) {
    const bool was = editable;
    ApplyDataConstraints(f, u, editable, reason);
    if (was && !editable && !hidden.empty()) reason = hidden + "; " + reason;
  }
  u.editable = editable;
  u.reason = editable ? "" : reason;
  return u;
}

}  // namespace

Result<Tunables> ExtractTunables(const pyast::Tree& tree, const ModuleModel& model, const Target& target) {
  const Kernel* k = model.FindKernel(target.kernel);
  if (!k) return NotFound("no kernel named '" + target.kernel + "'");
  Tunables t;
  t.kernel = k->name;
  t.cls = k->cls;
  t.launches = TargetLaunches(model, target);
  if (t.launches.empty()) return NotFound("kernel '" + k->name + "' is not launched in this module");
  for (int i : t.launches)
    if (i < 0 || i >= static_cast<int>(model.launches.size()) || model.launches[i].kernel != k->name)
      return InvalidArgument(fmt::format("launch {} is not a launch of '{}'", i, k->name));
  t.autotuned = k->autotune.has_value();
  if (k->autotune) t.autotune_key = k->autotune->key;
  KernelFacts f;
  f.tiles = TileConstexprs(tree, *k);
  f.pow2 = PowerOfTwoConstexprs(tree, *k);
  f.values = ValueConstexprs(tree, model, *k);
  f.divisors = DivisorConstexprs(tree, model, *k);
  f.block_index = BlockIndexConstexprs(tree, model, *k);
  f.flags = FlagNames(tree, *k);
  f.stepping = SteppingConstexprs(tree, *k);
  f.tile_shapes = TileShapes(tree, *k);
  for (const auto& n : f.pow2)
    if (!f.flags.count(n)) f.blocks.insert(n);
  for (const auto& p : k->params)
    if (p.kind == ParamKind::kConstexpr) t.items.push_back(MakeTunable(tree, model, *k, f, p.name, false, t));
  for (const char* o : kLaunchOptionNames) t.items.push_back(MakeTunable(tree, model, *k, f, o, true, t));
  return t;
}

}  // namespace kiln::analysis

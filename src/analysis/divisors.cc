// kiln/analysis: constexprs assumed to divide an extent or to index per-block data (see dataflow.h).
#include <fmt/format.h>
#include <algorithm>

#include "analysis/dataflow.h"
#include "pyast/syntax.h"

namespace kiln::analysis {

using namespace pyast;  // NOLINT: the syntax helpers

namespace {

bool IsCallOf(const Node& n, std::string_view leaf) {
  return n.type() == "call" && CalleeIs(n.field("function").text(), leaf);
}

// The names of `cx` an expression reads.
std::set<std::string> NamesIn(const Node& e, const std::set<std::string>& cx) {
  std::set<std::string> s;
  for (const auto& id : IdentifierNames(e))
    if (cx.count(id)) s.insert(id);
  return s;
}

// One-line excerpt of source text for a reason.
std::string Brief(std::string_view t) {
  std::string s;
  for (char ch : t) {
    bool sp = ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r';
    if (sp && (s.empty() || s.back() == ' ' || s.back() == '(')) continue;
    s += sp ? ' ' : ch;
  }
  return s.size() > 50 ? std::string(Prefix(s, 47)) + "..." : s;
}

// `E // B` with a run-time E: a whole number of B-sized pieces (`groupsize // BLOCK_K`, `K // BLOCK_K`).
void FloorDivisions(const Node& body, const std::set<std::string>& cx, const std::set<std::string>& scalars,
                    const std::vector<SimpleAssign>& as, std::map<std::string, DivisorUse>& out) {
  std::set<std::string> runtime = scalars;
  for (int pass = 0; pass < 3; ++pass)
    for (const auto& a : as)
      for (const auto& id : IdentifierNames(a.value))
        if (runtime.count(id)) runtime.insert(a.name);
  body.Walk([&](const Node& n) {
    if (n.type() == "function_definition" || n.type() == "lambda") return false;
    if (n.type() != "binary_operator") return true;
    Node op = n.field("operator"), l = n.field("left"), r = n.field("right");
    if (op.is_null() || op.type() != "//" || r.is_null() || r.type() != "identifier" ||
        !cx.count(std::string(r.text())))
      return true;
    bool rt = false;
    auto ls = IdentifierNames(l);
    for (const auto& id : ls)
      if (runtime.count(id)) rt = true;
    if (ls.count(std::string(r.text()))) rt = false;  // (E + B - 1) // B: a ceiling division
    if (rt && !out.count(std::string(r.text())))
      out[std::string(r.text())].where =
          fmt::format("'{}' at line {} floor-divides a run-time value by it", Brief(n.text()), n.span().begin.line);
    return true;
  });
}

// Constexprs that step over an extent: program id * B, a loop step, an increment or advance in a loop,
// loop variable * B.
std::set<std::string> SteppingConstexprs(const Tree& tree, const Kernel& k, const std::set<std::string>& cx,
                                         const std::set<std::string>& pid_tiles) {
  std::set<std::string> tiled = pid_tiles;
  for (const auto& lp : k.loops) {
    if (lp.step.present())
      for (const auto& b : NamesIn(NodeAt(tree, lp.step.span), cx)) tiled.insert(b);
    Node stmt = NodeAt(tree, lp.span);
    while (!stmt.is_null() && stmt.type() != "for_statement" && stmt.type() != "while_statement") stmt = stmt.parent();
    if (stmt.is_null()) continue;
    Node lbody = stmt.field("body");
    if (lbody.is_null()) continue;
    std::set<std::string> targets;
    if (!stmt.field("left").is_null())
      for (const auto& id : IdentifierNames(stmt.field("left"))) targets.insert(id);
    lbody.Walk([&](const Node& n) {
      if (n.type() == "augmented_assignment" && !n.field("right").is_null())
        for (const auto& b : NamesIn(n.field("right"), cx)) tiled.insert(b);
      if (IsCallOf(n, "advance"))
        for (const auto& b : NamesIn(n.field("arguments"), cx)) tiled.insert(b);
      if (n.type() == "binary_operator") {
        Node op = n.field("operator");
        if (!op.is_null() && op.type() == "*") {
          Node a = n.field("left"), b = n.field("right");
          for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}})
            if (x.type() == "identifier" && targets.count(std::string(x.text())))
              for (const auto& c : NamesIn(y, cx)) tiled.insert(c);
        }
      }
      return true;
    });
  }
  return tiled;
}

}  // namespace

std::set<std::string> SteppingConstexprs(const Tree& tree, const Kernel& k) {
  std::set<std::string> cx;
  for (const auto& p : k.params)
    if (p.kind == analysis::ParamKind::kConstexpr) cx.insert(p.name);
  if (cx.empty() || KernelDef(tree, k).is_null()) return {};
  return SteppingConstexprs(tree, k, cx, TileConstexprs(tree, k));
}

std::map<std::string, DivisorUse> DivisorConstexprs(const Tree& tree, const ModuleModel& m, const Kernel& k) {
  (void)m;
  std::map<std::string, DivisorUse> out;
  Node def = KernelDef(tree, k);
  if (def.is_null()) return out;
  Node body = def.field("body");
  std::set<std::string> cx, scalars;
  for (const auto& p : k.params) {
    if (p.kind == analysis::ParamKind::kConstexpr) cx.insert(p.name);
    if (p.kind == analysis::ParamKind::kScalar) scalars.insert(p.name);
  }
  if (cx.empty()) return out;
  auto is_name = [](const Node& n) {
    if (n.type() != "identifier") return false;
    Node p = n.parent();
    if (!p.is_null() && p.type() == "attribute" && p.field("attribute") == n) return false;
    if (!p.is_null() && p.type() == "keyword_argument" && p.field("name") == n) return false;
    return true;
  };
  auto cx_in = [&](const Node& e) { return NamesIn(e, cx); };
  auto as = AssignmentsIn(body);

  // Which tl.arange(0, B) bounds reach an expression (offsets), following each name to its last plain
  // assignment before the use plus every augmented one (`p += step`). `x % X` is within [0, X) whatever
  // B is (the tutorial's `(pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M`).
  std::map<uint32_t, std::set<std::string>> memo;  // assignment statement -> its value's offsets
  std::function<std::set<std::string>(const Node&, int)> offsets = [&](const Node& e, int depth) {
    std::set<std::string> s;
    e.Walk([&](const Node& n) {
      if (IsCallOf(n, "arange")) {
        auto c = cx_in(n.field("arguments"));
        s.insert(c.begin(), c.end());
        return false;
      }
      if (n.type() == "binary_operator") {
        Node op = n.field("operator");
        if (!op.is_null() && op.type() == "%") {
          auto r = offsets(n.field("right"), depth);
          s.insert(r.begin(), r.end());
          return false;
        }
      }
      if (is_name(n) && depth < 12) {
        std::string name(n.text());
        uint32_t at = n.span().begin.byte;
        const SimpleAssign* last = nullptr;
        for (const auto& a : as)
          if (a.name == name && !a.augmented && a.stmt.span().begin.byte < at) last = &a;
        for (const auto& a : as) {
          if (a.name != name || !(&a == last || a.augmented)) continue;
          uint32_t key = a.stmt.span().begin.byte;
          auto it = memo.find(key);
          if (it == memo.end()) {
            memo[key] = {};  // cycles (p = p + step) end here
            auto v = offsets(a.value, depth + 1);
            it = memo.insert_or_assign(key, v).first;
          }
          s.insert(it->second.begin(), it->second.end());
        }
      }
      return true;
    });
    return s;
  };

  // Block pointers: the constexprs of each block_shape dimension, per variable (through tl.advance).
  std::map<std::string, std::vector<std::set<std::string>>> shapes;
  auto shape_of = [&](const Node& e) -> std::vector<std::set<std::string>> {
    Node n = Unparen(e);
    if (n.is_null()) return {};
    if (n.type() == "identifier") {
      auto it = shapes.find(std::string(n.text()));
      return it == shapes.end() ? std::vector<std::set<std::string>>{} : it->second;
    }
    if (IsCallOf(n, "make_block_ptr")) {
      Node bs;
      int pos = 0;
      for (const Node& a : n.field("arguments").named_children()) {
        if (a.type() == "keyword_argument") {
          if (a.field("name").text() == "block_shape") bs = a.field("value");
        } else if (a.type() != "comment" && pos++ == 4) {
          bs = a;
        }
      }
      std::vector<std::set<std::string>> dims;
      if (!bs.is_null() && (bs.type() == "tuple" || bs.type() == "list"))
        for (const Node& d : bs.named_children()) dims.push_back(cx_in(d));
      return dims;
    }
    return {};
  };
  for (int pass = 0; pass < 3; ++pass)
    for (const auto& a : as) {
      Node v = a.value;
      if (IsCallOf(v, "advance")) {
        auto args = v.field("arguments").named_children();
        if (!args.empty()) v = args[0];
      }
      auto d = shape_of(v);
      if (!d.empty()) shapes[a.name] = d;
    }

  auto flag = [&](const std::string& name, std::string where) {
    if (!out.count(name)) out[name].where = std::move(where);
  };
  // The constexprs an access is not masked along (`masked`: those it is masked along).
  auto along = [&](const analysis::Expr& ptr_e, const analysis::Expr& mask, bool block_ptr,
                   const analysis::Expr& boundary_check, std::set<std::string>* masked) {
    std::map<std::string, int> open;  // name -> dimension (block pointers) or -1
    if (!ptr_e.present()) return open;
    Node ptr = NodeAt(tree, ptr_e.span);
    if (block_ptr) {
      std::set<int> checked;
      if (boundary_check.present())
        NodeAt(tree, boundary_check.span).Walk([&](const Node& n) {
          if (n.type() == "integer")
            if (auto v = ParseIntLiteral(n.text())) checked.insert(static_cast<int>(*v));
          return true;
        });
      auto dims = shape_of(ptr);
      for (size_t i = 0; i < dims.size(); ++i)
        for (const auto& b : dims[i]) {
          if (checked.count(static_cast<int>(i)))
            masked->insert(b);
          else
            open.emplace(b, static_cast<int>(i));
        }
      return open;
    }
    for (const auto& b : offsets(ptr, 0)) open.emplace(b, -1);
    if (mask.present() && Trim(mask.text) != "None")
      for (const auto& b : offsets(NodeAt(tree, mask.span), 0)) {
        masked->insert(b);
        open.erase(b);
      }
    return open;
  };
  auto why = [&](const Span& call, int dim) {
    std::string what = Brief(NodeAt(tree, call).text());
    return dim >= 0 ? fmt::format("{} at line {} has no boundary_check on dimension {}", what, call.begin.line, dim)
                    : fmt::format("{} at line {} is not masked along it", what, call.begin.line);
  };
  FloorDivisions(body, cx, scalars, as, out);
  // Stores and atomics not masked along B write past the end of a smaller extent.
  std::set<std::string> store_masked, ignore;
  for (const auto& mo : k.memops)
    if (mo.kind == analysis::MemOp::Kind::kStore)
      for (const auto& [b, dim] : along(mo.pointer, mo.mask, mo.block_pointer, mo.boundary_check, &store_masked))
        flag(b, why(mo.span, dim));
  for (const auto& at : k.atomics)
    for (const auto& [b, dim] : along(at.pointer, at.mask, false, {}, &store_masked)) flag(b, why(at.span, dim));
  // Loads not masked along B read past the end. Along a program-id tile whose stores are masked along it,
  // what they read lands only in lanes the stores drop (the tutorial matmul's rows and columns); along
  // anything else (a loop-stepped reduction dimension, a tile the stores do not guard) it enters results.
  std::set<std::string> pid_tiles = TileConstexprs(tree, k);
  for (const auto& mo : k.memops)
    if (mo.kind == analysis::MemOp::Kind::kLoad)
      for (const auto& [b, dim] : along(mo.pointer, mo.mask, mo.block_pointer, mo.boundary_check, &ignore))
        if (!(pid_tiles.count(b) && store_masked.count(b))) flag(b, why(mo.span, dim));

  if (out.empty()) return out;

  std::set<std::string> tiled = SteppingConstexprs(tree, k, cx, pid_tiles);
  for (auto& [name, use] : out) use.tiled = tiled.count(name) > 0;
  return out;
}

namespace {

// The identifier names of `e` outside the arguments of its tl.load calls (what a load returns is data).
std::set<std::string> NamesOutsideLoads(const Node& e) {
  std::vector<Span> loads;
  e.Walk([&](const Node& n) {
    if (n.type() == "call" && CalleeIs(n.field("function").text(), "load")) {
      loads.push_back(n.field("arguments").span());
      return false;
    }
    return true;
  });
  std::set<std::string> out;
  for (const auto& id : Identifiers(e)) {
    bool inside = false;
    for (const auto& l : loads) inside = inside || l.Contains(id.span());
    if (!inside) out.insert(std::string(id.text()));
  }
  return out;
}

// Block numbers that step by a constexpr B (`i_t * BT`, i_t a program id) and also offset a pointer
// otherwise (`h + i_bh * s_h_h + i_t * K * V`: one state per chunk of BT rows, written by another kernel
// or sized by the host): B sets the granularity of that data. Adds B -> where to `out`.
void BlockNumberOffsets(const Tree& tree, const Kernel& k, const std::set<std::string>& cx,
                        const std::set<std::string>& ptrs, std::map<std::string, std::string>& out) {
  Node body = KernelDef(tree, k).field("body");
  auto pids = PidVars(tree, k);
  auto blocks = PowerOfTwoConstexprs(tree, k);  // block sizes (`i_t * K`, K a head size, is data's stride)
  auto is_mul = [](const Node& n) {
    return n.type() == "binary_operator" && !n.field("operator").is_null() && n.field("operator").type() == "*";
  };
  std::map<std::string, std::set<std::string>> steps;  // block number -> the constexprs it is multiplied by
  body.Walk([&](const Node& n) {
    if (!is_mul(n)) return true;
    Node a = Unparen(n.field("left")), b = Unparen(n.field("right"));
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}})
      if (x.type() == "identifier" && y.type() == "identifier" && pids.count(std::string(x.text())) &&
          cx.count(std::string(y.text())) && blocks.count(std::string(y.text())))
        steps[std::string(x.text())].insert(std::string(y.text()));
    return true;
  });
  if (steps.empty()) return;
  body.Walk([&](const Node& n) {
    if (n.type() != "identifier" || !steps.count(std::string(n.text()))) return true;
    const auto& bs = steps.at(std::string(n.text()));
    Node p = n.parent();
    while (!p.is_null() && p.type() == "parenthesized_expression") p = p.parent();
    if (!p.is_null() && is_mul(p)) {  // `i_t * BT`: the block's offset
      Node other = Unparen(p.field("left")).span() == n.span() ? Unparen(p.field("right")) : Unparen(p.field("left"));
      if (other.type() == "identifier" && bs.count(std::string(other.text()))) return true;
    }
    Node top = n;  // the arithmetic expression it is part of
    for (Node q = n.parent(); !q.is_null() && (q.type() == "binary_operator" || q.type() == "parenthesized_expression" ||
                                               q.type() == "unary_operator");
         q = q.parent())
      top = q;
    bool pointer = false;
    for (const auto& id : IdentifierNames(top)) pointer = pointer || ptrs.count(id) > 0;
    if (!pointer) return true;
    for (const auto& b : bs)
      if (!out.count(b))
        out[b] = fmt::format("'{}' at line {} offsets a pointer by the block number {} it steps", Brief(top.text()),
                             top.span().begin.line, n.text());
    return true;
  });
}

}  // namespace

std::map<std::string, std::string> BlockIndexConstexprs(const Tree& tree, const ModuleModel& m, const Kernel& k) {
  (void)m;
  std::map<std::string, std::string> out;
  Node def = KernelDef(tree, k);
  if (def.is_null()) return out;
  Node body = def.field("body");
  std::set<std::string> cx, ptrs;
  for (const auto& p : k.params) {
    if (p.kind == analysis::ParamKind::kConstexpr) cx.insert(p.name);
    if (p.kind == analysis::ParamKind::kPointer) ptrs.insert(p.name);
  }
  if (cx.empty() || ptrs.empty()) return out;
  auto is_div = [](const Node& n) {
    if (n.type() != "binary_operator") return false;
    Node op = n.field("operator");
    return !op.is_null() && (op.type() == "//" || op.type() == "/");
  };
  auto is_cdiv = [](const Node& n) { return n.type() == "call" && CalleeIs(n.field("function").text(), "cdiv"); };
  // The constexprs `e` divides by, outside any denominator of `e`.
  auto divided_by = [&](const Node& e) {
    std::set<std::string> s;
    e.Walk([&](const Node& n) {
      Node d;
      if (is_div(n))
        d = Unparen(n.field("right"));
      else if (is_cdiv(n) && n.field("arguments").named_child_count() == 2)
        d = Unparen(n.field("arguments").named_child(1));
      if (d.is_null() || d.type() != "identifier" || !cx.count(std::string(d.text()))) return true;
      for (Node c = n; !(c == e);) {
        Node p = c.parent();
        if (p.is_null()) break;
        if (is_div(p) && p.field("right") == c) return true;  // a denominator: scales by B
        if (p.type() == "argument_list" && !p.parent().is_null() && is_cdiv(p.parent()) && p.named_child_count() == 2 &&
            p.named_child(1) == c)
          return true;
        c = p;
      }
      s.insert(std::string(d.text()));
      return true;
    });
    return s;
  };
  auto as = AssignmentsIn(body);
  // Pointer variables: pointer parameters and what is assigned from them. A value loaded through a pointer
  // is data (`prompt_cache_len = tl.load(b_prompt_cache_len + cur_batch)`: a length), not a pointer: the
  // names inside a load's arguments do not make its result one (context_attn_bloom's BLOCK_M was kept fixed
  // because its causal bound `(start_m + 1) * BLOCK_M + prompt_cache_len` looked like a pointer offset).
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& a : as)
      if (!ptrs.count(a.name))
        for (const auto& id : NamesOutsideLoads(a.value))
          if (ptrs.count(id)) {
            ptrs.insert(a.name);
            changed = true;
            break;
          }
  }
  auto line_of = [](const Node& n) { return n.span().begin.line; };
  // A tile index times a block size (`pid_n * BLOCK_N`) is an ordinary tile offset, whatever pid_n is.
  auto scaled = [&](Node n, const Node& root) {
    for (Node c = n; !(c == root);) {
      Node p = c.parent();
      if (p.is_null()) break;
      if (p.type() == "binary_operator" && !p.field("operator").is_null() && p.field("operator").type() == "*") {
        Node other = p.field("left") == c ? p.field("right") : p.field("left");
        for (const auto& id : IdentifierNames(other))
          if (cx.count(id)) return true;
      }
      c = p;
    }
    return false;
  };
  auto note = [&](const Node& ptr_expr, const std::string& via) {
    ptr_expr.Walk([&](const Node& n) {
      if ((is_div(n) || is_cdiv(n)) && !scaled(n, ptr_expr)) {
        for (const auto& b : divided_by(n))
          if (!out.count(b))
            out[b] = fmt::format("a pointer at line {} is offset by a value divided by it", line_of(ptr_expr));
        return false;
      }
      if (n.type() != "identifier") return true;
      std::string id(n.text());
      Node par = n.parent();
      if (!par.is_null() && ((par.type() == "attribute" && par.field("attribute") == n) ||
                             (par.type() == "keyword_argument" && par.field("name") == n)))
        return true;
      if (ptrs.count(id) || id == via || scaled(n, ptr_expr)) return true;
      for (const auto& a : as)
        if (a.name == id)
          for (const auto& b : divided_by(a.value))
            if (!out.count(b))
              out[b] = fmt::format("`{}` (line {}) divides by it and offsets a pointer at line {}", id, line_of(a.stmt),
                                   line_of(ptr_expr));
      return true;
    });
  };
  for (const auto& a : as)
    if (ptrs.count(a.name)) note(a.value, a.name);
  for (const auto& mo : k.memops) {
    Node pe = NodeAt(tree, mo.pointer.span);
    if (!pe.is_null()) note(pe, "");
  }
  BlockNumberOffsets(tree, k, cx, ptrs, out);
  return out;
}

}  // namespace kiln::analysis

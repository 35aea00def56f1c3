// kiln/analysis: the walk over a kernel body (program ids, memory ops, dots, reductions, loops, calls) and pointer
// inference (Analyzer, see analyzer.h).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/analyzer.h"

namespace kiln::analysis::internal {

std::string Analyzer::AssignTarget(const Node& call) {
  Node p = call.parent();
  // Look through `.to(...)`, subscripts `[:, None]` and parentheses.
  Node cur = call;
  while (!p.is_null() && (p.type() == "parenthesized_expression" || p.type() == "subscript" ||
                          (p.type() == "attribute") || (p.type() == "call" && cur.type() == "attribute"))) {
    if (p.type() == "subscript" && p.field("value") != cur) return "";
    cur = p;
    p = p.parent();
  }
  if (!p.is_null() && p.type() == "assignment" && p.field("right") == cur) {
    Node l = p.field("left");
    if (l.type() == "identifier") return std::string(l.text());
  }
  return "";
}

void Analyzer::AnalyzeBody(size_t ki) {
  Kernel& k = model_.kernels[ki];
  KernelWork& w = work_[ki];
  Node body = w.def.field("body");
  CollectAssigns(body, w.assigns);
  for (const auto& a : w.assigns) w.by_name[a.name].push_back(&a);
  BodyCtx ctx{&k, &w, {}};
  VisitBody(body, ctx);
}

int Analyzer::Depth(const BodyCtx& ctx) const { return static_cast<int>(ctx.loops.size()); }

int Analyzer::Innermost(const BodyCtx& ctx) const { return ctx.loops.empty() ? -1 : ctx.loops.back(); }

void Analyzer::VisitBody(const Node& n, BodyCtx& ctx) {
  auto t = n.type();
  if (t == "for_statement" || t == "while_statement") {
    Loop l;
    l.span = n.span();
    l.depth = Depth(ctx) + 1;
    l.parent = Innermost(ctx);
    if (t == "while_statement") {
      l.kind = "while";
      Node cond = n.field("condition");
      l.iter_span = cond.span();
      l.end = MakeExpr(cond);
    } else {
      l.target = std::string(n.field("left").text());
      Node right = n.field("right");
      l.iter_span = right.span();
      l.kind = "iter";
      if (right.type() == "call") {
        std::string c = CanonCallee(right);
        if (c == "range")
          l.kind = "range";
        else if (c == "tl.range")
          l.kind = "tl.range";
        else if (c == "tl.static_range")
          l.kind = "tl.static_range";
        if (l.kind != "iter") {
          Node al = right.field("arguments");
          l.args_span = al.span();
          CallArgs a = ReadArgs(al);
          if (a.positional.size() == 1) {
            l.end = MakeExpr(a.positional[0]);
          } else if (a.positional.size() >= 2) {
            l.start = MakeExpr(a.positional[0]);
            l.end = MakeExpr(a.positional[1]);
            if (a.positional.size() >= 3) l.step = MakeExpr(a.positional[2]);
          }
          for (const auto& [name, kw] : a.keywords) {
            if (name == "arg1" || name == "start")
              l.start = MakeExpr(kw.field("value"));
            else if (name == "arg2" || name == "end")
              l.end = MakeExpr(kw.field("value"));
            else if (name == "step")
              l.step = MakeExpr(kw.field("value"));
            else
              l.options.push_back({name, MakeExpr(kw.field("value")), kw.span()});
          }
        }
      }
    }
    int idx = static_cast<int>(ctx.k->loops.size());
    ctx.k->loops.push_back(std::move(l));
    // The iterable / condition belongs to the enclosing level.
    Node head = t == "while_statement" ? n.field("condition") : n.field("right");
    VisitBody(head, ctx);
    ctx.loops.push_back(idx);
    for (const Node& c : n.named_children()) {
      if (c == head) continue;
      VisitBody(c, ctx);
    }
    ctx.loops.pop_back();
    return;
  }
  if (t == "call") VisitCall(n, ctx);
  if (t == "binary_operator") {
    Node op = n.child(1);
    if (op.text() == "/") ctx.w->divs.emplace_back("/", n.span());
  }
  for (const Node& c : n.named_children()) VisitBody(c, ctx);
}

void Analyzer::VisitCall(const Node& call, BodyCtx& ctx) {
  Kernel& k = *ctx.k;
  Node fn = call.field("function");
  Node al = call.field("arguments");
  std::string dotted = Dotted(fn);
  std::string c = Canon(dotted);
  CallArgs a = ReadArgs(al);
  int depth = Depth(ctx), loop = Innermost(ctx);

  if (c == "tl.program_id") {
    ProgramId p;
    p.span = call.span();
    Node ax = a.get(0, "axis");
    p.axis_expr = MakeExpr(ax);
    // an axis Triton accepts is 0, 1 or 2; anything else (tl.program_id(99999999999999999999)) stays unknown
    if (!ax.is_null() && ax.type() == "integer")
      if (auto v = pyast::ParseIntLiteral(ax.text()); v && *v >= 0 && *v <= 2) p.axis = static_cast<int>(*v);
    p.target = AssignTarget(call);
    k.program_ids.push_back(std::move(p));
    return;
  }
  if (c == "tl.arange") {
    Arange r;
    r.span = call.span();
    r.start = MakeExpr(a.get(0, "start"));
    r.end = MakeExpr(a.get(1, "end"));
    r.target = AssignTarget(call);
    k.aranges.push_back(std::move(r));
    return;
  }
  if (c == "tl.load" || c == "tl.store") {
    MemOp m;
    m.kind = c == "tl.load" ? MemOp::Kind::kLoad : MemOp::Kind::kStore;
    m.span = call.span();
    m.args_span = al.span();
    Node ptr = a.get(0, "pointer");
    m.pointer = MakeExpr(ptr);
    size_t i = 1;
    if (m.kind == MemOp::Kind::kStore) m.value = MakeExpr(a.get(i++, "value"));
    m.mask = MakeExpr(a.get(i++, "mask"));
    if (m.kind == MemOp::Kind::kLoad) m.other = MakeExpr(a.get(i++, "other"));
    m.boundary_check = MakeExpr(a.get(i++, "boundary_check"));
    if (m.kind == MemOp::Kind::kLoad) m.padding_option = MakeExpr(a.get(i++, "padding_option"));
    m.cache_modifier = MakeExpr(a.get(i++, "cache_modifier"));
    m.eviction_policy = MakeExpr(a.get(i++, "eviction_policy"));
    m.volatile_ = MakeExpr(a.get(i++, "volatile"));
    m.kwargs = KwArgs(a);
    m.block_pointer = IsBlockPtrExpr(ptr, *ctx.w);
    m.loop_depth = depth;
    m.loop = loop;
    pointer_uses_.push_back(
        {&k - model_.kernels.data(), ptr, c + " at line " + std::to_string(call.span().begin.line)});
    k.memops.push_back(std::move(m));
    return;
  }
  if (c == "tl.make_block_ptr" || c == "tl.advance" || c == "tl.make_tensor_descriptor" ||
      c == "tl._experimental_make_tensor_descriptor" || c == "tl._experimental_descriptor_load" ||
      c == "tl._experimental_descriptor_store" || c == "tl.load_tensor_descriptor" ||
      c == "tl.store_tensor_descriptor" || c == "tl.experimental_descriptor_load") {
    BlockPtr b;
    b.op = c.substr(3);
    b.span = call.span();
    Node base = a.get(0, "base");
    b.base = MakeExpr(base);
    b.kwargs = KwArgs(a);
    b.target = AssignTarget(call);
    b.loop = loop;
    if (!b.target.empty()) {
      if (b.op == "make_block_ptr" || b.op == "advance")
        ctx.w->block_ptr_vars.insert(b.target);
      else
        ctx.w->desc_vars.insert(b.target);
    }
    if (b.op == "make_block_ptr" || b.op == "make_tensor_descriptor" ||
        b.op == "_experimental_make_tensor_descriptor") {
      pointer_uses_.push_back(
          {&k - model_.kernels.data(), base, c + " at line " + std::to_string(call.span().begin.line)});
    }
    if (b.op == "_experimental_descriptor_load" || b.op == "_experimental_descriptor_store" ||
        b.op == "load_tensor_descriptor" || b.op == "store_tensor_descriptor") {
      MarkDescriptor(k, std::string(base.text()), call);
    }
    k.block_ptrs.push_back(std::move(b));
    return;
  }
  if (c == "tl.dot" || c == "tl.dot_scaled") {
    Dot d;
    d.form = c;
    d.span = call.span();
    d.args_span = al.span();
    d.a = MakeExpr(a.get(0, "input"));
    if (c == "tl.dot") {
      d.b = MakeExpr(a.get(1, "other"));
      d.acc = MakeExpr(a.get(2, "acc"));
      d.input_precision = MakeExpr(a.get(3, "input_precision"));
      d.allow_tf32 = MakeExpr(a.keyword("allow_tf32"));
      d.max_num_imprecise_acc = MakeExpr(a.get(4, "max_num_imprecise_acc"));
      d.out_dtype = MakeExpr(a.get(5, "out_dtype"));
    } else {
      d.a = MakeExpr(a.get(0, "lhs"));
      d.b = MakeExpr(a.get(3, "rhs"));
      d.acc = MakeExpr(a.keyword("acc"));
      d.out_dtype = MakeExpr(a.keyword("out_dtype"));
    }
    d.loop_depth = depth;
    d.loop = loop;
    k.dots.push_back(std::move(d));
    return;
  }
  // tl.sum(x, axis=...) or x.sum(axis=...)
  std::string op;
  std::string form;
  Node input;
  Node axis;
  if (StartsWith(c, "tl.")) {
    op = c.substr(3);
    form = "function";
    input = a.get(0, "input");
    axis = a.get(1, "axis");
  } else if (fn.type() == "attribute") {
    Node obj = fn.field("object");
    std::string head = SplitDots(Dotted(obj)).front();
    if (Dotted(obj).empty() || !IsModuleName(head)) {
      std::string attr(fn.field("attribute").text());
      if (kReductionOps.count(attr) || kScanOps.count(attr)) {
        op = attr;
        form = "method";
        input = obj;
        axis = a.get(0, "axis");
      } else if ((attr == "load" || attr == "store") && obj.type() == "identifier") {
        std::string name(obj.text());
        if (ctx.w->desc_vars.count(name) || k.FindParam(name)) {
          BlockPtr b;
          b.op = attr == "load" ? "descriptor_load" : "descriptor_store";
          b.span = call.span();
          b.base = MakeExpr(obj);
          b.kwargs = KwArgs(a);
          b.target = AssignTarget(call);
          b.loop = loop;
          MarkDescriptor(k, name, call);
          k.block_ptrs.push_back(std::move(b));
          return;
        }
      }
    }
  }
  if (!op.empty() && (kReductionOps.count(op) || kScanOps.count(op))) {
    Reduction r;
    r.op = op;
    r.form = form;
    r.span = call.span();
    r.input = MakeExpr(input);
    r.axis = MakeExpr(axis);
    r.loop_depth = depth;
    r.loop = loop;
    if (op == "max") ctx.w->maxes.emplace_back(op, call.span());
    if (kScanOps.count(op))
      k.scans.push_back(std::move(r));
    else
      k.reductions.push_back(std::move(r));
    return;
  }
  if (StartsWith(c, "tl.atomic_") && kAtomicOps.count(c.substr(3))) {
    Atomic at;
    at.op = c.substr(10);
    at.span = call.span();
    Node ptr = a.get(0, "pointer");
    at.pointer = MakeExpr(ptr);
    if (at.op == "cas") {
      at.value = MakeExpr(a.get(2, "val"));
      at.sem = MakeExpr(a.get(3, "sem"));
      at.scope = MakeExpr(a.get(4, "scope"));
    } else {
      at.value = MakeExpr(a.get(1, "val"));
      at.mask = MakeExpr(a.get(2, "mask"));
      at.sem = MakeExpr(a.get(3, "sem"));
      at.scope = MakeExpr(a.get(4, "scope"));
    }
    at.loop_depth = depth;
    pointer_uses_.push_back(
        {&k - model_.kernels.data(), ptr, c + " at line " + std::to_string(call.span().begin.line)});
    k.atomics.push_back(std::move(at));
    return;
  }
  if (StartsWith(c, "libdevice.") || StartsWith(c, "tl.math.") || StartsWith(c, "tl.extra.")) {
    LibdeviceCall l;
    l.name = c.substr(c.rfind('.') + 1);
    l.via = dotted.substr(0, dotted.rfind('.'));
    l.span = call.span();
    k.libdevice.push_back(l);
  }
  // Features for the classifier.
  std::string leaf = c.substr(c.rfind('.') + 1);
  if (leaf == "exp" || leaf == "exp2" || leaf == "fast_expf" || leaf == "expf" || leaf == "softmax") {
    ctx.w->exps.emplace_back(c, call.span());
  }
  if (leaf == "sqrt" || leaf == "rsqrt" || leaf == "sqrt_rn" || leaf == "fdiv" || leaf == "div_rn") {
    if (leaf == "fdiv" || leaf == "div_rn")
      ctx.w->divs.emplace_back(c, call.span());
    else
      ctx.w->sqrts.emplace_back(c, call.span());
  }
  if (c == "tl.maximum") ctx.w->maxes.emplace_back(c, call.span());
  if (fn.type() == "identifier" && jit_index_.count(dotted)) {
    k.calls.push_back({dotted, call.span(), depth});
    ctx.w->jit_calls.push_back({dotted, al});
  }
}

void Analyzer::MarkDescriptor(Kernel& k, const std::string& name, const Node& call) {
  for (auto& p : k.params) {
    if (p.name == name && p.kind != ParamKind::kConstexpr && p.evidence != ParamEvidence::kAnnotation) {
      p.kind = ParamKind::kDescriptor;
      p.evidence = ParamEvidence::kUsage;
      p.evidence_detail = "tensor descriptor: " + std::string(pyast::Prefix(call.text(), 60)) + " at line " +
                          std::to_string(call.span().begin.line);
    }
  }
}

bool Analyzer::IsBlockPtrExpr(const Node& raw, const KernelWork& w) const {
  Node n = Unparen(raw);
  if (n.is_null()) return false;
  if (n.type() == "identifier") return w.block_ptr_vars.count(std::string(n.text())) > 0;
  if (n.type() == "call") {
    std::string c = CanonCallee(n);
    return c == "tl.make_block_ptr" || c == "tl.advance";
  }
  return false;
}

void Analyzer::Bases(const Node& raw, const KernelWork& w, const Kernel& k, std::set<std::string>& out,
                     std::set<std::string>& seen, int depth) const {
  Node n = Unparen(raw);
  if (n.is_null() || depth > 12) return;
  auto t = n.type();
  if (t == "identifier") {
    std::string name(n.text());
    if (k.FindParam(name)) {
      out.insert(name);
      return;
    }
    if (!seen.insert(name).second) return;
    auto it = w.by_name.find(name);
    if (it == w.by_name.end()) return;
    for (const Assign* a : it->second) {
      if (a->kind == Assign::Kind::kPlain) Bases(a->value, w, k, out, seen, depth + 1);
    }
    return;
  }
  if (t == "binary_operator") {
    std::string_view op = n.child(1).text();
    if (op == "+") {
      std::set<std::string> left;
      Bases(n.field("left"), w, k, left, seen, depth + 1);
      if (!left.empty()) {
        out.insert(left.begin(), left.end());
        return;
      }
      Bases(n.field("right"), w, k, out, seen, depth + 1);
    } else if (op == "-") {
      Bases(n.field("left"), w, k, out, seen, depth + 1);
    }
    return;
  }
  if (t == "subscript") {
    Bases(n.field("value"), w, k, out, seen, depth + 1);
    return;
  }
  if (t == "conditional_expression") {
    auto cs = n.named_children();
    if (cs.size() == 3) {
      Bases(cs[0], w, k, out, seen, depth + 1);
      Bases(cs[2], w, k, out, seen, depth + 1);
    }
    return;
  }
  if (t == "call") {
    std::string c = CanonCallee(n);
    CallArgs a = ReadArgs(n.field("arguments"));
    if (c == "tl.make_block_ptr" || c == "tl.advance" || c == "tl.make_tensor_descriptor" || c == "tl.multiple_of" ||
        c == "tl.max_contiguous" || c == "tl.broadcast_to" || c == "tl.max_constancy") {
      Bases(a.get(0, "base"), w, k, out, seen, depth + 1);
    } else if (c == "tl.where") {
      Bases(a.get(1, "x"), w, k, out, seen, depth + 1);
      Bases(a.get(2, "y"), w, k, out, seen, depth + 1);
    } else if (n.field("function").type() == "attribute") {
      std::string attr(n.field("function").field("attribute").text());
      if (attr == "to" || attr == "reshape" || attr == "broadcast_to" || attr == "expand_dims") {
        Bases(n.field("function").field("object"), w, k, out, seen, depth + 1);
      }
    }
  }
}

void Analyzer::MarkPointer(Kernel& k, const std::string& name, const std::string& why) {
  for (auto& p : k.params) {
    if (p.name != name) continue;
    if (p.kind == ParamKind::kConstexpr || p.evidence == ParamEvidence::kAnnotation) return;
    if (p.kind == ParamKind::kDescriptor) return;
    if (p.evidence == ParamEvidence::kUsage) return;
    p.kind = ParamKind::kPointer;
    p.evidence = ParamEvidence::kUsage;
    p.evidence_detail = why;
  }
}

void Analyzer::InferPointers() {
  for (const auto& u : pointer_uses_) {
    Kernel& k = model_.kernels[u.kernel];
    std::set<std::string> out, seen;
    Bases(u.expr, work_[u.kernel], k, out, seen, 0);
    for (const auto& name : out) {
      MarkPointer(k, name, "address of " + u.what);
    }
  }
  // Pointers passed to other jit functions (helpers), a few rounds for chains.
  for (int round = 0; round < 3; ++round) {
    for (size_t ki = 0; ki < model_.kernels.size(); ++ki) {
      Kernel& k = model_.kernels[ki];
      for (const auto& cs : work_[ki].jit_calls) {
        const Kernel& callee = model_.kernels[jit_index_.at(cs.callee)];
        CallArgs a = ReadArgs(cs.arglist);
        auto check = [&](const Param* p, const Node& arg) {
          if (p == nullptr || p->kind != ParamKind::kPointer || p->evidence != ParamEvidence::kUsage) return;
          std::set<std::string> out, seen;
          Bases(arg, work_[ki], k, out, seen, 0);
          for (const auto& name : out) {
            MarkPointer(k, name,
                        "passed as pointer " + p->name + " to " + callee.name + " at line " +
                            std::to_string(arg.span().begin.line));
          }
        };
        for (size_t i = 0; i < a.positional.size() && i < callee.params.size(); ++i) {
          check(&callee.params[i], a.positional[i]);
        }
        for (const auto& [name, kw] : a.keywords) check(callee.FindParam(name), kw.field("value"));
      }
    }
  }
  for (auto& k : model_.kernels) {
    for (auto& p : k.params) {
      if (p.kind != ParamKind::kScalar || p.evidence != ParamEvidence::kDefault) continue;
      std::string_view n = p.name;
      if (EndsWith(n, "_ptr") || EndsWith(n, "_ptrs") || EndsWith(n, "Ptr") || EndsWith(n, "_pointer") || n == "ptr") {
        p.kind = ParamKind::kPointer;
        p.evidence = ParamEvidence::kNameSuffix;
        p.evidence_detail = "name ends in a pointer suffix; no pointer use seen";
      } else {
        p.evidence_detail = "not used as an address";
      }
    }
  }
}

}  // namespace kiln::analysis::internal

#include "analysis/json.h"

namespace kiln::analysis {

using nlohmann::json;

json SpanToJson(const Span& s) {
  return json{{"line", s.begin.line},    {"col", s.begin.column}, {"end_line", s.end.line},
              {"end_col", s.end.column}, {"begin", s.begin.byte}, {"end", s.end.byte}};
}

namespace {

json ExprJson(const Expr& e) { return json{{"text", e.text}, {"span", SpanToJson(e.span)}}; }

void PutExpr(json& j, const char* key, const Expr& e) {
  if (e.present()) j[key] = ExprJson(e);
}
void PutStr(json& j, const char* key, const std::string& s) {
  if (!s.empty()) j[key] = s;
}

json KwJson(const KwArg& k) {
  return json{{"name", k.name}, {"value", ExprJson(k.value)}, {"span", SpanToJson(k.span)}};
}
json KwList(const std::vector<KwArg>& v) {
  json a = json::array();
  for (const auto& k : v) a.push_back(KwJson(k));
  return a;
}
void PutKw(json& j, const char* key, const std::optional<KwArg>& k) {
  if (k) j[key] = KwJson(*k);
}

json AssignmentJson(const Assignment& a) {
  return json{{"name", a.name}, {"span", SpanToJson(a.span)}, {"value", ExprJson(a.value)}, {"literal", a.literal}};
}

json OriginJson(const Origin& o) {
  json j{{"kind", OriginKindName(o.kind)}};
  PutExpr(j, "at_launch", o.at_launch);
  PutStr(j, "value", o.value);
  PutStr(j, "variable", o.variable);
  if (o.assignment) j["assignment"] = AssignmentJson(*o.assignment);
  if (o.multiple_assignments) j["multiple_assignments"] = true;
  PutStr(j, "scope", o.scope);
  PutExpr(j, "expression", o.expression);
  PutStr(j, "function_param", o.function_param);
  PutExpr(j, "function_param_default", o.function_param_default);
  if (o.kind == OriginKind::kAutotune || o.kind == OriginKind::kHeuristics) {
    j["decorator_span"] = SpanToJson(o.decorator_span);
  }
  if (o.heuristic) {
    j["heuristic"] = json{
        {"name", o.heuristic->name}, {"value", ExprJson(o.heuristic->value)}, {"span", SpanToJson(o.heuristic->span)}};
  }
  PutStr(j, "note", o.note);
  return j;
}

json ParamJson(const Param& p) {
  json j{{"name", p.name},
         {"index", p.index},
         {"span", SpanToJson(p.span)},
         {"kind", ParamKindName(p.kind)},
         {"evidence", ParamEvidenceName(p.evidence)}};
  PutStr(j, "evidence_detail", p.evidence_detail);
  PutExpr(j, "annotation", p.annotation);
  PutExpr(j, "default", p.default_value);
  if (p.do_not_specialize) j["do_not_specialize"] = true;
  return j;
}

json ConfigJson(const AutotuneConfig& c) {
  json j{{"span", SpanToJson(c.span)}, {"args_span", SpanToJson(c.args_span)}, {"kwargs", KwList(c.kwargs)}};
  if (c.kwargs_span.size() > 0) j["kwargs_span"] = SpanToJson(c.kwargs_span);
  PutKw(j, "num_warps", c.num_warps);
  PutKw(j, "num_stages", c.num_stages);
  PutKw(j, "num_ctas", c.num_ctas);
  PutKw(j, "maxnreg", c.maxnreg);
  if (c.has_pre_hook) j["pre_hook"] = true;
  return j;
}

json AutotuneJson(const Autotune& a) {
  json j{{"span", SpanToJson(a.span)},
         {"args_span", SpanToJson(a.args_span)},
         {"configs_resolved", a.configs_resolved},
         {"configs_generated", a.configs_generated},
         {"configs_expanded", a.configs_expanded},
         {"tuned_names", a.tuned_names},
         {"tuned_options", a.tuned_options},
         {"key", a.key}};
  PutExpr(j, "configs_expr", a.configs_expr);
  json cs = json::array();
  for (const auto& c : a.configs) cs.push_back(ConfigJson(c));
  j["configs"] = cs;
  PutExpr(j, "key_expr", a.key_expr);
  PutExpr(j, "prune_configs_by", a.prune_configs_by);
  PutExpr(j, "restore_value", a.restore_value);
  PutExpr(j, "reset_to_zero", a.reset_to_zero);
  PutExpr(j, "pre_hook", a.pre_hook);
  PutExpr(j, "post_hook", a.post_hook);
  PutExpr(j, "warmup", a.warmup);
  PutExpr(j, "rep", a.rep);
  j["kwargs"] = KwList(a.kwargs);
  return j;
}

}  // namespace

json KernelToJson(const Kernel& k) {
  json j{{"name", k.name},
         {"span", SpanToJson(k.span)},
         {"def_span", SpanToJson(k.def_span)},
         {"name_span", SpanToJson(k.name_span)},
         {"body_span", SpanToJson(k.body_span)},
         {"class", KernelClassName(k.cls)},
         {"class_evidence", k.class_evidence},
         {"launched", k.launched},
         {"helper", k.is_helper}};
  json ps = json::array();
  for (const auto& p : k.params) ps.push_back(ParamJson(p));
  j["params"] = ps;
  json dec{{"first_span", SpanToJson(k.first_decorator_span)}};
  if (k.jit) {
    json jj{{"span", SpanToJson(k.jit->span)},
            {"form", k.jit->form},
            {"kwargs", KwList(k.jit->kwargs)},
            {"do_not_specialize", k.jit->do_not_specialize}};
    dec["jit"] = jj;
  }
  if (k.autotune) dec["autotune"] = AutotuneJson(*k.autotune);
  if (k.heuristics) {
    json h{{"span", SpanToJson(k.heuristics->span)}};
    json es = json::array();
    for (const auto& e : k.heuristics->entries) {
      es.push_back(json{{"name", e.name}, {"value", ExprJson(e.value)}, {"span", SpanToJson(e.span)}});
    }
    h["entries"] = es;
    dec["heuristics"] = h;
  }
  if (!k.other_decorators.empty()) {
    json os = json::array();
    for (const auto& o : k.other_decorators) os.push_back(json{{"text", o.text}, {"span", SpanToJson(o.span)}});
    dec["other"] = os;
  }
  j["decorators"] = dec;

  json pids = json::array();
  for (const auto& p : k.program_ids) {
    json x{{"span", SpanToJson(p.span)}, {"axis", p.axis}};
    if (p.axis < 0) PutExpr(x, "axis_expr", p.axis_expr);
    PutStr(x, "target", p.target);
    pids.push_back(x);
  }
  j["program_ids"] = pids;
  json ar = json::array();
  for (const auto& r : k.aranges) {
    json x{{"span", SpanToJson(r.span)}};
    PutExpr(x, "start", r.start);
    PutExpr(x, "end", r.end);
    PutStr(x, "target", r.target);
    ar.push_back(x);
  }
  j["aranges"] = ar;
  json mem = json::array();
  for (const auto& m : k.memops) {
    json x{{"kind", m.kind == MemOp::Kind::kLoad ? "load" : "store"},
           {"span", SpanToJson(m.span)},
           {"args_span", SpanToJson(m.args_span)},
           {"pointer", ExprJson(m.pointer)}};
    PutExpr(x, "value", m.value);
    PutExpr(x, "mask", m.mask);
    PutExpr(x, "other", m.other);
    PutExpr(x, "eviction_policy", m.eviction_policy);
    PutExpr(x, "cache_modifier", m.cache_modifier);
    PutExpr(x, "volatile", m.volatile_);
    PutExpr(x, "boundary_check", m.boundary_check);
    PutExpr(x, "padding_option", m.padding_option);
    if (m.block_pointer) x["block_pointer"] = true;
    x["loop_depth"] = m.loop_depth;
    if (m.loop >= 0) x["loop"] = m.loop;
    mem.push_back(x);
  }
  j["memops"] = mem;
  json bps = json::array();
  for (const auto& b : k.block_ptrs) {
    json x{{"op", b.op}, {"span", SpanToJson(b.span)}, {"kwargs", KwList(b.kwargs)}};
    PutExpr(x, "base", b.base);
    PutStr(x, "target", b.target);
    if (b.loop >= 0) x["loop"] = b.loop;
    bps.push_back(x);
  }
  j["block_ptrs"] = bps;
  json dots = json::array();
  for (const auto& d : k.dots) {
    json x{{"form", d.form}, {"span", SpanToJson(d.span)}, {"args_span", SpanToJson(d.args_span)}};
    PutExpr(x, "a", d.a);
    PutExpr(x, "b", d.b);
    PutExpr(x, "acc", d.acc);
    PutExpr(x, "input_precision", d.input_precision);
    PutExpr(x, "allow_tf32", d.allow_tf32);
    PutExpr(x, "out_dtype", d.out_dtype);
    PutExpr(x, "max_num_imprecise_acc", d.max_num_imprecise_acc);
    x["loop_depth"] = d.loop_depth;
    if (d.loop >= 0) x["loop"] = d.loop;
    dots.push_back(x);
  }
  j["dots"] = dots;
  auto reds = [](const std::vector<Reduction>& v) {
    json a = json::array();
    for (const auto& r : v) {
      json x{{"op", r.op}, {"form", r.form}, {"span", SpanToJson(r.span)}};
      PutExpr(x, "input", r.input);
      PutExpr(x, "axis", r.axis);
      x["loop_depth"] = r.loop_depth;
      if (r.loop >= 0) x["loop"] = r.loop;
      a.push_back(x);
    }
    return a;
  };
  j["reductions"] = reds(k.reductions);
  j["scans"] = reds(k.scans);
  json ats = json::array();
  for (const auto& a : k.atomics) {
    json x{{"op", a.op}, {"span", SpanToJson(a.span)}};
    PutExpr(x, "pointer", a.pointer);
    PutExpr(x, "value", a.value);
    PutExpr(x, "mask", a.mask);
    PutExpr(x, "sem", a.sem);
    PutExpr(x, "scope", a.scope);
    x["loop_depth"] = a.loop_depth;
    ats.push_back(x);
  }
  j["atomics"] = ats;
  json loops = json::array();
  for (const auto& l : k.loops) {
    json x{{"kind", l.kind},
           {"span", SpanToJson(l.span)},
           {"iter_span", SpanToJson(l.iter_span)},
           {"depth", l.depth},
           {"parent", l.parent}};
    if (l.args_span.size() > 0) x["args_span"] = SpanToJson(l.args_span);
    PutStr(x, "target", l.target);
    PutExpr(x, "start", l.start);
    PutExpr(x, "end", l.end);
    PutExpr(x, "step", l.step);
    x["options"] = KwList(l.options);
    loops.push_back(x);
  }
  j["loops"] = loops;
  json calls = json::array();
  for (const auto& c : k.calls) {
    calls.push_back(json{{"callee", c.callee}, {"span", SpanToJson(c.span)}, {"loop_depth", c.loop_depth}});
  }
  j["calls"] = calls;
  json lib = json::array();
  for (const auto& c : k.libdevice) {
    lib.push_back(json{{"name", c.name}, {"via", c.via}, {"span", SpanToJson(c.span)}});
  }
  j["libdevice"] = lib;
  return j;
}

json LaunchToJson(const Launch& l) {
  json j{{"kernel", l.kernel},
         {"span", SpanToJson(l.span)},
         {"args_span", SpanToJson(l.args_span)},
         {"kernel_ref", ExprJson(l.kernel_ref)},
         {"enclosing_function", l.enclosing_function},
         {"enclosing_span", SpanToJson(l.enclosing_span)}};
  if (!l.kernel_candidates.empty()) j["kernel_candidates"] = l.kernel_candidates;
  if (l.in_lambda) j["in_lambda"] = true;
  const Grid& g = l.grid;
  json gj{{"kind", GridKindName(g.kind)}, {"expr", ExprJson(g.expr)}};
  if (g.assignment) gj["assignment"] = AssignmentJson(*g.assignment);
  gj["resolved_kind"] = GridKindName(g.resolved_kind);
  PutExpr(gj, "resolved", g.resolved);
  json dims = json::array();
  for (const auto& d : g.dims) dims.push_back(ExprJson(d));
  gj["dims"] = dims;
  PutStr(gj, "meta_param", g.meta_param);
  gj["names"] = g.names;
  gj["meta_keys"] = g.meta_keys;
  gj["constexprs"] = g.constexprs;
  j["grid"] = gj;
  json args = json::array();
  for (const auto& a : l.args) {
    json x{{"value", ExprJson(a.value)}, {"span", SpanToJson(a.span)}};
    if (a.position >= 0) x["position"] = a.position;
    PutStr(x, "keyword", a.keyword);
    PutStr(x, "param", a.param);
    if (a.splat) x["splat"] = true;
    args.push_back(x);
  }
  j["args"] = args;
  json bs = json::array();
  for (const auto& b : l.bindings) {
    json x{{"name", b.name}, {"launch_option", b.launch_option}, {"origin", OriginJson(b.origin)}};
    if (b.arg >= 0) x["arg"] = b.arg;
    bs.push_back(x);
  }
  j["bindings"] = bs;
  if (!l.unmapped.empty()) j["unmapped"] = l.unmapped;
  return j;
}

json ModuleToJson(const ModuleModel& m) {
  json j{{"schema_version", kSchemaVersion}, {"path", m.path}};
  json ks = json::array();
  for (const auto& k : m.kernels) ks.push_back(KernelToJson(k));
  j["kernels"] = ks;
  json ls = json::array();
  for (const auto& l : m.launches) ls.push_back(LaunchToJson(l));
  j["launches"] = ls;
  j["aliases"] = json{{"triton", m.triton_aliases}, {"tl", m.tl_aliases}, {"libdevice", m.libdevice_aliases}};
  j["notes"] = m.notes;
  return j;
}

}  // namespace kiln::analysis

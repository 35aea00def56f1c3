// kiln/rewrite: dispatch, tunables, invariants, and the parameter rewrites (SetParams,
// InsertAutotune).
#include "rewrite/rewrite.h"

#include <fmt/format.h>
#include <algorithm>
#include <initializer_list>
#include <utility>

#include "rewrite/plan.h"

namespace kiln::rewrite {

using namespace internal;  // NOLINT
using analysis::Binding;
using analysis::ExtractTunables;
using analysis::GridKind;
using analysis::OriginKind;
using analysis::ParamKind;
using analysis::Tunable;
using analysis::Tunables;
using analysis::TunableSite;

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

std::string JoinValues(const ParamValues& v) {
  std::string s;
  for (const auto& [k, x] : v) s += fmt::format(" {}={}", k, x);
  return s;
}

}  // namespace

// Names ------------------------------------------------------------------------------------------

RewriteKind KindOf(const Request& r) { return static_cast<RewriteKind>(r.index()); }

const char* RewriteKindName(RewriteKind k) {
  switch (k) {
    case RewriteKind::kSetParams: return "set_params";
    case RewriteKind::kInsertAutotune: return "insert_autotune";
    case RewriteKind::kGroupMSwizzle: return "group_m_swizzle";
    case RewriteKind::kEvictionHints: return "eviction_hints";
    case RewriteKind::kDotPrecision: return "dot_precision";
    case RewriteKind::kPipelineLoop: return "pipeline_loop";
    case RewriteKind::kSplitK: return "split_k";
    case RewriteKind::kPersistentGrid: return "persistent_grid";
    case RewriteKind::kRowsPerProgram: return "rows_per_program";
    case RewriteKind::kRemoveMasks: return "remove_masks";
    case RewriteKind::kLiftLiterals: return "lift_literals";
  }
  return "?";
}

std::string Describe(const Request& r) {
  std::string name = RewriteKindName(KindOf(r));
  return name + std::visit(Overloaded{
                               [](const SetParams& x) { return JoinValues(x.values); },
                               [](const InsertAutotune& x) {
                                 std::string s = " key=";
                                 for (size_t i = 0; i < x.key.size(); ++i) s += (i ? "," : "") + x.key[i];
                                 s += " configs=";
                                 for (size_t i = 0; i < x.configs.size(); ++i) {
                                   const auto& c = x.configs[i];
                                   s += i ? ";" : "";
                                   for (const auto& [k, v] : c.params) s += fmt::format("{}:{},", k, v);
                                   s += fmt::format("num_warps:{},num_stages:{}", c.num_warps, c.num_stages);
                                   if (c.num_ctas) s += fmt::format(",num_ctas:{}", *c.num_ctas);
                                   if (c.maxnreg) s += fmt::format(",maxnreg:{}", *c.maxnreg);
                                 }
                                 return s;
                               },
                               [](const GroupMSwizzle& x) { return fmt::format(" GROUP_M={}", x.group_m); },
                               [](const EvictionHints& x) {
                                 std::string s;
                                 if (!x.eviction_policy.empty()) s += " eviction_policy=" + x.eviction_policy;
                                 if (!x.cache_modifier.empty()) s += " cache_modifier=" + x.cache_modifier;
                                 if (!x.switch_param.empty()) s += " switch=" + x.switch_param;
                                 return s;
                               },
                               [](const DotPrecision& x) { return " input_precision=" + x.precision; },
                               [](const PipelineLoop& x) {
                                 return fmt::format(" num_stages={}{}", x.num_stages,
                                                    x.loop >= 0 ? fmt::format(" loop={}", x.loop) : "");
                               },
                               [](const SplitK& x) { return fmt::format(" SPLIT_K={}", x.split_k); },
                               [](const PersistentGrid& x) {
                                 return x.num_programs ? fmt::format(" programs={}", x.num_programs) : std::string();
                               },
                               [](const RowsPerProgram& x) {
                                 return fmt::format(" rows={}{}", x.rows,
                                                    x.stages > 0 ? fmt::format(" stages={}", x.stages) : "");
                               },
                               [](const RemoveMasks& x) {
                                 std::string s;
                                 for (const auto& g : x.guarantees) s += " " + g.expr + "%" + g.multiple;
                                 if (!x.guard) s += " guard=0";
                                 return s;
                               },
                               [](const LiftLiterals& x) {
                                 std::string s;
                                 for (size_t i = 0; i < x.values.size(); ++i)
                                   s += (i ? "," : " values=") + std::to_string(x.values[i]);
                                 return s;
                               },
                           },
                           r);
}

namespace {

std::vector<std::string> SplitOn(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

Result<int64_t> IntOf(const std::string& k, const std::string& v) {
  auto x = ParseIntLiteral(v);
  if (!x) return InvalidArgument("'" + k + "' needs an integer, got '" + v + "'");
  return *x;
}

}  // namespace

Result<std::vector<Request>> ParseRequests(std::string_view text) {
  std::vector<Request> out;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find(";;", at), text.size());
    KILN_ASSIGN_OR_RETURN(Request r, ParseRequest(text.substr(at, end - at)));
    out.push_back(std::move(r));
    at = end + 2;
  }
  return out;
}

Result<Request> ParseRequest(std::string_view text) {
  std::string t = Trim(text);
  for (char& c : t)
    if (c == '\t' || c == '\n') c = ' ';
  auto words = SplitOn(t, ' ');
  if (words.empty()) return InvalidArgument("empty rewrite request");
  std::string kind = words[0];
  std::vector<std::pair<std::string, std::string>> kv;
  std::vector<std::string> bare;
  for (size_t i = 1; i < words.size(); ++i) {
    auto eq = words[i].find('=');
    if (eq == std::string::npos || words[i].find('%') != std::string::npos)
      bare.push_back(words[i]);
    else
      kv.push_back({words[i].substr(0, eq), words[i].substr(eq + 1)});
  }
  auto no_bare = [&]() -> Status {
    if (!bare.empty()) return InvalidArgument("unexpected '" + bare[0] + "' in " + kind);
    return Status::Ok();
  };
  if (kind == "set_params") {
    KILN_RETURN_IF_ERROR(no_bare());
    SetParams r;
    for (auto& [k, v] : kv) {
      KILN_ASSIGN_OR_RETURN(r.values[k], IntOf(k, v));
    }
    return Request{r};
  }
  if (kind == "insert_autotune") {
    KILN_RETURN_IF_ERROR(no_bare());
    InsertAutotune r;
    for (auto& [k, v] : kv) {
      if (k == "key") {
        r.key = SplitOn(v, ',');
      } else if (k == "extend") {
        r.keep_existing = v == "1" || v == "true";
      } else if (k == "pin_key") {
        r.pin_names = SplitOn(v, ',');
      } else if (k == "pins") {  // VALUE,VALUE:first|rest;...
        for (const auto& p : SplitOn(v, ';')) {
          auto colon = p.rfind(':');
          std::string which = colon == std::string::npos ? "" : p.substr(colon + 1);
          if (which != "first" && which != "rest")
            return InvalidArgument("pin '" + p + "' is not VALUE[,VALUE...]:first|rest");
          std::string t;
          for (const auto& x : SplitOn(p.substr(0, colon), ',')) {
            KILN_ASSIGN_OR_RETURN(int64_t n, IntOf("pins", x));
            t += (t.empty() ? "" : ", ") + std::to_string(n);
          }
          r.pins.emplace_back("(" + t + (t.find(',') == std::string::npos ? ",)" : ")"), which == "first");
        }
      } else if (k == "configs") {
        for (const auto& cs : SplitOn(v, ';')) {
          TuneConfig c;
          for (const auto& item : SplitOn(cs, ',')) {
            auto colon = item.find(':');
            if (colon == std::string::npos) return InvalidArgument("config item '" + item + "' is not NAME:VALUE");
            std::string n = item.substr(0, colon);
            KILN_ASSIGN_OR_RETURN(int64_t x, IntOf(n, item.substr(colon + 1)));
            if (n == "num_warps")
              c.num_warps = static_cast<int>(x);
            else if (n == "num_stages")
              c.num_stages = static_cast<int>(x);
            else if (n == "num_ctas")
              c.num_ctas = static_cast<int>(x);
            else if (n == "maxnreg")
              c.maxnreg = static_cast<int>(x);
            else
              c.params[n] = x;
          }
          r.configs.push_back(std::move(c));
        }
      } else {
        return InvalidArgument("unknown insert_autotune option '" + k + "'");
      }
    }
    return Request{r};
  }
  // Integer options by name (`rows=8 stages=3`); any other name is an error.
  auto int_options = [&](std::initializer_list<std::pair<const char*, int*>> known) -> Status {
    KILN_RETURN_IF_ERROR(no_bare());
    for (auto& [k, v] : kv) {
      int* out = nullptr;
      for (const auto& [name, dst] : known)
        if (k == name) out = dst;
      if (!out) return InvalidArgument("unknown " + kind + " option '" + k + "'");
      KILN_ASSIGN_OR_RETURN(int64_t x, IntOf(k, v));
      *out = static_cast<int>(x);
    }
    return Status::Ok();
  };
  if (kind == "group_m_swizzle") {
    GroupMSwizzle r;
    KILN_RETURN_IF_ERROR(int_options({{"GROUP_M", &r.group_m}}));
    return Request{r};
  }
  if (kind == "split_k") {
    SplitK r;
    KILN_RETURN_IF_ERROR(int_options({{"SPLIT_K", &r.split_k}}));
    return Request{r};
  }
  if (kind == "persistent_grid") {
    PersistentGrid r;
    KILN_RETURN_IF_ERROR(int_options({{"programs", &r.num_programs}}));
    return Request{r};
  }
  if (kind == "rows_per_program") {
    RowsPerProgram r;
    KILN_RETURN_IF_ERROR(int_options({{"rows", &r.rows}, {"stages", &r.stages}}));
    return Request{r};
  }
  if (kind == "pipeline_loop") {
    PipelineLoop r;
    KILN_RETURN_IF_ERROR(int_options({{"num_stages", &r.num_stages}, {"loop", &r.loop}}));
    return Request{r};
  }
  if (kind == "eviction_hints") {
    KILN_RETURN_IF_ERROR(no_bare());
    EvictionHints r;  // naming a hint replaces the default one (evict_first)
    for (auto& [k, v] : kv)
      if (k == "eviction_policy" || k == "cache_modifier") r.eviction_policy.clear();
    for (auto& [k, v] : kv) {
      if (k == "eviction_policy")
        r.eviction_policy = v;
      else if (k == "cache_modifier")
        r.cache_modifier = v;
      else if (k == "switch")
        r.switch_param = v;
      else
        return InvalidArgument("unknown eviction_hints option '" + k + "'");
    }
    return Request{r};
  }
  if (kind == "dot_precision") {
    KILN_RETURN_IF_ERROR(no_bare());
    DotPrecision r;
    for (auto& [k, v] : kv) {
      if (k == "input_precision")
        r.precision = v;
      else
        return InvalidArgument("unknown dot_precision option '" + k + "'");
    }
    return Request{r};
  }
  if (kind == "remove_masks") {
    RemoveMasks r;
    for (auto& [k, v] : kv) {
      if (k == "guard")
        r.guard = v != "0";
      else
        return InvalidArgument("unknown remove_masks option '" + k + "'");
    }
    for (const auto& b : bare) {
      auto pct = b.find('%');
      if (pct == std::string::npos) return InvalidArgument("guarantee '" + b + "' is not EXPR%MULTIPLE");
      std::string m = b.substr(pct + 1);
      if (auto e = m.find("=="); e != std::string::npos) m = m.substr(0, e);
      r.guarantees.push_back({b.substr(0, pct), m});
    }
    return Request{r};
  }
  if (kind == "lift_literals") {
    KILN_RETURN_IF_ERROR(no_bare());
    LiftLiterals r;
    for (auto& [k, v] : kv) {
      if (k != "values") return InvalidArgument("unknown lift_literals option '" + k + "'");
      for (const auto& item : SplitOn(v, ',')) {
        auto n = ParseIntLiteral(item);
        if (!n) return InvalidArgument("lift_literals: '" + item + "' is not an integer");
        r.values.push_back(*n);
      }
    }
    return Request{r};
  }
  return InvalidArgument("unknown rewrite '" + kind + "'");
}

// Unified diff -------------------------------------------------------------------------------------

std::string UnifiedDiff(std::string_view before, std::string_view after, const std::string& label_a,
                        const std::string& label_b) {
  if (before == after) return "";
  auto lines = [](std::string_view s) {
    std::vector<std::string_view> v;
    size_t at = 0;
    while (at < s.size()) {
      size_t e = s.find('\n', at);
      if (e == std::string_view::npos)
        e = s.size();
      else
        ++e;
      v.push_back(s.substr(at, e - at));
      at = e;
    }
    return v;
  };
  auto a = lines(before), b = lines(after);
  // Trim the common prefix/suffix, LCS on the middle.
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  size_t n = a.size() - pre - suf, m = b.size() - pre - suf;
  std::vector<std::vector<uint32_t>> L(n + 1, std::vector<uint32_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      L[i][j] = a[pre + i] == b[pre + j] ? L[i + 1][j + 1] + 1 : std::max(L[i + 1][j], L[i][j + 1]);
  // ops: ' ' keep, '-' delete, '+' insert, with line indices.
  struct Op {
    char c;
    size_t ai, bi;
  };
  std::vector<Op> ops;
  for (size_t i = 0; i < pre; ++i) ops.push_back({' ', i, i});
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[pre + i] == b[pre + j]) {
      ops.push_back({' ', pre + i, pre + j});
      ++i;
      ++j;
    } else if (i < n && (j == m || L[i + 1][j] >= L[i][j + 1])) {
      ops.push_back({'-', pre + i, pre + j});
      ++i;
    } else {
      ops.push_back({'+', pre + i, pre + j});
      ++j;
    }
  }
  for (size_t k = 0; k < suf; ++k) ops.push_back({' ', a.size() - suf + k, b.size() - suf + k});
  std::string out = "--- " + label_a + "\n+++ " + label_b + "\n";
  const size_t ctx = 3;
  size_t k = 0;
  while (k < ops.size()) {
    if (ops[k].c == ' ') {
      ++k;
      continue;
    }
    size_t start = k >= ctx ? k - ctx : 0;
    size_t end = k;
    // Extend the hunk while changes are within 2*ctx of each other.
    size_t last_change = k;
    for (size_t q = k; q < ops.size(); ++q) {
      if (ops[q].c != ' ')
        last_change = q;
      else if (q - last_change > 2 * ctx)
        break;
      end = q;
    }
    end = std::min(ops.size() - 1, last_change + ctx);
    size_t a0 = ops[start].ai, b0 = ops[start].bi, ac = 0, bc = 0;
    std::string body;
    for (size_t q = start; q <= end; ++q) {
      const Op& o = ops[q];
      std::string_view line = o.c == '+' ? b[o.bi] : a[o.ai];
      body += o.c;
      body += line;
      if (line.empty() || line.back() != '\n') body += "\n\\ No newline at end of file\n";
      if (o.c != '+') ++ac;
      if (o.c != '-') ++bc;
    }
    out += fmt::format("@@ -{},{} +{},{} @@\n", ac ? a0 + 1 : a0, ac, bc ? b0 + 1 : b0, bc);
    out += body;
    k = end + 1;
  }
  return out;
}

// Grid relation ---------------------------------------------------------------------------------

namespace internal {

Status AppendKernelParam(const Ctx& c, EditSet& edits, const std::string& param_text) {
  const Kernel& k = c.kernel;
  if (k.params.empty()) return Refuse("kernel has no parameters");
  Node def = KernelDef(c.tree, k);
  Node params = def.field("parameters");
  for (const Node& p : params.named_children()) {
    std::string_view t = p.type();
    if (t == "list_splat_pattern" || t == "dictionary_splat_pattern" || t == "keyword_separator" ||
        t == "positional_separator")
      return Refuse("kernel signature has *args/**kwargs or separators");
  }
  uint32_t end = k.params.back().span.end.byte;
  return edits.Insert(end, ", " + param_text);
}

}  // namespace internal

// SetParams ---------------------------------------------------------------------------------------

namespace internal {

namespace {
// An autotune list whose configs the request makes identical: a literal list of several plain configs
// (no pre_hook), written one after another (only commas, spaces and comments between them), every
// constexpr and launch option they set given a value by the request.
bool CollapsibleAutotune(const Ctx& c, const SetParams& r) {
  if (!c.kernel.autotune) return false;
  const auto& at = *c.kernel.autotune;
  if (!at.configs_resolved || at.configs_generated || (at.configs.size() < 2 && !at.configs_expanded)) return false;
  for (const auto& n : at.tuned_names)
    if (!r.values.count(n)) return false;
  for (const auto& n : at.tuned_options)
    if (!r.values.count(n)) return false;
  if (at.configs_expanded) return !at.configs.front().has_pre_hook;  // written anew (PlanSetParams)
  std::string_view text = c.text();
  for (size_t i = 0; i < at.configs.size(); ++i) {
    const auto& cfg = at.configs[i];
    if (cfg.has_pre_hook) return false;
    if (cfg.kwargs_span.size() == 0 && !at.tuned_names.empty()) return false;  // not a dict literal
    for (const auto& kw : cfg.kwargs)
      if (!r.values.count(kw.name)) return false;
    if (i == 0) continue;
    uint32_t a = at.configs[i - 1].span.end.byte, b = cfg.span.begin.byte;
    if (b < a || b > text.size()) return false;
    bool comment = false;
    for (char ch : text.substr(a, b - a)) {
      if (comment) {
        comment = ch != '\n';
        continue;
      }
      if (ch == '#')
        comment = true;
      else if (ch != ',' && ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
        return false;
    }
  }
  return true;
}
}  // namespace

// The wrapper of launch `l` rebinds its parameter `var` to `text` as its first statement (after a
// docstring): the grid and the launch then read the tuned value, the signature stays.
Status RebindParam(const Ctx& c, const Launch& l, const std::string& var, const std::string& text,
                   std::set<uint32_t>& rebound, Plan& plan) {
  Node fn = EnclosingFunction(c.tree, l.span.begin.byte);
  if (fn.is_null()) return Refuse("the launch of " + var + " is not inside a function");
  Node body = fn.field("body");
  if (body.is_null() || body.named_child_count() == 0) return Refuse("the wrapper has no body");
  Node first = body.named_child(0);
  if (first.type() == "comment") return Refuse("the wrapper's body starts with a comment");
  Node at = first;
  if (first.type() == "expression_statement" && first.named_child_count() == 1 &&
      first.named_child(0).type() == "string" && body.named_child_count() > 1)
    at = body.named_child(1);  // after the docstring
  uint32_t pos = LineStart(c.text(), at.span().begin.byte);
  if (!rebound.insert(pos).second) return Status::Ok();
  KILN_RETURN_IF_ERROR(plan.edits.Insert(
      pos, fmt::format("{}{} = {}  # kiln: tuned (the caller's value only set performance)\n",
                       IndentOf(c.text(), at.span().begin.byte), var, text)));
  plan.notes.push_back(fmt::format("{} at line {}: parameter {} rebound to {}", l.enclosing_function,
                                   at.span().begin.line, var, text));
  return Status::Ok();
}

Result<Plan> PlanSetParams(const Ctx& c, const SetParams& r) {
  if (r.values.empty()) return Refuse("no values to set");
  KILN_ASSIGN_OR_RETURN(Tunables tun, ExtractTunables(c.tree, c.model, Target{c.kernel.name, c.launches}));
  Plan plan;
  std::set<std::pair<uint32_t, uint32_t>> done;
  std::set<uint32_t> rebound;
  auto replace = [&](const Span& s, const std::string& text) -> Status {
    if (!done.insert({s.begin.byte, s.end.byte}).second) return Status::Ok();
    return plan.edits.Replace(s, text);
  };
  // When the request sets everything an existing autotune list varies, every config would become the
  // same one, and Triton would still benchmark each copy at the first call of every new key (seconds
  // per candidate): keep the first config, set it, and drop the others.
  const bool collapse = CollapsibleAutotune(c, r);
  // Configs expanded from a comprehension share one text: the list is written anew as the one config.
  const bool expanded = c.kernel.autotune && c.kernel.autotune->configs_expanded;
  std::vector<std::pair<std::string, std::string>> expanded_values;  // name -> text, the new config's
  if (collapse && !expanded) {
    const auto& cfgs = c.kernel.autotune->configs;
    KILN_RETURN_IF_ERROR(plan.edits.Replace(cfgs.front().span.end.byte, cfgs.back().span.end.byte, ""));
    plan.notes.push_back(
        fmt::format("autotune list: {} configs -> 1 (the request sets every value they vary)", cfgs.size()));
  }
  // A variable shared by several constexprs of the launch (`BLOCK_M=BLOCK, BLOCK_N=BLOCK`): editing it
  // for its owner pins the others at the launch to their own values, unless the request sets them too.
  ParamValues values = r.values;
  for (const auto& [name, v] : r.values) {
    const Tunable* u = tun.Find(name);
    if (!u || !u->editable) continue;
    for (const auto& sib : u->pinned_siblings) {
      if (values.count(sib)) continue;
      const Tunable* o = tun.Find(sib);
      if (!o || !o->editable || !o->value)
        return Refuse(fmt::format("setting {} edits a variable that also sets {}, whose value is not known here: "
                                  "set {} too",
                                  name, sib, sib));
      values[sib] = *o->value;
      plan.notes.push_back(fmt::format("{} pinned to {} (it shared its variable with {})", sib, *o->value, name));
    }
  }
  for (const auto& [name, v] : values) {
    const Tunable* u = tun.Find(name);
    if (!u) return Refuse("'" + name + "' is not a constexpr parameter or launch option of " + c.kernel.name);
    if (!u->editable) return Refuse("cannot set " + name + ": " + u->reason);
    if (u->power_of_two && !IsPowerOfTwo(v)) return Refuse(fmt::format("{} must be a power of two (got {})", name, v));
    if (u->divides_max && (v > u->max_value || u->max_value % v != 0))
      return Refuse(fmt::format("{}={} is out of range ({})", name, v, u->bound));
    if (v < u->min_value || (u->max_value && v > u->max_value))
      return Refuse(fmt::format("{}={} is out of range", name, v));
    std::string text = ValueText(v, u->boolean);
    if (u->site == TunableSite::kAutotune && expanded) {
      if (!collapse) {
        std::string names;
        for (const auto& n : c.kernel.autotune->tuned_names) names += (names.empty() ? "" : ", ") + n;
        for (const auto& n : c.kernel.autotune->tuned_options) names += (names.empty() ? "" : ", ") + n;
        return Refuse("the autotune configs are generated by a comprehension: set every value they vary (" + names +
                      ")");
      }
      expanded_values.emplace_back(name, text);
      continue;
    }
    if (u->site == TunableSite::kAutotune) {
      const auto& at = *c.kernel.autotune;
      for (size_t ci = 0; ci < (collapse ? 1 : at.configs.size()); ++ci) {
        const auto& cfg = at.configs[ci];
        if (u->launch_option) {
          const std::optional<analysis::KwArg>* o = name == "num_warps"    ? &cfg.num_warps
                                                    : name == "num_stages" ? &cfg.num_stages
                                                    : name == "num_ctas"   ? &cfg.num_ctas
                                                                           : &cfg.maxnreg;
          if (*o)
            KILN_RETURN_IF_ERROR(replace((*o)->value.span, text));
          else
            KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), cfg.args_span, name + "=" + text));
        } else {
          bool found = false;
          for (const auto& kw : cfg.kwargs)
            if (kw.name == name) {
              KILN_RETURN_IF_ERROR(replace(kw.value.span, text));
              found = true;
            }
          if (!found) return Refuse("an autotune config does not set " + name);
        }
      }
      plan.notes.push_back(
          collapse ? fmt::format("autotune config: {} = {}", name, text)
                   : fmt::format("autotune configs: {} = {} in all {} configs", name, text, at.configs.size()));
      continue;
    }
    for (int li : c.launches) {
      const Launch& l = c.model.launches[li];
      const Binding* b = l.FindBinding(name);
      // A callee chosen at run time: the value applies when the launch calls this kernel, the other
      // candidates keep theirs (Tunables allows only edits at the launch there).
      const bool alias = l.kernel_candidates.size() > 1;
      auto gated = [&](const std::string& old) {
        return alias ? fmt::format("({} if {} is {} else {})", text, l.kernel_ref.text, c.kernel.name, old) : text;
      };
      if (alias) {
        if (u->site != TunableSite::kLaunchLiteral && u->site != TunableSite::kLaunchOverride &&
            u->site != TunableSite::kOptionDefault)
          return Refuse(fmt::format("cannot set {}: the launch at line {} calls a kernel chosen at run time",
                                    name, l.span.begin.line));
        if (std::none_of(plan.gated.begin(), plan.gated.end(),
                         [&](const Span& g) { return g.begin.byte == l.args_span.begin.byte; })) {
          plan.gated.push_back(l.args_span);
          plan.notes.push_back(fmt::format("launch at line {} calls a kernel chosen at run time ({}): its values "
                                           "apply when it calls {}",
                                           l.span.begin.line, l.kernel_ref.text, c.kernel.name));
        }
      }
      switch (u->site) {
        case TunableSite::kLaunchLiteral:
          KILN_RETURN_IF_ERROR(replace(b->origin.at_launch.span, gated(b->origin.at_launch.text)));
          plan.notes.push_back(
              fmt::format("launch at line {}: {} {} -> {}", l.span.begin.line, name, b->origin.value, text));
          break;
        case TunableSite::kVariable:
          KILN_RETURN_IF_ERROR(replace(b->origin.assignment->value.span, text));
          plan.notes.push_back(fmt::format("assignment at line {}: {} = {} -> {}",
                                           b->origin.assignment->span.begin.line, b->origin.variable, b->origin.value,
                                           text));
          break;
        case TunableSite::kKernelDefault: {
          const Param* p = c.kernel.FindParam(name);
          KILN_RETURN_IF_ERROR(replace(p->default_value.span, text));
          plan.notes.push_back(fmt::format("kernel default: {} = {} -> {}", name, p->default_value.text, text));
          break;
        }
        case TunableSite::kOptionDefault:
          // Triton's defaults for the other candidates (Tunables allows only num_warps and num_stages here).
          KILN_RETURN_IF_ERROR(
              AppendArg(plan.edits, c.text(), l.args_span, name + "=" + gated(name == "num_warps" ? "4" : "3")));
          plan.notes.push_back(fmt::format("launch at line {}: added {}={}", l.span.begin.line, name, text));
          break;
        case TunableSite::kLaunchOverride:
          KILN_RETURN_IF_ERROR(replace(b->origin.at_launch.span, gated(b->origin.at_launch.text)));
          plan.notes.push_back(fmt::format("launch at line {}: {} {} -> {} (the wrapper's value only set performance)",
                                           l.span.begin.line, name, b->origin.at_launch.text, text));
          break;
        case TunableSite::kAssignOverride:
          KILN_RETURN_IF_ERROR(replace(b->origin.assignment->value.span, text));
          plan.notes.push_back(fmt::format("assignment at line {}: {} = {} -> {}", b->origin.assignment->span.begin.line,
                                           b->origin.variable, b->origin.assignment->value.text, text));
          break;
        case TunableSite::kParamRebind:
          KILN_RETURN_IF_ERROR(RebindParam(c, l, b->origin.function_param, text, rebound, plan));
          break;
        default: return Refuse("cannot set " + name);
      }
      if (!u->launch_option && !u->grid_follows) {
        GridRelation g = RelateGrid(c, l, name);
        if (g.literal && !g.depends) {
          if (alias)
            return Refuse(fmt::format("cannot set {}: the grid at line {} follows it and is shared with the other "
                                      "kernels the launch may call",
                                      name, g.literal->begin.line));
          KILN_RETURN_IF_ERROR(replace(*g.literal, text));
          plan.notes.push_back(fmt::format("grid at line {}: literal updated to {}", g.literal->begin.line, text));
        }
      }
    }
  }
  if (!expanded_values.empty()) {
    const auto& at = *c.kernel.autotune;
    std::string dict, opts;
    for (const auto& n : at.tuned_names)
      for (const auto& [k, v] : expanded_values)
        if (k == n) dict += fmt::format("{}'{}': {}", dict.empty() ? "" : ", ", k, v);
    for (const char* o : {"num_warps", "num_stages", "num_ctas", "maxnreg"})
      for (const auto& [k, v] : expanded_values)
        if (k == o) opts += fmt::format(", {}={}", k, v);
    KILN_RETURN_IF_ERROR(plan.edits.Replace(
        at.configs_expr.span, fmt::format("[{}.Config({{{}}}{})]", analysis::TritonAlias(c.model), dict, opts)));
    plan.notes.push_back(fmt::format("autotune list: {} configs generated by a comprehension -> 1 ({}{})",
                                     at.configs.size(), dict, opts));
  }
  return plan;
}

// InsertAutotune ------------------------------------------------------------------------------------

namespace {

std::string ConfigText(const TuneConfig& cfg, const std::string& triton) {
  std::string d = "{";
  bool first = true;
  for (const auto& [k, v] : cfg.params) {
    d += fmt::format("{}'{}': {}", first ? "" : ", ", k, v);
    first = false;
  }
  d += "}";
  std::string s = fmt::format("{}.Config({}, num_warps={}, num_stages={}", triton, d, cfg.num_warps, cfg.num_stages);
  if (cfg.num_ctas) s += fmt::format(", num_ctas={}", *cfg.num_ctas);
  if (cfg.maxnreg) s += fmt::format(", maxnreg={}", *cfg.maxnreg);
  return s + ")";
}

std::string ListText(const std::vector<std::string>& xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", '" : "'") + xs[i] + "'";
  return s + "]";
}

}  // namespace

// One launch of a kernel that gets @triton.autotune: drop the tuned names and launch options; keep the
// grid following them. `pinned`: constexprs that share their host variable with an owner (`BLOCK_N=BLOCK`
// beside `BLOCK_M=BLOCK`): the grid reads the variable for the owner, never for them.
Status DropTunedAtLaunch(const Ctx& c, const Launch& l, const std::set<std::string>& tuned,
                         const std::set<std::string>& pinned, Plan& plan) {
  const Kernel& k = c.kernel;
  for (const auto& a : l.args)
    if (a.splat) return Refuse(fmt::format("launch at line {} passes *args/**kwargs", l.span.begin.line));
  std::vector<Span> spans;
  std::vector<bool> remove;
  int first_removed_positional = -1;
  for (size_t i = 0; i < l.args.size(); ++i) {
    const auto& a = l.args[i];
    bool rm = tuned.count(a.param) || (a.position < 0 && analysis::IsLaunchOption(a.keyword));
    spans.push_back(a.span);
    remove.push_back(rm);
    if (rm && a.position >= 0 && first_removed_positional < 0) first_removed_positional = static_cast<int>(i);
  }
  // Positional arguments after a removed one become keyword arguments.
  if (first_removed_positional >= 0) {
    for (size_t i = first_removed_positional; i < l.args.size(); ++i) {
      const auto& a = l.args[i];
      if (remove[i] || a.position < 0) continue;
      if (a.param.empty())
        return Refuse(fmt::format("launch at line {}: extra positional argument", l.span.begin.line));
      KILN_RETURN_IF_ERROR(plan.edits.Insert(a.span.begin.byte, a.param + "="));
    }
  }
  // Grid.
  std::map<std::string, std::string> vars, literals;
  bool needs = false;
  std::string meta = l.grid.meta_param.empty() ? "META" : l.grid.meta_param;
  for (const auto& n : tuned) {
    if (pinned.count(n)) continue;
    GridRelation g = RelateGrid(c, l, n);
    const Binding* b = l.FindBinding(n);
    if (g.via_meta) continue;
    if (g.depends) {
      std::string var = b && !b->origin.variable.empty() ? b->origin.variable : b ? b->origin.function_param : "";
      if (b && b->origin.at_launch.present() && IsIdentifier(b->origin.at_launch.text))
        vars[b->origin.at_launch.text] = meta + "['" + n + "']";
      if (!var.empty()) vars[var] = meta + "['" + n + "']";
      needs = true;
    } else if (TileConstexprs(c.tree, k).count(n) && PowerOfTwoConstexprs(c.tree, k).count(n)) {
      if (!g.literal)
        return Refuse(
            fmt::format("launch at line {}: the grid ({}) does not follow {}", l.span.begin.line, l.grid.expr.text, n));
      literals[std::string(c.text().substr(g.literal->begin.byte, g.literal->size()))] = meta + "['" + n + "']";
      needs = true;
    }
  }
  // Removed launch arguments.
  KILN_RETURN_IF_ERROR(RemoveArgs(plan.edits, spans, remove));
  if (!needs) return Status::Ok();
  Node base;
  uint32_t before = l.span.begin.byte;
  GridKind gk = l.grid.kind == GridKind::kVariable ? l.grid.resolved_kind : l.grid.kind;
  if (l.grid.kind == GridKind::kVariable) {
    if (!l.grid.assignment) return Refuse("grid variable has no visible assignment");
    base = NodeAt(c.tree, l.grid.assignment->value.span);
    before = l.grid.assignment->span.begin.byte;
  } else {
    base = NodeAt(c.tree, l.grid.expr.span);
  }
  std::string text;
  if (gk == GridKind::kLambda) {
    Node lam = base;
    lam = Unparen(lam);
    if (lam.type() != "lambda") return Refuse("grid lambda not understood");
    Node params = lam.field("parameters");
    std::string pname = params.is_null() ? "" : std::string(params.text());
    if (!IsIdentifier(pname)) return Refuse("grid lambda does not take exactly one META parameter");
    for (auto& [_, v] : vars) v = pname + v.substr(meta.size());
    for (auto& [_, v] : literals) v = pname + v.substr(meta.size());
    auto body = InlineVars(c.tree, lam.field("body"), vars, before, 4, &literals);
    if (!body) return Refuse("grid depends on a variable assigned more than once");
    text = "lambda " + pname + ": " + *body;
  } else if (GridIsBareTuple(c.text(), l)) {
    // `kernel[a, b]` / `kernel[n,]`: the dimensions one by one, parenthesised.
    std::string dims;
    for (const auto& d : l.grid.dims) {
      auto e = InlineVars(c.tree, NodeAt(c.tree, d.span), vars, before, 4, &literals);
      if (!e) return Refuse("grid depends on a variable assigned more than once");
      dims += *e + ", ";
    }
    text = "lambda META: (" + dims.substr(0, dims.size() - 2) + ",)";
  } else if (gk == GridKind::kTuple || l.grid.kind == GridKind::kTuple) {
    auto body = InlineVars(c.tree, base, vars, before, 4, &literals);
    if (!body) return Refuse("grid depends on a variable assigned more than once");
    text = "lambda META: " + *body;
  } else {
    return Refuse(fmt::format("launch at line {}: grid ({}) must follow the tuned names but is not a tuple or lambda",
                              l.span.begin.line, l.grid.expr.text));
  }
  KILN_RETURN_IF_ERROR(plan.edits.Replace(GridEditSpan(c.text(), l), text));
  plan.notes.push_back(fmt::format("launch at line {}: grid is now {}", l.span.begin.line, text));
  return Status::Ok();
}

// The benchmark of the @triton.autotune kiln writes: each config is timed the way kiln's verification
// timed it (worker/kiln_worker/timing.py), so the autotuner picks per shape what kiln measured faster.
// Triton's default clears the L2 before every call; for a short kernel that is not how kiln (nor a model
// calling it back to back) runs it, and on an H200 the per-shape autotune of rms_rbe_matmul picked a
// config 4% slower than the original at a 9 us size (0.976x, so the 10x it found on the large sizes was
// rejected). Under ~50 us of GPU time a config is timed mostly warm, 10 calls back to back while fills of a
// 256 MB buffer keep the GPU busy as the host enqueues them (kiln's CUDA-graph replay times it warm, without
// the host); longer ones by Triton's default. It uses only what Triton's default uses (a 256 MB buffer's
// fills, the config's own kernels, CUDA events): a CUDA graph needs a stream of its own and a spin kernel is
// foreign work, both rejected in a candidate under policy strict (foreign_stream, foreign_kernel), so
// `kiln eval` would reject kiln's own output. Under the interpreter (no driver to time with: Triton's
// default raises there) every config times 0 and the autotuner keeps the first, kiln's winner.
namespace {

constexpr const char* kAutotuneBenchName = "_kiln_autotune_bench";

// The helper's definition at indentation `ind`, to be inserted where a decorator begins (after its
// indentation; the text ends with `ind` so the decorator keeps it); empty when the module defines it.
// A module-level helper `name` kiln writes (its lines, the first a `def`) at indentation `ind`, to be inserted
// where a decorator begins (after its indentation; the text ends with `ind` so the decorator keeps it); empty
// when the module defines it already.
template <size_t N>
std::string HelperText(std::string_view module, const char* name, const char* const (&lines)[N],
                       const std::string& ind) {
  if (module.find(std::string("def ") + name + "(") != std::string_view::npos) return "";
  std::string out;
  for (size_t i = 0; i < N; ++i) out += (i && *lines[i] ? ind : std::string()) + lines[i] + "\n";
  return out + "\n\n" + ind;
}

std::string AutotuneBenchText(std::string_view module, const std::string& ind) {
  static const char* const lines[] = {
      "def _kiln_autotune_bench(fn, quantiles):",
      "    # Written by kiln optimize: times each config as kiln verified it. A call under ~50 us of GPU time",
      "    # is timed mostly warm, 10 calls back to back while fills of a 256 MB buffer keep the GPU busy as the",
      "    # host enqueues them; a longer call by Triton's default benchmark (the same buffer cleared per call).",
      "    import os",
      "    import statistics",
      "    import torch",
      "    import triton",
      "    if os.environ.get(\"TRITON_INTERPRET\") == \"1\":  # no GPU to time on: the first config runs",
      "        return 0.0 if quantiles is None else [0.0] * len(quantiles)",
      "    default = triton.runtime.driver.active.get_benchmarker()",
      "    if not torch.cuda.is_available():",
      "        return default(fn, quantiles=quantiles)",
      "    busy = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device=\"cuda\")",
      "",
      "    def timed(calls):",
      "        for _ in range(12):",
      "            busy.zero_()",
      "        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)",
      "        start.record()",
      "        for _ in range(calls):",
      "            fn()",
      "        end.record()",
      "        return start, end",
      "",
      "    fn()",
      "    start, end = timed(1)",
      "    torch.cuda.synchronize()",
      "    if start.elapsed_time(end) >= 0.05:  # a long call: Triton's default, no warm samples first",
      "        del busy",
      "        return default(fn, quantiles=quantiles)",
      "    pairs = [timed(10) for _ in range(20)]",
      "    torch.cuda.synchronize()",
      "    del busy",
      "    ms = sorted(s.elapsed_time(e) / 10 for s, e in pairs)",
      "    if quantiles is None:",
      "        return statistics.median(ms)",
      "    return [ms[min(len(ms) - 1, int(q * len(ms)))] for q in quantiles]",
  };
  return HelperText(module, kAutotuneBenchName, lines, ind);
}

constexpr const char* kPinnedName = "_kiln_pinned";

// The pruning helper of an autotune with pinned shapes (InsertAutotune::pins), like AutotuneBenchText.
std::string PinnedText(std::string_view module, const std::string& ind) {
  static const char* const lines[] = {
      "def _kiln_pinned(keys, pins):",
      "    # Written by kiln optimize: each shape it measured runs the config that was faster there (True: the",
      "    # first config, kiln's; False: the others, the original's); any other shape is tuned by the autotuner.",
      "    def prune(configs, named_args, **kwargs):",
      "        args = dict(named_args, **kwargs)",
      "        first = pins.get(tuple(args.get(k) for k in keys))",
      "        if first is None:",
      "            return configs",
      "        return configs[:1] if first else configs[1:]",
      "",
      "    return prune",
  };
  return HelperText(module, kPinnedName, lines, ind);
}

// `prune_configs_by=...` for the pins: the key's names and {values: first?}.
std::string PinnedArg(const InsertAutotune& r) {
  std::string names;
  for (const auto& n : r.pin_names) names += (names.empty() ? "" : ", ") + std::string("\"") + n + "\"";
  names = "(" + names + (r.pin_names.size() == 1 ? ",)" : ")");
  std::string table = "{";
  for (size_t i = 0; i < r.pins.size(); ++i)
    table += (i ? ", " : "") + r.pins[i].first + ": " + (r.pins[i].second ? "True" : "False");
  table += "}";
  return fmt::format("prune_configs_by={{\"early_config_prune\": {}({}, {})}}", kPinnedName, names, table);
}

}  // namespace

Result<Plan> PlanInsertAutotune(const Ctx& c, const InsertAutotune& r) {
  const Kernel& k = c.kernel;
  if (r.configs.empty()) return Refuse("no configs");
  std::set<std::string> tuned;
  for (const auto& [n, _] : r.configs[0].params) tuned.insert(n);
  auto pow2 = PowerOfTwoConstexprs(c.tree, k);
  for (const auto& cfg : r.configs) {
    std::set<std::string> names;
    for (const auto& [n, v] : cfg.params) {
      names.insert(n);
      const Param* p = k.FindParam(n);
      if (!p || p->kind != ParamKind::kConstexpr)
        return Refuse("'" + n + "' is not a constexpr parameter of " + k.name);
      if (pow2.count(n) && !IsPowerOfTwo(v)) return Refuse(fmt::format("{} must be a power of two (got {})", n, v));
    }
    if (names != tuned) return Refuse("configs set different parameter names");
    if (!IsPowerOfTwo(cfg.num_warps) || cfg.num_stages < 1) return Refuse("bad num_warps/num_stages in a config");
  }
  // Block sizes the kernel assumes divide an extent: every config must keep that (as SetParams).
  std::set<std::string> pinned;  // for the grid (DropTunedAtLaunch)
  if (auto tun = ExtractTunables(c.tree, c.model, Target{k.name, c.launches}); tun.ok()) {
    for (const auto& cfg : r.configs)
      for (const auto& [n, v] : cfg.params)
        if (const Tunable* u = tun->Find(n); u && u->divides_max && (v > u->max_value || u->max_value % v != 0))
          return Refuse(fmt::format("{}={} is out of range ({})", n, v, u->bound));
    for (const auto& u : tun->items)
      if (!u.shares_owner.empty()) pinned.insert(u.name);
  }
  if (k.heuristics)
    for (const auto& h : k.heuristics->entries)
      if (tuned.count(h.name)) return Refuse(h.name + " is set by @triton.heuristics");
  if (k.autotune)
    for (const auto& n : k.autotune->tuned_names) {
      const Param* p = k.FindParam(n);
      if (!tuned.count(n) && p && !p->default_value.present())
        return Refuse("the new configs do not set " + n + ", which the existing configs set");
    }
  for (const auto& j : c.model.launches)
    if (j.kernel == k.name &&
        std::find(c.launches.begin(), c.launches.end(), &j - &c.model.launches[0]) == c.launches.end())
      return Refuse("kernel is launched at other sites that are not targets (line " +
                    std::to_string(j.span.begin.line) + ")");
  // Key.
  std::vector<std::string> key = r.key;
  const bool extend = r.keep_existing && k.autotune.has_value();
  if (extend && !k.autotune->configs_expr.present())
    return Refuse("existing @triton.autotune has no configs argument to extend");
  if (key.empty() && !extend) {
    // Scalars that bound the work: used in masks, loop bounds or comparisons.
    std::set<std::string> used;
    for (const auto& m : k.memops)
      if (m.mask.present())
        for (const auto& n : IdentifierNames(NodeAt(c.tree, m.mask.span))) used.insert(n);
    for (const auto& L : k.loops)
      for (const auto* e : {&L.start, &L.end, &L.step})
        if (e->present())
          for (const auto& n : IdentifierNames(NodeAt(c.tree, e->span))) used.insert(n);
    KernelDef(c.tree, k).field("body").Walk([&](const Node& n) {
      if (n.type() == "comparison_operator")
        for (const auto& x : IdentifierNames(n)) used.insert(x);
      return true;
    });
    for (const auto& p : k.params)
      if (p.kind == ParamKind::kScalar && used.count(p.name)) key.push_back(p.name);
  }
  for (const auto& n : key) {
    const Param* p = k.FindParam(n);
    if (!p) return Refuse("autotune key '" + n + "' is not a kernel parameter");
    if (tuned.count(n)) return Refuse("autotune key '" + n + "' is also tuned");
  }
  // Pointers the kernel both reads and writes (or updates atomically) must be restored between
  // benchmark runs, or autotuning would corrupt them.
  std::set<std::string> loaded, stored, restore;
  for (const auto& m : k.memops) {
    std::string base = m.base.empty() ? PointerBase(c.tree, k, m.pointer.span) : m.base;
    if (m.kind == analysis::MemOp::Kind::kStore && base.empty())
      return Refuse(
          fmt::format("the store at line {} has no single base pointer: cannot tell whether autotuning "
                      "must restore it",
                      m.span.begin.line));
    (m.kind == analysis::MemOp::Kind::kLoad ? loaded : stored).insert(base);
  }
  for (const auto& a : k.atomics) {
    std::string base = a.base.empty() ? PointerBase(c.tree, k, a.pointer.span) : a.base;
    if (base.empty()) return Refuse("an atomic's base pointer is unknown: autotuning would accumulate twice");
    restore.insert(base);
  }
  for (const auto& s : stored)
    if (!s.empty() && loaded.count(s)) restore.insert(s);
  std::string triton = TritonAlias(c.model);
  std::string configs = "[\n";
  std::string ind = IndentOf(c.text(), k.first_decorator_span.begin.byte);
  uint32_t decorators_at = k.first_decorator_span.begin.byte;  // where the topmost decorator's '@' is
  if (decorators_at > 0 && c.text()[decorators_at - 1] == '@') --decorators_at;
  for (const auto& cfg : r.configs) configs += ind + "        " + ConfigText(cfg, triton) + ",\n";
  configs += ind + "    ]";
  Plan plan;
  if (!r.pins.empty()) {
    if (r.pin_names.empty()) return Refuse("pinned shapes without the key's names");
    if (k.autotune && k.autotune->prune_configs_by.present())
      return Refuse(
          "the existing @triton.autotune prunes its configs itself (prune_configs_by): shapes cannot be "
          "pinned");
  }
  // Helpers kiln writes above the decorators (one insertion: the benchmark's, then the pruning's).
  const std::string pinned_helper = r.pins.empty() ? "" : PinnedText(c.text(), ind);
  if (extend) {
    const auto& at = *k.autotune;
    std::string added = "[";
    for (size_t i = 0; i < r.configs.size(); ++i) added += (i ? ", " : "") + ConfigText(r.configs[i], triton);
    added += "] + (" + std::string(c.text().substr(at.configs_expr.span.begin.byte, at.configs_expr.span.size())) + ")";
    KILN_RETURN_IF_ERROR(plan.edits.Replace(at.configs_expr.span, added));
    if (!restore.empty() && !at.restore_value.present() && !at.reset_to_zero.present())
      KILN_RETURN_IF_ERROR(
          AppendArg(plan.edits, c.text(), at.args_span, "restore_value=" + ListText({restore.begin(), restore.end()})));
    if (!r.pins.empty()) KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), at.args_span, PinnedArg(r)));
    if (!pinned_helper.empty()) KILN_RETURN_IF_ERROR(plan.edits.Insert(decorators_at, pinned_helper));
    plan.notes.push_back(fmt::format("added {} config(s) in front of the existing autotune configs", r.configs.size()));
  } else if (k.autotune) {
    const auto& at = *k.autotune;
    if (!at.configs_expr.present()) return Refuse("existing @triton.autotune has no configs argument to replace");
    // kiln's configs are picked the way kiln verified them, unless the module chose its own benchmark.
    std::string helpers = pinned_helper;
    if (r.kiln_bench &&
        c.text().substr(at.args_span.begin.byte, at.args_span.size()).find("do_bench") == std::string_view::npos) {
      KILN_RETURN_IF_ERROR(
          AppendArg(plan.edits, c.text(), at.args_span, std::string("do_bench=") + kAutotuneBenchName));
      helpers = AutotuneBenchText(c.text(), ind) + helpers;
    }
    if (!helpers.empty()) KILN_RETURN_IF_ERROR(plan.edits.Insert(decorators_at, helpers));
    KILN_RETURN_IF_ERROR(plan.edits.Replace(at.configs_expr.span, configs));
    if (at.key_expr.present())
      KILN_RETURN_IF_ERROR(plan.edits.Replace(at.key_expr.span, ListText(key)));
    else
      KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), at.args_span, "key=" + ListText(key)));
    if (!restore.empty() && !at.restore_value.present() && !at.reset_to_zero.present())
      KILN_RETURN_IF_ERROR(
          AppendArg(plan.edits, c.text(), at.args_span, "restore_value=" + ListText({restore.begin(), restore.end()})));
    if (!r.pins.empty()) KILN_RETURN_IF_ERROR(AppendArg(plan.edits, c.text(), at.args_span, PinnedArg(r)));
    plan.notes.push_back(fmt::format("replaced the autotune configs with {} configs", r.configs.size()));
  } else {
    std::string deco = "@" + triton + ".autotune(\n" + ind + "    configs=" + configs + ",\n" + ind +
                       "    key=" + ListText(key) + ",\n";
    if (!restore.empty()) deco += ind + "    restore_value=" + ListText({restore.begin(), restore.end()}) + ",\n";
    if (r.kiln_bench) deco += ind + "    do_bench=" + kAutotuneBenchName + ",\n";
    if (!r.pins.empty()) deco += ind + "    " + PinnedArg(r) + ",\n";
    deco += ind + ")\n" + ind;
    deco = pinned_helper + deco;
    if (r.kiln_bench) deco = AutotuneBenchText(c.text(), ind) + deco;
    KILN_RETURN_IF_ERROR(plan.edits.Insert(decorators_at, deco));
    plan.notes.push_back(
        fmt::format("inserted @triton.autotune with {} configs, key={}", r.configs.size(), ListText(key)));
  }
  if (!r.pins.empty()) {
    size_t first = 0;
    for (const auto& p : r.pins) first += p.second;
    plan.notes.push_back(fmt::format("{} measured shape(s) pinned: {} to the first config, {} to the others",
                                     r.pins.size(), first, r.pins.size() - first));
  }
  for (int li : c.launches) KILN_RETURN_IF_ERROR(DropTunedAtLaunch(c, c.model.launches[li], tuned, pinned, plan));
  return plan;
}

}  // namespace internal

// Check / Apply --------------------------------------------------------------------------------------

namespace {

Result<Plan> MakePlan(const pyast::Tree& tree, const analysis::ModuleModel& model, const Target& target,
                      const Request& r) {
  const Kernel* k = model.FindKernel(target.kernel);
  if (!k) return NotFound("no kernel named '" + target.kernel + "'");
  if (k->is_helper) return Refuse(k->name + " is a helper called by other kernels, not launched");
  std::vector<int> launches = TargetLaunches(model, target);
  if (launches.empty()) return Refuse(k->name + " is not launched in this module");
  for (int i : launches)
    if (i < 0 || i >= static_cast<int>(model.launches.size()) || model.launches[i].kernel != k->name)
      return InvalidArgument(fmt::format("launch {} is not a launch of '{}'", i, k->name));
  Ctx c{tree, model, *k, launches};
  auto plan = std::visit(Overloaded{
                             [&](const SetParams& x) { return PlanSetParams(c, x); },
                             [&](const InsertAutotune& x) { return PlanInsertAutotune(c, x); },
                             [&](const GroupMSwizzle& x) { return PlanGroupMSwizzle(c, x); },
                             [&](const EvictionHints& x) { return PlanEvictionHints(c, x); },
                             [&](const DotPrecision& x) { return PlanDotPrecision(c, x); },
                             [&](const PipelineLoop& x) { return PlanPipelineLoop(c, x); },
                             [&](const SplitK& x) { return PlanSplitK(c, x); },
                             [&](const PersistentGrid& x) { return PlanPersistentGrid(c, x); },
                             [&](const RowsPerProgram& x) { return PlanRowsPerProgram(c, x); },
                             [&](const RemoveMasks& x) { return PlanRemoveMasks(c, x); },
                             [&](const LiftLiterals& x) { return PlanLiftLiterals(c, x); },
                         },
                         r);
  if (!plan.ok()) return plan;
  // A launch whose callee is chosen at run time (`fx = a if c else b; fx[grid](...)`) is shared with
  // the other candidates: host edits (launch arguments, grid, variables) would reach them too, while
  // the kernel edits are made to the target only.
  for (int i : launches) {
    const Launch& l = model.launches[i];
    if (l.kernel_candidates.size() < 2) continue;
    for (const auto& e : plan->edits.edits()) {
      if (e.begin >= k->span.begin.byte && e.end <= k->span.end.byte) continue;
      if (std::any_of(plan->gated.begin(), plan->gated.end(),
                      [&](const Span& g) { return e.begin >= g.begin.byte && e.end <= g.end.byte; }))
        continue;
      std::string others;
      for (const auto& n : l.kernel_candidates)
        if (n != k->name) others += (others.empty() ? "" : ", ") + n;
      return Refuse(
          fmt::format("launch at line {} calls a kernel chosen at run time ({} or {}): the host edits "
                      "would apply to {} too",
                      l.span.begin.line, k->name, others, others));
    }
  }
  return plan;
}

Request DefaultRequest(RewriteKind k) {
  switch (k) {
    case RewriteKind::kSetParams: return SetParams{};
    case RewriteKind::kInsertAutotune: return InsertAutotune{};
    case RewriteKind::kGroupMSwizzle: return GroupMSwizzle{};
    case RewriteKind::kEvictionHints: return EvictionHints{};
    case RewriteKind::kDotPrecision: return DotPrecision{};
    case RewriteKind::kPipelineLoop: return PipelineLoop{};
    case RewriteKind::kSplitK: return SplitK{};
    case RewriteKind::kPersistentGrid: return PersistentGrid{};
    case RewriteKind::kRowsPerProgram: return RowsPerProgram{};
    case RewriteKind::kRemoveMasks: return RemoveMasks{};
    case RewriteKind::kLiftLiterals: return LiftLiterals{};
  }
  return SetParams{};
}

}  // namespace

Applicability Check(const pyast::Tree& tree, const analysis::ModuleModel& model, const Target& target,
                    const Request& r) {
  auto p = MakePlan(tree, model, target, r);
  if (!p.ok()) return {false, p.status().message()};
  std::string what;
  for (const auto& n : p->notes) what += (what.empty() ? "" : "; ") + n;
  return {true, what};
}

Applicability Check(const pyast::Tree& tree, const analysis::ModuleModel& model, const Target& target,
                    RewriteKind kind) {
  if (kind == RewriteKind::kSetParams) {
    auto t = ExtractTunables(tree, model, target);
    if (!t.ok()) return {false, t.status().message()};
    std::string names;
    for (const auto& u : t->items)
      if (u.editable) names += (names.empty() ? "" : ", ") + u.name;
    if (names.empty()) return {false, "no editable constexpr or launch option"};
    return {true, "editable: " + names};
  }
  if (kind == RewriteKind::kInsertAutotune) {
    auto t = ExtractTunables(tree, model, target);
    if (!t.ok()) return {false, t.status().message()};
    TuneConfig cfg;
    for (const auto& u : t->items) {
      if (u.launch_option) continue;
      if (u.site == TunableSite::kLaunchLiteral || u.site == TunableSite::kVariable ||
          u.site == TunableSite::kKernelDefault || u.site == TunableSite::kAutotune) {
        if (u.value)
          cfg.params[u.name] = *u.value;
        else if (!u.autotune_values.empty())
          cfg.params[u.name] = u.autotune_values[0];
      }
    }
    if (cfg.params.empty()) return {false, "no constexpr with a known value to tune"};
    InsertAutotune ins;
    ins.configs = {cfg};
    return Check(tree, model, target, Request{ins});
  }
  if (kind == RewriteKind::kRemoveMasks) {
    return {false, "needs a divisibility guarantee (RemoveMasks.guarantees)"};
  }
  return Check(tree, model, target, DefaultRequest(kind));
}

std::vector<std::pair<RewriteKind, Applicability>> CheckAll(const pyast::Tree& tree, const analysis::ModuleModel& model,
                                                            const Target& target) {
  std::vector<std::pair<RewriteKind, Applicability>> out;
  for (int i = 0; i <= static_cast<int>(RewriteKind::kLiftLiterals); ++i) {
    auto k = static_cast<RewriteKind>(i);
    out.push_back({k, Check(tree, model, target, k)});
  }
  return out;
}

Status CheckInvariants(const std::string& source, const analysis::ModuleModel& before, const Target& target) {
  KILN_ASSIGN_OR_RETURN(auto tree, pyast::Tree::Parse(source, before.path));
  if (tree->has_errors()) {
    auto e = tree->errors();
    return Internal("rewritten source does not parse: " +
                    (e.empty() ? std::string("?") : FormatDiagnostic(tree->MakeDiagnostic(e[0].span, e[0].message))));
  }
  auto m = analysis::AnalyzeModule(*tree);
  if (!m.ok()) return Internal("rewritten source does not analyse: " + m.status().message());
  const Kernel* k = m->FindKernel(target.kernel);
  if (!k) return Internal("kernel '" + target.kernel + "' is gone after the rewrite");
  auto count = [&](const analysis::ModuleModel& mm) {
    return std::count_if(mm.launches.begin(), mm.launches.end(),
                         [&](const Launch& l) { return l.kernel == target.kernel; });
  };
  if (count(*m) != count(before)) return Internal("the number of launches of '" + target.kernel + "' changed");
  for (const auto& l : m->launches) {
    if (l.kernel != target.kernel) continue;
    for (const auto& b : l.bindings) {
      if (!b.launch_option && b.origin.kind == OriginKind::kMissing && b.origin.note.empty())
        return Internal(fmt::format("launch at line {} does not bind constexpr {}", l.span.begin.line, b.name));
    }
    if (k->autotune) {
      for (const auto& a : l.args) {
        std::string n = a.param.empty() ? a.keyword : a.param;
        bool tuned = std::find(k->autotune->tuned_names.begin(), k->autotune->tuned_names.end(), n) !=
                     k->autotune->tuned_names.end();
        if (tuned || (a.position < 0 && analysis::IsLaunchOption(a.keyword)))
          return Internal(fmt::format("launch at line {} passes {} which autotune also sets", l.span.begin.line, n));
      }
    }
  }
  return Status::Ok();
}

Result<Rewritten> Apply(const pyast::Tree& tree, const analysis::ModuleModel& model, const Target& target,
                        const Request& r) {
  KILN_ASSIGN_OR_RETURN(Plan plan, MakePlan(tree, model, target, r));
  if (plan.edits.empty()) return Refuse("nothing to change");
  auto t = plan.edits.ApplyAndParse(tree);
  if (!t.ok()) return Internal(t.status().message());
  Rewritten out;
  out.source = (*t)->text();
  out.notes = std::move(plan.notes);
  KILN_RETURN_IF_ERROR(CheckInvariants(out.source, model, target));
  return out;
}

Result<Rewritten> ApplySequence(const std::string& source, const std::string& path, const Target& target,
                                const std::vector<Request>& requests) {
  KILN_ASSIGN_OR_RETURN(auto tree, pyast::Tree::Parse(source, path));
  KILN_ASSIGN_OR_RETURN(auto model, analysis::AnalyzeModule(*tree));
  // Launch indices -> positions among the kernel's launches.
  std::vector<int> all = TargetLaunches(model, Target{target.kernel, {}});
  std::vector<int> positions;
  for (int i : target.launches) {
    auto it = std::find(all.begin(), all.end(), i);
    if (it == all.end()) return InvalidArgument(fmt::format("launch {} is not a launch of '{}'", i, target.kernel));
    positions.push_back(static_cast<int>(it - all.begin()));
  }
  Rewritten acc;
  acc.source = source;
  for (const auto& r : requests) {
    Target t{target.kernel, {}};
    std::vector<int> now = TargetLaunches(model, Target{target.kernel, {}});
    for (int p : positions)
      if (p < static_cast<int>(now.size())) t.launches.push_back(now[p]);
    auto step = Apply(*tree, model, t, r);
    if (!step.ok()) return Status(step.status().code(), Describe(r) + ": " + step.status().message());
    for (auto& n : step->notes) acc.notes.push_back(n);
    acc.source = step->source;
    KILN_ASSIGN_OR_RETURN(tree, pyast::Tree::Parse(acc.source, path));
    KILN_ASSIGN_OR_RETURN(model, analysis::AnalyzeModule(*tree));
  }
  return acc;
}

}  // namespace kiln::rewrite

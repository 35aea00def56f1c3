// The readability pass over one Inductor kernel: helpers lowered to tl, inductor decorators and module
// lines dropped, names made readable.
#include "datagen/inductor_kernels.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "common/strings.h"
#include "pyast/pyast.h"
#include "pyast/syntax.h"

namespace kiln::datagen {

namespace {

// triton_helpers.<name>(...) -> replacement callee; the arguments stay as they are. A callee without "tl."
// is a helper function written into the candidate (HelperSource).
const std::map<std::string, std::string>& HelperCallees() {
  static const std::map<std::string, std::string> m = {
      {"maximum", "nan_maximum"},
      {"minimum", "nan_minimum"},
      {"max2", "tl.max"},
      {"min2", "tl.min"},
      {"promote_to_tensor", "as_tensor"},
      {"prod", "product"},
      {"any", "any_nonzero"},
      {"div_floor_integer", "floor_divide"},
      {"remainder_integer", "floor_remainder"},
      {"welford_reduce", "welford_update"},
      {"welford_combine", "welford_merge"},
      {"welford", "welford_rows"},
      {"online_softmax_combine", "softmax_merge_block"},
      {"online_softmax_reduce", "softmax_finish"},
      {"exp", "softmax_exp"},
      {"select_one", "pick_where"},
      {"maximum_with_index", "argmax_step"},
      {"minimum_with_index", "argmin_step"},
      {"max_with_index", "argmax_rows"},
      {"min_with_index", "argmin_rows"},
  };
  return m;
}

// Helpers a helper calls.
const std::map<std::string, std::vector<std::string>>& HelperDeps() {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"welford_rows", {"welford_merge"}},
      {"softmax_merge_block", {"nan_maximum", "softmax_exp"}},
      {"softmax_finish", {"softmax_exp"}},
      {"product", {"multiply"}},
      {"any_nonzero", {"either"}},
      {"argmax_rows", {"argmax_step"}},
      {"argmin_rows", {"argmin_step"}},
  };
  return m;
}

Result<std::unique_ptr<pyast::Tree>> ParseClean(std::string text, const std::string& what) {
  KILN_ASSIGN_OR_RETURN(auto tree, pyast::Tree::Parse(std::move(text), what));
  if (tree->has_errors()) {
    auto e = tree->errors().front();
    return ParseError(FormatDiagnostic(tree->MakeDiagnostic(e.span, e.message)));
  }
  return tree;
}

// The @triton.jit function definitions of the kernel's module (the kernel and any helper it defines).
std::vector<pyast::Node> JitFunctions(const pyast::Tree& tree) {
  std::vector<pyast::Node> out;
  for (const pyast::Node& s : tree.root().named_children()) {
    pyast::Node def = pyast::Definition(s);
    if (def.type() == "function_definition") out.push_back(s);
  }
  return out;
}

// Pass 1: lowers helpers and drops every decorator but @triton.jit.
Result<std::string> LowerHelpers(const pyast::Tree& tree, const pyast::Node& stmt, std::set<std::string>* helpers) {
  uint32_t base = stmt.span().begin.byte;
  std::string error;
  std::string src(stmt.text());
  std::vector<pyast::EditSet::Edit> local;
  auto replace = [&](const pyast::Node& n, std::string text) {
    local.push_back({n.span().begin.byte - base, n.span().end.byte - base, std::move(text)});
  };
  if (stmt.type() == "decorated_definition") {
    for (const pyast::Node& d : stmt.named_children()) {
      if (d.type() != "decorator") continue;
      std::string t = pyast::Trim(d.text());
      if (t != "@triton.jit") replace(d, "");
    }
  }
  stmt.Walk([&](const pyast::Node& n) {
    if (n.type() != "attribute") return true;
    std::string obj(n.field("object").text()), attr(n.field("attribute").text());
    if (obj == "tl_math") {
      replace(n, "tl." + attr);
      return false;
    }
    if (obj == "triton_helpers") {
      auto it = HelperCallees().find(attr);
      if (it == HelperCallees().end()) {
        if (error.empty()) error = attr;
      } else {
        replace(n, it->second);
        if (!StartsWith(it->second, "tl.")) helpers->insert(it->second);
      }
      return false;
    }
    return true;
  });
  (void)tree;
  if (!error.empty()) return InvalidArgument("helper_not_lowered: triton_helpers." + error);
  pyast::EditSet set;
  for (auto& e : local) KILN_RETURN_IF_ERROR(set.Replace(e.begin, e.end, std::move(e.replacement)));
  KILN_ASSIGN_OR_RETURN(std::string out, set.Apply(src));
  // a removed decorator leaves its line empty
  std::string cleaned;
  for (std::string_view line : SplitLines(out)) {
    if (IsBlankLine(line)) continue;
    cleaned += std::string(line) + "\n";
  }
  return cleaned;
}

// What a temporary holds, from the expression assigned to it (empty when not known).
std::string Meaning(const pyast::Node& value, const PointerNames& pointers) {
  pyast::Node v = pyast::Unparen(value);
  if (v.type() == "call") {
    std::string f = pyast::Dotted(v.field("function"));
    if (f == "tl.load") {
      pyast::Node args = v.field("arguments");
      if (args.named_child_count() > 0) {
        std::set<std::string> ids = pyast::IdentifierNames(args.named_child(0));
        for (const auto& [param, stem] : pointers) {
          if (ids.count(param)) return stem + "_val";
        }
      }
      return "load";
    }
    static const std::map<std::string, std::string> kCalls = {
        {"tl.full", "const"},    {"tl.sum", "sum"},          {"tl.max", "max"},        {"tl.min", "min"},
        {"tl.where", "select"},  {"tl.broadcast_to", "bcast"}, {"tl.maximum", "maximum"}, {"tl.minimum", "minimum"},
        {"tl.dot", "dot"},       {"tl.sigmoid", "sigmoid"},  {"tl.abs", "abs"},        {"tl.exp", "exp"},
        {"tl.log", "log"},       {"tl.sqrt", "sqrt"},        {"tl.cumsum", "cumsum"},  {"tl.sin", "sin"},
        {"tl.cos", "cos"}};
    if (auto it = kCalls.find(f); it != kCalls.end()) return it->second;
    if (StartsWith(f, "libdevice.")) return f.substr(10);
    if (v.field("function").type() == "attribute" && v.field("function").field("attribute").text() == "to")
      return "cast";
    return "";
  }
  if (v.type() == "binary_operator") {
    static const std::map<std::string, std::string> kOps = {{"+", "add"}, {"-", "sub"}, {"*", "mul"},
                                                            {"/", "div"}, {"//", "floordiv"}, {"%", "mod"}};
    std::string op(v.field("operator").text());
    if (auto it = kOps.find(op); it != kOps.end()) return it->second;
    return "";
  }
  if (v.type() == "comparison_operator") return "cmp";
  if (v.type() == "unary_operator" && Trim(v.child(0).text()) == "-") return "neg";
  if (v.type() == "subscript") {
    std::string inner = Meaning(v.field("value"), pointers);
    return inner;
  }
  return "";
}

// Pass 2: in_ptrN/out_ptrN by `pointers`, tmpN by what it computes, the kernel by its new name.
Result<std::string> RenameNames(const std::string& text, const std::string& old_name, const std::string& new_name,
                                const PointerNames& pointers) {
  KILN_ASSIGN_OR_RETURN(auto tree, ParseClean(text, old_name));
  std::set<std::string> taken;
  tree->root().Walk([&](const pyast::Node& n) {
    if (n.type() == "identifier") taken.insert(std::string(n.text()));
    return true;
  });
  std::map<std::string, std::string> rename;
  rename[old_name] = new_name;
  std::set<std::string> used = taken;
  for (const auto& [param, stem] : pointers) {
    std::string n = stem + "_ptr";
    for (int i = 1; used.count(n); ++i) n = fmt::format("{}{}_ptr", stem, i);
    used.insert(n);
    rename[param] = n;
  }
  static const std::regex kTmp("tmp([0-9]+)");
  std::vector<pyast::SimpleAssign> assigns;
  for (const pyast::Node& s : JitFunctions(*tree)) {
    auto in_def = pyast::AssignmentsIn(pyast::Definition(s).field("body"));
    assigns.insert(assigns.end(), in_def.begin(), in_def.end());
  }
  for (const auto& a : assigns) {
    std::smatch m;
    if (!std::regex_match(a.name, m, kTmp) || rename.count(a.name)) continue;
    std::string meaning = Meaning(a.value, pointers);
    if (meaning.empty()) continue;
    std::string n = fmt::format("{}_{}", meaning, m[1].str());
    if (used.count(n)) continue;
    used.insert(n);
    rename[a.name] = n;
  }
  return pyast::SubstituteIdentifiers(tree->root(), [&](std::string_view id) -> std::optional<std::string> {
    auto it = rename.find(std::string(id));
    if (it == rename.end()) return std::nullopt;
    return it->second;
  });
}

const std::map<std::string, std::string>& Helpers() {
  static const std::map<std::string, std::string> m = {
      {"nan_maximum",
       "@triton.jit\ndef nan_maximum(a, b):\n"
       "    \"\"\"Elementwise maximum that keeps NaN (as torch.maximum does).\"\"\"\n"
       "    return tl.where((a > b) | (a != a), a, b)\n"},
      {"nan_minimum",
       "@triton.jit\ndef nan_minimum(a, b):\n"
       "    \"\"\"Elementwise minimum that keeps NaN (as torch.minimum does).\"\"\"\n"
       "    return tl.where((a < b) | (a != a), a, b)\n"},
      {"as_tensor",
       "@triton.jit\ndef as_tensor(x):\n    \"\"\"A scalar as a one-element tensor (adding an empty-valued block).\"\"\"\n"
       "    return x + tl.zeros((1,), tl.int1)\n"},
      {"multiply", "@triton.jit\ndef multiply(a, b):\n    return a * b\n"},
      {"product",
       "@triton.jit\ndef product(x, axis):\n    \"\"\"Product along an axis.\"\"\"\n"
       "    return tl.reduce(x, axis, multiply)\n"},
      {"either", "@triton.jit\ndef either(a, b):\n    return a | b\n"},
      {"any_nonzero",
       "@triton.jit\ndef any_nonzero(x, axis):\n    \"\"\"True where any element along the axis is.\"\"\"\n"
       "    return tl.reduce(x, axis, either)\n"},
      {"floor_divide",
       "@triton.jit\ndef floor_divide(a, b):\n"
       "    \"\"\"Integer division rounding toward minus infinity (Python's //).\"\"\"\n"
       "    q = a // b\n"
       "    return tl.where(((a % b) != 0) & ((a < 0) != (b < 0)), q - 1, q)\n"},
      {"floor_remainder",
       "@triton.jit\ndef floor_remainder(a, b):\n"
       "    \"\"\"Integer remainder with the divisor's sign (Python's %).\"\"\"\n"
       "    r = a % b\n"
       "    return tl.where((r != 0) & ((a < 0) != (b < 0)), r + b, r)\n"},
      {"welford_update",
       "@triton.jit\ndef welford_update(x, mean, m2, count, first):\n"
       "    \"\"\"Welford's running mean and sum of squared deviations: folds x into (mean, m2, count);\n"
       "    `first` starts the state afresh.\"\"\"\n"
       "    count_next = tl.where(first, tl.full(count.shape, 1, count.dtype), count + 1)\n"
       "    delta = x - mean\n"
       "    mean_next = tl.where(first, x, mean + delta / count_next)\n"
       "    m2_next = tl.where(first, tl.zeros_like(m2), m2 + delta * (x - mean_next))\n"
       "    return mean_next, m2_next, count_next\n"},
      {"welford_merge",
       "@triton.jit\ndef welford_merge(mean_a, m2_a, n_a, mean_b, m2_b, n_b):\n"
       "    \"\"\"Merges two partial Welford states (mean, m2, count) into one.\"\"\"\n"
       "    n = n_a + n_b\n"
       "    share_b = tl.where(n == 0.0, 0.0, n_b / n)\n"
       "    delta = mean_b - mean_a\n"
       "    return mean_a + delta * share_b, m2_a + m2_b + delta * delta * n_a * share_b, n\n"},
      {"welford_rows",
       "@triton.jit\ndef welford_rows(mean, m2, count, axis):\n"
       "    \"\"\"Reduces per-lane Welford states along an axis.\"\"\"\n"
       "    return tl.reduce((mean, m2, count), axis, welford_merge)\n"},
      {"pick_where",
       "@triton.jit\ndef pick_where(x, mask, dim: tl.constexpr, keep_dims: tl.constexpr = False):\n"
       "    \"\"\"The one element along `dim` where `mask` holds (the others add zero).\"\"\"\n"
       "    return tl.sum(tl.where(mask, x, tl.zeros_like(x)), dim, keep_dims=keep_dims)\n"},
      {"argmax_step",
       "@triton.jit\ndef argmax_step(a_value, a_index, b_value, b_index):\n"
       "    \"\"\"One step of an argmax: the larger value and its index (NaN is largest, as in torch.argmax;\n"
       "    on a tie the lower index).\"\"\"\n"
       "    a_nan = a_value != a_value\n"
       "    b_nan = b_value != b_value\n"
       "    same = (a_value == b_value) | (a_nan & b_nan)\n"
       "    take_a = (a_value > b_value) | (a_nan & ~b_nan) | (same & (a_index < b_index))\n"
       "    return tl.where(take_a, a_value, b_value), tl.where(take_a, a_index, b_index)\n"},
      {"argmin_step",
       "@triton.jit\ndef argmin_step(a_value, a_index, b_value, b_index):\n"
       "    \"\"\"One step of an argmin: the smaller value and its index (NaN is smallest, as in torch.argmin;\n"
       "    on a tie the lower index).\"\"\"\n"
       "    a_nan = a_value != a_value\n"
       "    b_nan = b_value != b_value\n"
       "    same = (a_value == b_value) | (a_nan & b_nan)\n"
       "    take_a = (a_value < b_value) | (a_nan & ~b_nan) | (same & (a_index < b_index))\n"
       "    return tl.where(take_a, a_value, b_value), tl.where(take_a, a_index, b_index)\n"},
      {"argmax_rows",
       "@triton.jit\ndef argmax_rows(value, index, axis):\n"
       "    \"\"\"The largest value along an axis and its index (reduces per-lane argmax states).\"\"\"\n"
       "    return tl.reduce((value, index), axis, argmax_step)\n"},
      {"argmin_rows",
       "@triton.jit\ndef argmin_rows(value, index, axis):\n"
       "    \"\"\"The smallest value along an axis and its index (reduces per-lane argmin states).\"\"\"\n"
       "    return tl.reduce((value, index), axis, argmin_step)\n"},
      {"softmax_exp",
       "@triton.jit\ndef softmax_exp(x, fast: tl.constexpr):\n"
       "    \"\"\"exp, the fast approximation when asked for.\"\"\"\n"
       "    if fast:\n        return tl.exp(x)\n    else:\n        return libdevice.exp(x)\n"},
      {"softmax_merge_block",
       "@triton.jit\ndef softmax_merge_block(run_max, run_sum, block_max, fast: tl.constexpr):\n"
       "    \"\"\"Online softmax: folds new elements (each contributing exp(0) = 1 at its own max) into the\n"
       "    running max and the running sum of exp(x - max).\"\"\"\n"
       "    new_max = nan_maximum(run_max, block_max)\n"
       "    keep = tl.where(new_max == float(\"-inf\"), 1.0, softmax_exp(run_max - new_max, fast))\n"
       "    add = tl.where(new_max == float(\"-inf\"), 1.0, softmax_exp(block_max - new_max, fast))\n"
       "    return new_max, run_sum * keep + add\n"},
      {"softmax_finish",
       "@triton.jit\ndef softmax_finish(run_max, run_sum, axis: tl.constexpr, fast: tl.constexpr):\n"
       "    \"\"\"Online softmax: combines per-lane (max, sum of exp) along an axis.\"\"\"\n"
       "    row_max = tl.max(run_max, axis)\n"
       "    shift = tl.where(tl.expand_dims(row_max, axis) == float(\"-inf\"), 0,\n"
       "                     run_max - tl.expand_dims(row_max, axis))\n"
       "    return row_max, tl.sum(run_sum * softmax_exp(shift, fast), axis)\n"},
  };
  return m;
}

}  // namespace

std::string HelperSource(const std::string& name) {
  auto it = Helpers().find(name);
  return it == Helpers().end() ? "" : it->second;
}

std::string ReadableName(const std::string& inductor_name) {
  std::string n = StartsWith(inductor_name, "triton_") ? inductor_name.substr(7) : inductor_name;
  constexpr size_t kMax = 48;
  if (n.size() <= kMax) return n;
  size_t last = n.rfind('_');
  std::string index = last == std::string::npos ? "" : n.substr(last);  // "_0"
  std::string head = n.substr(0, last);
  std::string out;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t next = head.find('_', pos);
    std::string word = head.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    pos = next == std::string::npos ? head.size() : next + 1;
    if (word.empty()) continue;
    if (!out.empty() && out.size() + 1 + word.size() + index.size() > kMax) break;
    out += (out.empty() ? "" : "_") + word;
  }
  return out + index;
}

std::string KernelKind(const std::string& n) {
  if (StartsWith(n, "triton_poi_")) return "pointwise";
  if (StartsWith(n, "triton_per_")) return "persistent reduction";
  if (StartsWith(n, "triton_red_")) return "looped reduction";
  if (StartsWith(n, "triton_tem_")) return "template (GEMM)";
  if (StartsWith(n, "triton_for_")) return "foreach";
  if (StartsWith(n, "triton_spl_") || StartsWith(n, "triton_sca_")) return "scan";
  return "kernel";
}

Status KernelSignature(const RawKernel& k, std::vector<std::string>* params, std::vector<std::string>* constexprs) {
  KILN_ASSIGN_OR_RETURN(auto tree, ParseClean(k.source, k.name));
  for (const pyast::Node& s : JitFunctions(*tree)) {
    pyast::Node def = pyast::Definition(s);
    if (def.field("name").text() != k.name) continue;
    for (const pyast::Node& p : def.field("parameters").named_children()) {
      if (p.type() == "identifier") {
        params->push_back(std::string(p.text()));
      } else if (p.type() == "typed_parameter" || p.type() == "typed_default_parameter") {
        std::string name(p.named_child(0).text());
        params->push_back(name);
        if (Contains(p.field("type").text(), "constexpr")) constexprs->push_back(name);
      } else if (p.type() == "default_parameter") {
        params->push_back(std::string(p.field("name").text()));
      } else {
        return InvalidArgument("unsupported parameter " + std::string(p.text()));
      }
    }
    return Status::Ok();
  }
  return NotFound("no function " + k.name + " in its source");
}

Result<ReadableKernel> MakeReadable(const RawKernel& k, const PointerNames& pointers) {
  KILN_ASSIGN_OR_RETURN(auto tree, ParseClean(k.source, k.name));
  ReadableKernel out;
  out.kind = KernelKind(k.name);
  out.name = ReadableName(k.name);
  std::string lowered;
  bool found = false;
  std::set<std::string> helpers;
  for (const pyast::Node& s : JitFunctions(*tree)) {
    if (pyast::Definition(s).field("name").text() == k.name) found = true;
    KILN_ASSIGN_OR_RETURN(std::string one, LowerHelpers(*tree, s, &helpers));
    if (!Contains(one, "@triton.jit")) one = "@triton.jit\n" + one;
    lowered += (lowered.empty() ? "" : "\n\n") + one;
  }
  if (!found) return NotFound("no function " + k.name + " in its source");
  KILN_ASSIGN_OR_RETURN(out.text, RenameNames(lowered, k.name, out.name, pointers));
  // helpers and the helpers they call, callees first
  std::vector<std::string> order;
  std::function<void(const std::string&)> add = [&](const std::string& h) {
    if (std::find(order.begin(), order.end(), h) != order.end()) return;
    if (auto it = HelperDeps().find(h); it != HelperDeps().end())
      for (const auto& d : it->second) add(d);
    order.push_back(h);
  };
  for (const auto& h : helpers) add(h);
  out.helpers = order;
  out.uses_libdevice = Contains(out.text, "libdevice.");
  for (const auto& h : order) out.uses_libdevice |= Contains(HelperSource(h), "libdevice.");
  std::vector<std::string> params, constexprs;
  KILN_RETURN_IF_ERROR(KernelSignature(k, &params, &constexprs));
  out.params = params;
  out.constexpr_params = constexprs;
  return out;
}

}  // namespace kiln::datagen

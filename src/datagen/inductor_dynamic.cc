// The dynamic-shape part of the conversion (inductor_dynamic.h): size symbols, size arithmetic, grids.
#include "datagen/inductor_dynamic.h"

#include <regex>
#include <set>

#include <fmt/format.h>

#include "common/strings.h"
#include "pyast/syntax.h"

namespace kiln::datagen {

namespace {

Status Untranslated(const pyast::Node& n, const std::string& why) {
  return InvalidArgument(fmt::format("untranslated_size_expression: {} in `{}`", why, pyast::Prefix(n.text(), 120)));
}

// Appends the translation of n to *out.
Status TranslateInto(const pyast::Node& n, const NameLookup& lookup, std::string* out) {
  std::string_view t = n.type();
  if (t == "integer") {
    *out += n.text();
    return Status::Ok();
  }
  if (t == "identifier") {
    auto v = lookup(n.text());
    if (!v) return InvalidArgument(fmt::format("unbound_symbol: `{}` is no input's size", n.text()));
    *out += *v;
    return Status::Ok();
  }
  if (t == "parenthesized_expression" || t == "tuple") {
    *out += "(";
    size_t i = 0;
    for (const pyast::Node& c : n.named_children()) {
      if (c.type() == "comment") continue;
      if (i++) *out += ", ";
      KILN_RETURN_IF_ERROR(TranslateInto(c, lookup, out));
    }
    if (t == "tuple" && i == 1) *out += ",";
    *out += ")";
    return Status::Ok();
  }
  if (t == "binary_operator") {
    static const std::set<std::string> kOps = {"+", "-", "*", "//", "%", "**"};
    std::string op(n.field("operator").text());
    if (!kOps.count(op)) return Untranslated(n, "operator " + op);
    KILN_RETURN_IF_ERROR(TranslateInto(n.field("left"), lookup, out));
    *out += op == "**" || op == "*" ? op : " " + op + " ";
    return TranslateInto(n.field("right"), lookup, out);
  }
  if (t == "unary_operator") {
    std::string op(Trim(n.child(0).text()));
    if (op != "-" && op != "+") return Untranslated(n, "operator " + op);
    *out += op;
    return TranslateInto(n.named_child(0), lookup, out);
  }
  if (t == "call") {
    std::string f = pyast::Dotted(n.field("function"));
    if (f != "max" && f != "min") return Untranslated(n, "call of " + (f.empty() ? std::string("an expression") : f));
    *out += f + "(";
    size_t i = 0;
    for (const pyast::Node& a : n.field("arguments").named_children()) {
      if (a.type() == "keyword_argument" || a.type() == "list_splat") return Untranslated(n, "argument " + std::string(a.text()));
      if (i++) *out += ", ";
      KILN_RETURN_IF_ERROR(TranslateInto(a, lookup, out));
    }
    *out += ")";
    return Status::Ok();
  }
  if (t == "float") return Untranslated(n, "float literal");
  return Untranslated(n, "a " + std::string(t));
}

// The elements of a tuple (or a parenthesized single element).
std::vector<pyast::Node> Elements(const pyast::Node& n) {
  std::vector<pyast::Node> out;
  for (const pyast::Node& c : n.named_children()) {
    if (c.type() != "comment") out.push_back(c);
  }
  return out;
}

}  // namespace

Result<std::string> TranslateSizeExpression(const pyast::Node& expr, const NameLookup& lookup) {
  std::string out;
  KILN_RETURN_IF_ERROR(TranslateInto(expr, lookup, &out));
  return out;
}

Result<SymbolTable> BindSymbols(const pyast::Node& call_body, const std::map<std::string, std::string>& input_args) {
  SymbolTable t;
  std::vector<std::pair<std::string, std::string>> pending;  // (symbol, int argument), in order
  std::string error;
  call_body.Walk([&](const pyast::Node& n) {
    if (!error.empty()) return false;
    if (n.type() == "assignment" && n.field("left").type() == "identifier" &&
        n.field("right").type() == "identifier") {
      static const std::regex kSymbol("[su][0-9]+");
      std::string left(n.field("left").text()), right(n.field("right").text());
      if (std::regex_match(left, kSymbol)) pending.push_back({left, right});
      return false;
    }
    if (n.type() != "call" || pyast::Dotted(n.field("function")) != "assert_size_stride") return true;
    auto args = Elements(n.field("arguments"));
    if (args.size() < 2) return false;
    auto it = input_args.find(std::string(args[0].text()));
    if (it == input_args.end()) return false;  // a weight: its sizes are fixed
    InputDims in{it->second, {}};
    auto sizes = pyast::Unparen(args[1]);
    for (const pyast::Node& d : sizes.type() == "tuple" ? Elements(sizes) : std::vector<pyast::Node>{sizes}) {
      std::string text(d.text());
      if (d.type() == "identifier") {
        if (!t.symbols.count(text)) {
          t.symbols[text] = fmt::format("{}.size({})", in.param, in.dims.size());
          t.order.push_back(text);
        }
      } else if (d.type() != "integer") {
        error = fmt::format("untranslated_size_expression: {} dim {} is `{}` (neither a symbol nor an integer)",
                            in.param, in.dims.size(), text);
        return false;
      }
      in.dims.push_back(text);
    }
    t.inputs.push_back(std::move(in));
    return false;
  });
  if (!error.empty()) return InvalidArgument(error);
  for (const auto& [symbol, arg] : pending) {
    if (!t.symbols.count(symbol))
      return InvalidArgument(fmt::format("unbound_symbol: {} (= {}) sizes no dim of the forward's inputs", symbol, arg));
    t.int_args[arg] = symbol;
  }
  return t;
}

std::vector<std::string> DynamicPrologue(const SymbolTable& table) {
  std::vector<std::string> out;
  for (const auto& in : table.inputs) {
    std::string cond = fmt::format("{}.dim() != {}", in.param, in.dims.size());
    std::string shape;
    for (size_t i = 0; i < in.dims.size(); ++i) {
      shape += (i ? ", " : "") + in.dims[i];
      if (!table.symbols.count(in.dims[i])) cond += fmt::format(" or {}.size({}) != {}", in.param, i, in.dims[i]);
    }
    if (in.dims.size() == 1) shape += ",";
    out.push_back(fmt::format("if {}:", cond));
    out.push_back(fmt::format(
        "    raise ValueError(f\"the kernels take {0} of shape ({1}) (s...: any size), got {{tuple({0}.shape)}}\")",
        in.param, shape));
  }
  for (const auto& s : table.order) out.push_back(fmt::format("{} = {}", s, table.symbols.at(s)));
  for (const auto& in : table.inputs) {
    for (size_t i = 0; i < in.dims.size(); ++i) {
      auto it = table.symbols.find(in.dims[i]);
      std::string self = fmt::format("{}.size({})", in.param, i);
      if (it == table.symbols.end() || it->second == self) continue;
      out.push_back(fmt::format("if {} != {}:", self, in.dims[i]));
      out.push_back(fmt::format("    raise ValueError(f\"{} must equal {} ({{{}}}), got {{{}}}\")", self, it->second,
                                in.dims[i], self));
    }
  }
  return out;
}

std::string GridType(const std::string& kernel_source) {
  static const std::regex kGrid(R"(['"]grid_type['"]\s*:\s*['"](\w+)['"])");
  std::smatch m;
  return std::regex_search(kernel_source, m, kGrid) ? m[1].str() : "";
}

Result<std::string> LaunchGrid(const std::string& grid_type, const std::map<std::string, std::string>& numels,
                               const nlohmann::json& config) {
  int dims = grid_type == "Grid1D" ? 1 : grid_type == "Grid2D" ? 2 : grid_type == "Grid3D" ? 3 : 0;
  if (dims == 0)
    return InvalidArgument(fmt::format("grid_type_unsupported: grid type '{}' (Grid1D, Grid2D, Grid3D are translated)",
                                       grid_type.empty() ? "none" : grid_type));
  std::string grid[3] = {"1", "1", "1"};
  static const char* kAxes[3] = {"x", "y", "z"};
  for (int i = 0; i < dims; ++i) {
    std::string axis = kAxes[i];
    auto n = numels.find(axis + "numel");
    if (n == numels.end())
      return InvalidArgument(fmt::format("grid_type_unsupported: a {} kernel without {}numel", grid_type, axis));
    std::string block_key = fmt::format("{}BLOCK", static_cast<char>(std::toupper(axis[0])));
    const nlohmann::json* block = config.is_object() && config.contains(block_key) ? &config[block_key] : nullptr;
    if (block && !block->is_number_integer())
      return InvalidArgument(fmt::format("grid_type_unsupported: {} is {}", block_key, block->dump()));
    int64_t b = block ? block->get<int64_t>() : 1;
    const std::string& numel = n->second;
    if (b == 1) {
      grid[i] = numel;
    } else if (!numel.empty() && numel.size() < 18 && numel.find_first_not_of("0123456789") == std::string::npos) {
      int64_t v = std::stoll(numel);  // an integer: folded, as Inductor does
      grid[i] = std::to_string((v + b - 1) / b);
    } else {
      grid[i] = fmt::format("triton.cdiv({}, {})", numel, b);
    }
  }
  return fmt::format("({}, {}, {})", grid[0], grid[1], grid[2]);
}

}  // namespace kiln::datagen

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

namespace {

bool IsSymbolName(const std::string& s) {
  static const std::regex kSymbol("[su][0-9]+");
  return std::regex_match(s, kSymbol);
}

void BindSymbol(SymbolTable* t, const std::string& symbol, const std::string& expr) {
  if (t->symbols.count(symbol)) return;
  t->symbols[symbol] = expr;
  t->order.push_back(symbol);
  t->prologue_names.insert(symbol);
}

// assert_size_stride(argN, sizes, strides) of a forward input: its dims, and the symbols they bind.
Status AssertedSizes(const std::vector<pyast::Node>& args, const std::string& param, SymbolTable* t) {
  InputDims in{param, {}};
  auto sizes = pyast::Unparen(args[1]);
  for (const pyast::Node& d : sizes.type() == "tuple" ? Elements(sizes) : std::vector<pyast::Node>{sizes}) {
    std::string text(d.text());
    if (d.type() == "identifier") {
      BindSymbol(t, text, fmt::format("{}.size({})", param, in.dims.size()));
    } else if (d.type() != "integer") {
      return InvalidArgument(fmt::format(
          "untranslated_size_expression: {} dim {} is `{}` (neither a symbol nor an integer)", param, in.dims.size(), text));
    }
    in.dims.push_back(text);
  }
  t->inputs.push_back(std::move(in));
  return Status::Ok();
}

// The input and dim of `argN.size(i)` / `argN_size[i]` (argN_size = argN.size()); nullopt for other forms.
std::optional<std::string> SizeOf(const pyast::Node& v, const std::map<std::string, std::string>& input_args,
                                  const std::map<std::string, std::string>& size_tuples) {
  if (v.type() == "subscript" && v.field("subscript").type() == "integer") {
    auto it = size_tuples.find(std::string(v.field("value").text()));
    if (it != size_tuples.end()) return fmt::format("{}.size({})", it->second, v.field("subscript").text());
  }
  if (v.type() == "call" && v.field("function").type() == "attribute" &&
      v.field("function").field("attribute").text() == "size") {
    auto it = input_args.find(std::string(v.field("function").field("object").text()));
    auto args = Elements(v.field("arguments"));
    if (it != input_args.end() && args.size() == 1 && args[0].type() == "integer")
      return fmt::format("{}.size({})", it->second, args[0].text());
  }
  return std::nullopt;
}

}  // namespace

Result<SymbolTable> BindSymbols(const pyast::Node& call_body, const std::map<std::string, std::string>& input_args) {
  SymbolTable t;
  std::vector<std::pair<std::string, std::string>> pending;  // (symbol, int argument), in order
  std::map<std::string, std::string> size_tuples;            // argN_size -> the input's parameter
  std::map<std::string, int> uses;                           // identifier -> occurrences
  Status error = Status::Ok();
  call_body.Walk([&](const pyast::Node& n) {
    if (n.type() == "identifier") ++uses[std::string(n.text())];
    if (!error.ok()) return false;
    if (n.type() == "assignment" && n.field("left").type() == "identifier") {
      std::string left(n.field("left").text());
      pyast::Node right = n.field("right");
      if (right.type() == "identifier" && IsSymbolName(left)) {
        pending.push_back({left, std::string(right.text())});  // s77 = arg0_1
      } else if (right.type() == "call" && Trim(right.field("arguments").text()) == "()" &&
                 right.field("function").type() == "attribute" &&
                 right.field("function").field("attribute").text() == "size" &&
                 input_args.count(std::string(right.field("function").field("object").text()))) {
        size_tuples[left] = input_args.at(std::string(right.field("function").field("object").text()));
        t.prologue_names.insert(left);  // arg2_1_size = arg2_1.size()
      } else if (auto e = IsSymbolName(left) ? SizeOf(right, input_args, size_tuples) : std::nullopt) {
        BindSymbol(&t, left, *e);  // s4 = arg2_1_size[0]
      }
      return true;
    }
    if (n.type() != "call" || pyast::Dotted(n.field("function")) != "assert_size_stride") return true;
    auto args = Elements(n.field("arguments"));
    auto it = args.size() < 2 ? input_args.end() : input_args.find(std::string(args[0].text()));
    if (it != input_args.end()) error = AssertedSizes(args, it->second, &t);  // weights: fixed sizes, no guard
    return false;
  });
  KILN_RETURN_IF_ERROR(error);
  for (const auto& [symbol, arg] : pending) {
    if (!t.symbols.count(symbol)) {
      if (uses[symbol] > 1)
        return InvalidArgument(fmt::format("unbound_symbol: {} (= {}) sizes no dim of the forward's inputs", symbol, arg));
      t.prologue_names.insert(symbol);  // a symbol nothing uses (dynamo's, of a dim Inductor found equal to another)
      continue;
    }
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

namespace {

bool IsIntegerText(const std::string& s) {
  return !s.empty() && s.size() < 18 && s.find_first_not_of("0123456789") == std::string::npos;
}

// Inductor's ceildiv: the numel itself for a block of 1, folded for integers.
std::string CeilDiv(const std::string& numel, int64_t block) {
  if (block == 1) return numel;
  if (IsIntegerText(numel)) return std::to_string((std::stoll(numel) + block - 1) / block);
  return fmt::format("triton.cdiv({}, {})", numel, block);
}

}  // namespace

Result<LaunchGridText> LaunchGrid(const std::string& grid_type, const std::map<std::string, std::string>& numels,
                                  const nlohmann::json& config, const std::string& stem) {
  bool overflow = grid_type == "Grid2DWithYZOverflow";
  int dims = grid_type == "Grid1D" ? 1 : grid_type == "Grid2D" || overflow ? 2 : grid_type == "Grid3D" ? 3 : 0;
  if (dims == 0)
    return InvalidArgument(fmt::format(
        "grid_type_unsupported: grid type '{}' (Grid1D, Grid2D, Grid2DWithYZOverflow, Grid3D are translated)",
        grid_type.empty() ? "none" : grid_type));
  LaunchGridText out;
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
    grid[i] = CeilDiv(n->second, block ? block->get<int64_t>() : 1);
  }
  if (overflow) {  // y blocks past the hardware's 65535 spill into z; the kernel reads program_id(1) + (2) * num(1)
    constexpr int64_t kMaxYGrid = 65535;
    std::string blocks = grid[1];
    if (!IsIntegerText(blocks)) {
      out.prefix.push_back(fmt::format("y_blocks_{} = {}", stem, blocks));
      blocks = "y_blocks_" + stem;
    }
    std::string z = CeilDiv(blocks, kMaxYGrid);
    if (!IsIntegerText(z)) {
      out.prefix.push_back(fmt::format("z_blocks_{} = {}", stem, z));
      z = "z_blocks_" + stem;
    }
    grid[1] = IsIntegerText(blocks) && IsIntegerText(z) ? CeilDiv(blocks, std::stoll(z))
                                                        : fmt::format("triton.cdiv({}, {})", blocks, z);
    grid[2] = z;
  }
  out.grid = fmt::format("({}, {}, {})", grid[0], grid[1], grid[2]);
  return out;
}

}  // namespace kiln::datagen

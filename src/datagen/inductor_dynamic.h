// kiln/datagen (internal): what the conversion of a dynamic-shape capture (torch.compile(dynamic=True),
// `kiln datagen --dynamic-shapes`) needs beyond the static one (inductor.cc): the size symbols of `call`
// bound to the forward's inputs, Inductor's size arithmetic translated to Python over them, the shape guard
// of the dims Inductor specialised, and each launch's grid computed from the kernel's grid type.
//
// Errors are InvalidArgument("<reason>: <details>"); the reason is the sample's reject code
// (docs/datagen.md lists them): unbound_symbol, untranslated_size_expression, grid_type_unsupported.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "pyast/pyast.h"

namespace kiln::datagen {

// A name in an expression -> its text in the forward; nullopt: not bound (an error).
using NameLookup = std::function<std::optional<std::string>(std::string_view)>;

// Inductor's sympy-printed size arithmetic (PythonPrinter: `5*s77`, `((1 + s0) // 2)`, `s77**2`,
// `max(1, s0)`) -> the same in the forward's names. Accepted: integer literals, bound names, + - * // % **,
// unary -, parentheses, tuples (sizes, strides), the builtins max/min. Rejected (untranslated_size_expression):
// floats, `/`, comparisons, attribute or other calls (math.floor, ...); unbound_symbol: a name not bound.
Result<std::string> TranslateSizeExpression(const pyast::Node& expr, const NameLookup& lookup);

// One forward input's asserted sizes (assert_size_stride in call): each dim a symbol or an integer.
struct InputDims {
  std::string param;              // the forward's parameter (x)
  std::vector<std::string> dims;  // "s77", "64"
};

struct SymbolTable {
  std::map<std::string, std::string> symbols;  // s77 -> x.size(0) (the first input dim it sizes)
  std::vector<std::string> order;              // symbols in binding order
  std::map<std::string, std::string> int_args; // call's int arguments -> their symbol (arg0_1 -> s77)
  std::vector<InputDims> inputs;
  std::set<std::string> prologue_names;  // names whose assignment in call the prologue replaces (s77, arg2_1_size)
};

// From call's body: `s77 = arg0_1` (an int argument is a symbol), `assert_size_stride(arg2_1, (s77, 64), ...)`
// of the arguments that are forward inputs (input_args: call's name -> the forward's parameter), and
// `arg2_1_size = arg2_1.size(); s4 = arg2_1_size[0]` or `s4 = arg2_1.size(0)`. An int argument's symbol that
// nothing else in call names is dropped. Errors: unbound_symbol (a symbol used but no input dim),
// untranslated_size_expression (an input dim neither a symbol nor an integer).
Result<SymbolTable> BindSymbols(const pyast::Node& call_body, const std::map<std::string, std::string>& input_args);

// The forward's first lines for a dynamic candidate: a guard per input of its rank and the dims Inductor
// specialised (integers), the symbols bound from the inputs' sizes (`s77 = x.size(0)`), and a check that
// dims sharing a symbol agree. Each line without indentation.
std::vector<std::string> DynamicPrologue(const SymbolTable& table);

// The grid type in a kernel's source (`inductor_meta={'grid_type': 'Grid1D', ...}`); "" when absent.
std::string GridType(const std::string& kernel_source);

// The launch grid "(x, y, z)" for a kernel of grid type Grid1D/Grid2D/Grid3D: each of xnumel/ynumel/znumel
// (numels: the kernel's parameter -> the expression the launch passes) cdiv its block size from the
// recorded config (XBLOCK...; absent or 1: the numel itself), as Inductor's launcher computes it;
// Grid2DWithYZOverflow: the y blocks spread over y and z (at most 65535 in y), through prefix lines
// (y_blocks_<stem>, z_blocks_<stem>) when they are not constants. Error grid_type_unsupported for any other grid type (FixedGrid
// templates, split scans, cooperative reductions, ...).
struct LaunchGridText {
  std::vector<std::string> prefix;  // lines computing the grid's parts, before the launch
  std::string grid;
};
Result<LaunchGridText> LaunchGrid(const std::string& grid_type, const std::map<std::string, std::string>& numels,
                                  const nlohmann::json& config, const std::string& stem = "grid");

}  // namespace kiln::datagen

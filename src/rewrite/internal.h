// kiln/rewrite: helpers shared by the rewrite implementations (not part of the public API).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/dataflow.h"
#include "analysis/model.h"
#include "analysis/tunables.h"
#include "pyast/pyast.h"
#include "pyast/syntax.h"
#include "rewrite/rewrite.h"

namespace kiln::rewrite::internal {

using analysis::Kernel;
using analysis::Launch;
using analysis::ModuleModel;
using analysis::Param;
using pyast::EditSet;
using pyast::Node;
using pyast::Span;
using pyast::Tree;

// Syntax helpers (pyast/syntax.h) and kernel data flow (analysis/dataflow.h, analysis/tunables.h),
// under the names the rewrites use.
using analysis::BlockIndexConstexprs;
using analysis::DependsOn;
using analysis::DivisorConstexprs;
using analysis::DivisorUse;
using analysis::GridRelation;
using analysis::InlineVars;
using analysis::KernelDef;
using analysis::PidVars;
using analysis::PointerBase;
using analysis::PowerOfTwoConstexprs;
using analysis::TargetLaunches;
using analysis::TileConstexprs;
using analysis::TlAlias;
using analysis::TritonAlias;
using analysis::ValueConstexprs;
using pyast::AssignmentsIn;
using pyast::EnclosingFunction;
using pyast::EnclosingStatement;
using pyast::IdentifierNames;
using pyast::Identifiers;
using pyast::IndentOf;
using pyast::IsIdentifier;
using pyast::LastAssignBefore;
using pyast::LineEnd;
using pyast::LineStart;
using pyast::NodeAt;
using pyast::NodeAtBytes;
using pyast::ParseIntLiteral;
using pyast::SimpleAssign;
using pyast::SubstituteIdentifiers;
using pyast::SubstituteLeaves;
using pyast::Trim;
using pyast::Unparen;

// Text --------------------------------------------------------------------------------------------
bool IsPowerOfTwo(int64_t v);
// Indentation unit used by the block that starts at `byte` relative to its parent (default 4).
std::string ReindentBlock(std::string_view block, const std::string& extra);

// Edits --------------------------------------------------------------------------------------------
// Appends `kw` ("name=value") to the argument list `args_span` (which includes the parentheses).
Status AppendArg(EditSet& edits, std::string_view text, const Span& args_span, const std::string& kw);
// Removes the arguments at `remove` (indices into `spans`, the argument spans in order).
Status RemoveArgs(EditSet& edits, const std::vector<Span>& spans, const std::vector<bool>& remove);

// The text to replace to change launch `l`'s grid: the subscript's contents, including a trailing
// comma (`kernel[n,]` is the grid `(n,)`; replacing only `n` would nest a tuple in it).
Span GridEditSpan(std::string_view text, const Launch& l);
// Whether the grid is a tuple written without parentheses in the subscript (`k[a, b]`, `k[n,]`).
bool GridIsBareTuple(std::string_view text, const Launch& l);

// Formats an integer for a tunable (True/False for booleans).
std::string ValueText(int64_t v, bool boolean);

}  // namespace kiln::rewrite::internal

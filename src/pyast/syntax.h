// kiln/pyast: syntax helpers over the tree shared by analysis, rewrite, task and the static checks.
//
// Pure functions of the syntax tree and the source text (no Triton knowledge): locating nodes by span,
// identifiers of an expression, parentheses, dotted names, simple assignments of a scope. Everything
// that walks the tree recurses at most Tree::kMaxDepth deep.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pyast/pyast.h"

namespace kiln::pyast {

// Text ---------------------------------------------------------------------------------------------
uint32_t LineStart(std::string_view text, uint32_t byte);
uint32_t LineEnd(std::string_view text, uint32_t byte);      // offset of the '\n' (or text end)
std::string IndentOf(std::string_view text, uint32_t byte);  // leading whitespace of byte's line
bool IsIdentifier(std::string_view s);
// At most the first `max` bytes of `s`, cut at a UTF-8 character boundary (for clipped excerpts of
// source text that go into messages and JSON).
std::string_view Prefix(std::string_view s, size_t max);
// `s` without leading and trailing white space.
std::string Trim(std::string_view s);
// A Python integer literal (decimal or 0x, `_` separators, a leading '-', True/False as 1/0).
std::optional<int64_t> ParseIntLiteral(std::string_view s);
// `f` is `name` or ends in `.name` (a callee written with or without its module).
bool CalleeIs(std::string_view f, std::string_view name);

// Tree ---------------------------------------------------------------------------------------------
// The smallest named node that covers exactly `span` (or the smallest covering it).
Node NodeAt(const Tree& tree, const Span& span);
Node NodeAtBytes(const Tree& tree, uint32_t begin, uint32_t end);
// `n` without enclosing parentheses (comments inside them aside).
Node Unparen(Node n);
// The definition a statement holds (a decorated_definition unwrapped).
Node Definition(const Node& stmt);
// "a.b.c" for identifier/attribute chains, "" otherwise.
std::string Dotted(const Node& n);
// Identifier nodes of an expression (not attribute names after '.', not keyword names).
std::vector<Node> Identifiers(const Node& expr);
std::set<std::string> IdentifierNames(const Node& expr);
// Copy of the expression text with identifiers replaced where `fn` returns a value.
std::string SubstituteIdentifiers(const Node& expr,
                                  const std::function<std::optional<std::string>(std::string_view)>& fn);
// Copy of the expression text with the outermost nodes where `fn` returns a value replaced by it (the nodes
// inside a replaced one are not visited).
std::string SubstituteNodes(const Node& expr, const std::function<std::optional<std::string>(const Node&)>& fn);
// Like SubstituteIdentifiers over identifiers and integer literals.
std::string SubstituteLeaves(const Node& expr, const std::function<std::optional<std::string>(const Node&)>& fn);
// The statement (direct child of a block or module) containing `n`.
Node EnclosingStatement(const Node& n);
// The function_definition enclosing a byte offset (null at module level).
Node EnclosingFunction(const Tree& tree, uint32_t byte);

// A simple assignment `name = value` (or augmented `name op= value`).
struct SimpleAssign {
  std::string name;
  Node stmt;
  Node value;
  bool augmented = false;
};
// Simple assignments in `scope` (a function body or the module), nested blocks included, but not
// inside nested function/class definitions; in source order. `unpacked`: also one per target of a tuple
// assignment whose right side is a tuple of the same length (`i_v, i_k = tl.program_id(0),
// tl.program_id(1)` gives i_k = tl.program_id(1)); other unpackings (`a, b = f(x)`) give none.
std::vector<SimpleAssign> AssignmentsIn(const Node& scope, bool unpacked = false);
// The last assignment to `name` in `scope` before byte `before`; also counts all assignments.
const SimpleAssign* LastAssignBefore(const std::vector<SimpleAssign>& as, std::string_view name, uint32_t before,
                                     int* count = nullptr);

}  // namespace kiln::pyast

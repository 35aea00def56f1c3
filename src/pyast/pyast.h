// kiln/pyast: the only code that sees tree-sitter.
//
// Parses Python source into a syntax tree with byte, line and column spans, reports syntax errors
// with their location, and applies non-overlapping source edits (the basis of every rewrite).
//
// Roadmap: Tree owns the text and the TSTree; Node is a cheap value handle valid while its Tree
// lives. Lines and columns are 1-based (columns count bytes) everywhere outside this module.
//
// Input robustness: Parse decodes the text by kiln's one policy (common/source_text.h: PEP 263, BOM,
// UTF-8), refuses more than 200 brackets open at once before tree-sitter sees the text (CPython's own
// limit; tree-sitter 0.20.7's error recovery crashed on a fuzzed mutant with hundreds of thousands of
// unclosed ones), refuses a tree deeper than Tree::kMaxDepth ("expression nested too deeply": every walk
// over the tree may then recurse without exhausting the stack), and reports what Python's tokenizer
// rejects (TabError, IndentationError, unbalanced brackets) where Python does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/diag.h"
#include "common/status.h"

struct TSTree;

namespace kiln::pyast {

struct Pos {
  uint32_t byte = 0;
  uint32_t line = 1;    // 1-based
  uint32_t column = 1;  // 1-based, in bytes
};

struct Span {
  Pos begin;
  Pos end;  // exclusive
  uint32_t size() const { return end.byte - begin.byte; }
  // `inner` lies within this span (byte offsets; equal spans contain each other)
  bool Contains(const Span& inner) const { return inner.begin.byte >= begin.byte && inner.end.byte <= end.byte; }
  bool operator==(const Span& o) const { return begin.byte == o.begin.byte && end.byte == o.end.byte; }
};

class Tree;

// A node of the syntax tree. Null nodes (is_null()) are returned for missing children.
class Node {
 public:
  Node() = default;

  bool is_null() const;
  std::string_view type() const;  // grammar symbol, e.g. "call", "identifier"
  bool is_named() const;
  bool is_error() const;    // an ERROR node
  bool is_missing() const;  // a MISSING node inserted by error recovery
  bool has_error() const;   // this node or a descendant is an error
  Span span() const;
  std::string_view text() const;  // source bytes of the node

  uint32_t child_count() const;
  uint32_t named_child_count() const;
  Node child(uint32_t i) const;
  Node named_child(uint32_t i) const;
  Node field(std::string_view name) const;  // child by field name, e.g. "function", "arguments"
  std::vector<Node> children() const;
  std::vector<Node> named_children() const;
  Node parent() const;
  Node next_named_sibling() const;
  Node prev_named_sibling() const;
  // Field name of child i, or "" when it has none.
  std::string_view field_name_of_child(uint32_t i) const;

  // Pre-order walk over named descendants including this node; stops descending into a node when
  // `visit` returns false.
  // Recursion depth is bounded by the tree's depth (at most Tree::kMaxDepth).
  template <typename F>
  void Walk(F&& visit) const {
    if (is_null()) return;
    if (!visit(*this)) return;
    for (const Node& c : named_children()) c.Walk(visit);
  }

  bool operator==(const Node& o) const;
  const Tree* tree() const { return tree_; }

  // Storage for tree-sitter's TSNode (kept opaque so callers never include tree-sitter).
  struct Raw {
    uint32_t context[4];
    const void* id;
    const void* tree;
  };
  // A node of the same tree from raw storage (used by the implementation).
  Node WithRaw(Raw raw) const { return Node(raw, tree_); }

 private:
  friend class Tree;
  Node(Raw raw, const Tree* tree) : raw_(raw), tree_(tree) {}
  Raw raw_{};
  const Tree* tree_ = nullptr;
};

struct SyntaxError {
  Span span;
  std::string message;
};

class Tree {
 public:
  // Deepest syntax tree Parse accepts (levels, anonymous tokens included). Real kernels stay under
  // 30; CPython itself gives up at 200 nested parentheses.
  static constexpr int kMaxDepth = 1000;
  // Texts of this many bytes or more are parsed once in a child process first: tree-sitter 0.20.7
  // (Debian 12's) overflows 16-bit counters past 65535 tokens, comments or nodes in one place (70000
  // comment lines before the code; 65534 `*` and an `x`, 65535 bytes, is the smallest crash found) and
  // frees an invalid pointer or faults, which would kill kiln (and `kiln serve` with it). Each such unit
  // takes at least one byte; the margin below 65535 covers the zero-width nodes error recovery adds. A
  // text the child dies on is parsed again without its comments (valid Python crashes it only through
  // them); if that dies too it is refused with a diagnostic. Kernels are far smaller (TritonBench-G's
  // largest module is 18 KB), so they pay nothing.
  static constexpr size_t kForkParseBytes = 48 * 1024;
  // The longest a parse may take (tree-sitter stops itself; a child past it is killed). Normal texts parse
  // at tens of MB/s; tree-sitter's error recovery ran for minutes on a broken module behind 70000 comment
  // lines (a fuzzed mutant), which is then parsed without its comments, or refused ("gave up").
  static constexpr double kParseSeconds = 10;

  // Parses `text`; `path` is used in diagnostics only. Syntax errors are reported by errors() on a
  // tree that still parses as far as it can. Fails (InvalidArgument, "path:line:col: error: ...")
  // when the text cannot be decoded (DecodePythonSource) or nests deeper than kMaxDepth, and when
  // tree-sitter itself fails; `why`, when given, receives the located diagnostic of such a failure.
  // The tree holds the decoded text (UTF-8, no byte-order mark).
  // `parse_seconds`: the parse's time limit (kParseSeconds; tests lower it).
  static Result<std::unique_ptr<Tree>> Parse(std::string text, std::string path = "<input>", Diagnostic* why = nullptr,
                                             double parse_seconds = kParseSeconds);
  // ReadFile + Parse.
  static Result<std::unique_ptr<Tree>> ParseFile(const std::string& path, Diagnostic* why = nullptr);
  ~Tree();
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  Node root() const;
  const std::string& text() const { return text_; }
  const std::string& path() const { return path_; }
  bool has_errors() const;
  // Every ERROR and MISSING node, outermost first, in source order, each pointed where Python points
  // (as far as tree-sitter's recovery shows it); an unbalanced bracket in their place, and a TabError
  // or IndentationError first when it comes before them (pyast/lexical.h).
  std::vector<SyntaxError> errors() const;
  // A diagnostic at `span` with the source line and caret.
  Diagnostic MakeDiagnostic(const Span& span, std::string message, Severity severity = Severity::kError) const;
  // Span for a byte offset (line and column computed).
  Pos PosOf(uint32_t byte) const;

 private:
  Tree() = default;
  friend class Node;
  std::string text_;
  std::string path_;
  TSTree* tree_ = nullptr;
  std::vector<uint32_t> line_starts_;
  std::vector<SyntaxError> lexical_errors_;  // found by the tokenizer checks (pyast/lexical.h)
};

// A set of non-overlapping replacements against one source text.
class EditSet {
 public:
  struct Edit {
    uint32_t begin;  // byte offsets into the original text
    uint32_t end;
    std::string replacement;
  };
  // Replace bytes [begin, end). Fails if it overlaps an edit already added (touching is fine,
  // two insertions at the same offset keep their order).
  Status Replace(uint32_t begin, uint32_t end, std::string replacement);
  Status Replace(const Span& span, std::string replacement) {
    return Replace(span.begin.byte, span.end.byte, std::move(replacement));
  }
  Status Insert(uint32_t at, std::string text) { return Replace(at, at, std::move(text)); }
  bool empty() const { return edits_.empty(); }
  const std::vector<Edit>& edits() const { return edits_; }
  // Applies all edits to `original` (which must be the text the spans refer to).
  Result<std::string> Apply(std::string_view original) const;
  // Applies and re-parses; fails with the syntax error if the result does not parse cleanly.
  Result<std::unique_ptr<Tree>> ApplyAndParse(const Tree& tree) const;

 private:
  std::vector<Edit> edits_;  // kept sorted by begin
};

// Helpers for Python literals.
// The unquoted value of a simple string literal node ('x', "x"); empty optional-like "" when not one.
std::string StringLiteralValue(const Node& n);

}  // namespace kiln::pyast

#include "pyast/pyast.h"

#include <tree_sitter/api.h>

#include <algorithm>
#include <cstring>

#include "common/file.h"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace kiln::pyast {
namespace {

static_assert(sizeof(TSNode) == sizeof(uint32_t) * 4 + sizeof(void*) * 2, "TSNode layout");

}  // namespace

// ---- Node ------------------------------------------------------------------------------------

static Node::Raw ToRaw(TSNode n) {
  Node::Raw r;
  std::memcpy(&r, &n, sizeof(TSNode));
  return r;
}

static TSNode FromRaw(const Node::Raw& r) {
  TSNode n;
  std::memcpy(&n, &r, sizeof(TSNode));
  return n;
}

#define KILN_TS(n) FromRaw((n).raw_)

bool Node::is_null() const { return tree_ == nullptr || ts_node_is_null(KILN_TS(*this)); }
std::string_view Node::type() const { return is_null() ? "" : ts_node_type(KILN_TS(*this)); }
bool Node::is_named() const { return !is_null() && ts_node_is_named(KILN_TS(*this)); }
bool Node::is_error() const { return !is_null() && std::strcmp(ts_node_type(KILN_TS(*this)), "ERROR") == 0; }
bool Node::is_missing() const { return !is_null() && ts_node_is_missing(KILN_TS(*this)); }
bool Node::has_error() const { return !is_null() && ts_node_has_error(KILN_TS(*this)); }

Span Node::span() const {
  if (is_null()) return {};
  return {tree_->PosOf(ts_node_start_byte(KILN_TS(*this))), tree_->PosOf(ts_node_end_byte(KILN_TS(*this)))};
}

std::string_view Node::text() const {
  if (is_null()) return {};
  uint32_t b = ts_node_start_byte(KILN_TS(*this)), e = ts_node_end_byte(KILN_TS(*this));
  return std::string_view(tree_->text_).substr(b, e - b);
}

uint32_t Node::child_count() const { return is_null() ? 0 : ts_node_child_count(KILN_TS(*this)); }
uint32_t Node::named_child_count() const { return is_null() ? 0 : ts_node_named_child_count(KILN_TS(*this)); }
Node Node::child(uint32_t i) const {
  if (i >= child_count()) return {};
  return Node(ToRaw(ts_node_child(KILN_TS(*this), i)), tree_);
}
Node Node::named_child(uint32_t i) const {
  if (i >= named_child_count()) return {};
  return Node(ToRaw(ts_node_named_child(KILN_TS(*this), i)), tree_);
}
Node Node::field(std::string_view name) const {
  if (is_null()) return {};
  TSNode c = ts_node_child_by_field_name(KILN_TS(*this), name.data(), static_cast<uint32_t>(name.size()));
  if (ts_node_is_null(c)) return {};
  return Node(ToRaw(c), tree_);
}
// Children through a tree cursor: linear in the number of children (indexing a child by number
// costs time proportional to its index in this runtime).
static std::vector<Node> CollectChildren(const Node& self, TSNode n, const Tree* tree, bool named_only) {
  std::vector<Node> out;
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode ch = ts_tree_cursor_current_node(&c);
      if (!named_only || ts_node_is_named(ch)) out.push_back(self.WithRaw(ToRaw(ch)));
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
  (void)tree;
  return out;
}
std::vector<Node> Node::children() const {
  if (is_null()) return {};
  return CollectChildren(*this, KILN_TS(*this), tree_, false);
}
std::vector<Node> Node::named_children() const {
  if (is_null()) return {};
  return CollectChildren(*this, KILN_TS(*this), tree_, true);
}
Node Node::parent() const {
  if (is_null()) return {};
  TSNode p = ts_node_parent(KILN_TS(*this));
  if (ts_node_is_null(p)) return {};
  return Node(ToRaw(p), tree_);
}
Node Node::next_named_sibling() const {
  if (is_null()) return {};
  TSNode s = ts_node_next_named_sibling(KILN_TS(*this));
  if (ts_node_is_null(s)) return {};
  return Node(ToRaw(s), tree_);
}
Node Node::prev_named_sibling() const {
  if (is_null()) return {};
  TSNode s = ts_node_prev_named_sibling(KILN_TS(*this));
  if (ts_node_is_null(s)) return {};
  return Node(ToRaw(s), tree_);
}
std::string_view Node::field_name_of_child(uint32_t i) const {
  if (i >= child_count()) return {};
  const char* f = ts_node_field_name_for_child(KILN_TS(*this), i);
  return f ? std::string_view(f) : std::string_view();
}
bool Node::operator==(const Node& o) const {
  if (is_null() || o.is_null()) return is_null() == o.is_null();
  return ts_node_eq(KILN_TS(*this), KILN_TS(o));
}

// ---- Tree ------------------------------------------------------------------------------------

Result<std::unique_ptr<Tree>> Tree::Parse(std::string text, std::string path) {
  std::unique_ptr<Tree> t(new Tree());
  t->text_ = std::move(text);
  t->path_ = std::move(path);
  t->line_starts_.push_back(0);
  for (uint32_t i = 0; i < t->text_.size(); ++i) {
    if (t->text_[i] == '\n') t->line_starts_.push_back(i + 1);
  }
  TSParser* parser = ts_parser_new();
  if (!ts_parser_set_language(parser, tree_sitter_python())) {
    ts_parser_delete(parser);
    return Internal("tree-sitter rejected the Python grammar (language version mismatch)");
  }
  t->tree_ = ts_parser_parse_string(parser, nullptr, t->text_.data(), static_cast<uint32_t>(t->text_.size()));
  ts_parser_delete(parser);
  if (!t->tree_) return Internal(t->path_ + ": error: tree-sitter failed to parse");
  return t;
}

Result<std::unique_ptr<Tree>> Tree::ParseFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  if (text.find('\0') != std::string::npos) {
    return InvalidArgument(path + ": error: not a Python source file (contains NUL bytes)");
  }
  return Parse(std::move(text), path);
}

Tree::~Tree() {
  if (tree_) ts_tree_delete(tree_);
}

Node Tree::root() const { return Node(ToRaw(ts_tree_root_node(tree_)), this); }

bool Tree::has_errors() const { return ts_node_has_error(ts_tree_root_node(tree_)); }

Pos Tree::PosOf(uint32_t byte) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), byte);
  uint32_t line = static_cast<uint32_t>(it - line_starts_.begin());  // 1-based
  return {byte, line, byte - line_starts_[line - 1] + 1};
}

std::vector<SyntaxError> Tree::errors() const {
  std::vector<SyntaxError> out;
  // Walk all children (also anonymous ones: MISSING tokens are often anonymous).
  std::vector<TSNode> stack{ts_tree_root_node(tree_)};
  std::vector<TSNode> found;
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    if (!ts_node_has_error(n) && !ts_node_is_missing(n)) continue;
    if (std::strcmp(ts_node_type(n), "ERROR") == 0 || ts_node_is_missing(n)) {
      found.push_back(n);
      continue;  // outermost only
    }
    for (uint32_t i = ts_node_child_count(n); i > 0; --i) stack.push_back(ts_node_child(n, i - 1));
  }
  for (const TSNode& n : found) {
    Node node(ToRaw(n), this);
    SyntaxError e;
    e.span = node.span();
    if (ts_node_is_missing(n)) {
      e.message = std::string("syntax error: missing '") + ts_node_type(n) + "'";
    } else {
      std::string_view txt = node.text();
      size_t nl = txt.find('\n');
      std::string snippet(txt.substr(0, std::min<size_t>(nl == std::string_view::npos ? txt.size() : nl, 40)));
      e.message = snippet.empty() ? "syntax error" : "syntax error near '" + snippet + "'";
    }
    out.push_back(std::move(e));
  }
  return out;
}

Diagnostic Tree::MakeDiagnostic(const Span& span, std::string message, Severity severity) const {
  Diagnostic d;
  d.severity = severity;
  d.file = path_;
  d.line = static_cast<int>(span.begin.line);
  d.column = static_cast<int>(span.begin.column);
  d.message = std::move(message);
  d.source_line = std::string(LineOf(text_, d.line));
  return d;
}

// ---- EditSet ---------------------------------------------------------------------------------

Status EditSet::Replace(uint32_t begin, uint32_t end, std::string replacement) {
  if (end < begin) return InvalidArgument("edit with end before begin");
  auto it = std::upper_bound(edits_.begin(), edits_.end(), begin,
                             [](uint32_t b, const Edit& e) { return b < e.begin; });
  // Check neighbours for overlap; touching is allowed.
  if (it != edits_.end() && it->begin < end) return InvalidArgument("overlapping source edits");
  if (it != edits_.begin()) {
    const Edit& prev = *(it - 1);
    if (prev.end > begin) return InvalidArgument("overlapping source edits");
  }
  edits_.insert(it, Edit{begin, end, std::move(replacement)});
  return Status::Ok();
}

Result<std::string> EditSet::Apply(std::string_view original) const {
  std::string out;
  out.reserve(original.size());
  uint32_t at = 0;
  for (const Edit& e : edits_) {
    if (e.end > original.size()) return InvalidArgument("source edit beyond the end of the text");
    out.append(original.substr(at, e.begin - at));
    out.append(e.replacement);
    at = e.end;
  }
  out.append(original.substr(at));
  return out;
}

Result<std::unique_ptr<Tree>> EditSet::ApplyAndParse(const Tree& tree) const {
  KILN_ASSIGN_OR_RETURN(std::string text, Apply(tree.text()));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Tree> t, Tree::Parse(std::move(text), tree.path()));
  if (t->has_errors()) {
    auto errs = t->errors();
    std::string msg = "rewritten source does not parse";
    if (!errs.empty()) {
      msg += ": " + FormatDiagnostic(t->MakeDiagnostic(errs[0].span, errs[0].message));
    }
    return ParseError(msg);
  }
  return t;
}

std::string StringLiteralValue(const Node& n) {
  if (n.type() != "string") return "";
  std::string out;
  for (const Node& c : n.named_children()) {
    if (c.type() == "string_content") out += c.text();
    else if (c.type() == "interpolation") return "";
  }
  return out;
}

}  // namespace kiln::pyast

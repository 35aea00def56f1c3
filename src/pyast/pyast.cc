#include "pyast/pyast.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <tree_sitter/api.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "common/file.h"
#include "common/source_text.h"
#include "pyast/lexical.h"
#include "pyast/syntax.h"

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

namespace {

// The source line a diagnostic shows with its caret; none for a line too long to read (a generated
// expression of a megabyte would print a megabyte of source and of spaces before the caret).
std::string ShownLine(std::string_view text, int line) {
  std::string_view l = LineOf(text, line);
  return l.size() > 400 ? std::string() : std::string(l);
}

// A failure of Parse on its input: the located diagnostic in `why`, the one-line form as the status.
Status InputError(Diagnostic* why, const std::string& path, std::string_view text, int line, int column,
                  std::string message) {
  Diagnostic d;
  d.file = path;
  d.line = line;
  d.column = column;
  d.message = std::move(message);
  if (line > 0 && IsCleanUtf8(LineOf(text, line))) d.source_line = ShownLine(text, line);
  std::string where = line > 0 ? path + ":" + std::to_string(line) + ":" + std::to_string(column) : path;
  Status s = InvalidArgument(where + ": error: " + d.message);
  if (why) *why = std::move(d);
  return s;
}

// tree-sitter's parse, stopped after Tree::kParseSeconds (its error recovery can take minutes on some large
// broken texts: 70000 comment lines before a broken module ran for more than 4 minutes). Null on timeout or
// when the grammar is refused (`*timed_out` says which).
TSTree* ParseWithTreeSitter(const std::string& text, double seconds, bool* timed_out) {
  *timed_out = false;
  TSParser* parser = ts_parser_new();
  if (!ts_parser_set_language(parser, tree_sitter_python())) {
    ts_parser_delete(parser);
    return nullptr;
  }
  ts_parser_set_timeout_micros(parser, std::max<uint64_t>(1, static_cast<uint64_t>(seconds * 1e6)));
  TSTree* tree = ts_parser_parse_string(parser, nullptr, text.data(), static_cast<uint32_t>(text.size()));
  *timed_out = tree == nullptr;
  ts_parser_delete(parser);
  return tree;
}

enum class ChildParse { kOk, kDied, kTimedOut };

// How tree-sitter fares on `text` in a child process (see kForkParseBytes): kOk also when the child could not
// be started (the parse then runs in process as before). A child still running past the parse's own limit
// (plus a margin) is killed and counts as timed out.
ChildParse ParseInChild(const std::string& text, double seconds) {
  pid_t pid = fork();
  if (pid < 0) return ChildParse::kOk;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // kiln's crash handler (tools/kiln) would report the child's death as kiln's and exit 1
    for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, SIG_DFL);
    // glibc's "munmap_chunk(): invalid pointer" goes to the controlling terminal, else to stderr: neither
    setsid();
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    bool timed_out = false;
    TSTree* tree = ParseWithTreeSitter(text, seconds, &timed_out);
    if (tree) ts_tree_delete(tree);
    _exit(timed_out ? 3 : 0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds + 5);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return ChildParse::kOk;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return ChildParse::kTimedOut;
    }
    usleep(2000);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return ChildParse::kTimedOut;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ChildParse::kOk : ChildParse::kDied;
}

// The first node deeper than `limit` levels below the root (iteratively, with a cursor); null if none.
bool TooDeep(TSNode root, int limit, uint32_t* at) {
  TSTreeCursor c = ts_tree_cursor_new(root);
  int depth = 0;
  bool found = false;
  for (;;) {
    if (ts_tree_cursor_goto_first_child(&c)) {
      if (++depth > limit) {
        *at = ts_node_start_byte(ts_tree_cursor_current_node(&c));
        found = true;
        break;
      }
      continue;
    }
    bool next = false;
    while (!(next = ts_tree_cursor_goto_next_sibling(&c))) {
      if (!ts_tree_cursor_goto_parent(&c)) break;
      --depth;
    }
    if (!next) break;
  }
  ts_tree_cursor_delete(&c);
  return found;
}

}  // namespace

Result<std::unique_ptr<Tree>> Tree::Parse(std::string text, std::string path, Diagnostic* why, double parse_seconds) {
  DecodedSource decoded = DecodePythonSourceDetailed(text);
  if (!decoded.ok) return InputError(why, path, text, decoded.line, decoded.column, decoded.error);
  std::unique_ptr<Tree> t(new Tree());
  t->text_ = std::move(decoded.text);
  t->path_ = std::move(path);
  t->line_starts_.push_back(0);
  for (uint32_t i = 0; i < t->text_.size(); ++i) {
    if (t->text_[i] == '\n') t->line_starts_.push_back(i + 1);
  }
  if (auto nested = FindTooManyNestedBrackets(t->text_)) {  // before tree-sitter: see lexical.h
    Pos p = t->PosOf(nested->byte);
    return InputError(why, t->path_, t->text_, static_cast<int>(p.line), static_cast<int>(p.column),
                      "too many nested parentheses (Python allows " + std::to_string(kMaxBracketDepth) +
                          " levels of brackets)");
  }
  // See kForkParseBytes. Comments are the one way valid Python overflows it (70000 comment lines): parsed
  // without them (blanked, same spans) the tree lacks only its comment nodes, which nothing requires.
  // A text that makes the parser give up (kParseSeconds) gets the same second try.
  const std::string* parsed = &t->text_;
  std::string blanked;
  auto gave_up = [&] {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", parse_seconds);
    return InputError(why, t->path_, t->text_, 0, 0,
                      std::string("the Python parser (tree-sitter) gave up on this text after ") + secs +
                          " s; split the file");
  };
  if (t->text_.size() >= kForkParseBytes) {
    ChildParse first = ParseInChild(t->text_, parse_seconds);
    if (first != ChildParse::kOk) {
      blanked = BlankComments(t->text_);
      ChildParse second = blanked == t->text_ ? first : ParseInChild(blanked, parse_seconds);
      if (second == ChildParse::kTimedOut) return gave_up();
      if (second == ChildParse::kDied)
        return InputError(why, t->path_, t->text_, 0, 0,
                          "the Python parser (tree-sitter 0.20.7) crashes on this text: it overflows on more than "
                          "65535 tokens or nodes in one place; split the file or the construct");
      parsed = &blanked;
    }
  }
  bool timed_out = false;
  t->tree_ = ParseWithTreeSitter(*parsed, parse_seconds, &timed_out);
  if (!t->tree_ && timed_out) return gave_up();
  if (!t->tree_) return Internal(t->path_ + ": error: tree-sitter rejected the Python grammar (version mismatch)");
  uint32_t deep = 0;
  if (TooDeep(ts_tree_root_node(t->tree_), kMaxDepth, &deep)) {
    Pos p = t->PosOf(deep);
    return InputError(why, t->path_, t->text_, static_cast<int>(p.line), static_cast<int>(p.column),
                      "expression nested too deeply (more than " + std::to_string(kMaxDepth) +
                          " levels of syntax; split it into named intermediate values)");
  }
  if (auto indent = FindIndentError(t->text_)) {
    Pos p = t->PosOf(indent->byte);
    t->lexical_errors_.push_back({{p, p}, indent->message});
  }
  return t;
}

Result<std::unique_ptr<Tree>> Tree::ParseFile(const std::string& path, Diagnostic* why) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return Parse(std::move(text), path, why);
}

Tree::~Tree() {
  if (tree_) ts_tree_delete(tree_);
}

Node Tree::root() const { return Node(ToRaw(ts_tree_root_node(tree_)), this); }

bool Tree::has_errors() const { return !lexical_errors_.empty() || ts_node_has_error(ts_tree_root_node(tree_)); }

Pos Tree::PosOf(uint32_t byte) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), byte);
  uint32_t line = static_cast<uint32_t>(it - line_starts_.begin());  // 1-based
  return {byte, line, byte - line_starts_[line - 1] + 1};
}

namespace {

// Where Python reports the error an ERROR node stands for, as far as tree-sitter's recovery shows it.
// A nested ERROR (inside an expression or an argument list) starts at the first token that did not fit.
// An ERROR covering a whole statement starts at the statement; Python points further on: at the end of
// a line after which the statement cannot go on (`if x` then a new line), else at the token after the
// ERROR on its line (`a b`), else at its last token if that is a word (`for i in r pass`), or just
// after it if it is an operator that needs more (`x = 1 +`).
uint32_t ErrorPoint(TSNode err, std::string_view text) {
  uint32_t begin = ts_node_start_byte(err), end = ts_node_end_byte(err);
  uint32_t line_start = begin;
  while (line_start > 0 && text[line_start - 1] != '\n') --line_start;
  for (uint32_t i = line_start; i < begin; ++i)
    if (text[i] != ' ' && text[i] != '\t') return begin;  // nested in the statement
  std::vector<TSNode> leaves;
  TSTreeCursor c = ts_tree_cursor_new(err);
  for (bool more = true; more;) {
    if (ts_tree_cursor_goto_first_child(&c)) continue;
    TSNode n = ts_tree_cursor_current_node(&c);
    if (ts_node_end_byte(n) > ts_node_start_byte(n)) leaves.push_back(n);
    while (!(more = ts_tree_cursor_goto_next_sibling(&c)))
      if (!ts_tree_cursor_goto_parent(&c) || ts_node_eq(ts_tree_cursor_current_node(&c), err)) break;
  }
  ts_tree_cursor_delete(&c);
  if (leaves.empty()) return begin;
  for (size_t i = 0; i + 1 < leaves.size(); ++i)
    if (ts_node_end_point(leaves[i]).row < ts_node_start_point(leaves[i + 1]).row) return ts_node_end_byte(leaves[i]);
  uint32_t next = end;
  while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) ++next;
  if (next < text.size() && text[next] != '\n' && text[next] != '\r' && text[next] != '#') return next;
  TSNode last = leaves.back();
  unsigned char first = static_cast<unsigned char>(text[ts_node_start_byte(last)]);
  bool word = std::isalnum(first) || first == '_' || first == '"' || first == '\'' || first >= 0x80;
  return word ? ts_node_start_byte(last) : ts_node_end_byte(last);
}

}  // namespace

std::vector<SyntaxError> Tree::errors() const {
  // The parser's errors (tree-sitter's ERROR and MISSING nodes, or a bracket problem in their place).
  auto parser_errors = [this]() {
    std::vector<SyntaxError> out;
    if (!ts_node_has_error(ts_tree_root_node(tree_))) return out;
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
      // children through a cursor (ts_node_child(n, i) walks i siblings: quadratic on a node with 66000
      // children, 20 s for a fuzzed module of comment lines with one broken line among them)
      const size_t first = stack.size();
      TSTreeCursor c = ts_tree_cursor_new(n);
      if (ts_tree_cursor_goto_first_child(&c)) {
        do stack.push_back(ts_tree_cursor_current_node(&c));
        while (ts_tree_cursor_goto_next_sibling(&c));
      }
      ts_tree_cursor_delete(&c);
      std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());  // the first child on top
    }
    std::vector<SyntaxError> parsed;
    for (const TSNode& n : found) {
      Node node(ToRaw(n), this);
      SyntaxError e;
      e.span = node.span();
      if (ts_node_is_missing(n)) {
        e.message = std::string("syntax error: missing '") + ts_node_type(n) + "'";
      } else {
        uint32_t at = ErrorPoint(n, text_);
        e.span.begin = PosOf(at);
        if (e.span.end.byte < at) e.span.end = e.span.begin;
        std::string_view rest = std::string_view(text_).substr(at);
        std::string snippet(Prefix(rest.substr(0, rest.find_first_of("\r\n")), 40));
        e.message = snippet.empty() ? "syntax error at the end of the line" : "syntax error near '" + snippet + "'";
      }
      parsed.push_back(std::move(e));
    }
    // Python's tokenizer reports a closing bracket that matches nothing in place of the parser's error,
    // and a bracket never closed when the parser fails on a later line than the bracket's (the first
    // error reaches past that line, or nothing but blanks follow it: the parser met the end of the file).
    if (auto b = FindBracketError(text_)) {
      Pos at = PosOf(b->byte);
      bool past = parsed.empty() || at.line < parsed.front().span.end.line ||
                  text_.find_first_not_of(" \t\r\n\f", parsed.front().span.end.byte) == std::string::npos;
      if (!b->unclosed || past) {
        out.push_back({{at, PosOf(b->byte + 1)}, "syntax error: " + b->message});
        return out;
      }
    }
    out.insert(out.end(), parsed.begin(), parsed.end());
    return out;
  };
  std::vector<SyntaxError> out = parser_errors();
  // Python's tokenizer raises an indentation error when the parser reaches its line: first only when
  // it comes before the parser's first error.
  if (!lexical_errors_.empty()) {
    auto at = out.empty() || lexical_errors_[0].span.begin.byte <= out[0].span.begin.byte ? out.begin() : out.end();
    out.insert(at, lexical_errors_.begin(), lexical_errors_.end());
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
  d.source_line = ShownLine(text_, d.line);
  return d;
}

// ---- EditSet ---------------------------------------------------------------------------------

Status EditSet::Replace(uint32_t begin, uint32_t end, std::string replacement) {
  if (end < begin) return InvalidArgument("edit with end before begin");
  auto it =
      std::upper_bound(edits_.begin(), edits_.end(), begin, [](uint32_t b, const Edit& e) { return b < e.begin; });
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
    if (c.type() == "string_content")
      out += c.text();
    else if (c.type() == "interpolation")
      return "";
  }
  return out;
}

}  // namespace kiln::pyast

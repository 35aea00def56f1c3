// kiln/analysis: syntax readers shared by the Analyzer (see analyzer.h).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/analyzer.h"

namespace kiln::analysis::internal {

Expr MakeExpr(const Node& n) {
  if (n.is_null()) return {};
  return {std::string(n.text()), n.span()};
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::vector<std::string> SplitDots(std::string_view s) {
  std::vector<std::string> out;
  size_t b = 0;
  while (true) {
    size_t e = s.find('.', b);
    out.emplace_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) break;
    b = e + 1;
  }
  return out;
}

bool IsLiteralNode(const Node& raw, std::string_view canon_attr) {
  Node n = Unparen(raw);
  if (n.is_null()) return false;
  auto t = n.type();
  if (t == "integer" || t == "float" || t == "true" || t == "false" || t == "none") return true;
  if (t == "string") {
    for (const Node& c : n.named_children()) {
      if (c.type() == "interpolation") return false;
    }
    return true;
  }
  if (t == "concatenated_string") return true;
  if (t == "unary_operator") return IsLiteralNode(n.field("argument"));
  if (t == "binary_operator") {
    return IsLiteralNode(n.field("left")) && IsLiteralNode(n.field("right"));
  }
  return false;
}

CallArgs ReadArgs(const Node& arglist) {
  CallArgs a;
  if (arglist.is_null()) return a;
  for (const Node& c : arglist.named_children()) {
    auto t = c.type();
    if (t == "keyword_argument") {
      a.keywords.emplace_back(std::string(c.field("name").text()), c);
    } else if (t == "list_splat" || t == "dictionary_splat") {
      a.splats.push_back(c);
    } else if (t == "comment") {
      continue;
    } else {
      a.positional.push_back(c);
    }
  }
  return a;
}

std::vector<KwArg> KwArgs(const CallArgs& a) {
  std::vector<KwArg> out;
  for (const auto& [k, n] : a.keywords) out.push_back({k, MakeExpr(n.field("value")), n.span()});
  return out;
}

std::vector<std::string> StringList(const Node& raw) {
  std::vector<std::string> out;
  Node n = Unparen(raw);
  if (n.is_null()) return out;
  if (n.type() == "string") {
    out.push_back(pyast::StringLiteralValue(n));
    return out;
  }
  if (n.type() != "list" && n.type() != "tuple") return out;
  for (const Node& c : n.named_children()) {
    if (c.type() == "string")
      out.push_back(pyast::StringLiteralValue(c));
    else if (c.type() == "integer")
      out.push_back(std::string(c.text()));
  }
  return out;
}

void CollectTargets(const Node& left, const Node& right, const Node& stmt, Assign::Kind kind,
                    std::vector<Assign>& out) {
  if (left.is_null()) return;
  auto t = left.type();
  if (t == "identifier") {
    out.push_back({std::string(left.text()), stmt, right, kind, stmt.span().begin.byte});
    return;
  }
  if (t == "pattern_list" || t == "tuple_pattern" || t == "list_pattern") {
    auto lhs = left.named_children();
    Node r = Unparen(right);
    std::vector<Node> rhs;
    if (!r.is_null() && (r.type() == "expression_list" || r.type() == "tuple")) rhs = r.named_children();
    for (size_t i = 0; i < lhs.size(); ++i) {
      // Pairwise when the right side is a tuple of the same length; otherwise every target gets
      // the whole right side, marked kOther (unpacked from a run-time value).
      bool pair = rhs.size() == lhs.size();
      Node v = pair ? rhs[i] : right;
      CollectTargets(lhs[i], v, stmt, !pair && kind == Assign::Kind::kPlain ? Assign::Kind::kOther : kind, out);
    }
    return;
  }
  if (t == "attribute") {
    // self.X = ... is recorded under its dotted text.
    out.push_back({std::string(left.text()), stmt, right, kind, stmt.span().begin.byte});
  }
}

void CollectAssigns(const Node& root, std::vector<Assign>& out) {
  root.Walk([&](const Node& n) {
    auto t = n.type();
    if (n != root && (t == "function_definition" || t == "class_definition" || t == "lambda")) return false;
    if (t == "assignment") {
      Node right = n.field("right");
      if (!right.is_null() && right.type() == "assignment") {
        // a = b = value: every target gets the final value.
        Node v = right;
        while (!v.is_null() && v.type() == "assignment") v = v.field("right");
        CollectTargets(n.field("left"), v, n, Assign::Kind::kPlain, out);
        return true;
      }
      CollectTargets(n.field("left"), right, n, Assign::Kind::kPlain, out);
      return true;
    }
    if (t == "augmented_assignment") {
      CollectTargets(n.field("left"), n.field("right"), n, Assign::Kind::kAugmented, out);
      return true;
    }
    if (t == "for_statement" || t == "for_in_clause") {
      CollectTargets(n.field("left"), Node(), n, Assign::Kind::kLoopTarget, out);
      return true;
    }
    if (t == "named_expression") {
      out.push_back(
          {std::string(n.field("name").text()), n, n.field("value"), Assign::Kind::kPlain, n.span().begin.byte});
      return true;
    }
    return true;
  });
}

std::vector<FuncParam> ReadParams(const Node& params) {
  std::vector<FuncParam> out;
  for (const Node& p : params.named_children()) {
    auto t = p.type();
    FuncParam fp;
    fp.node = p;
    if (t == "identifier") {
      fp.name = std::string(p.text());
    } else if (t == "typed_parameter") {
      Node id = p.named_child(0);
      if (id.type() != "identifier") {
        fp.splat = true;
        fp.name = std::string(id.text());
      } else {
        fp.name = std::string(id.text());
      }
      fp.annotation = p.field("type");
    } else if (t == "default_parameter") {
      fp.name = std::string(p.field("name").text());
      fp.default_value = p.field("value");
    } else if (t == "typed_default_parameter") {
      fp.name = std::string(p.field("name").text());
      fp.annotation = p.field("type");
      fp.default_value = p.field("value");
    } else if (t == "list_splat_pattern" || t == "dictionary_splat_pattern") {
      fp.splat = true;
      fp.name = std::string(p.text());
    } else {
      continue;  // '/' or '*' separators
    }
    out.push_back(fp);
  }
  return out;
}

}  // namespace kiln::analysis::internal

#include "exec/race_probe.h"

#include <fmt/format.h>

#include "pyast/pyast.h"
#include "pyast/syntax.h"

namespace kiln::exec {

namespace {

using pyast::Node;

// A decorator `@triton.jit`, `@jit`, `@triton.jit(...)` (the last part of its dotted name is `jit`).
bool IsJit(const Node& dec) {
  Node e = dec.named_child(0);
  if (!e.is_null() && e.type() == "call") e = e.field("function");
  std::string d = pyast::Dotted(e);
  return d == "jit" || (d.size() > 4 && d.compare(d.size() - 4, 4, ".jit") == 0);
}

// The name of the called function's last part (`tl.program_id` -> "program_id"), "" when not a plain name.
std::string LastName(const Node& call) {
  Node f = call.field("function");
  if (f.type() == "identifier") return std::string(f.text());
  if (f.type() == "attribute") return std::string(f.field("attribute").text());
  return "";
}

}  // namespace

RaceProbe ReversedProgramOrder(std::string_view module_text) {
  RaceProbe out;
  auto tree = pyast::Tree::Parse(std::string(module_text), "<reference>");
  if (!tree.ok()) {
    out.why = "the module does not parse";
    return out;
  }
  const pyast::Tree& t = **tree;
  if (t.has_errors()) {
    out.why = "the module has syntax errors";
    return out;
  }
  pyast::EditSet edits;
  int jit_functions = 0, calls = 0;
  std::string refusal;
  t.root().Walk([&](const Node& n) {
    if (!refusal.empty()) return false;
    if (n.type() != "decorated_definition") return true;
    bool jit = false;
    for (const Node& c : n.named_children())
      if (c.type() == "decorator" && IsJit(c)) jit = true;
    Node def = n.field("definition");
    if (!jit || def.is_null() || def.type() != "function_definition") return true;
    ++jit_functions;
    const std::string fn(def.field("name").text());
    def.field("body").Walk([&](const Node& m) {
      if (!refusal.empty()) return false;
      if (m.type() == "while_statement") {
        refusal =
            fmt::format("{} has a while loop at line {} (programs may wait on one another)", fn, m.span().begin.line);
        return false;
      }
      if (m.type() == "keyword_argument" && m.field("name").text() == "volatile" &&
          m.field("value").text() != "False") {
        refusal = fmt::format("{} has a volatile load at line {} (programs may wait on one another)", fn,
                              m.span().begin.line);
        return false;
      }
      if (m.type() != "call") return true;
      const std::string name = LastName(m);
      if (name == "atomic_cas" || name == "atomic_xchg") {
        refusal =
            fmt::format("{} calls {} at line {} (programs may wait on one another)", fn, name, m.span().begin.line);
        return false;
      }
      if (name != "program_id") return true;
      Node f = m.field("function");
      if (f.type() != "attribute") {
        refusal = fmt::format("{} calls program_id without its module at line {}", fn, m.span().begin.line);
        return false;
      }
      std::string callee(f.text());
      std::string num = callee.substr(0, callee.size() - std::string_view("program_id").size()) + "num_programs";
      std::string args(m.field("arguments").text());
      Status s = edits.Replace(m.span(), fmt::format("({}{} - 1 - {}{})", num, args, callee, args));
      if (!s.ok()) {
        refusal = "overlapping program_id calls";
        return false;
      }
      ++calls;
      return false;  // its arguments hold no program_id call of their own
    });
    return false;
  });
  if (!refusal.empty()) {
    out.why = refusal;
    return out;
  }
  if (jit_functions == 0) {
    out.why = "no @triton.jit function";
    return out;
  }
  if (calls == 0) {
    out.why = "no program_id call";
    return out;
  }
  auto text = edits.Apply(t.text());
  if (!text.ok()) {
    out.why = "the edits do not apply";
    return out;
  }
  out.source = std::move(*text);
  return out;
}

}  // namespace kiln::exec

// The normalised syntax-tree hash and the benchmark index.
#include "datagen/normalize.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "common/file.h"
#include "common/hash.h"
#include "common/strings.h"
#include "pyast/pyast.h"
#include "task/task.h"

namespace kiln::datagen {

namespace {

bool KeptName(std::string_view n) {
  static const std::set<std::string_view> kKept = {"torch", "nn",   "F",    "triton", "tl",    "libdevice",
                                                   "math",  "self", "True", "False",  "None",  "super",
                                                   "range", "len",  "int",  "float",  "print", "Model",
                                                   "ModelNew", "get_inputs", "get_init_inputs", "forward"};
  return kKept.count(n) > 0;
}

bool IsDocstring(const pyast::Node& n) {
  if (n.type() != "expression_statement" || n.named_child_count() != 1) return false;
  if (n.named_child(0).type() != "string") return false;
  pyast::Node parent = n.parent();
  if (parent.is_null()) return false;
  if (parent.type() == "module") return parent.named_child(0) == n;
  return parent.type() == "block" && parent.named_child(0) == n;
}

struct Normalizer {
  std::unordered_map<std::string, std::string> names;
  std::string out;

  void Leaf(const pyast::Node& n) {
    std::string_view t = n.type();
    if (t == "identifier") {
      pyast::Node p = n.parent();
      bool attribute = !p.is_null() && p.type() == "attribute" && p.field("attribute") == n;
      bool keyword = !p.is_null() && p.type() == "keyword_argument" && p.field("name") == n;
      std::string s(n.text());
      if (attribute || keyword || KeptName(s)) {
        out += s;
      } else {
        auto it = names.find(s);
        if (it == names.end()) it = names.emplace(s, "v" + std::to_string(names.size())).first;
        out += it->second;
      }
    } else {
      out += n.text();
    }
    out += ' ';
  }

  void Visit(const pyast::Node& n) {
    std::string_view t = n.type();
    if (t == "comment" || IsDocstring(n)) return;
    if (t == "string" || n.child_count() == 0) {
      Leaf(n);
      return;
    }
    if (n.is_named()) out += std::string(t) + "(";
    for (uint32_t i = 0; i < n.child_count(); ++i) Visit(n.child(i));
    if (n.is_named()) out += ")";
  }
};

// The code that defines a benchmark task: the Model class when there is one, else the part of the file
// above TritonBench's separator.
std::string ReferencePart(const std::string& text) {
  auto tree = pyast::Tree::Parse(text);
  if (tree.ok()) {
    for (const pyast::Node& s : (*tree)->root().named_children()) {
      if (s.type() == "class_definition" && s.field("name").text() == "Model") return std::string(s.text());
    }
  }
  return task::StripTritonBenchTest(text);
}

}  // namespace

Result<std::string> NormalizedHash(const std::string& text, const std::string& path) {
  Diagnostic why;
  auto tree = pyast::Tree::Parse(text, path, &why);
  if (!tree.ok()) return tree.status();
  if ((*tree)->has_errors()) {
    auto errs = (*tree)->errors();
    return ParseError(FormatDiagnostic((*tree)->MakeDiagnostic(errs.front().span, errs.front().message)));
  }
  Normalizer n;
  n.Visit((*tree)->root());
  return HashHex(n.out);
}

Status BenchmarkIndex::Add(const std::string& name, const std::string& text) {
  auto h = NormalizedHash(ReferencePart(text), name);
  if (!h.ok()) return h.status();
  by_hash_.emplace(*h, name);
  return Status::Ok();
}

int BenchmarkIndex::AddTree(const std::string& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".py") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  int added = 0;
  for (const auto& f : files) {
    auto text = ReadFile(f.string());
    if (!text.ok()) continue;
    std::string name = fs::relative(f, root, ec).string();
    if (Add(name, *text).ok()) ++added;
  }
  return added;
}

std::string BenchmarkIndex::Match(const std::string& text) const {
  auto h = NormalizedHash(ReferencePart(text));
  if (!h.ok()) return "";
  auto it = by_hash_.find(*h);
  return it == by_hash_.end() ? "" : it->second;
}

}  // namespace kiln::datagen

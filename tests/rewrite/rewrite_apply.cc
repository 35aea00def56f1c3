// kiln_rewrite_apply: applies rewrites to a Python module and prints the result (test and bench
// driver for src/rewrite).
//
//   kiln_rewrite_apply FILE KERNEL REQUEST...   new source on stdout, notes on stderr;
//                                               exit 2 when refused (reason on stderr)
//   kiln_rewrite_apply --diff FILE KERNEL REQUEST...   unified diff instead of the source
//   kiln_rewrite_apply --check FILE KERNEL      every rewrite kind: applies or not, and why
//   kiln_rewrite_apply --tunables FILE KERNEL   the tunables
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "analysis/model.h"
#include "common/file.h"
#include "pyast/pyast.h"
#include "rewrite/rewrite.h"

using namespace kiln;  // NOLINT

static const char* SiteName(rewrite::TunableSite s) {
  switch (s) {
    case rewrite::TunableSite::kLaunchLiteral: return "launch_literal";
    case rewrite::TunableSite::kVariable: return "variable";
    case rewrite::TunableSite::kKernelDefault: return "kernel_default";
    case rewrite::TunableSite::kAutotune: return "autotune";
    case rewrite::TunableSite::kOptionDefault: return "option_default";
    case rewrite::TunableSite::kNotEditable: return "not_editable";
  }
  return "?";
}

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string mode;
  if (!args.empty() && args[0].rfind("--", 0) == 0) {
    mode = args[0];
    args.erase(args.begin());
  }
  if (args.size() < 2) {
    std::fprintf(stderr, "usage: kiln_rewrite_apply [--diff|--check|--tunables] FILE KERNEL [REQUEST...]\n");
    return 1;
  }
  auto tree = pyast::Tree::ParseFile(args[0]);
  if (!tree.ok()) {
    std::fprintf(stderr, "%s\n", tree.status().message().c_str());
    return 1;
  }
  auto model = analysis::AnalyzeModule(**tree);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().message().c_str());
    return 1;
  }
  rewrite::Target target{args[1], {}};
  if (mode == "--check") {
    for (const auto& [k, a] : rewrite::CheckAll(**tree, *model, target))
      std::printf("%-18s %-3s %s\n", rewrite::RewriteKindName(k), a.applies ? "yes" : "no", a.reason.c_str());
    return 0;
  }
  if (mode == "--tunables") {
    auto t = rewrite::ExtractTunables(**tree, *model, target);
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.status().message().c_str());
      return 2;
    }
    for (const auto& u : t->items) {
      std::printf("%-14s site=%-14s value=%-8s editable=%d pow2=%d in_grid=%d grid_follows=%d %s\n", u.name.c_str(),
                  SiteName(u.site), u.value ? std::to_string(*u.value).c_str() : "?", u.editable, u.power_of_two,
                  u.in_grid, u.grid_follows, u.reason.c_str());
    }
    for (const auto& n : t->notes) std::printf("note: %s\n", n.c_str());
    return 0;
  }
  std::vector<rewrite::Request> reqs;
  for (size_t i = 2; i < args.size(); ++i) {
    auto r = rewrite::ParseRequest(args[i]);
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().message().c_str());
      return 1;
    }
    reqs.push_back(*r);
  }
  auto out = rewrite::ApplySequence((*tree)->text(), args[0], target, reqs);
  if (!out.ok()) {
    std::fprintf(stderr, "refused: %s\n", out.status().message().c_str());
    return out.status().code() == Code::kInvalidArgument ? 2 : 3;
  }
  for (const auto& n : out->notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  if (mode == "--diff") {
    std::fputs(rewrite::UnifiedDiff((*tree)->text(), out->source, "a/" + args[0], "b/" + args[0]).c_str(), stdout);
  } else {
    std::fputs(out->source.c_str(), stdout);
  }
  return 0;
}

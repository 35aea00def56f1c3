// kiln_rewrite_apply: applies rewrites to a Python module and prints the result (test and bench
// driver for src/rewrite).
//
//   kiln_rewrite_apply FILE KERNEL REQUEST...   new source on stdout, notes on stderr;
//                                               exit 2 when refused (reason on stderr)
//   kiln_rewrite_apply --diff FILE KERNEL REQUEST...   unified diff instead of the source
//   kiln_rewrite_apply --check FILE KERNEL      every rewrite kind: applies or not, and why
//   kiln_rewrite_apply --tunables FILE KERNEL   the tunables
//   kiln_rewrite_apply --sweep FILE [OUTDIR]    every launched kernel x every applicable kind with a
//                                               default request; writes the variants to OUTDIR
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/model.h"
#include "common/file.h"
#include "pyast/pyast.h"
#include "rewrite/rewrite.h"

using namespace kiln;  // NOLINT

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string mode;
  if (!args.empty() && args[0].rfind("--", 0) == 0) {
    mode = args[0];
    args.erase(args.begin());
  }
  if (mode == "--sweep" && args.size() == 1) args.push_back("");
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
  if (mode == "--sweep") {
    // Every launched kernel x every kind: Check, and Apply where it applies (default request;
    // set_params doubles the first editable constexpr; insert_autotune uses the current values).
    int applied = 0, failed = 0;
    for (const auto& k : model->kernels) {
      if (!k.launched) continue;
      rewrite::Target t{k.name, {}};
      for (const auto& [kind, a] : rewrite::CheckAll(**tree, *model, t)) {
        if (!a.applies) continue;
        rewrite::Request req;
        if (kind == rewrite::RewriteKind::kSetParams) {
          auto tun = analysis::ExtractTunables(**tree, *model, t);
          rewrite::SetParams sp;
          // The first editable tunable with a legal neighbour: twice its value, else half (a block size the
          // kernel assumes divides an extent can only shrink; num_warps=32 cannot double).
          for (const auto& u : tun->items) {
            if (!u.editable || !u.value || *u.value <= 0) continue;
            int64_t up = *u.value * 2, down = *u.value / 2;
            if (!u.max_value || up <= u.max_value)
              sp.values[u.name] = up;
            else if (down >= u.min_value && down > 0)
              sp.values[u.name] = down;
            else
              continue;
            break;
          }
          if (sp.values.empty()) continue;
          req = sp;
        } else if (kind == rewrite::RewriteKind::kInsertAutotune) {
          auto tun = analysis::ExtractTunables(**tree, *model, t);
          rewrite::TuneConfig cfg;
          for (const auto& u : tun->items)
            if (!u.launch_option && (u.value || !u.autotune_values.empty()))
              if (u.site != analysis::TunableSite::kNotEditable && u.site != analysis::TunableSite::kOptionDefault)
                cfg.params[u.name] = u.value ? *u.value : u.autotune_values[0];
          rewrite::InsertAutotune ins;
          ins.configs = {cfg};
          req = ins;
        } else {
          auto r = rewrite::ParseRequest(rewrite::RewriteKindName(kind));
          req = *r;
        }
        auto out = rewrite::Apply(**tree, *model, t, req);
        if (out.ok() && !args[1].empty()) {
          std::string stem = std::filesystem::path(args[0]).stem().string();
          std::string path = args[1] + "/" + stem + "__" + k.name + "__" + rewrite::RewriteKindName(kind) + ".py";
          if (!WriteFile(path, out->source).ok()) std::fprintf(stderr, "cannot write %s\n", path.c_str());
          std::printf("file %s\n", path.c_str());
        }
        std::printf("%s %s %s: %s\n", out.ok() ? "ok  " : "FAIL", k.name.c_str(), rewrite::Describe(req).c_str(),
                    out.ok() ? "" : out.status().message().c_str());
        out.ok() ? ++applied : ++failed;
      }
    }
    std::printf("applied %d, failed %d\n", applied, failed);
    return failed ? 3 : 0;
  }
  rewrite::Target target{args[1], {}};
  if (mode == "--check") {
    for (const auto& [k, a] : rewrite::CheckAll(**tree, *model, target))
      std::printf("%-18s %-3s %s\n", rewrite::RewriteKindName(k), a.applies ? "yes" : "no", a.reason.c_str());
    return 0;
  }
  if (mode == "--tunables") {
    auto t = analysis::ExtractTunables(**tree, *model, target);
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.status().message().c_str());
      return 2;
    }
    for (const auto& u : t->items) {
      std::printf("%-14s site=%-14s value=%-8s editable=%d pow2=%d in_grid=%d grid_follows=%d %s\n", u.name.c_str(),
                  analysis::TunableSiteName(u.site), u.value ? std::to_string(*u.value).c_str() : "?", u.editable, u.power_of_two,
                  u.in_grid, u.grid_follows, u.reason.c_str());
      if (u.divides_max) std::printf("%-14s   %s\n", "", u.bound.c_str());
      for (const auto& tile : u.tiles) {
        std::string t;
        for (const auto& d : tile) t += (t.empty() ? "" : ", ") + d;
        std::printf("%-14s   tile [%s]\n", "", t.c_str());
      }
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

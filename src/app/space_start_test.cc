// search::SpaceFromTunables over the rewrite module's tunables (the search core itself does not link rewrite).
#include <tuple>

#include <gtest/gtest.h>

#include "analysis/tunables.h"
#include "search/space.h"

namespace kiln::search {
namespace {

// An autotuned kernel's search starts from its first config (docs/optimize.md), not from the middle value of
// each parameter taken separately (a config it does not have).
TEST(Space, AutotunedKernelStartsFromItsFirstConfig) {
  analysis::Tunables t;
  t.autotuned = true;
  for (auto [name, values, first] :
       {std::tuple<const char*, std::vector<int64_t>, int64_t>{"BLOCK", {32, 64, 128}, 128},
        {"num_warps", {2, 4, 8}, 8}}) {
    analysis::Tunable u;
    u.name = name;
    u.editable = true;
    u.power_of_two = true;
    u.launch_option = std::string(name) == "num_warps";
    u.site = analysis::TunableSite::kAutotune;
    u.autotune_values = values;
    u.autotune_first = first;
    t.items.push_back(u);
  }
  SpaceBuild b = SpaceFromTunables(t, SpaceOptions{});
  EXPECT_EQ(b.baseline.at("BLOCK"), 128);
  EXPECT_EQ(b.baseline.at("num_warps"), 8);
}

}  // namespace
}  // namespace kiln::search

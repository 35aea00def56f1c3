// kiln/search: successive halving. Many candidates get a short (noisy) timing; the best 1/eta are
// re-timed longer, and so on, until `keep` remain; those are ordered by their last, longest timing.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace kiln::search {

struct HalvingOptions {
  int eta = 3;        // keep ceil(n / eta) per rung
  size_t keep = 1;    // stop when this many remain (after measuring them at the last rung)
  int max_rungs = 3;  // rungs after rung 0 (the given scores)
};

// scores0[i]: rung-0 score of candidate i (lower is better; non-finite: failed, never promoted).
// measure(i, rung): the score of candidate i at rung >= 1 (longer timing as the rung grows).
// Returns the survivors' indices, best first, by their last measured score.
std::vector<size_t> SuccessiveHalving(const std::vector<double>& scores0, const HalvingOptions& o,
                                      const std::function<double(size_t, int)>& measure);

}  // namespace kiln::search

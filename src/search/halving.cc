#include "search/halving.h"

#include <algorithm>
#include <cmath>

namespace kiln::search {

std::vector<size_t> SuccessiveHalving(const std::vector<double>& scores0, const HalvingOptions& o,
                                      const std::function<double(size_t, int)>& measure) {
  std::vector<std::pair<double, size_t>> alive;
  for (size_t i = 0; i < scores0.size(); ++i)
    if (std::isfinite(scores0[i])) alive.push_back({scores0[i], i});
  std::stable_sort(alive.begin(), alive.end());
  const size_t keep = std::max<size_t>(1, o.keep);
  const size_t eta = static_cast<size_t>(std::max(2, o.eta));
  for (int rung = 1; rung <= std::max(1, o.max_rungs) && !alive.empty(); ++rung) {
    size_t n = alive.size();
    size_t k = std::max(keep, (n + eta - 1) / eta);
    if (rung == std::max(1, o.max_rungs)) k = std::min(n, keep);  // last rung: the finalists only
    alive.resize(std::min(n, k));
    for (auto& [s, i] : alive) s = measure(i, rung);
    std::stable_sort(alive.begin(), alive.end());
    while (!alive.empty() && !std::isfinite(alive.back().first)) alive.pop_back();
    if (alive.size() <= keep && rung >= 1) {
      // Survivors were all measured at this rung; a further rung would only re-time them.
      if (k <= keep) break;
    }
  }
  std::vector<size_t> out;
  for (auto& [s, i] : alive) out.push_back(i);
  return out;
}

}  // namespace kiln::search

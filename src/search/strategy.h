// kiln/search: search strategies over a Space, in ask/tell form.
//
// The loop calls Start() with the baseline config and its score, then alternates Propose() (new
// configs to measure; empty when the strategy has converged) and Observe() for every proposed
// config (score = a time to minimise; +infinity for a failure or a pruned config). Strategies never
// propose a config twice nor one the feasibility predicate rejects.
//
//   coordinate  coordinate descent: every one-step neighbour of the current best (double/halve a
//               block size, +-1 stage, x2/÷2 warps); move to the best neighbour when it gains at
//               least `accept_gain` (0.1%, as TorchInductor); converged when no neighbour does.
//   rules       rule-guided greedy: the diagnosis's moves (bigger_tiles, more_warps, more_stages,
//               group_m, ...) applied to the current best in priority order; the best gaining move
//               is taken; when no move gains, coordinate descent polishes from there.
//   bayes       Bayesian optimisation: a Gaussian process (Matern 5/2) on standardised log-times of
//               the configs' features, expected improvement over the unvisited feasible configs; a
//               batch is chosen with the "constant liar" (fantasy observations at the posterior mean).
//   exhaustive  every feasible config once (up to 65536): the reference for benchmarks.
//   auto        rules when the diagnosis gave moves, else coordinate; bayes for spaces with more
//               than `bayes_min_size` configs and at least 4 parameters.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "search/space.h"

namespace kiln::search {

inline constexpr double kFailed = std::numeric_limits<double>::infinity();

struct StrategyContext {
  Space space;
  std::function<bool(const Config&)> feasible = {};  // null: everything is feasible
  std::vector<std::string> moves = {};               // from the findings, highest priority first
  uint64_t seed = 1;
  double accept_gain = 0.001;  // coordinate/rules: relative gain to move
  int bayes_init = 5;          // random configs before the GP takes over
  size_t bayes_pool = 4096;    // enumerate the space when at most this large
  // Measured first, before the strategy's own proposals (TunedSeeds: the tiles tuned kernels use); the
  // strategy then starts from the best of them and the baseline, knowing every score. Not for exhaustive.
  std::vector<Config> seeds = {};
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  virtual void Start(const Config& baseline, double score) = 0;
  virtual std::vector<Config> Propose(size_t max_n) = 0;
  virtual void Observe(const Config& c, double score) = 0;
};

// name: "coordinate", "rules", "bayes", "exhaustive" or "auto".
Result<std::unique_ptr<Strategy>> MakeStrategy(const std::string& name, StrategyContext ctx);
// What "auto" picks for this context.
std::string ResolveAuto(const StrategyContext& ctx, double bayes_min_size = 2000);

// The config after applying a move ("bigger_tiles", "smaller_tiles", "more_warps", "fewer_warps",
// "more_stages", "fewer_stages", "group_m", "bigger_k", "smaller_k", "bigger_block",
// "smaller_block"); nullopt when the move does not apply to this space (or changes nothing).
std::optional<Config> ApplyMove(const Space& s, const Config& c, const std::string& move);
// Moves the search understands (others, e.g. split_k or persistent_grid, need source rewrites).
const std::vector<std::string>& KnownMoves();

}  // namespace kiln::search

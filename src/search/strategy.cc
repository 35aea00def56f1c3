#include "search/strategy.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "search/gp.h"

namespace kiln::search {

namespace {

// Shared bookkeeping: visited set, best so far.
class Base : public Strategy {
 public:
  explicit Base(StrategyContext ctx) : ctx_(std::move(ctx)) {}
  void Start(const Config& baseline, double score) override {
    best_ = ctx_.space.Complete(baseline, baseline);
    best_score_ = score;
    visited_.insert(ConfigKey(best_));
    scores_[ConfigKey(best_)] = score;
    observed_.push_back({best_, score});
  }
  void Observe(const Config& c, double score) override {
    std::string k = ConfigKey(c);
    visited_.insert(k);
    scores_[k] = score;
    observed_.push_back({c, score});
    OnObserve(c, score);
  }

 protected:
  virtual void OnObserve(const Config& c, double score) {}
  bool Usable(const Config& c) const {
    if (visited_.count(ConfigKey(c))) return false;
    return !ctx_.feasible || ctx_.feasible(c);
  }
  void MarkProposed(const Config& c) { visited_.insert(ConfigKey(c)); }
  StrategyContext ctx_;
  Config best_;
  double best_score_ = kFailed;
  std::set<std::string> visited_;
  std::map<std::string, double> scores_;
  std::vector<std::pair<Config, double>> observed_;
};

class Coordinate : public Base {
 public:
  using Base::Base;
  std::string name() const override { return "coordinate"; }
  void StartFrom(const Config& c, double score, const std::set<std::string>& visited,
                 const std::map<std::string, double>& scores) {
    best_ = c;
    best_score_ = score;
    visited_.insert(visited.begin(), visited.end());
    scores_.insert(scores.begin(), scores.end());
  }
  std::vector<Config> Propose(size_t max_n) override {
    if (!pending_.empty()) {
      // Hand out the rest of the current round first.
      return Take(max_n);
    }
    if (outstanding_ > 0) return {};
    if (round_started_) {
      // The round is complete: move to its best when it gains enough; when no single step does, try
      // the coupled two-parameter steps around the same point once; then it has converged.
      if (round_best_score_ < best_score_ * (1.0 - ctx_.accept_gain)) {
        best_ = round_best_;
        best_score_ = round_best_score_;
        coupled_ = false;
      } else if (!coupled_) {
        coupled_ = true;
      } else {
        return {};  // converged
      }
    }
    round_started_ = true;
    round_best_score_ = kFailed;
    for (auto& n : coupled_ ? ctx_.space.CoupledNeighbors(best_) : ctx_.space.Neighbors(best_)) {
      if (Usable(n)) {
        MarkProposed(n);
        pending_.push_back(n);
      } else if (auto it = scores_.find(ConfigKey(n)); it != scores_.end() && it->second < round_best_score_) {
        // Seen before (e.g. in the rules phase): counts for this round without re-measuring.
        round_best_score_ = it->second;
        round_best_ = n;
      }
    }
    if (pending_.empty()) {
      if (round_best_score_ < best_score_ * (1.0 - ctx_.accept_gain)) {
        best_ = round_best_;
        best_score_ = round_best_score_;
        coupled_ = false;
        round_started_ = false;
        return Propose(max_n);
      }
      if (!coupled_) {  // nothing new one step away: the coupled steps
        coupled_ = true;
        round_started_ = false;
        return Propose(max_n);
      }
      return {};
    }
    return Take(max_n);
  }

 protected:
  void OnObserve(const Config& c, double score) override {
    if (outstanding_ > 0) --outstanding_;
    if (score < round_best_score_) {
      round_best_score_ = score;
      round_best_ = c;
    }
  }

 private:
  std::vector<Config> Take(size_t max_n) {
    std::vector<Config> out;
    while (!pending_.empty() && out.size() < max_n) {
      out.push_back(pending_.front());
      pending_.erase(pending_.begin());
    }
    outstanding_ += static_cast<int>(out.size());
    return out;
  }
  std::vector<Config> pending_;
  int outstanding_ = 0;
  bool round_started_ = false;
  bool coupled_ = false;  // the current round is the coupled steps (after a round of single steps gained nothing)
  Config round_best_;
  double round_best_score_ = kFailed;
};

class Rules : public Base {
 public:
  explicit Rules(StrategyContext ctx) : Base(ctx), polish_(ctx) {}
  std::string name() const override { return "rules"; }
  std::vector<Config> Propose(size_t max_n) override {
    if (polishing_) return polish_.Propose(max_n);
    if (outstanding_ > 0) return {};
    if (round_started_) {
      if (round_best_score_ < best_score_ * (1.0 - ctx_.accept_gain)) {
        best_ = round_best_;
        best_score_ = round_best_score_;
      } else {
        return StartPolish(max_n);
      }
    }
    round_started_ = true;
    round_best_score_ = kFailed;
    std::vector<Config> out;
    const auto& moves = ctx_.moves.empty() ? KnownMoves() : ctx_.moves;
    // One step of every move, then two steps (x4 a tile, +2 stages): a round that only doubled would
    // need a round per doubling to climb from a badly undersized block, and rounds cost wall time.
    std::vector<Config> second;
    for (const auto& m : moves) {
      if (out.size() >= max_n) break;
      auto n = ApplyMove(ctx_.space, best_, m);
      if (!n) continue;
      if (auto n2 = ApplyMove(ctx_.space, *n, m)) second.push_back(*n2);
      if (!Usable(*n)) continue;
      MarkProposed(*n);
      out.push_back(*n);
    }
    for (const auto& n2 : second) {
      if (out.size() >= max_n) break;
      if (!Usable(n2)) continue;
      MarkProposed(n2);
      out.push_back(n2);
    }
    if (out.empty()) return StartPolish(max_n);
    outstanding_ = static_cast<int>(out.size());
    return out;
  }

 protected:
  void OnObserve(const Config& c, double score) override {
    if (polishing_) {
      polish_.Observe(c, score);
      return;
    }
    if (outstanding_ > 0) --outstanding_;
    if (score < round_best_score_) {
      round_best_score_ = score;
      round_best_ = c;
    }
  }

 private:
  std::vector<Config> StartPolish(size_t max_n) {
    polishing_ = true;
    polish_.StartFrom(best_, best_score_, visited_, scores_);
    return polish_.Propose(max_n);
  }
  Coordinate polish_;
  bool polishing_ = false;
  int outstanding_ = 0;
  bool round_started_ = false;
  Config round_best_;
  double round_best_score_ = kFailed;
};

class Bayes : public Base {
 public:
  explicit Bayes(StrategyContext ctx) : Base(ctx), rng_(ctx_.seed * 0x9e3779b97f4a7c15ULL + 7) {}
  std::string name() const override { return "bayes"; }
  std::vector<Config> Propose(size_t max_n) override {
    std::vector<Config> out;
    // Initial design: random feasible configs.
    int tries = 0;
    while (init_done_ < ctx_.bayes_init && out.size() < max_n && tries < 1000) {
      ++tries;
      Config c = ctx_.space.Random(&rng_);
      if (!Usable(c)) continue;
      MarkProposed(c);
      out.push_back(c);
      ++init_done_;
    }
    if (!out.empty()) return out;
    init_done_ = ctx_.bayes_init;
    // Candidate pool.
    std::vector<Config> pool = ctx_.space.Enumerate(ctx_.bayes_pool);
    if (pool.empty()) {
      for (size_t i = 0; i < ctx_.bayes_pool; ++i) pool.push_back(ctx_.space.Random(&rng_));
      auto nb = ctx_.space.Neighbors(best_);
      pool.insert(pool.end(), nb.begin(), nb.end());
    }
    std::vector<Config> cand;
    std::set<std::string> seen;
    for (auto& c : pool) {
      auto k = ConfigKey(c);
      if (seen.count(k) || !Usable(c)) continue;
      seen.insert(k);
      cand.push_back(c);
    }
    if (cand.empty()) return {};
    // Training data: log-times, failures at the worst finite value + 1 (pushes the GP away).
    std::vector<std::pair<std::vector<double>, double>> data;
    double worst = -1e300;
    for (auto& [c, s] : observed_)
      if (std::isfinite(s) && s > 0) worst = std::max(worst, std::log(s));
    if (worst == -1e300) return {};
    for (auto& [c, s] : observed_) {
      double y = (std::isfinite(s) && s > 0) ? std::log(s) : worst + 1.0;
      data.push_back({ctx_.space.Features(c), y});
    }
    std::vector<bool> taken(cand.size(), false);
    while (out.size() < max_n) {
      const int n = static_cast<int>(data.size()), d = static_cast<int>(ctx_.space.params().size());
      Eigen::MatrixXd X(n, d);
      Eigen::VectorXd y(n);
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < d; ++j) X(i, j) = data[i].first[j];
        y(i) = data[i].second;
      }
      const double mu = y.mean();
      double sd = std::sqrt((y.array() - mu).square().sum() / std::max(1, n - 1));
      if (sd < 1e-9) sd = 1.0;
      Eigen::VectorXd ys = (y.array() - mu) / sd;
      GaussianProcess gp;
      if (!gp.FitBest(X, ys)) break;
      double best_y = ys.minCoeff();
      int arg = -1;
      double best_ei = -1;
      for (size_t i = 0; i < cand.size(); ++i) {
        if (taken[i]) continue;
        auto f = ctx_.space.Features(cand[i]);
        Eigen::VectorXd x = Eigen::Map<Eigen::VectorXd>(f.data(), d);
        auto p = gp.Predict(x);
        double ei = ExpectedImprovement(p.mean, p.var, best_y, 0.01);
        if (ei > best_ei) {
          best_ei = ei;
          arg = static_cast<int>(i);
        }
      }
      if (arg < 0 || best_ei < 1e-6) break;  // nothing left worth measuring
      taken[arg] = true;
      MarkProposed(cand[arg]);
      out.push_back(cand[arg]);
      // Constant liar: pretend the pick scored its posterior mean.
      auto f = ctx_.space.Features(cand[arg]);
      Eigen::VectorXd x = Eigen::Map<Eigen::VectorXd>(f.data(), d);
      data.push_back({f, gp.Predict(x).mean * sd + mu});
    }
    return out;
  }

 private:
  uint64_t rng_;
  int init_done_ = 0;
};

// Every feasible config once (the reference the autotuner comparison measures against).
class Exhaustive : public Base {
 public:
  using Base::Base;
  std::string name() const override { return "exhaustive"; }
  std::vector<Config> Propose(size_t max_n) override {
    if (!loaded_) {
      all_ = ctx_.space.Enumerate(1 << 16);
      loaded_ = true;
    }
    std::vector<Config> out;
    while (pos_ < all_.size() && out.size() < max_n) {
      const Config& c = all_[pos_++];
      if (!Usable(c)) continue;
      MarkProposed(c);
      out.push_back(c);
    }
    return out;
  }

 private:
  std::vector<Config> all_;
  size_t pos_ = 0;
  bool loaded_ = false;
};

// Seeds first (TunedSeeds), then the inner strategy, started from the best of the seeds and the baseline
// with every score observed (coordinate and rules step from there, bayes fits them all).
class Seeded : public Strategy {
 public:
  Seeded(StrategyContext ctx, std::unique_ptr<Strategy> inner) : ctx_(std::move(ctx)), inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  void Start(const Config& baseline, double score) override {
    base_ = ctx_.space.Complete(baseline, baseline);
    best_ = base_;
    best_score_ = score;
    base_score_ = score;
    proposed_.insert(ConfigKey(base_));
  }
  std::vector<Config> Propose(size_t max_n) override {
    if (!done_) {
      std::vector<Config> out;
      while (next_ < ctx_.seeds.size() && out.size() < max_n) {
        Config c = ctx_.space.Complete(ctx_.seeds[next_++], base_);
        if (!proposed_.insert(ConfigKey(c)).second) continue;
        if (ctx_.feasible && !ctx_.feasible(c)) continue;
        out.push_back(c);
      }
      outstanding_ += static_cast<int>(out.size());
      if (!out.empty()) return out;
      if (outstanding_ > 0) return {};
      done_ = true;
      inner_->Start(best_, best_score_);
      if (ConfigKey(best_) != ConfigKey(base_)) inner_->Observe(base_, base_score_);
      for (const auto& [c, sc] : seen_) inner_->Observe(c, sc);
    }
    return inner_->Propose(max_n);
  }
  void Observe(const Config& c, double score) override {
    if (done_) return inner_->Observe(c, score);
    if (outstanding_ > 0) --outstanding_;
    seen_.push_back({c, score});
    if (score < best_score_) best_ = c, best_score_ = score;
  }

 private:
  StrategyContext ctx_;
  std::unique_ptr<Strategy> inner_;
  Config base_, best_;
  double best_score_ = kFailed, base_score_ = kFailed;
  std::set<std::string> proposed_;
  std::vector<std::pair<Config, double>> seen_;
  size_t next_ = 0;
  int outstanding_ = 0;
  bool done_ = false;
};

int64_t Step(const Param& p, int64_t v, int dir) {
  auto it = std::find(p.values.begin(), p.values.end(), v);
  if (it == p.values.end()) return v;
  int i = static_cast<int>(it - p.values.begin()) + dir;
  if (i < 0 || i >= static_cast<int>(p.values.size())) return v;
  return p.values[i];
}

}  // namespace

const std::vector<std::string>& KnownMoves() {
  static const std::vector<std::string> m = {"bigger_tiles", "more_stages",   "more_warps",  "group_m",
                                             "bigger_block", "bigger_k",      "fewer_warps", "smaller_tiles",
                                             "fewer_stages", "smaller_block", "smaller_k",   "typical_block",
                                             "eviction_hints"};
  return m;
}

std::optional<Config> ApplyMove(const Space& s, const Config& c0, const std::string& move) {
  Config c = s.Complete(c0, c0);
  Config n = c;
  auto step_role = [&](Role r, int dir) {
    for (const auto& p : s.params())
      if (p.role == r) n[p.name] = Step(p, c[p.name], dir);
  };
  if (move == "bigger_tiles" || move == "smaller_tiles") {
    int dir = move == "bigger_tiles" ? 1 : -1;
    step_role(Role::kBlockM, dir);
    step_role(Role::kBlockN, dir);
    step_role(Role::kBlock, dir);
  } else if (move == "bigger_block" || move == "smaller_block") {
    step_role(Role::kBlock, move == "bigger_block" ? 1 : -1);
  } else if (move == "bigger_k" || move == "smaller_k") {
    step_role(Role::kBlockK, move == "bigger_k" ? 1 : -1);
  } else if (move == "more_warps" || move == "fewer_warps") {
    step_role(Role::kNumWarps, move == "more_warps" ? 1 : -1);
  } else if (move == "more_stages" || move == "fewer_stages") {
    step_role(Role::kNumStages, move == "more_stages" ? 1 : -1);
  } else if (move == "typical_block") {
    // A 1-D block straight to the value nearest 1024 (log scale), where elementwise kernels usually
    // sit: from a badly undersized block, doubling alone takes a round per step.
    for (const auto& p : s.params()) {
      if (p.role != Role::kBlock || p.values.empty()) continue;
      int64_t best = p.values.front();
      for (auto v : p.values)
        if (std::abs(std::log2(static_cast<double>(std::max<int64_t>(v, 1))) - 10.0) <
            std::abs(std::log2(static_cast<double>(std::max<int64_t>(best, 1))) - 10.0))
          best = v;
      n[p.name] = best;
    }
  } else if (move == "eviction_hints") {
    if (!s.Find(kEvictFirstParam)) return std::nullopt;
    n[kEvictFirstParam] = 1;
  } else if (move == "group_m") {
    for (const auto& p : s.params()) {
      if (p.role != Role::kGroupM) continue;
      // The nearest value to 8 (the common choice) other than the current.
      int64_t best = c[p.name];
      int64_t bd = INT64_MAX;
      for (auto v : p.values) {
        if (v == c[p.name]) continue;
        int64_t d = std::abs(v - 8);
        if (d < bd) {
          bd = d;
          best = v;
        }
      }
      n[p.name] = best;
    }
  } else {
    return std::nullopt;
  }
  if (n == c) return std::nullopt;
  return n;
}

std::string ResolveAuto(const StrategyContext& ctx, double bayes_min_size) {
  if (ctx.space.params().size() >= 4 && ctx.space.Size() > bayes_min_size) return "bayes";
  if (!ctx.moves.empty()) return "rules";
  return "coordinate";
}

Result<std::unique_ptr<Strategy>> MakeStrategy(const std::string& name0, StrategyContext ctx) {
  std::string name = name0.empty() ? "auto" : name0;
  if (name == "auto") name = ResolveAuto(ctx);
  if (name == "exhaustive") return std::unique_ptr<Strategy>(new Exhaustive(std::move(ctx)));
  std::unique_ptr<Strategy> s;
  if (name == "coordinate") s.reset(new Coordinate(ctx));
  if (name == "rules") s.reset(new Rules(ctx));
  if (name == "bayes") s.reset(new Bayes(ctx));
  if (!s) return InvalidArgument("unknown strategy '" + name0 + "' (expected rules, coordinate, bayes or auto)");
  if (ctx.seeds.empty()) return s;
  return std::unique_ptr<Strategy>(new Seeded(std::move(ctx), std::move(s)));
}

}  // namespace kiln::search

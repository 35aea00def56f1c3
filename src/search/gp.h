// kiln/search: a Gaussian process regressor with a Matern 5/2 kernel and expected improvement,
// for Bayesian optimisation over the (discrete) search space embedded in [0,1]^d.
//
//   k(x, x') = s2 * (1 + sqrt(5) r / l + 5 r^2 / (3 l^2)) * exp(-sqrt(5) r / l),  r = |x - x'|
//   posterior mean  m(x) = mean + k(x)^T (K + n2 I)^-1 (y - mean)
//   posterior var   v(x) = s2 - k(x)^T (K + n2 I)^-1 k(x)
//   EI for minimisation: d = best - m - xi, z = d / sd,  EI = d Phi(z) + sd phi(z)   (sd = sqrt(v))
//
// The targets are whatever the caller gives (the strategy passes standardised log-times). Fitting
// is a Cholesky factorisation (Eigen LLT); hyperparameters are chosen by log marginal likelihood over
// a small grid (FitBest).
#pragma once

#include <vector>

#include <Eigen/Dense>

namespace kiln::search {

struct GpHyper {
  double length_scale = 0.3;
  double signal_var = 1.0;
  double noise_var = 1e-3;
};

double Matern52(double r, double length_scale, double signal_var);

class GaussianProcess {
 public:
  // X: n x d, y: n. Returns false when the kernel matrix is not positive definite.
  bool Fit(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const GpHyper& h, double mean = 0.0);
  // Tries each (length scale, noise) of the grid and keeps the best log marginal likelihood.
  bool FitBest(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, double mean = 0.0);

  struct Posterior {
    double mean = 0;
    double var = 0;
  };
  Posterior Predict(const Eigen::VectorXd& x) const;
  double LogMarginalLikelihood() const { return lml_; }
  const GpHyper& hyper() const { return h_; }
  int n() const { return static_cast<int>(X_.rows()); }

 private:
  Eigen::MatrixXd X_;
  Eigen::VectorXd alpha_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  GpHyper h_;
  double mean_ = 0;
  double lml_ = 0;
};

// Expected improvement below `best` (minimisation); 0 <= EI.
double ExpectedImprovement(double mean, double var, double best, double xi = 0.0);

}  // namespace kiln::search

#include "search/gp.h"

#include <cmath>
#include <limits>

namespace kiln::search {

double Matern52(double r, double l, double s2) {
  const double a = std::sqrt(5.0) * r / l;
  return s2 * (1.0 + a + a * a / 3.0) * std::exp(-a);
}

bool GaussianProcess::Fit(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, const GpHyper& h, double mean) {
  const int n = static_cast<int>(X.rows());
  Eigen::MatrixXd K(n, n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      double k = Matern52((X.row(i) - X.row(j)).norm(), h.length_scale, h.signal_var);
      K(i, j) = K(j, i) = k;
    }
    K(i, i) += h.noise_var + 1e-10;
  }
  llt_.compute(K);
  if (llt_.info() != Eigen::Success) return false;
  X_ = X;
  h_ = h;
  mean_ = mean;
  Eigen::VectorXd r = y.array() - mean;
  alpha_ = llt_.solve(r);
  const Eigen::MatrixXd L = llt_.matrixL();
  double logdet = 0;
  for (int i = 0; i < n; ++i) logdet += 2.0 * std::log(L(i, i));
  lml_ = -0.5 * r.dot(alpha_) - 0.5 * logdet - 0.5 * n * std::log(2.0 * M_PI);
  return true;
}

bool GaussianProcess::FitBest(const Eigen::MatrixXd& X, const Eigen::VectorXd& y, double mean) {
  GpHyper best;
  double best_lml = -std::numeric_limits<double>::infinity();
  bool any = false;
  for (double l : {0.1, 0.2, 0.35, 0.6, 1.0, 1.6}) {
    for (double nv : {1e-4, 1e-2, 1e-1}) {
      GpHyper h{l, 1.0, nv};
      if (!Fit(X, y, h, mean)) continue;
      if (lml_ > best_lml) {
        best_lml = lml_;
        best = h;
        any = true;
      }
    }
  }
  if (!any) return false;
  return Fit(X, y, best, mean);
}

GaussianProcess::Posterior GaussianProcess::Predict(const Eigen::VectorXd& x) const {
  const int n = static_cast<int>(X_.rows());
  if (n == 0) return {mean_, h_.signal_var};
  Eigen::VectorXd k(n);
  for (int i = 0; i < n; ++i) k(i) = Matern52((X_.row(i).transpose() - x).norm(), h_.length_scale, h_.signal_var);
  Posterior p;
  p.mean = mean_ + k.dot(alpha_);
  Eigen::VectorXd v = llt_.matrixL().solve(k);
  p.var = std::max(0.0, h_.signal_var - v.squaredNorm());
  return p;
}

double ExpectedImprovement(double mean, double var, double best, double xi) {
  const double d = best - mean - xi;
  const double sd = std::sqrt(std::max(0.0, var));
  if (sd < 1e-12) return std::max(0.0, d);
  const double z = d / sd;
  const double Phi = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double phi = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  return std::max(0.0, d * Phi + sd * phi);
}

}  // namespace kiln::search

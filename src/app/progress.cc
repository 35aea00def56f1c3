#include "app/progress.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace kiln::app {

StderrProgress::StderrProgress(std::FILE* out, int tty)
    : out_(out), tty_(tty < 0 ? isatty(fileno(out)) != 0 : tty == 1) {}

std::string StderrProgress::Format(const search::ProgressState& s) {
  double left = std::max(0.0, s.budget_s - s.elapsed_s);
  return fmt::format("[{}] tried {} (pruned {}, failed {}) | best {:.3f}x {} | {:.0f}s elapsed, {:.0f}s left",
                     s.phase, s.tried, s.pruned, s.failed, s.best_speedup, s.best_config, s.elapsed_s, left);
}

void StderrProgress::Update(const search::ProgressState& s) {
  std::string line = Format(s);
  if (tty_) {
    std::fprintf(out_, "\r\033[K%s", line.c_str());
    drawn_ = true;
  } else {
    std::string best = fmt::format("{:.3f}", s.best_speedup);
    // Plain mode: a line when the phase or the best changes, or every 10 candidates.
    if (s.phase != last_phase_ || best != last_best_ || s.tried / 10 != last_tried_ / 10)
      std::fprintf(out_, "kiln: %s\n", line.c_str());
    last_phase_ = s.phase;
    last_best_ = best;
    last_tried_ = s.tried;
  }
  std::fflush(out_);
}

void StderrProgress::Line(const std::string& text) {
  if (tty_ && drawn_) std::fprintf(out_, "\r\033[K");
  std::fprintf(out_, "%s\n", text.c_str());
  drawn_ = false;
  std::fflush(out_);
}

void StderrProgress::Finish() {
  if (tty_ && drawn_) std::fprintf(out_, "\n");
  drawn_ = false;
  std::fflush(out_);
}

BatchProgress::BatchProgress(size_t total, bool quiet)
    : total_(total), quiet_(quiet), tty_(isatty(2)), start_(std::chrono::steady_clock::now()) {}

void BatchProgress::Done(bool ok, bool error) {
  ++done_;
  if (error) ++errors_;
  else if (ok) ++ok_;
  else ++failed_;
  if (quiet_) return;
  size_t step = std::max<size_t>(1, total_ / 20);
  if (!tty_ && done_ % step != 0 && done_ != total_) return;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = s > 0 ? done_ / s * 60 : 0;
  double eta = rate > 0 ? (total_ - done_) / rate * 60 : 0;
  const int width = 30;
  int fill = total_ ? static_cast<int>(width * done_ / total_) : width;
  std::string bar = std::string(fill, '#') + std::string(width - fill, '.');
  std::fprintf(stderr, "%s[%s] %zu/%zu  ok %zu  failed %zu  errors %zu  %.1f/min  eta %.0fs%s",
               tty_ ? "\r" : "", bar.c_str(), done_, total_, ok_, failed_, errors_, rate, eta,
               tty_ ? (done_ == total_ ? "\n" : "") : "\n");
  std::fflush(stderr);
}

}  // namespace kiln::app

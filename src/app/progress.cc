#include "app/progress.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace kiln::app {

StderrProgress::StderrProgress(std::FILE* out, int tty)
    : out_(out), tty_(tty < 0 ? isatty(fileno(out)) != 0 : tty == 1) {}

std::string StderrProgress::Format(const search::ProgressState& s) {
  double left = std::max(0.0, s.budget_s - s.elapsed_s);
  return fmt::format("[{}] tried {} (pruned {}, failed {}) | best {:.3f}x {} | {:.0f}s elapsed, {:.0f}s left", s.phase,
                     s.tried, s.pruned, s.failed, s.best_speedup, s.best_config, s.elapsed_s, left);
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

namespace {

const char* const kVerdictOrder[] = {"ok",    "mismatch",      "runtime_error", "timeout",
                                     "crash", "compile_error", "rejected"};

}  // namespace

BatchProgress::BatchProgress(size_t total, bool quiet, bool tty) : total_(total), quiet_(quiet), tty_(tty) {
  start_ = last_print_ = std::chrono::steady_clock::now();
}

std::string BatchProgress::Line(double s) const {
  const int width = 30;
  int fill = total_ ? static_cast<int>(width * done_ / total_) : width;
  std::string bar = std::string(fill, '#') + std::string(width - fill, '.');
  std::string ok = fmt::format("ok {}  failed {}  errors {}", verdicts_.count("ok") ? verdicts_.at("ok") : 0,
                               done_ - errors_ - (verdicts_.count("ok") ? verdicts_.at("ok") : 0), errors_);
  std::string rate = "rate --";
  if (s >= 2.0 && done_ >= 2) {
    double per_min = done_ / s * 60;
    rate = fmt::format("{:.1f}/min  eta {:.0f}s", per_min, (total_ - done_) / per_min * 60);
  }
  return fmt::format("[{}] {}/{}  {}  {}", bar, done_, total_, ok, rate);
}

void BatchProgress::Done(const std::string& verdict) {
  ++done_;
  if (verdict.empty())
    ++errors_;
  else
    ++verdicts_[verdict];
  if (quiet_) return;
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    std::fprintf(stderr, "\r%s%s", Line(s).c_str(), done_ == total_ ? "\n" : "");
    std::fflush(stderr);
    return;
  }
  const size_t quarter = std::max<size_t>(1, total_ / 4);
  const bool due = done_ - last_printed_ >= quarter && std::chrono::duration<double>(now - last_print_).count() >= 15.0;
  if (done_ != total_ && !due) return;
  std::fprintf(stderr, "%s\n", Line(s).c_str());
  std::fflush(stderr);
  last_print_ = now;
  last_printed_ = done_;
}

std::string BatchProgress::Summary() const {
  std::string by;
  for (const char* v : kVerdictOrder) {
    auto it = verdicts_.find(v);
    if (it != verdicts_.end()) by += fmt::format("{}{} {}", by.empty() ? "" : ", ", v, it->second);
  }
  for (const auto& [v, n] : verdicts_) {  // verdicts kiln does not know yet (a newer worker)
    bool known = false;
    for (const char* k : kVerdictOrder) known |= v == k;
    if (!known) by += fmt::format("{}{} {}", by.empty() ? "" : ", ", v, n);
  }
  return fmt::format("{} pair(s): {}{}{} error(s)", done_, by.empty() ? "no verdicts" : by, "; ", errors_);
}

}  // namespace kiln::app

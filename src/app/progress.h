// kiln/app: live progress displays on stderr.
//
//   StderrProgress  the optimizer's: on a terminal one status line is redrawn in place (best so far,
//                   candidates tried, time left); otherwise each update that changes the best or the
//                   phase prints a plain line (so logs stay readable).
//   BatchProgress   `kiln eval --batch`'s: a bar with counts, rate and ETA (redrawn on a terminal,
//                   every 5% otherwise).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "search/interfaces.h"

namespace kiln::app {

class StderrProgress : public search::Progress {
 public:
  // tty: -1 = detect (isatty(fileno(out))), 0 = plain lines, 1 = redraw in place.
  explicit StderrProgress(std::FILE* out = stderr, int tty = -1);
  void Update(const search::ProgressState& s) override;
  void Line(const std::string& text) override;
  void Finish() override;
  static std::string Format(const search::ProgressState& s);

 private:
  std::FILE* out_;
  bool tty_;
  bool drawn_ = false;
  std::string last_phase_, last_best_;
  int last_tried_ = -1;
};

class BatchProgress {
 public:
  BatchProgress(size_t total, bool quiet);
  // One pair finished: ok, failed (a verdict other than ok) or an error line.
  void Done(bool ok, bool error);

 private:
  size_t total_, done_ = 0, ok_ = 0, failed_ = 0, errors_ = 0;
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kiln::app

// kiln/app: live progress displays on stderr.
//
//   StderrProgress  the optimizer's: on a terminal one status line is redrawn in place (best so far,
//                   candidates tried, time left); otherwise each update that changes the best or the
//                   phase prints a plain line (so logs stay readable).
//   BatchProgress   `kiln eval --batch`'s: a bar with counts, rate and ETA, redrawn on a terminal;
//                   otherwise a line at most every quarter of the pairs and 15 s apart, plus the last.
//                   The rate shows from 2 s and 2 pairs on. Summary(): the pairs by verdict, and errors.
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
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
  BatchProgress(size_t total, bool quiet, bool tty);
  // One pair is done: its verdict ("ok", "rejected", ...), or "" when it got an error instead.
  void Done(const std::string& verdict);
  // "N pair(s): ok A, rejected B, ...; E error(s)" (verdicts in a fixed order, only those seen).
  std::string Summary() const;
  size_t errors() const { return errors_; }

 private:
  std::string Line(double elapsed_s) const;
  size_t total_, done_ = 0, errors_ = 0;
  bool quiet_, tty_;
  std::map<std::string, size_t> verdicts_;
  std::chrono::steady_clock::time_point start_, last_print_;
  size_t last_printed_ = 0;
  bool printed_ = false;
};

}  // namespace kiln::app

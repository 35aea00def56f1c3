// kiln/search: the live progress display on stderr. On a terminal one status line is redrawn in
// place (best so far, candidates tried, time left); otherwise each update that changes the best or
// the phase prints a plain line (so logs stay readable).
#pragma once

#include <cstdio>
#include <string>

#include "search/interfaces.h"

namespace kiln::search {

class StderrProgress : public Progress {
 public:
  // tty: -1 = detect (isatty(fileno(out))), 0 = plain lines, 1 = redraw in place.
  explicit StderrProgress(std::FILE* out = stderr, int tty = -1);
  void Update(const ProgressState& s) override;
  void Line(const std::string& text) override;
  void Finish() override;
  static std::string Format(const ProgressState& s);

 private:
  std::FILE* out_;
  bool tty_;
  bool drawn_ = false;
  std::string last_phase_, last_best_;
  int last_tried_ = -1;
};

}  // namespace kiln::search

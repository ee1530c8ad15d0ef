//===- Progress.h - A progress line on stderr for slow loads ----*- C++ -*-===//
#ifndef DD_DRIVER_PROGRESS_H
#define DD_DRIVER_PROGRESS_H

#include <chrono>
#include <string>

namespace dd::driver {

/// Shows "loading NAME  42%" on stderr once a task has run for a second,
/// and only when stderr is a terminal. The line is erased when done.
class Progress {
public:
  explicit Progress(std::string Label);
  ~Progress();
  void update(double Fraction);
  void done();

private:
  std::string Label;
  std::chrono::steady_clock::time_point Begin;
  bool Enabled;
  bool Shown = false;
  int LastPercent = -1;
};

} // namespace dd::driver

#endif

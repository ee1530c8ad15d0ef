//===- Progress.h - A progress line on stderr for slow loads ----*- C++ -*-===//
#ifndef DD_SUPPORT_PROGRESS_H
#define DD_SUPPORT_PROGRESS_H

#include <chrono>
#include <string>

namespace dd {

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

/// With `--timings`, a phase prints its wall time and the process's peak
/// memory so far on stderr when it ends ("timing: load 312.4 ms, peak
/// memory 140 MB"): where the time of a command on a large trace goes.
class PhaseTimer {
public:
  explicit PhaseTimer(const char *Name);
  ~PhaseTimer() { stop(); }
  void stop();
  static void enable() { Enabled = true; }

private:
  static bool Enabled;
  const char *Name;
  std::chrono::steady_clock::time_point Begin;
  bool Running = true;
};

} // namespace dd

#endif

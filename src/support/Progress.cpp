#include "support/Progress.h"

#include <cstdio>
#include <sys/resource.h>
#include <unistd.h>

using namespace dd;

Progress::Progress(std::string L)
    : Label(std::move(L)), Begin(std::chrono::steady_clock::now()),
      Enabled(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() { done(); }

void Progress::update(double Fraction) {
  if (!Enabled)
    return;
  auto Elapsed = std::chrono::steady_clock::now() - Begin;
  if (Elapsed < std::chrono::seconds(1))
    return;
  int Percent = static_cast<int>(Fraction * 100.0);
  if (Percent > 100)
    Percent = 100;
  if (Percent == LastPercent)
    return;
  LastPercent = Percent;
  Shown = true;
  std::fprintf(stderr, "\r%s %3d%%", Label.c_str(), Percent);
  std::fflush(stderr);
}

void Progress::done() {
  if (Shown) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    Shown = false;
  }
}

bool PhaseTimer::Enabled = false;

PhaseTimer::PhaseTimer(const char *Name)
    : Name(Name), Begin(std::chrono::steady_clock::now()) {}

void PhaseTimer::stop() {
  if (!Running)
    return;
  Running = false;
  if (!Enabled)
    return;
  double Ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - Begin)
                  .count();
  struct rusage U;
  getrusage(RUSAGE_SELF, &U);
  std::fprintf(stderr, "timing: %-9s %8.1f ms, peak memory %.0f MB\n", Name, Ms,
               double(U.ru_maxrss) / 1024.0);
}

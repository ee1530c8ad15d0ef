#include "driver/Progress.h"

#include <cstdio>
#include <unistd.h>

using namespace dd::driver;

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

//===- Replay.cpp - A graph replayed as traced ----------------------------===//

#include "whatif/Replay.h"

#include "support/Progress.h"
#include "whatif/Iterations.h"

using namespace dd;
using namespace dd::whatif;

llvm::Expected<Replay> dd::whatif::replay(const graph::Graph &G,
                                          const std::vector<size_t> &Chosen) {
  PhaseTimer SimTimer("simulate");
  auto R = sim::simulate(G);
  SimTimer.stop();
  if (!R)
    return R.takeError();
  Replay Out;
  Out.R = std::move(*R);
  measuredTimes(G, Out.MStart, Out.MEnd);
  for (size_t I : Chosen) {
    const graph::Iteration &It = G.Iterations[I];
    IterationReplay Rep;
    Rep.Index = I;
    int64_t MB = measuredPointTime(G, It.Begin, Out.MEnd);
    int64_t ME = measuredPointTime(G, It.End, Out.MEnd);
    int64_t SB = sim::pointTime(G, Out.R, It.Begin);
    int64_t SE = sim::pointTime(G, Out.R, It.End);
    Rep.Measured = ME - MB;
    Rep.Replayed = SE - SB;
    Rep.MeasuredBusy = gpuBusy(G, Out.MStart, Out.MEnd, MB, ME);
    Rep.ReplayedBusy = gpuBusy(G, Out.R.Start, Out.R.End, SB, SE);
    Rep.Path = sim::criticalPath(G, Out.R, It.End, SB);
    Out.Iterations.push_back(std::move(Rep));
  }
  return Out;
}

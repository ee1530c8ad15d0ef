//===- Replay.h - A graph replayed as traced --------------------*- C++ -*-===//
//
// What `ddscript replay` reports of each chosen iteration, as values: its
// measured and replayed time, the GPU's busy time in each, and the replay's
// critical path. The command renders them as text or JSON; the Python
// module reads the critical path from them.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_REPLAY_H
#define DD_WHATIF_REPLAY_H

#include "graph/Graph.h"
#include "sim/CriticalPath.h"
#include "sim/Simulator.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace dd::whatif {

/// One chosen iteration of a replay.
struct IterationReplay {
  size_t Index = 0; ///< into the graph's iterations
  int64_t Measured = 0, Replayed = 0;
  /// The GPU streams' busy time inside the iteration, measured and
  /// replayed.
  int64_t MeasuredBusy = 0, ReplayedBusy = 0;
  /// The replay's critical path from the iteration's end back to its start.
  sim::CriticalPath Path;
  /// (replayed - measured) / measured.
  double error() const {
    return Measured ? double(Replayed - Measured) / double(Measured) : 0.0;
  }
};

/// A graph replayed as traced.
struct Replay {
  sim::SimResult R;
  /// The trace's own start and end of each task, on the simulator's axis.
  std::vector<int64_t> MStart, MEnd;
  /// Per chosen iteration, in the order chosen.
  std::vector<IterationReplay> Iterations;
};

/// Replays \p G (timed as the "simulate" phase) and reports each of
/// \p Chosen (indices into G.Iterations). Fails only where the graph
/// cannot be simulated.
llvm::Expected<Replay> replay(const graph::Graph &G,
                              const std::vector<size_t> &Chosen);

} // namespace dd::whatif

#endif

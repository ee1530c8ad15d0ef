//===- GraphBuilder.h - From a trace to a dependency graph ------*- C++ -*-===//
//
// Builds the dependency graph of the iterations of a trace, infers the
// dependencies the trace does not state (synchronisation, event waits, a
// full launch queue, cross-thread wake-ups) and calibrates every delay from
// the measured times, so that replaying the unchanged graph reproduces the
// trace. See docs/replay.md for the model.
//
//===----------------------------------------------------------------------===//
#ifndef DD_GRAPH_GRAPHBUILDER_H
#define DD_GRAPH_GRAPHBUILDER_H

#include "graph/Graph.h"
#include "trace/Trace.h"

#include "llvm/Support/Error.h"

#include <array>
#include <optional>

namespace dd::graph {

struct BuildOptions {
  /// Replay this window instead of the trace's iterations: [begin, end) in
  /// ns from the start of the trace (its first event).
  std::optional<std::pair<int64_t, int64_t>> Window;
  /// Launch-queue depth per device; 0 estimates it from the trace.
  int64_t QueueCapacity = 0;
  /// How dependency delays are set: Exact gives each binding dependency its
  /// measured delay (the replay reproduces the trace); Typical gives every
  /// dependency the typical delay of its kind and keeps only the CPU's own
  /// gaps as measured, so the replay error measures how much of the
  /// timeline the dependencies explain by themselves.
  enum class Calibration : uint8_t {
    Exact,
    Typical
  } Delays = Calibration::Exact;
};

/// What the builder found and assumed, reported by inspect and replay.
struct BuildStats {
  std::array<uint64_t, NumEdgeKinds> EdgesByKind{};
  uint64_t CpuLeaves = 0, Containers = 0, GpuTasks = 0;
  uint64_t GpuWithoutLauncher = 0; ///< GPU work whose launch is not traced
  /// Of those, work launched before the trace's first traced call (its
  /// correlation id lower): queued before the trace began.
  uint64_t GpuQueuedBefore = 0;
  uint64_t OverlappingLeaves = 0; ///< CPU calls overlapping on one thread
  /// GPU work that starts over 2 us before the work before it on its stream
  /// ends (the replay runs a stream's work one at a time), and the most.
  uint64_t OverlappingGpu = 0;
  int64_t MaxGpuOverlap = 0;
  uint64_t ClampedDelays = 0; ///< measured order contradicted a dependency
  /// Inferred dependencies the measured times disprove, by edge kind.
  std::array<uint64_t, NumEdgeKinds> DroppedByKind{};
  bool HasCudaSyncEvents = false; ///< exact sync/wait records were present
  int64_t QueueCapacity = 0;
  bool QueueCapacityMeasured = false;
  uint64_t QueueBlockedCalls = 0;
  int64_t TypicalLaunchLatency = 0; ///< ns, median over launch-bound work
  int64_t TypicalStreamGap = 0;     ///< ns, median gap between queued work
  int64_t TypicalWake = 0;          ///< ns, median return after a wait
  std::string IterationSource;      ///< "ProfilerStep", "Optimizer.step", ...
};

/// Builds the graph over all complete iterations of \p T (or the window in
/// \p Opts). Fails with a one-line reason when the trace has no GPU work or
/// no complete iteration.
llvm::Expected<Graph> buildGraph(const trace::Trace &T,
                                 const BuildOptions &Opts = {},
                                 BuildStats *Stats = nullptr);

/// Whether \p T holds any GPU work (kernels, copies, sets).
bool hasGpuWork(const trace::Trace &T);
/// The error text for a trace without GPU work.
std::string noGpuWorkMessage(const trace::Trace &T);

/// The ProfilerStep#N annotations that make a trace's iterations, as
/// buildGraph finds them: those on the track that holds most of them, by
/// start, zero-length ones left out. \p Tied is set when another track holds
/// as many (the choice between them then rests on track ids, which depend on
/// every event read before).
std::vector<trace::EventId> profilerSteps(const trace::Trace &T,
                                          bool *Tied = nullptr);
/// N of a ProfilerStep#N event of profilerSteps().
int64_t profilerStepNumberOf(const trace::Trace &T, trace::EventId E);

/// The trace time of the first event (the zero of --window).
int64_t traceBegin(const trace::Trace &T);

} // namespace dd::graph

#endif

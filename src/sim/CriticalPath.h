//===- CriticalPath.h - What the end of an iteration waited on --*- C++ -*-===//
//
// Walks back from an iteration's end through whatever bound each point in
// the simulation (a task's own run, the gap after its resource predecessor,
// a dependency's delay) to the iteration's start, and totals the time by
// resource, by what the time was (running, CPU-side gaps, launch latency,
// waiting), by layer and by phase.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SIM_CRITICALPATH_H
#define DD_SIM_CRITICALPATH_H

#include "sim/Simulator.h"

#include <string>
#include <vector>

namespace dd::sim {

enum class SegmentKind : uint8_t {
  Run,   ///< a task running on its resource
  Gap,   ///< time between a task and its resource predecessor
  Delay, ///< a dependency's delay (launch latency, wake-up, ...)
};

struct PathSegment {
  SegmentKind Kind;
  TaskId Task;   ///< the task running, or the one that waited
  uint32_t Edge; ///< for Delay: index into Graph::Lowered
  int64_t Begin, End;
};

struct CriticalPath {
  std::vector<PathSegment> Segments; ///< from the iteration's end backwards
  int64_t Length = 0;
};

/// The critical path of \p R between simulated times \p From and the point
/// \p To (normally an iteration's end).
CriticalPath criticalPath(const Graph &G, const SimResult &R,
                          const graph::Iteration::Point &To, int64_t From);

/// A named share of a critical path.
struct PathShare {
  std::string Label;
  int64_t Time;
};

/// Totals by what the time was: "GPU 0 stream 7: running", "thread 1262:
/// gaps between calls", "launch latency", ...; largest first.
std::vector<PathShare> sharesByActivity(const Graph &G, const CriticalPath &P);
/// Running time on the path by layer (tasks without one: "(no layer)").
std::vector<PathShare> sharesByLayer(const Graph &G, const CriticalPath &P);
/// Running time on the path by phase.
std::vector<PathShare> sharesByPhase(const Graph &G, const CriticalPath &P);

/// What bounds the run: the path's time in five kinds, largest first, those
/// with none left out. "GPU work" (GPU operations running, the gaps between
/// them, cross-stream waits), "communication" (collectives running),
/// "data loading" (the CPU inside a DataLoader's __next__), "framework
/// overhead" (the CPU's calls and the time between them, launch latency),
/// "synchronisation" (the CPU waiting for the GPU or another thread).
std::vector<PathShare> sharesByBound(const Graph &G, const CriticalPath &P);

/// The tasks that ran longest on the path, by name: with their resource
/// (of the last seen), how many ran and their running time; longest first,
/// at most \p N.
struct PathTask {
  std::string Name, Resource;
  uint64_t Count = 0;
  int64_t Time = 0;
};
std::vector<PathTask>
longestTasks(const Graph &G, llvm::ArrayRef<CriticalPath> Paths, size_t N);

} // namespace dd::sim

#endif

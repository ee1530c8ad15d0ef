//===- Simulator.h - Deterministic replay of a dependency graph -*- C++ -*-===//
//
// A discrete-event simulation of a finalized Graph. Each live leaf task has
// a start point and an end point:
//   start = max(resource predecessor's end + Gap, incoming start edges)
//   end   = max(start + Dur, incoming end edges)
// CPU threads and GPU streams keep their recorded order (Ordering::Program);
// communication channels, and any resource a schedule overrides, pick among
// ready tasks by readiness or priority, ties broken by task id. The same
// graph always gives the same result, to the nanosecond.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SIM_SIMULATOR_H
#define DD_SIM_SIMULATOR_H

#include "graph/Graph.h"

#include "llvm/Support/Error.h"

#include <algorithm>
#include <vector>

namespace dd::sim {

using graph::Graph;
using graph::TaskId;

/// What bound a point: an index into Graph::Lowered, or one of these.
constexpr uint32_t BindOrigin = ~0u;       ///< nothing: time 0 plus Gap
constexpr uint32_t BindResource = ~0u - 1; ///< the resource predecessor
constexpr uint32_t BindOwn = ~0u - 2;      ///< the task's own duration
constexpr uint32_t BindDispatch = ~0u - 3; ///< a dynamic resource freed up
/// The last member of the task's collective arrived (SimResult::LastArrived).
constexpr uint32_t BindCollective = ~0u - 4;

/// Per-resource choices that change no dependency (Daydream's schedule
/// primitive). Empty vectors mean "as in the graph".
struct SchedulePolicy {
  std::vector<graph::Ordering> ResourceOrder; ///< by ResourceId
  std::vector<int64_t> Priority;              ///< by TaskId; lower first
};

struct SimResult {
  /// Per task, ns from the graph's origin; NoTime for removed tasks.
  std::vector<int64_t> Start, End;
  std::vector<uint32_t> StartBy, EndBy; ///< leaves only
  int64_t Makespan = 0;
  /// Graphs with collectives: when each member could have started (the
  /// rest of its wait is for the other members; NoTime for other tasks),
  /// and per collective the member that arrived last (NoTask if none live).
  std::vector<int64_t> Arrival;
  std::vector<TaskId> LastArrived;
  std::vector<uint32_t> CollectiveOf; ///< by task; ~0u: none (or not joined)
  /// Whether the simulation stopped early (simulate's \p Until): some
  /// points were left unsimulated, their times NoTime, and Makespan is the
  /// latest end simulated.
  bool Stopped = false;
};

/// Durations and gaps that replace the graph's for one simulation (by
/// task, as many as G has), so that what-ifs that only change times can
/// share one graph across threads. Each no larger than the graph's.
struct TimeOverride {
  llvm::ArrayRef<int64_t> Dur, Gap;
};

/// Simulates \p G (finalized), with \p Times instead of its durations and
/// gaps when given. Fails only if the graph cannot finish (a dependency
/// cycle a schedule introduced).
///
/// With \p Until, the simulation may stop early: every leaf's start and
/// end at or before Until is simulated, timed as the whole simulation times
/// it, and so are the later ones it simulated on the way; the others are
/// NoTime (SimResult::Stopped), and so is a container's start or end where
/// its first or last leaf's is. Durations, gaps and delays may be negative
/// (clock noise), so it goes on past Until by the sum of the negative ones:
/// a point it leaves out is later than Until plus that sum, and no point
/// that follows from it is at or before Until. The same graph and Until
/// always stop at the same point. A graph that cannot finish may go
/// unnoticed: a caller missing a point it needs simulates again without
/// Until.
llvm::Expected<SimResult> simulate(const Graph &G,
                                   const SchedulePolicy *Policy = nullptr,
                                   const TimeOverride *Times = nullptr,
                                   int64_t Until = graph::MaxTime);

/// The simulated time of an iteration boundary.
int64_t pointTime(const Graph &G, const SimResult &R,
                  const graph::Iteration::Point &P);
/// The simulated length of iteration \p I (one of G.Iterations): from its
/// begin to its end boundary. When a model removed the boundaries and all
/// of the iteration's work around them on their thread (the boundaries then
/// cross), the span of the iteration's remaining tasks; 0 when none remain.
int64_t iterationTime(const Graph &G, const SimResult &R,
                      const graph::Iteration &I);
/// What each iteration of G.Iterations put on the resources, and when it
/// was done, in one pass over the tasks.
struct IterationLoad {
  /// Per iteration, per resource: the sum of the durations of the
  /// iteration's live leaves there (GPU work counts in the iteration that
  /// launched it).
  std::vector<std::vector<int64_t>> Work;
  /// Per iteration: the latest end in \p R of its live leaves (INT64_MIN
  /// when none has run).
  std::vector<int64_t> Done;
};
/// \p G's iteration load with the graph as it is, \p R a simulation of it.
IterationLoad iterationLoad(const Graph &G, const SimResult &R);

/// Where iteration \p I begins and ends on \p R's time axis, as
/// iterationTime measures it.
std::pair<int64_t, int64_t> iterationSpan(const Graph &G, const SimResult &R,
                                          const graph::Iteration &I);

} // namespace dd::sim

#endif

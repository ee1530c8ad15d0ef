//===- Edit.h - Changing task durations -------------------------*- C++ -*-===//
//
// The one implementation of "make these tasks faster or slower", used by the
// .dd VM and by C++ callers alike, so both give the same graph to the
// nanosecond. A container stands for the calls it encloses: its leaves'
// durations and the gaps between them change; time before its first leaf
// and after its last (its own lead and trail) does not.
//
//===----------------------------------------------------------------------===//
#ifndef DD_GRAPH_EDIT_H
#define DD_GRAPH_EDIT_H

#include "graph/Graph.h"

#include "llvm/ADT/ArrayRef.h"

#include "llvm/ADT/BitVector.h"

namespace dd::graph {

/// A duration scaled: round(D * Factor), or round(D / Factor) when
/// \p Divide, to the nearest nanosecond (halves away from zero); at most
/// MaxTime (the simulator then refuses the graph).
int64_t scaledDuration(int64_t D, double Factor, bool Divide);

/// Scales the tasks of \p Set (leaves, and containers through their
/// leaves and inner gaps); each leaf and gap changes once even when the set
/// holds both a container and what it encloses. Marks changed tasks with
/// TF_Changed and returns how many leaves changed.
uint64_t scaleTasks(Graph &G, const llvm::BitVector &Set, double Factor,
                    bool Divide);
/// The same for the tasks of \p Tasks; costs what they hold, not the
/// graph's size.
uint64_t scaleTasks(Graph &G, llvm::ArrayRef<TaskId> Tasks, double Factor,
                    bool Divide);

/// Sets the duration of \p T: a leaf's directly; a container's by scaling
/// its leaves and inner gaps so that they add up to \p Ns.
void setTaskDuration(Graph &G, TaskId T, int64_t Ns);

/// The time a container's leaves and inner gaps add up to (a leaf's own
/// duration for a leaf).
int64_t innerTime(const Graph &G, TaskId T);

/// Every CPU leaf's duration and the gap before it on its thread, times
/// \p Factor (rounded as scaledDuration): CPU work as a run without the
/// profiler would do it (the profiler's cost is on the CPU, per operator).
/// GPU work, dependency delays and containers' own lead and trail stay.
/// Leaves inserted by a model have no measured time: call it on the trace's
/// graph, before a model changes it.
void scaleCpuTime(Graph &G, double Factor);
/// The same into \p Dur and \p Gap (copies of G's), leaving G as it is.
void scaleCpuTime(const Graph &G, double Factor, std::vector<int64_t> &Dur,
                  std::vector<int64_t> &Gap);

/// What removeProfilerCost took out.
struct ProfilerCost {
  uint64_t Events = 0; ///< recorded CPU events (operators, calls, ranges)
  int64_t Removed = 0; ///< nanoseconds of CPU time taken out
};

/// The profiler's own cost taken out of the CPU work, per recorded event:
/// each CPU event (an operator, a runtime call, a range) cost its thread
/// \p PerEvent ns to record. A leaf carries the cost of itself and of every
/// container that starts with it; it comes out of the gap before the leaf
/// first (where a recorded event's entry callbacks run), then out of the
/// leaf, never more than half of it (no call becomes free). Leaves a model
/// inserted (no measured time) and GPU work stay. Into \p Dur and \p Gap.
/// The counts are over iteration \p CountIteration's leaves (all the
/// graph's with -1); the cost comes out of every iteration.
ProfilerCost removeProfilerCost(const Graph &G, int64_t PerEvent,
                                std::vector<int64_t> &Dur,
                                std::vector<int64_t> &Gap,
                                int32_t CountIteration = -1);

} // namespace dd::graph

#endif

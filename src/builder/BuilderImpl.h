//===- BuilderImpl.h - State shared by the graph builder's passes -*- C++ -*-=//
//
// Private to src/graph. The builder runs as a sequence of passes over one
// BuildContext: iterations, tasks, dependencies, calibration, annotation.
//
//===----------------------------------------------------------------------===//
#ifndef DD_GRAPH_BUILDERIMPL_H
#define DD_GRAPH_BUILDERIMPL_H

#include "builder/GraphBuilder.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <string>
#include <vector>

namespace dd::graph::detail {

using trace::EventId;

/// An iteration as found in the trace, before tasks exist.
struct IterationWindow {
  int64_t Number;
  int64_t Begin, End; ///< trace time
  Iteration::PointKind BeginKind, EndKind;
  EventId BeginEvent = trace::NoEvent, EndEvent = trace::NoEvent;
  std::string Label;
};

struct BuildContext {
  const trace::Trace &T;
  const BuildOptions &Opts;
  BuildStats &Stats;
  Graph G;

  int64_t W0 = 0, W1 = 0; ///< the replayed window, trace time
  std::vector<IterationWindow> Windows;

  std::vector<TaskId> TaskOfEvent; ///< NoTask for events not in the graph
  /// CPU leaves per thread resource, in time order.
  std::vector<std::vector<TaskId>> ThreadLeaves;
  /// GPU work per stream resource, in time order.
  std::vector<std::vector<TaskId>> StreamOps;
  /// Per device: GPU work in launch order (call start), with its call.
  struct Launch {
    int64_t CallStart;
    TaskId Call; ///< NoTask for work whose launch is not traced
    TaskId Op;
  };
  llvm::DenseMap<int32_t, std::vector<Launch>> DeviceLaunches;
  /// Per thread resource: (call start, stream resource) of its launches.
  std::vector<std::vector<std::pair<int64_t, ResourceId>>> ThreadLaunches;
  llvm::DenseMap<int64_t, TaskId> CallByCorrelation;
  /// Devices of the GPU streams, for device-wide synchronisation.
  llvm::DenseMap<int32_t, llvm::SmallVector<ResourceId, 4>> DeviceStreams;

  /// Graph::CommGroups by "name ranks", as the trace spells them.
  llvm::StringMap<uint32_t> CommGroupIndex;

  BuildContext(const trace::Trace &T, const BuildOptions &O, BuildStats &S)
      : T(T), Opts(O), Stats(S) {}

  /// The graph's id for the trace's string \p S (each distinct name is
  /// interned once, not once per task).
  StringId graphName(StringId S) {
    if (GraphNames.empty())
      GraphNames.assign(T.Strings.size(), ~0u);
    StringId &N = GraphNames[S];
    if (N == ~0u)
      N = G.Strings.intern(T.str(S));
    return N;
  }
  std::vector<StringId> GraphNames;

  int64_t mStart(TaskId X) const { return G.MeasuredStart[X]; }
  int64_t mEnd(TaskId X) const { return G.MeasuredStart[X] + G.MeasuredDur[X]; }
  /// GPU tasks launched before the trace's first traced call: without a
  /// traced launch, their correlation id below every traced call's. They
  /// were queued before anything the trace holds.
  llvm::BitVector QueuedBefore;
  static constexpr int64_t BeforeTrace = INT64_MIN / 4;
  /// The launch time of GPU task \p Op: its call's start; BeforeTrace for
  /// work queued before the trace; else its own start.
  int64_t launchTime(TaskId Op) const {
    TaskId L = G.Launcher[Op];
    if (L != NoTask)
      return mStart(L);
    return Op < QueuedBefore.size() && QueuedBefore[Op] ? BeforeTrace
                                                        : mStart(Op);
  }
  /// The last GPU task on stream \p S launched before trace time \p Ts.
  TaskId lastLaunchedBefore(ResourceId S, int64_t Ts) const;
  /// The first GPU task on stream \p S launched at or after \p Ts.
  TaskId firstLaunchedAfter(ResourceId S, int64_t Ts) const;
  /// The stream that thread \p Thread last launched work onto before \p Ts.
  ResourceId streamLaunchedBefore(ResourceId Thread, int64_t Ts) const;
  /// Like streamLaunchedBefore, skipping stream \p Not.
  ResourceId streamLaunchedBeforeExcept(ResourceId Thread, int64_t Ts,
                                        ResourceId Not) const;
  /// The stream that thread \p Thread next launches work onto after \p Ts.
  ResourceId streamLaunchedAfter(ResourceId Thread, int64_t Ts) const;

  void addEdge(TaskId Src, TaskId Dst, EdgeKind K, Anchor A) {
    G.addEdge(Src, Dst, K, A, 0);
    ++Stats.EdgesByKind[static_cast<unsigned>(K)];
  }
};

/// The events \p Keep takes on the track that has most of them, by start
/// (then id). \p Tied is set when another track has as many (the lower
/// track id wins). Iteration markers and the GPU work whose period is a
/// step (Period.cpp) are picked so.
template <typename Pred>
std::vector<EventId> eventsOnBusiestTrack(const trace::Trace &T, Pred Keep,
                                          bool *Tied = nullptr) {
  llvm::DenseMap<trace::TrackId, std::vector<EventId>> ByTrack;
  for (EventId E = 0; E < T.numEvents(); ++E)
    if (Keep(E))
      ByTrack[T.TrackOf[E]].push_back(E);
  std::vector<EventId> Best;
  trace::TrackId BestTrack = ~0u;
  for (auto &[Track, Events] : ByTrack)
    if (Events.size() > Best.size() ||
        (Events.size() == Best.size() && Track < BestTrack)) {
      Best = Events;
      BestTrack = Track;
    }
  if (Tied)
    *Tied = llvm::count_if(ByTrack, [&](const auto &KV) {
              return KV.second.size() == Best.size();
            }) > 1;
  std::sort(Best.begin(), Best.end(), [&](EventId A, EventId B) {
    return std::make_pair(T.Start[A], A) < std::make_pair(T.Start[B], B);
  });
  return Best;
}

/// Finds the iterations (ProfilerStep#N, Optimizer.step, or the window).
llvm::Error findIterations(BuildContext &C);
/// Steps found from the repeating sequence of GPU work where the trace has
/// no step markers (Period.cpp): false where it does not repeat.
bool detectSteps(BuildContext &C);
/// Creates resources and tasks: CPU nesting, leaves, GPU work.
llvm::Error createTasks(BuildContext &C);
/// Records communication task \p X's process group (Graph::CommGroups)
/// where its event \p E names one.
void noteCommGroup(BuildContext &C, trace::EventId E, TaskId X);
/// Launch, synchronisation, event-wait and launch-queue dependencies.
void addGpuDependencies(BuildContext &C);
/// Cross-thread wake-ups and forward-to-backward links.
void addCpuDependencies(BuildContext &C);
/// Sets every delay from the measured times (see docs/replay.md).
void calibrate(BuildContext &C);
/// Phases, layers and iteration membership.
void annotate(BuildContext &C);

/// Median of \p V (which it reorders); \p Default when empty.
int64_t median(std::vector<int64_t> &V, int64_t Default);

} // namespace dd::graph::detail

#endif

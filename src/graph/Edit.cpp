#include "graph/Edit.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::graph;

int64_t graph::scaledDuration(int64_t D, double Factor, bool Divide) {
  double V = Divide ? static_cast<double>(D) / Factor
                    : static_cast<double>(D) * Factor;
  if (!(std::fabs(V) < static_cast<double>(MaxTime)))
    return V < 0 ? -MaxTime : MaxTime; // also NaN
  return static_cast<int64_t>(std::llround(V));
}

namespace {
/// Calls F(leaf, GapIsInner) for each leaf of container C in order.
template <typename Fn> void forLeaves(const Graph &G, TaskId C, Fn F) {
  std::vector<TaskId> Leaves = G.leavesOf(C);
  for (size_t I = 0; I < Leaves.size(); ++I)
    F(Leaves[I], I > 0);
}
} // namespace

uint64_t graph::scaleTasks(Graph &G, llvm::ArrayRef<TaskId> Tasks,
                           double Factor, bool Divide) {
  if (!G.finalized())
    G.finalize();
  // Each leaf once, whatever containers of the set hold it: what the set
  // touches, not the graph's size (a model that scales one task at a time
  // pays for that task).
  llvm::DenseSet<TaskId> DurDone, GapDone;
  uint64_t Changed = 0;
  auto Leaf = [&](TaskId L, bool InnerGap) {
    if (DurDone.insert(L).second) {
      G.Dur[L] = scaledDuration(G.Dur[L], Factor, Divide);
      G.Flags[L] |= TF_Changed;
      ++Changed;
    }
    if (InnerGap && GapDone.insert(L).second)
      G.Gap[L] = scaledDuration(G.Gap[L], Factor, Divide);
  };
  for (TaskId X : Tasks) {
    if (G.isRemoved(X))
      continue;
    if (G.isLeaf(X)) {
      Leaf(X, false);
      continue;
    }
    G.Flags[X] |= TF_Changed;
    forLeaves(G, X, Leaf);
  }
  return Changed;
}

uint64_t graph::scaleTasks(Graph &G, const llvm::BitVector &Set, double Factor,
                           bool Divide) {
  std::vector<TaskId> Tasks;
  for (int T = Set.find_first(); T >= 0; T = Set.find_next(T))
    Tasks.push_back(static_cast<TaskId>(T));
  return scaleTasks(G, Tasks, Factor, Divide);
}

int64_t graph::innerTime(const Graph &G, TaskId T) {
  if (G.isLeaf(T))
    return G.Dur[T];
  int64_t Sum = 0;
  forLeaves(G, T, [&](TaskId L, bool InnerGap) {
    Sum += G.Dur[L] + (InnerGap ? G.Gap[L] : 0);
  });
  return Sum;
}

void graph::setTaskDuration(Graph &G, TaskId T, int64_t Ns) {
  if (G.isLeaf(T)) {
    G.Dur[T] = Ns;
    G.Flags[T] |= TF_Changed;
    return;
  }
  int64_t Now = innerTime(G, T);
  if (Now <= 0)
    return;
  double Factor = static_cast<double>(Ns) / static_cast<double>(Now);
  scaleTasks(G, llvm::ArrayRef<TaskId>(T), Factor, false);
}

void dd::graph::scaleCpuTime(const Graph &G, double Factor,
                             std::vector<int64_t> &Dur,
                             std::vector<int64_t> &Gap) {
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.isGpu(X) || !G.isLeaf(X) || G.Res[X] == NoResource ||
        G.Resources[G.Res[X]].Kind != ResourceKind::CpuThread)
      continue;
    Dur[X] = scaledDuration(G.Dur[X], Factor, false);
    Gap[X] = scaledDuration(G.Gap[X], Factor, false);
  }
}

void dd::graph::scaleCpuTime(Graph &G, double Factor) {
  scaleCpuTime(G, Factor, G.Dur, G.Gap);
}

dd::graph::ProfilerCost dd::graph::removeProfilerCost(const Graph &G,
                                                      int64_t PerEvent,
                                                      std::vector<int64_t> &Dur,
                                                      std::vector<int64_t> &Gap,
                                                      int32_t CountIteration) {
  ProfilerCost Out;
  if (PerEvent <= 0)
    return Out;
  // Events starting at each leaf: itself and the containers it opens.
  std::vector<uint32_t> Opens(G.numTasks(), 0);
  for (TaskId C = 0; C < G.numTasks(); ++C)
    if (G.isContainer(C) && !G.isRemoved(C) && G.FirstLeaf[C] != NoTask &&
        G.MeasuredDur[C] != NoTime)
      ++Opens[G.FirstLeaf[C]];
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.isGpu(X) || !G.isLeaf(X) || G.isRemoved(X) ||
        G.Res[X] == NoResource || G.MeasuredDur[X] == NoTime ||
        G.Resources[G.Res[X]].Kind != ResourceKind::CpuThread)
      continue;
    uint64_t Events = 1 + Opens[X];
    bool Counted = CountIteration < 0 || G.IterationOf[X] == CountIteration;
    if (Counted)
      Out.Events += Events;
    int64_t Cost = static_cast<int64_t>(std::min<uint64_t>(
        Events * static_cast<uint64_t>(PerEvent), uint64_t(MaxTime)));
    int64_t FromGap =
        std::clamp<int64_t>(Cost, 0, std::max<int64_t>(Gap[X], 0));
    Gap[X] -= FromGap;
    int64_t FromDur = std::clamp<int64_t>(Cost - FromGap, 0,
                                          std::max<int64_t>(Dur[X], 0) / 2);
    Dur[X] -= FromDur;
    if (Counted)
      Out.Removed += FromGap + FromDur;
  }
  return Out;
}

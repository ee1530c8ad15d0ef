#include "GraphFixture.h"

#include "graph/Edit.h"
#include "sim/Simulator.h"

#include <doctest/doctest.h>

using namespace ddtest;

TEST_CASE("removing a task bridges the dependencies through it") {
  MiniGraph M;
  ResourceId T1 = M.thread("t1"), T2 = M.thread("t2"), T3 = M.thread("t3");
  TaskId A = M.task(T1, "a", 10);
  TaskId R = M.task(T2, "r", 100);
  TaskId B = M.task(T3, "b", 1);
  M.edge(A, R, Anchor::EndToStart, 4);
  M.edge(R, B, Anchor::EndToStart, 6);
  llvm::BitVector Set(M.G.numTasks());
  Set.set(R);
  M.G.removeTasks(Set);
  REQUIRE(M.G.finalize());
  auto Res = dd::sim::simulate(M.G);
  REQUIRE(static_cast<bool>(Res));
  // b now waits for a directly, with both delays.
  CHECK(Res->Start[B] == 10 + 4 + 6);
  CHECK(Res->Start[R] == NoTime);
  bool Bridged = false;
  for (const Edge &E : M.G.Lowered)
    Bridged |= E.Kind == EdgeKind::Bridge && E.Src == A && E.Dst == B;
  CHECK(Bridged);
}

TEST_CASE("removing a call inside a thread takes its own time, not the "
          "time before it") {
  MiniGraph M;
  ResourceId T = M.thread("t");
  TaskId A = M.task(T, "a", 10);
  TaskId R = M.task(T, "r", 50, 5);
  TaskId B = M.task(T, "b", 1, 2);
  llvm::BitVector Set(M.G.numTasks());
  Set.set(R);
  M.G.removeTasks(Set);
  REQUIRE(M.G.finalize());
  CHECK(M.G.PrevOnRes[B] == A);
  auto Res = dd::sim::simulate(M.G);
  REQUIRE(static_cast<bool>(Res));
  // a ends at 10; r's 50 ns are gone, the 5 ns before it and b's 2 stay.
  CHECK(Res->Start[B] == 17);
}

TEST_CASE("removing a container removes its leaves and keeps outside time") {
  MiniGraph M;
  ResourceId T = M.thread("t");
  M.task(T, "a", 10);
  TaskId C = M.G.addTask(TaskKind::CpuOp, "aten::relu", NoResource, 0);
  M.G.Flags[C] |= TF_Container;
  TaskId X = M.task(T, "x", 5, 7); // 4 ns before relu starts, 3 inside
  TaskId Y = M.task(T, "y", 5, 1);
  TaskId B = M.task(T, "b", 1, 2);
  M.G.Parent[X] = M.G.Parent[Y] = C;
  M.G.FirstLeaf[C] = X;
  M.G.LastLeaf[C] = Y;
  M.G.Lead[C] = 3;
  REQUIRE(M.G.finalize());
  llvm::BitVector Set(M.G.numTasks());
  Set.set(C);
  M.G.removeTasks(Set);
  REQUIRE(M.G.finalize());
  CHECK(M.G.isRemoved(X));
  CHECK(M.G.isRemoved(Y));
  auto Res = dd::sim::simulate(M.G);
  REQUIRE(static_cast<bool>(Res));
  // b keeps its own gap plus the 4 ns before relu began.
  CHECK(Res->Start[B] == 10 + 2 + 4);
}

TEST_CASE("edges on containers are lowered onto their leaves") {
  MiniGraph M;
  ResourceId T1 = M.thread("t1"), T2 = M.thread("t2");
  TaskId C = M.G.addTask(TaskKind::CpuOp, "fwd", NoResource, 0);
  M.G.Flags[C] |= TF_Container;
  TaskId X = M.task(T1, "x", 5, 1);
  M.G.Parent[X] = C;
  M.G.FirstLeaf[C] = M.G.LastLeaf[C] = X;
  M.G.Trail[C] = 2;
  TaskId B = M.task(T2, "b", 1);
  M.edge(C, B, Anchor::EndToStart, 1);
  REQUIRE(M.G.finalize());
  REQUIRE(M.G.Lowered.size() == 1);
  CHECK(M.G.Lowered[0].Src == X);
  CHECK(M.G.Lowered[0].Delay == 3);
}

TEST_CASE("scaling CPU time leaves GPU work and dependency delays alone") {
  MiniGraph M;
  ResourceId T = M.thread("t"), S = M.stream("s");
  TaskId A = M.task(T, "a", 100, 10);
  TaskId B = M.task(T, "b", 40, 20);
  TaskId K = M.task(S, "k", 300, 8, TaskKind::Kernel);
  M.edge(A, K, Anchor::EndToStart, 6, EdgeKind::Launch);
  REQUIRE(M.G.finalize());
  std::vector<int64_t> Dur = M.G.Dur, Gap = M.G.Gap;
  dd::graph::scaleCpuTime(M.G, 0.5, Dur, Gap);
  CHECK(Dur[A] == 50);
  CHECK(Gap[A] == 5);
  CHECK(Dur[B] == 20);
  CHECK(Gap[B] == 10);
  CHECK(Dur[K] == 300);
  CHECK(Gap[K] == 8);
  CHECK(M.G.Dur[A] == 100); // the copy only
  dd::graph::scaleCpuTime(M.G, 0.5);
  CHECK(M.G.Dur == Dur);
  auto Res = dd::sim::simulate(M.G);
  REQUIRE(static_cast<bool>(Res));
  // a: 5..55; the launch delay stays 6 ns.
  CHECK(Res->Start[K] >= 55 + 6);
}

namespace {
/// A thread launching onto two streams: \p Calls calls, every one a kernel
/// on stream 0, every third one a second on stream 1.
struct LaunchGraph {
  MiniGraph M;
  ResourceId T, S0, S1;
  std::vector<TaskId> Calls;
  explicit LaunchGraph(size_t N) {
    T = M.thread("t");
    S0 = M.stream("s0");
    S1 = M.stream("s1");
    for (size_t I = 0; I < N; ++I)
      Calls.push_back(M.task(T, "aten::op", 5, 1));
    for (size_t I = 0; I < N; ++I) {
      TaskId K = M.task(S0, "k", 3, 0, TaskKind::Kernel);
      M.G.Launcher[K] = Calls[I];
      if (I % 3 == 0) {
        TaskId K1 = M.task(S1, "k1", 3, 0, TaskKind::Kernel);
        M.G.Launcher[K1] = Calls[I];
      }
    }
  }
  /// What a scan of every task finds (the definition the index answers).
  std::vector<TaskId> scanLaunched(TaskId C) const {
    std::vector<TaskId> Out;
    for (TaskId X = 0; X < M.G.numTasks(); ++X)
      if (M.G.Launcher[X] == C)
        Out.push_back(X);
    return Out;
  }
  std::vector<TaskId> scanFrontier(uint32_t Pos) const {
    const Graph &G = M.G;
    std::vector<TaskId> Out;
    for (ResourceId S : {S0, S1}) {
      TaskId Best = NoTask;
      for (TaskId X = 0; X < G.numTasks(); ++X) {
        TaskId L = G.Launcher[X];
        if (G.Res[X] == S && L != NoTask && !G.isRemoved(X) &&
            !G.isRemoved(L) && G.PosOnRes[L] <= Pos &&
            (Best == NoTask || G.PosOnRes[L] >= G.PosOnRes[G.Launcher[Best]]))
          Best = X;
      }
      if (Best != NoTask)
        Out.push_back(Best);
    }
    return Out;
  }
};
} // namespace

TEST_CASE("the launch index answers what a scan of the graph does, with "
          "work linear in the graph") {
  LaunchGraph L(300);
  REQUIRE(L.M.G.finalize());
  const Graph &G = L.M.G;
  for (TaskId C : L.Calls) {
    std::vector<TaskId> Got;
    G.launchedBy(C, Got);
    CHECK(Got == L.scanLaunched(C));
    Got.clear();
    G.launchFrontier(L.T, G.PosOnRes[C], Got);
    CHECK(Got == L.scanFrontier(G.PosOnRes[C]));
  }
  // Asking for every call's kernels and frontier costs the index's build
  // and what the answers hold, not the graph per call: the old scans did
  // 300 x 800 visits here.
  CHECK(G.lookupWork() < 8 * G.numTasks());

  // Kernels a model adds later are found, and removed ones skipped.
  Graph &W = L.M.G;
  TaskId Added = L.M.task(L.S1, "added", 2, 0, TaskKind::Kernel);
  W.Launcher[Added] = L.Calls[1];
  std::vector<TaskId> Got;
  W.launchedBy(L.Calls[1], Got);
  CHECK(Got == L.scanLaunched(L.Calls[1]));
  Got.clear();
  W.launchFrontier(L.T, W.PosOnRes[L.Calls[2]], Got);
  CHECK(Got == std::vector<TaskId>{Got[0], Added});
  llvm::BitVector Gone(W.numTasks());
  Gone.set(Added);
  W.removeTasks(Gone);
  REQUIRE(W.finalize());
  Got.clear();
  W.launchFrontier(L.T, W.PosOnRes[L.Calls[2]], Got);
  CHECK(Got == L.scanFrontier(W.PosOnRes[L.Calls[2]]));
}

TEST_CASE("the profiler's cost per event comes out of the gap before a "
          "call, then out of at most half the call") {
  MiniGraph M;
  ResourceId T = M.thread("t"), S = M.stream("s");
  TaskId A = M.task(T, "aten::a", 10, 3);
  // A container opening on b: b carries two events.
  TaskId C = M.G.addTask(TaskKind::CpuOp, "aten::outer", NoResource, 0);
  M.G.Flags[C] |= TF_Container;
  TaskId B = M.task(T, "aten::b", 8, 1);
  M.G.Parent[B] = C;
  M.G.FirstLeaf[C] = M.G.LastLeaf[C] = B;
  TaskId K = M.task(S, "kernel", 50, 0, TaskKind::Kernel);
  M.G.Launcher[K] = B;
  for (TaskId X : {A, B, C, K})
    M.G.MeasuredDur[X] = M.G.Dur[X];
  TaskId Added = M.task(T, "inserted", 20, 20); // no measured time
  REQUIRE(M.G.finalize());
  std::vector<int64_t> Dur = M.G.Dur, Gap = M.G.Gap;
  dd::graph::ProfilerCost Cost =
      dd::graph::removeProfilerCost(M.G, 4, Dur, Gap);
  // a: 4 ns, 3 from its gap, 1 from its 10. b: 8 ns (itself and outer),
  // 1 from its gap, then 4 of its 8 at most.
  CHECK(Gap[A] == 0);
  CHECK(Dur[A] == 9);
  CHECK(Gap[B] == 0);
  CHECK(Dur[B] == 4);
  CHECK(Dur[K] == 50);
  CHECK(Dur[Added] == 20);
  CHECK(Gap[Added] == 20);
  CHECK(Cost.Events == 3);
  CHECK(Cost.Removed == 4 + 5);
  // Nothing at a cost of zero.
  std::vector<int64_t> Dur0 = M.G.Dur, Gap0 = M.G.Gap;
  CHECK(dd::graph::removeProfilerCost(M.G, 0, Dur0, Gap0).Removed == 0);
  CHECK(Dur0 == M.G.Dur);
}

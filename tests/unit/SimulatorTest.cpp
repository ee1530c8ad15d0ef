#include "GraphFixture.h"

#include "sim/CriticalPath.h"
#include "sim/Simulator.h"

#include <doctest/doctest.h>

using namespace ddtest;
using namespace dd::sim;

namespace {
SimResult run(Graph &G, const SchedulePolicy *P = nullptr) {
  std::string Err;
  REQUIRE(G.finalize(&Err));
  auto R = simulate(G, P);
  REQUIRE(static_cast<bool>(R));
  return std::move(*R);
}
} // namespace

TEST_CASE("tasks on a resource run in order, each after its gap") {
  MiniGraph M;
  ResourceId T = M.thread("main");
  TaskId A = M.task(T, "a", 10, 2);
  TaskId B = M.task(T, "b", 5, 3);
  SimResult R = run(M.G);
  CHECK(R.Start[A] == 2);
  CHECK(R.End[A] == 12);
  CHECK(R.Start[B] == 15);
  CHECK(R.End[B] == 20);
  CHECK(R.StartBy[B] == BindResource);
  CHECK(R.Makespan == 20);
}

TEST_CASE("a kernel starts after its launch and after the stream frees up") {
  MiniGraph M;
  ResourceId T = M.thread("main"), S = M.stream("s");
  TaskId L1 = M.task(T, "launch1", 5);
  TaskId L2 = M.task(T, "launch2", 5, 1);
  TaskId K1 = M.task(S, "k1", 100, 0, TaskKind::Kernel);
  TaskId K2 = M.task(S, "k2", 10, 2, TaskKind::Kernel);
  M.edge(L1, K1, Anchor::StartToStart, 7, EdgeKind::Launch);
  M.edge(L2, K2, Anchor::StartToStart, 7, EdgeKind::Launch);
  SimResult R = run(M.G);
  CHECK(R.Start[K1] == 7);
  CHECK(R.End[K1] == 107);
  CHECK(R.Start[K2] == 109); // queued: 2 ns after k1, not 6 + 7
  CHECK(R.StartBy[K2] == BindResource);
}

TEST_CASE("a blocking call ends after the GPU work it waits for") {
  MiniGraph M;
  ResourceId T = M.thread("main"), S = M.stream("s");
  TaskId L = M.task(T, "launch", 5);
  TaskId Sync = M.task(T, "sync", 2, 5);
  TaskId After = M.task(T, "after", 1, 4);
  TaskId K = M.task(S, "k", 50, 0, TaskKind::Kernel);
  M.edge(L, K, Anchor::StartToStart, 0, EdgeKind::Launch);
  M.edge(K, Sync, Anchor::EndToEnd, 3, EdgeKind::Sync);
  SimResult R = run(M.G);
  CHECK(R.Start[Sync] == 10);
  CHECK(R.End[Sync] == 53);
  CHECK(R.EndBy[Sync] != BindOwn);
  CHECK(R.Start[After] == 57);
}

TEST_CASE("a channel serves ready tasks first-come, or by priority") {
  MiniGraph M;
  ResourceId T = M.thread("main"), C = M.channel("nccl");
  TaskId A = M.task(T, "a", 10);
  TaskId X = M.task(C, "x", 20, 0, TaskKind::Comm);
  TaskId Y = M.task(C, "y", 20, 0, TaskKind::Comm);
  TaskId Z = M.task(C, "z", 20, 0, TaskKind::Comm);
  M.edge(A, X);
  M.edge(A, Y);
  M.edge(A, Z, Anchor::EndToStart, 5);
  SimResult Fifo = run(M.G);
  // x and y are ready together: task order breaks the tie.
  CHECK(Fifo.Start[X] == 10);
  CHECK(Fifo.Start[Y] == 30);
  CHECK(Fifo.Start[Z] == 50);

  SchedulePolicy P;
  P.ResourceOrder = {Ordering::Program, Ordering::Priority};
  P.Priority.assign(M.G.numTasks(), 0);
  P.Priority[X] = 3;
  P.Priority[Y] = 1;
  P.Priority[Z] = 2;
  SimResult Prio = run(M.G, &P);
  CHECK(Prio.Start[Y] == 10);
  // z became ready at 15 while y ran; at 30 it beats x.
  CHECK(Prio.Start[Z] == 30);
  CHECK(Prio.Start[X] == 50);

  // Priorities matter only where the schedule says so.
  P.ResourceOrder[C] = Ordering::Fifo;
  SimResult Back = run(M.G, &P);
  CHECK(Back.Start == Fifo.Start);
}

/// 50 launches on a thread, their kernels on a stream, and a sync on the
/// last kernel (returned): a graph the two engines and early stops are
/// checked on.
static TaskId launchesAndSync(MiniGraph &M) {
  ResourceId T = M.thread("main"), S = M.stream("s");
  std::vector<TaskId> Launches, Kernels;
  for (int I = 0; I < 50; ++I)
    Launches.push_back(M.task(T, "launch", 3 + I % 4, 1 + I % 3));
  for (int I = 0; I < 50; ++I) {
    Kernels.push_back(M.task(S, "k", (I * 37) % 23 + 1, 1, TaskKind::Kernel));
    M.edge(Launches[I], Kernels[I], Anchor::StartToStart, 5, EdgeKind::Launch);
  }
  TaskId Sync = M.task(T, "sync", 1, 2);
  M.edge(Kernels.back(), Sync, Anchor::EndToEnd, 4, EdgeKind::Sync);
  return Sync;
}

TEST_CASE("the time-ordered engine agrees with the fast path") {
  MiniGraph M;
  launchesAndSync(M);
  SimResult Fast = run(M.G);
  // An idle dynamic channel switches the engine to time order.
  M.channel("idle");
  SimResult Timed = run(M.G);
  CHECK(Fast.Start == Timed.Start);
  CHECK(Fast.End == Timed.End);
  CHECK(Fast.Makespan == Timed.Makespan);
}

TEST_CASE("containers take their times from their leaves") {
  MiniGraph M;
  ResourceId T = M.thread("main");
  TaskId C = M.G.addTask(TaskKind::CpuOp, "aten::conv2d", NoResource, 0);
  M.G.Flags[C] |= TF_Container;
  TaskId A = M.task(T, "a", 10, 4);
  TaskId B = M.task(T, "b", 10, 1);
  M.G.Parent[A] = M.G.Parent[B] = C;
  M.G.FirstLeaf[C] = A;
  M.G.LastLeaf[C] = B;
  M.G.Lead[C] = 3;
  M.G.Trail[C] = 2;
  SimResult R = run(M.G);
  CHECK(R.Start[C] == R.Start[A] - 3);
  CHECK(R.End[C] == R.End[B] + 2);
}

TEST_CASE("an iteration whose end marker was removed ends where it stood") {
  // An iteration bounded by an optimizer-step range (no ProfilerStep): a
  // model replaces the step by one inserted call, then removes the step.
  MiniGraph M;
  ResourceId T = M.thread("main");
  TaskId Work = M.task(T, "forward", 10);
  TaskId Step = M.G.addTask(TaskKind::Annotation, "Optimizer.step#SGD.step",
                            NoResource, 0);
  M.G.Flags[Step] |= TF_Container;
  TaskId S1 = M.task(T, "update1", 4, 1);
  TaskId S2 = M.task(T, "update2", 4, 1);
  TaskId Next = M.task(T, "next_forward", 10, 5);
  M.G.Parent[S1] = M.G.Parent[S2] = Step;
  M.G.FirstLeaf[Step] = S1;
  M.G.LastLeaf[Step] = S2;
  Iteration It;
  It.Begin = {Iteration::PointKind::Origin, NoTask};
  It.End = {Iteration::PointKind::TaskEnd, Step};
  SimResult Before = run(M.G);
  CHECK(iterationTime(M.G, Before, It) == 20);

  // The replacement goes right after the step's last call (same order key).
  TaskId Fused = M.G.addTask(TaskKind::Runtime, "fused", T, 2);
  M.G.OrderKey[Fused] = M.G.OrderKey[S2];
  M.G.Flags[Fused] |= TF_Inserted;
  llvm::BitVector Gone(M.G.numTasks());
  Gone.set(Step);
  M.G.removeTasks(Gone);
  SimResult After = run(M.G);
  CHECK(After.End[Step] == dd::graph::NoTime);
  // forward [0,10), the step's leading gap kept, fused [11,13).
  CHECK(After.End[Fused] == 13);
  CHECK(iterationTime(M.G, After, It) == 13);
  CHECK(After.Start[Next] > After.End[Fused]);
  (void)Work;
}

TEST_CASE("a dependency cycle is reported, not looped on") {
  MiniGraph M;
  ResourceId T = M.thread("main");
  TaskId A = M.task(T, "a", 1);
  TaskId B = M.task(T, "b", 1);
  M.edge(B, A);
  std::string Err;
  CHECK_FALSE(M.G.finalize(&Err));
  CHECK(Err.find("would wait for itself") != std::string::npos);
}

TEST_CASE("the critical path explains the whole makespan") {
  MiniGraph M;
  ResourceId T = M.thread("main"), S = M.stream("s");
  TaskId L = M.task(T, "launch", 5, 1);
  TaskId Sync = M.task(T, "sync", 2, 5);
  TaskId K = M.task(S, "k", 50, 0, TaskKind::Kernel);
  M.edge(L, K, Anchor::StartToStart, 7, EdgeKind::Launch);
  M.edge(K, Sync, Anchor::EndToEnd, 3, EdgeKind::Sync);
  SimResult R = run(M.G);
  Iteration::Point End{Iteration::PointKind::TaskEnd, Sync};
  CriticalPath P = criticalPath(M.G, R, End, 0);
  CHECK(P.Length == R.End[Sync]);
  auto Shares = sharesByActivity(M.G, P);
  int64_t Running = 0;
  for (const auto &S : Shares)
    if (S.Label == "s: running")
      Running = S.Time;
  CHECK(Running == 50);
}

TEST_CASE("a collective's members start together when the last arrives") {
  MiniGraph M;
  ResourceId A = M.thread("rank 0"), B = M.thread("rank 1");
  TaskId WorkA = M.task(A, "work a", 10);
  TaskId CommA = M.task(A, "all-reduce a", 5, 0, TaskKind::Comm);
  TaskId AfterA = M.task(A, "after a", 1);
  TaskId WorkB = M.task(B, "work b", 30);
  TaskId CommB = M.task(B, "all-reduce b", 7, 0, TaskKind::Comm);
  M.G.addCollective({CommA, CommB});
  SimResult R = run(M.G);
  CHECK(R.Arrival[CommA] == 10);
  CHECK(R.Arrival[CommB] == 30);
  CHECK(R.Start[CommA] == 30); // waited 20 ns for rank 1
  CHECK(R.End[CommA] == 35);
  CHECK(R.End[CommB] == 37);
  CHECK(R.StartBy[CommA] == BindCollective);
  CHECK(R.LastArrived[0] == CommB);
  CHECK(R.Start[AfterA] == 35);
  // The critical path of rank 0 runs through rank 1's work.
  dd::graph::Iteration::Point End{dd::graph::Iteration::PointKind::TaskEnd,
                                  AfterA};
  CriticalPath P = criticalPath(M.G, R, End, 0);
  bool ThroughB = false;
  for (const PathSegment &S : P.Segments)
    ThroughB |= S.Task == WorkB;
  CHECK(ThroughB);
  CHECK(P.Length == 36);
  (void)WorkA;

  SUBCASE("a removed member does not hold the others") {
    llvm::BitVector Gone(M.G.numTasks());
    Gone[CommB] = true;
    M.G.removeTasks(Gone);
    SimResult C = run(M.G);
    CHECK(C.Start[CommA] == 10);
  }
}

TEST_CASE("a collective member on a channel holds it while it waits") {
  // Inserted communication lives on channels (first come, first served): a
  // member arrives when the channel takes it, keeps the channel while the
  // other members come, and what queues behind it waits too.
  MiniGraph M;
  ResourceId A = M.thread("rank 0"), B = M.thread("rank 1");
  ResourceId NetA = M.channel("rank 0 net"), NetB = M.channel("rank 1 net");
  TaskId WorkA = M.task(A, "work a", 10);
  TaskId WorkB = M.task(B, "work b", 40);
  TaskId CommA = M.task(NetA, "all-reduce a", 5, 0, TaskKind::Comm);
  TaskId NextA = M.task(NetA, "next a", 3, 0, TaskKind::Comm);
  TaskId CommB = M.task(NetB, "all-reduce b", 5, 0, TaskKind::Comm);
  M.edge(WorkA, CommA, Anchor::EndToStart, 0, EdgeKind::Launch);
  M.edge(WorkA, NextA, Anchor::EndToStart, 0, EdgeKind::Launch);
  M.edge(WorkB, CommB, Anchor::EndToStart, 0, EdgeKind::Launch);
  M.G.addCollective({CommA, CommB});
  SimResult R = run(M.G);
  CHECK(R.Arrival[CommA] == 10);
  CHECK(R.Start[CommA] == 40);
  CHECK(R.Start[CommB] == 40);
  CHECK(R.StartBy[CommA] == BindCollective);
  CHECK(R.Start[NextA] == 45); // the channel was held until the transfer ended
}

TEST_CASE("collectives on channels that choose run in one order on every "
          "rank") {
  // Two ranks, two collectives X and Y on each rank's channel. Rank 0 has
  // its part of X ready first, rank 1 its part of Y. By priority (Y before
  // X) each channel alone would take what it has and hold it for the other
  // rank, which holds the other collective: neither could start. The first
  // member dispatched (rank 0's X, at 10) commits X: rank 1's channel runs
  // its X next, waiting for it, then Y, as a communicator's one order.
  MiniGraph M;
  ResourceId A = M.thread("rank 0"), B = M.thread("rank 1");
  ResourceId NetA = M.channel("rank 0 net"), NetB = M.channel("rank 1 net");
  TaskId A1 = M.task(A, "a1", 10), A2 = M.task(A, "a2", 20);
  TaskId B1 = M.task(B, "b1", 12), B2 = M.task(B, "b2", 30);
  TaskId XA = M.task(NetA, "x", 5, 0, TaskKind::Comm);
  TaskId YA = M.task(NetA, "y", 5, 0, TaskKind::Comm);
  TaskId YB = M.task(NetB, "y", 5, 0, TaskKind::Comm);
  TaskId XB = M.task(NetB, "x", 5, 0, TaskKind::Comm);
  M.edge(A1, XA, Anchor::EndToStart, 0, EdgeKind::Launch); // ready at 10
  M.edge(A2, YA, Anchor::EndToStart, 0, EdgeKind::Launch); // at 30
  M.edge(B1, YB, Anchor::EndToStart, 0, EdgeKind::Launch); // at 12
  M.edge(B2, XB, Anchor::EndToStart, 0, EdgeKind::Launch); // at 42
  M.G.addCollective({XA, XB});
  M.G.addCollective({YA, YB});
  SchedulePolicy P;
  P.ResourceOrder = {Ordering::Program, Ordering::Program, Ordering::Priority,
                     Ordering::Priority};
  P.Priority.assign(M.G.numTasks(), 0);
  P.Priority[YA] = P.Priority[YB] = 1;
  P.Priority[XA] = P.Priority[XB] = 2;
  SimResult R = run(M.G, &P);
  // X: rank 1's part is ready at 42; both start then, rank 1's channel
  // having waited for it although its Y was ready at 12.
  CHECK(R.Start[XA] == 42);
  CHECK(R.Start[XB] == 42);
  CHECK(R.Start[YB] == 47);
  CHECK(R.Start[YA] == 47);
  // Fifo channels keep the same one order.
  P.ResourceOrder[NetA] = P.ResourceOrder[NetB] = Ordering::Fifo;
  SimResult F = run(M.G, &P);
  CHECK(F.Start[XB] == 42);
  CHECK(F.Start[YB] == 47);
}

namespace {
/// Every point \p Stopped holds is timed as in \p Whole, and every point at
/// or before \p Until is there.
void checkStoppedAt(const SimResult &Whole, const SimResult &Stopped,
                    int64_t Until) {
  REQUIRE(Stopped.Start.size() == Whole.Start.size());
  for (size_t T = 0; T < Whole.Start.size(); ++T) {
    CAPTURE(T);
    if (Stopped.Start[T] != NoTime || Whole.Start[T] <= Until)
      CHECK(Stopped.Start[T] == Whole.Start[T]);
    if (Stopped.End[T] != NoTime || Whole.End[T] <= Until)
      CHECK(Stopped.End[T] == Whole.End[T]);
  }
}
} // namespace

TEST_CASE("a simulation stopped early times every point up to Until as the "
          "whole one does") {
  MiniGraph M;
  TaskId Sync = launchesAndSync(M);
  SimResult Whole = run(M.G);
  int64_t Until = Whole.Makespan / 2;
  auto Stopped = simulate(M.G, nullptr, nullptr, Until);
  REQUIRE(static_cast<bool>(Stopped));
  CHECK(Stopped->Stopped);
  CHECK(Stopped->End[Sync] == NoTime);
  CHECK(Stopped->Makespan < Whole.Makespan);
  checkStoppedAt(Whole, *Stopped, Until);

  SUBCASE("in time order too") {
    M.channel("idle");
    SimResult Timed = run(M.G);
    auto TimedStopped = simulate(M.G, nullptr, nullptr, Until);
    REQUIRE(static_cast<bool>(TimedStopped));
    CHECK(TimedStopped->Stopped);
    checkStoppedAt(Timed, *TimedStopped, Until);
  }
  SUBCASE("past the end it is the whole simulation") {
    auto Past = simulate(M.G, nullptr, nullptr, Whole.Makespan);
    REQUIRE(static_cast<bool>(Past));
    CHECK_FALSE(Past->Stopped);
    CHECK(Past->Start == Whole.Start);
    CHECK(Past->End == Whole.End);
    CHECK(Past->Makespan == Whole.Makespan);
  }
}

TEST_CASE("a simulation stopped early keeps a point that a later one leads "
          "to") {
  // Clock noise gives negative gaps: b starts 4 ns before a ends. Stopped
  // at 8, a's end (10) is past Until, but b's start (6) is not.
  MiniGraph M;
  ResourceId T = M.thread("main");
  TaskId A = M.task(T, "a", 10);
  TaskId B = M.task(T, "b", 1, -4);
  TaskId C = M.task(T, "c", 50, 100);
  SimResult Whole = run(M.G);
  REQUIRE(Whole.Start[B] == 6);
  auto Stopped = simulate(M.G, nullptr, nullptr, 8);
  REQUIRE(static_cast<bool>(Stopped));
  CHECK(Stopped->End[A] == 10);
  CHECK(Stopped->Start[B] == 6);
  CHECK(Stopped->Start[C] == NoTime);
  CHECK(Stopped->Stopped);
  checkStoppedAt(Whole, *Stopped, 8);
}

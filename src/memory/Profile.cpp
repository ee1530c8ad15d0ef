//===- Profile.cpp - Memory curves from task times ------------------------===//
//
// Places every allocation and free by the tasks' (simulated) times and
// recomputes the allocated-bytes curve of each pool, its peak, and what is
// live at any point of it.
//
//===----------------------------------------------------------------------===//

#include "memory/MemoryModel.h"

#include <algorithm>

using namespace dd;
using namespace dd::memory;
using graph::NoTime;

namespace {

int64_t timeOf(const TaskTimes &Tm, TaskId T, bool End) {
  if (T == NoTask || T >= Tm.Start.size())
    return NoTime;
  return End ? Tm.End[T] : Tm.Start[T];
}

/// The time of \p At on the timeline \p Tm; NoTime when its task is gone.
int64_t resolve(const Placement &At, const TaskTimes &Tm) {
  switch (At.K) {
  case Placement::Before:
    return BeforeWindow;
  case Placement::After:
    return AfterWindow;
  case Placement::Fixed:
    return At.Offset;
  case Placement::TaskStart:
    return timeOf(Tm, At.Task, false);
  case Placement::TaskEnd:
    return timeOf(Tm, At.Task, true);
  case Placement::InTask: {
    int64_t S = timeOf(Tm, At.Task, false), E = timeOf(Tm, At.Task, true);
    if (S == NoTime)
      return NoTime;
    return S + std::clamp<int64_t>(At.Offset, 0, std::max<int64_t>(0, E - S));
  }
  case Placement::AfterTask: {
    int64_t E = timeOf(Tm, At.Task, true);
    int64_t N = timeOf(Tm, At.Next, false);
    if (E == NoTime)
      return N; // the leaf was removed: just before the next one
    if (N == NoTime)
      return E + At.Offset;
    return E + std::min(At.Offset, std::max<int64_t>(0, N - E));
  }
  case Placement::BeforeTask: {
    int64_t S = timeOf(Tm, At.Task, false);
    if (S == NoTime)
      return NoTime;
    return S - std::min(At.Offset, std::max<int64_t>(0, S));
  }
  }
  return NoTime;
}

struct Event {
  int64_t Time;
  int64_t Key;
  BlockId Block;
  uint8_t IsFree;
  bool operator<(const Event &O) const {
    return std::tie(Time, Key, Block, IsFree) <
           std::tie(O.Time, O.Key, O.Block, O.IsFree);
  }
};

} // namespace

Profile MemoryModel::profile(const TaskTimes &Tm, const graph::Graph &G) const {
  size_t N = std::min(Tm.Start.size(), G.numTasks());
  auto Gone = [&](TaskId T) {
    return G.isRemoved(T) && G.isLeaf(T) && G.Res[T] != graph::NoResource &&
           Tm.Start[T] == NoTime;
  };
  // Without removed leaves the times are used as they are, not copied.
  bool Any = false;
  for (TaskId T = 0; T < N && !Any; ++T)
    Any = Gone(T);
  if (!Any)
    return profile(Tm);
  std::vector<int64_t> Start(Tm.Start.begin(), Tm.Start.end());
  std::vector<int64_t> End(Tm.End.begin(), Tm.End.end());
  auto Stood = [&](TaskId T) -> int64_t {
    TaskId Prev = G.removedResPred(T);
    TaskId Next = Prev != NoTask ? G.NextOnRes[Prev]
                  : G.ResourceTasks[G.Res[T]].empty()
                      ? NoTask
                      : G.ResourceTasks[G.Res[T]].front();
    if (Next != NoTask && Tm.Start[Next] != NoTime)
      return Tm.Start[Next];
    return Prev != NoTask ? Tm.End[Prev] : NoTime;
  };
  for (TaskId T = 0; T < N; ++T)
    if (Gone(T))
      Start[T] = End[T] = Stood(T);
  for (TaskId T = 0; T < N; ++T)
    if (G.isRemoved(T) && G.isContainer(T) && Start[T] == NoTime &&
        G.FirstLeaf[T] != NoTask) {
      Start[T] = Start[G.FirstLeaf[T]];
      End[T] = End[G.LastLeaf[T]];
    }
  return profile(TaskTimes{Start, End});
}

Profile MemoryModel::profile(const TaskTimes &Tm) const {
  Profile Pr;
  size_t N = numBlocks();
  Pr.AllocTime.assign(N, NoTime);
  Pr.FreeTime.assign(N, NoTime);
  Pr.Curves.resize(Pools.size());
  std::vector<std::vector<Event>> Events(Pools.size());
  std::vector<bool> Included(N, false);
  for (BlockId B = 0; B < N; ++B) {
    int64_t A = resolve(AllocAt[B], Tm);
    if (A == NoTime) {
      ++Pr.Dropped;
      continue;
    }
    int64_t F = resolve(FreeAt[B], Tm);
    if (F == NoTime)
      F = AfterWindow; // its freeing task is gone: it stays
    if (A != BeforeWindow && F != AfterWindow &&
        std::make_pair(F, FreeKey[B]) <= std::make_pair(A, AllocKey[B])) {
      ++Pr.Inverted;
      continue;
    }
    Included[B] = true;
    Pr.AllocTime[B] = A;
    Pr.FreeTime[B] = F;
    Curve &C = Pr.Curves[PoolOf[B]];
    if (A == BeforeWindow)
      C.Start += Size[B];
    else
      Events[PoolOf[B]].push_back({A, AllocKey[B], B, 0});
    if (F != AfterWindow)
      Events[PoolOf[B]].push_back({F, FreeKey[B], B, 1});
  }

  // Offloads: spans off the device, clipped to the lifetime and merged.
  if (!Offloads.empty()) {
    std::vector<std::pair<BlockId, std::pair<int64_t, int64_t>>> Spans;
    for (const Offload &O : Offloads) {
      BlockId B = O.Block;
      if (!Included[B])
        continue;
      int64_t Out = resolve(O.Out, Tm), In = resolve(O.In, Tm);
      if (Out == NoTime || In == NoTime)
        continue;
      if (Out < Pr.AllocTime[B] || In > Pr.FreeTime[B])
        ++Pr.Clipped;
      Out = std::max(Out, Pr.AllocTime[B]);
      In = std::min(In, Pr.FreeTime[B]);
      if (Out < In)
        Spans.push_back({B, {Out, In}});
    }
    std::sort(Spans.begin(), Spans.end());
    for (size_t I = 0; I < Spans.size();) {
      BlockId B = Spans[I].first;
      auto [Out, In] = Spans[I].second;
      size_t J = I + 1;
      while (J < Spans.size() && Spans[J].first == B &&
             Spans[J].second.first <= In) {
        In = std::max(In, Spans[J].second.second);
        ++J;
      }
      Events[PoolOf[B]].push_back({Out, WhatIfFreeKey, B, 1});
      if (In != AfterWindow)
        Events[PoolOf[B]].push_back({In, WhatIfAllocKey, B, 0});
      I = J;
    }
  }

  for (PoolId P = 0; P < Pools.size(); ++P) {
    Curve &C = Pr.Curves[P];
    C.Start += Pools[P].Untracked;
    std::vector<Event> &Ev = Events[P];
    std::sort(Ev.begin(), Ev.end());
    int64_t Level = C.Start;
    C.Time.reserve(Ev.size());
    C.Level.reserve(Ev.size());
    for (const Event &E : Ev) {
      Level += E.IsFree ? -Size[E.Block] : Size[E.Block];
      C.Time.push_back(E.Time);
      C.Level.push_back(Level);
      C.Block.push_back(E.Block);
      C.IsFree.push_back(E.IsFree);
    }
  }
  return Pr;
}

Peak memory::peakIn(const Curve &C, int64_t From, int64_t To) {
  size_t First = static_cast<size_t>(
      std::lower_bound(C.Time.begin(), C.Time.end(), From) - C.Time.begin());
  Peak Best;
  Best.Bytes = First == 0 ? C.Start : C.Level[First - 1];
  Best.Time = From;
  Best.Event = First == 0 ? NoEvent : static_cast<uint32_t>(First - 1);
  for (size_t I = First; I < C.size() && C.Time[I] < To; ++I)
    if (C.Level[I] > Best.Bytes) {
      Best.Bytes = C.Level[I];
      Best.Time = C.Time[I];
      Best.Event = static_cast<uint32_t>(I);
      Best.Inside = true;
    }
  return Best;
}

Peak memory::peakOf(const Curve &C) {
  return peakIn(C, C.Time.empty() ? 0 : std::min<int64_t>(0, C.Time.front()),
                AfterWindow);
}

std::vector<BlockId> MemoryModel::liveAfter(const Profile &Pr, PoolId P,
                                            uint32_t Event) const {
  std::vector<uint8_t> Live(numBlocks(), 0);
  for (BlockId B = 0; B < numBlocks(); ++B)
    Live[B] = PoolOf[B] == P && Pr.AllocTime[B] == BeforeWindow;
  const Curve &C = Pr.Curves[P];
  if (Event != NoEvent)
    for (size_t I = 0; I <= Event && I < C.size(); ++I)
      Live[C.Block[I]] = !C.IsFree[I];
  std::vector<BlockId> Out;
  for (BlockId B = 0; B < numBlocks(); ++B)
    if (Live[B])
      Out.push_back(B);
  return Out;
}

std::vector<int64_t> MemoryModel::bytesByClassAfter(const Profile &Pr, PoolId P,
                                                    uint32_t Event) const {
  std::vector<int64_t> By(NumBlockClasses, 0);
  for (BlockId B : liveAfter(Pr, P, Event))
    By[static_cast<unsigned>(Class[B])] += Size[B];
  return By;
}

std::vector<BlockId> MemoryModel::blocksOfClass(BlockClass C) const {
  std::vector<BlockId> Out;
  for (BlockId B = 0; B < numBlocks(); ++B)
    if (Class[B] == C)
      Out.push_back(B);
  return Out;
}

std::vector<BlockId> MemoryModel::blocksAllocatedBy(const graph::Graph &G,
                                                    TaskId T) const {
  std::vector<BlockId> Out;
  for (BlockId B = 0; B < numBlocks(); ++B)
    for (TaskId X = AllocOwner[B]; X != NoTask && X < G.numTasks();
         X = G.Parent[X])
      if (X == T) {
        Out.push_back(B);
        break;
      }
  return Out;
}

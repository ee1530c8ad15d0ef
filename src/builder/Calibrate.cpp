//===- Calibrate.cpp - Delays from measured times -------------------------===//
//
// Every constraint on a task's start (its predecessor on the resource, its
// incoming edges) gets a delay. The constraint whose source happened last in
// the trace is the one that released the task ("binding"): its delay is the
// measured distance, so the unchanged graph replays the trace. The others
// get the typical delay of their kind (never more than their measured
// slack), which is what they cost when a transformation makes them bind.
//
// A blocking call's end is bound by the GPU work it waited for: if that work
// ended while the call was running, the call's own duration becomes its
// typical duration when it does not wait, and the wait is replaced by the
// edge. See docs/replay.md.
//
//===----------------------------------------------------------------------===//

#include "builder/BuilderImpl.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace dd;
using namespace dd::graph;
using namespace dd::graph::detail;

namespace {

constexpr int64_t Tolerance = 2000; // ns of clock noise we accept

bool isInferred(EdgeKind K) {
  return K == EdgeKind::EventWait || K == EdgeKind::Wake ||
         K == EdgeKind::FwdBwd || K == EdgeKind::Sync ||
         K == EdgeKind::QueueFull;
}

struct Calibrator {
  BuildContext &C;
  Graph &G;
  size_t N;
  std::vector<TaskId> ResPred;
  std::vector<uint32_t> InBegin, InList; // edges by destination
  std::vector<bool> Drop;

  llvm::DenseMap<int32_t, int64_t> TypLaunch, TypGap;
  std::vector<int64_t> TypCpuGap; // per resource
  int64_t TypWake = 5000, TypWakeCpu = 50000;
  llvm::StringMap<int64_t> TypIntrinsic;

  explicit Calibrator(BuildContext &C)
      : C(C), G(C.G), N(C.G.numTasks()),
        Typical(C.Opts.Delays == BuildOptions::Calibration::Typical) {}
  bool Typical;

  int64_t srcTime(const Edge &E) const {
    return fromStart(E.At) ? C.mStart(E.Src) : C.mEnd(E.Src);
  }
  int32_t deviceOf(TaskId X) const { return G.Resources[G.Res[X]].Device; }

  void index();
  void typicals();
  void startSide(TaskId X);
  void endSide(TaskId X);
  int64_t typicalFor(const Edge &E) const;
  void run();
};

void Calibrator::index() {
  ResPred.assign(N, NoTask);
  auto Chain = [&](const std::vector<TaskId> &Seq) {
    for (size_t I = 1; I < Seq.size(); ++I)
      ResPred[Seq[I]] = Seq[I - 1];
  };
  for (const auto &Seq : C.ThreadLeaves)
    Chain(Seq);
  for (const auto &Seq : C.StreamOps)
    Chain(Seq);
  InBegin.assign(N + 1, 0);
  for (const Edge &E : G.Edges)
    ++InBegin[E.Dst + 1];
  for (size_t I = 0; I < N; ++I)
    InBegin[I + 1] += InBegin[I];
  InList.assign(G.Edges.size(), 0);
  std::vector<uint32_t> Fill(InBegin.begin(), InBegin.end() - 1);
  for (uint32_t I = 0; I < G.Edges.size(); ++I)
    InList[Fill[G.Edges[I].Dst]++] = I;
  Drop.assign(G.Edges.size(), false);
}

void Calibrator::typicals() {
  llvm::DenseMap<int32_t, std::vector<int64_t>> Lat, Gaps;
  for (const auto &Seq : C.StreamOps) {
    for (TaskId X : Seq) {
      TaskId L = G.Launcher[X], P = ResPred[X];
      if (L == NoTask)
        continue;
      // Launched onto an idle stream: a pure launch latency.
      if (P == NoTask || C.mEnd(P) <= C.mStart(L)) {
        int64_t V = C.mStart(X) - C.mStart(L);
        if (V >= 0)
          Lat[deviceOf(X)].push_back(V);
      }
    }
  }
  for (auto &[Dev, V] : Lat)
    TypLaunch[Dev] = median(V, 5000);
  for (const auto &Seq : C.StreamOps) {
    for (TaskId X : Seq) {
      TaskId L = G.Launcher[X], P = ResPred[X];
      if (L == NoTask || P == NoTask)
        continue;
      int64_t Lt = TypLaunch.lookup(deviceOf(X));
      // Queued behind earlier work: the stream's own turnaround.
      if (C.mStart(L) + Lt < C.mEnd(P)) {
        int64_t V = C.mStart(X) - C.mEnd(P);
        if (V >= 0)
          Gaps[deviceOf(X)].push_back(V);
      }
    }
  }
  for (auto &[Dev, V] : Gaps)
    TypGap[Dev] = median(V, 1000);

  TypCpuGap.assign(G.Resources.size(), 1000);
  for (ResourceId R = 0; R < C.ThreadLeaves.size(); ++R) {
    std::vector<int64_t> V;
    for (TaskId X : C.ThreadLeaves[R])
      if (ResPred[X] != NoTask)
        V.push_back(std::max<int64_t>(0, C.mStart(X) - C.mEnd(ResPred[X])));
    TypCpuGap[R] = median(V, 1000);
  }

  std::vector<int64_t> Wakes, CpuWakes;
  llvm::StringMap<std::vector<int64_t>> Durs;
  for (TaskId X = 0; X < N; ++X) {
    if (G.isContainer(X) || G.isGpu(X))
      continue;
    int64_t S = C.mStart(X), E = C.mEnd(X);
    int64_t MaxSrc = INT64_MIN;
    for (uint32_t I = InBegin[X]; I < InBegin[X + 1]; ++I) {
      const Edge &Ed = G.Edges[InList[I]];
      if (Ed.Kind == EdgeKind::Wake)
        CpuWakes.push_back(std::max<int64_t>(0, S - srcTime(Ed)));
      if (toEnd(Ed.At) && srcTime(Ed) <= E + Tolerance)
        MaxSrc = std::max(MaxSrc, srcTime(Ed));
    }
    if (MaxSrc > S)
      Wakes.push_back(std::max<int64_t>(0, E - MaxSrc));
    else if (G.Kind[X] == TaskKind::Runtime)
      Durs[G.name(X)].push_back(G.MeasuredDur[X]);
  }
  TypWake = median(Wakes, 5000);
  TypWakeCpu = median(CpuWakes, 50000);
  for (auto &Entry : Durs)
    TypIntrinsic[Entry.getKey()] = median(Entry.getValue(), 5000);
  C.Stats.TypicalWake = TypWake;
  std::vector<int64_t> L, Gp;
  for (auto &[D, V] : TypLaunch)
    L.push_back(V);
  for (auto &[D, V] : TypGap)
    Gp.push_back(V);
  C.Stats.TypicalLaunchLatency = median(L, 5000);
  C.Stats.TypicalStreamGap = median(Gp, 1000);
}

int64_t Calibrator::typicalFor(const Edge &E) const {
  switch (E.Kind) {
  case EdgeKind::Launch:
    return TypLaunch.count(deviceOf(E.Dst)) ? TypLaunch.lookup(deviceOf(E.Dst))
                                            : 5000;
  case EdgeKind::EventWait:
    return TypGap.count(deviceOf(E.Dst)) ? TypGap.lookup(deviceOf(E.Dst))
                                         : 1000;
  case EdgeKind::Sync:
  case EdgeKind::QueueFull:
    return TypWake;
  case EdgeKind::Wake:
    return TypWakeCpu;
  default:
    return 0;
  }
}

void Calibrator::startSide(TaskId X) {
  int64_t S = C.mStart(X);
  TaskId P = ResPred[X];
  int64_t ResSrc = P == NoTask ? C.W0 : C.mEnd(P);
  if (P != NoTask && G.isGpu(X) && ResSrc - S > Tolerance) {
    ++C.Stats.OverlappingGpu;
    C.Stats.MaxGpuOverlap = std::max(C.Stats.MaxGpuOverlap, ResSrc - S);
  }
  // Pick the binding constraint: the latest source, the resource on ties.
  int64_t Best = ResSrc;
  int64_t BestEdge = -1;
  for (uint32_t I = InBegin[X]; I < InBegin[X + 1]; ++I) {
    uint32_t EI = InList[I];
    const Edge &E = G.Edges[EI];
    if (toEnd(E.At))
      continue;
    int64_t Src = srcTime(E);
    if (Src > S + Tolerance && isInferred(E.Kind)) {
      Drop[EI] = true; // the trace shows the dependency did not hold
      ++C.Stats.DroppedByKind[static_cast<unsigned>(E.Kind)];
      continue;
    }
    if (Src > Best) {
      Best = Src;
      BestEdge = EI;
    }
  }
  // Sources up to Tolerance after the start are clock noise: the delay goes
  // negative so that the replay still matches the trace.
  auto Slack = [&](int64_t Src) { return S - Src; };
  if (S - Best < 0)
    ++C.Stats.ClampedDelays;
  int64_t ResTypical =
      G.isGpu(X)
          ? (TypGap.count(deviceOf(X)) ? TypGap.lookup(deviceOf(X)) : 1000)
          : TypCpuGap[G.Res[X]];
  // Calls on one thread or work on one stream do not overlap; overlaps in
  // the trace are clock noise (microsecond timestamps), kept so the replay
  // matches.
  G.Gap[X] = std::max<int64_t>(
      -Tolerance,
      BestEdge < 0 ? Slack(ResSrc) : std::min(ResTypical, Slack(ResSrc)));
  for (uint32_t I = InBegin[X]; I < InBegin[X + 1]; ++I) {
    uint32_t EI = InList[I];
    Edge &E = G.Edges[EI];
    if (toEnd(E.At) || Drop[EI])
      continue;
    E.Delay = static_cast<int64_t>(EI) == BestEdge
                  ? Slack(srcTime(E))
                  : std::min(typicalFor(E), Slack(srcTime(E)));
  }
}

void Calibrator::endSide(TaskId X) {
  int64_t S = C.mStart(X), E = C.mEnd(X);
  int64_t MaxSrc = INT64_MIN;
  int64_t BestEdge = -1;
  bool AnyEnd = false;
  for (uint32_t I = InBegin[X]; I < InBegin[X + 1]; ++I) {
    uint32_t EI = InList[I];
    const Edge &Ed = G.Edges[EI];
    if (!toEnd(Ed.At))
      continue;
    if (!G.isGpu(Ed.Src)) {
      // A device-wide sync's edge from the thread's previous one: the
      // thread's order already holds it; it carries that sync's waits on
      // when a what-if removes it (addDeviceSync). No delay of its own
      // (set below).
      AnyEnd = true;
      continue;
    }
    int64_t Src = srcTime(Ed);
    if (Src > E + Tolerance) {
      // The call returned before that work finished: not a wait after all.
      Drop[EI] = true;
      ++C.Stats.DroppedByKind[static_cast<unsigned>(Ed.Kind)];
      continue;
    }
    AnyEnd = true;
    if (Src > MaxSrc) {
      MaxSrc = Src;
      BestEdge = EI;
    }
  }
  if (!AnyEnd) {
    G.Flags[X] &= ~TF_Blocking;
    return;
  }
  bool Waited = MaxSrc > S;
  if (Waited) {
    auto It = TypIntrinsic.find(G.name(X));
    int64_t Intrinsic = It != TypIntrinsic.end() ? It->second : 5000;
    G.Dur[X] = std::min(G.MeasuredDur[X], Intrinsic);
  }
  for (uint32_t I = InBegin[X]; I < InBegin[X + 1]; ++I) {
    uint32_t EI = InList[I];
    Edge &Ed = G.Edges[EI];
    if (!toEnd(Ed.At) || Drop[EI])
      continue;
    if (!G.isGpu(Ed.Src)) {
      Ed.Delay = 0;
      continue;
    }
    int64_t Slack = E - srcTime(Ed); // >= -Tolerance, see above
    if (Typical)
      Ed.Delay = typicalFor(Ed);
    else
      Ed.Delay = Waited && static_cast<int64_t>(EI) == BestEdge
                     ? Slack
                     : std::min(typicalFor(Ed), Slack);
  }
}

void Calibrator::run() {
  index();
  typicals();
  for (TaskId X = 0; X < N; ++X) {
    if (G.isContainer(X))
      continue;
    startSide(X);
    endSide(X);
  }
  for (ResourceId R = 0; R < G.Resources.size(); ++R) {
    Resource &Res = G.Resources[R];
    Res.TypicalGap =
        Res.Kind == ResourceKind::GpuStream
            ? (TypGap.count(Res.Device) ? TypGap.lookup(Res.Device) : 1000)
            : TypCpuGap[R];
  }
  // Remove the edges the measured times disproved.
  std::vector<Edge> Kept;
  Kept.reserve(G.Edges.size());
  for (uint32_t I = 0; I < G.Edges.size(); ++I) {
    if (Drop[I])
      --C.Stats.EdgesByKind[static_cast<unsigned>(G.Edges[I].Kind)];
    else
      Kept.push_back(G.Edges[I]);
  }
  G.Edges = std::move(Kept);
}

} // namespace

void detail::calibrate(BuildContext &C) { Calibrator(C).run(); }

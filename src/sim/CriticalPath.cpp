#include "sim/CriticalPath.h"

#include "support/Work.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace dd;
using namespace dd::sim;
using namespace dd::graph;

CriticalPath sim::criticalPath(const Graph &G, const SimResult &R,
                               const Iteration::Point &To, int64_t From) {
  CriticalPath P;
  // Resolve the end point onto a leaf point.
  TaskId T = NoTask;
  bool AtEnd = true;
  int64_t Now = pointTime(G, R, To);
  switch (To.Kind) {
  case Iteration::PointKind::Origin:
    return P;
  case Iteration::PointKind::TaskStart:
  case Iteration::PointKind::TaskEnd: {
    T = To.Task;
    AtEnd = To.Kind == Iteration::PointKind::TaskEnd;
    if (G.isContainer(T)) {
      std::vector<TaskId> Leaves = G.leavesOf(T);
      if (Leaves.empty())
        return P;
      T = AtEnd ? Leaves.back() : Leaves.front();
    }
    break;
  }
  case Iteration::PointKind::Makespan:
    for (TaskId X = 0; X < G.numTasks(); ++X)
      if (G.isLeaf(X) && !G.isRemoved(X) && R.End[X] == R.Makespan) {
        T = X;
        break;
      }
    work::add(work::Counter::PathSteps, T == NoTask ? G.numTasks() : T + 1);
    break;
  }
  if (T == NoTask)
    return P;
  int64_t Limit = Now;
  auto Emit = [&](SegmentKind K, TaskId Task, uint32_t Edge, int64_t B,
                  int64_t E) {
    B = std::max(B, From);
    E = std::min(E, Limit);
    if (E > B) {
      P.Segments.push_back({K, Task, Edge, B, E});
      P.Length += E - B;
    }
  };
  // Each step moves to an earlier (or equal) point; the step count bound
  // guards against zero-length loops.
  size_t Steps = 0;
  for (; Steps < 4 * G.numTasks() + 8; ++Steps) {
    int64_t Here = AtEnd ? R.End[T] : R.Start[T];
    if (Here <= From)
      break;
    if (AtEnd) {
      uint32_t By = R.EndBy[T];
      if (By == BindOwn) {
        Emit(SegmentKind::Run, T, 0, R.Start[T], R.End[T]);
        AtEnd = false;
        continue;
      }
      const Edge &E = G.Lowered[By];
      int64_t Src = fromStart(E.At) ? R.Start[E.Src] : R.End[E.Src];
      // The task ran from its start until the source's point, then waited.
      Emit(SegmentKind::Delay, T, By, Src, Here);
      T = E.Src;
      AtEnd = !fromStart(E.At);
      continue;
    }
    uint32_t By = R.StartBy[T];
    if (By == BindOrigin) {
      Emit(SegmentKind::Gap, T, 0, 0, Here);
      break;
    }
    if (By == BindCollective) {
      // It waited for the last member to arrive: follow that member, which
      // started at this very time.
      T = R.LastArrived[R.CollectiveOf[T]];
      continue;
    }
    if (By == BindResource || By == BindDispatch) {
      TaskId Prev = G.PrevOnRes[T];
      if (Prev == NoTask)
        break;
      Emit(SegmentKind::Gap, T, 0, R.End[Prev], Here);
      T = Prev;
      AtEnd = true;
      continue;
    }
    const Edge &E = G.Lowered[By];
    int64_t Src = fromStart(E.At) ? R.Start[E.Src] : R.End[E.Src];
    Emit(SegmentKind::Delay, T, By, Src, Here);
    T = E.Src;
    AtEnd = !fromStart(E.At);
  }
  work::add(work::Counter::PathSteps, Steps);
  return P;
}

static std::vector<PathShare> sorted(llvm::StringMap<int64_t> &M) {
  std::vector<PathShare> Out;
  for (auto &E : M)
    Out.push_back({E.getKey().str(), E.getValue()});
  std::sort(Out.begin(), Out.end(), [](const PathShare &A, const PathShare &B) {
    return A.Time != B.Time ? A.Time > B.Time : A.Label < B.Label;
  });
  return Out;
}

std::vector<PathShare> sim::sharesByActivity(const Graph &G,
                                             const CriticalPath &P) {
  llvm::StringMap<int64_t> M;
  for (const PathSegment &S : P.Segments) {
    int64_t D = S.End - S.Begin;
    const Resource &Res = G.Resources[G.Res[S.Task]];
    switch (S.Kind) {
    case SegmentKind::Run:
      M[Res.Name + ": running"] += D;
      break;
    case SegmentKind::Gap:
      M[Res.Name + (Res.Kind == ResourceKind::CpuThread
                        ? ": between calls (framework overhead)"
                        : ": between operations")] += D;
      break;
    case SegmentKind::Delay: {
      EdgeKind K = G.Lowered[S.Edge].Kind;
      const char *What = "dependency delay";
      switch (K) {
      case EdgeKind::Launch:
        What = "launch latency";
        break;
      case EdgeKind::Sync:
        What = "waiting for the GPU (synchronisation)";
        break;
      case EdgeKind::QueueFull:
        What = "waiting for the GPU (launch queue full)";
        break;
      case EdgeKind::EventWait:
        What = "cross-stream wait";
        break;
      case EdgeKind::Wake:
        What = "cross-thread wake-up";
        break;
      default:
        break;
      }
      M[What] += D;
      break;
    }
    }
  }
  return sorted(M);
}

std::vector<PathShare> sim::sharesByLayer(const Graph &G,
                                          const CriticalPath &P) {
  llvm::StringMap<int64_t> M;
  for (const PathSegment &S : P.Segments)
    if (S.Kind == SegmentKind::Run)
      M[G.LayerOf[S.Task] == NoLayer ? "(no layer)"
                                     : G.Layers[G.LayerOf[S.Task]].Name] +=
          S.End - S.Begin;
  return sorted(M);
}

std::vector<PathShare> sim::sharesByPhase(const Graph &G,
                                          const CriticalPath &P) {
  llvm::StringMap<int64_t> M;
  for (const PathSegment &S : P.Segments)
    if (S.Kind == SegmentKind::Run)
      M[phaseName(G.PhaseOf[S.Task])] += S.End - S.Begin;
  return sorted(M);
}

namespace {

/// Whether \p T runs inside a DataLoader's __next__ range.
bool inDataLoading(const Graph &G, TaskId T) {
  for (TaskId P = T; P != NoTask; P = G.Parent[P])
    if (graph::isDataLoaderRange(G.name(P)))
      return true;
  return false;
}

} // namespace

std::vector<PathShare> sim::sharesByBound(const Graph &G,
                                          const CriticalPath &P) {
  llvm::StringMap<int64_t> M;
  for (const PathSegment &S : P.Segments) {
    int64_t D = S.End - S.Begin;
    if (D <= 0)
      continue;
    const Resource &Res = G.Resources[G.Res[S.Task]];
    bool Cpu = Res.Kind == ResourceKind::CpuThread;
    switch (S.Kind) {
    case SegmentKind::Run:
    case SegmentKind::Gap:
      // A stream's time between operations is not GPU work: the GPU is
      // idle there (waiting for a launch the calibration folded into the
      // gap), so GPU work on the path never exceeds the GPU's busy time.
      if (G.Kind[S.Task] == TaskKind::Comm && S.Kind == SegmentKind::Run)
        M["communication"] += D;
      else if (!Cpu && S.Kind == SegmentKind::Gap)
        M["GPU idle between operations"] += D;
      else if (!Cpu)
        M["GPU work"] += D;
      else if (inDataLoading(G, S.Task))
        M["data loading"] += D;
      else
        M["framework overhead"] += D;
      break;
    case SegmentKind::Delay:
      switch (G.Lowered[S.Edge].Kind) {
      case EdgeKind::Launch:
        M["framework overhead"] += D;
        break;
      case EdgeKind::EventWait:
        M["GPU work"] += D;
        break;
      case EdgeKind::Sync:
      case EdgeKind::QueueFull:
      case EdgeKind::Wake:
        M["synchronisation"] += D;
        break;
      default:
        M[Cpu ? "framework overhead" : "GPU idle between operations"] += D;
        break;
      }
      break;
    }
  }
  return sorted(M);
}

std::vector<PathTask> sim::longestTasks(const Graph &G,
                                        llvm::ArrayRef<CriticalPath> Paths,
                                        size_t N) {
  llvm::StringMap<PathTask> ByName;
  for (const CriticalPath &P : Paths)
    for (const PathSegment &S : P.Segments)
      if (S.Kind == SegmentKind::Run) {
        PathTask &E = ByName[G.name(S.Task)];
        E.Time += S.End - S.Begin;
        ++E.Count;
        E.Resource = G.Resources[G.Res[S.Task]].Name;
      }
  std::vector<PathTask> Top;
  for (auto &E : ByName) {
    Top.push_back(std::move(E.getValue()));
    Top.back().Name = E.getKey().str();
  }
  std::sort(Top.begin(), Top.end(), [](const PathTask &X, const PathTask &Y) {
    return X.Time != Y.Time ? X.Time > Y.Time : X.Name < Y.Name;
  });
  if (Top.size() > N)
    Top.resize(N);
  return Top;
}

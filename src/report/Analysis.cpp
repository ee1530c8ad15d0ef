//===- Analysis.cpp - What the outputs show of a schedule -----------------===//
//
// Windows, resources in display order, critical paths, memory curves and
// GPU busy time of a schedule, shared by the timeline and the HTML report.
//
//===----------------------------------------------------------------------===//

#include "report/ReportImpl.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <tuple>

using namespace dd;
using namespace dd::report;
using namespace dd::report::detail;

Span detail::window(const RunData &D, const Schedule &S) {
  if (D.Reported.empty())
    return {};
  return {S.Iterations[D.Reported.front()].Begin,
          S.Iterations[D.Reported.back()].End};
}

std::string detail::windowLabel(const RunData &D) {
  if (D.Reported.empty())
    return "";
  const graph::Iteration &First = D.G->Iterations[D.Reported.front()];
  if (D.Reported.size() == 1)
    return First.Label;
  return First.Label + " to " + D.G->Iterations[D.Reported.back()].Label;
}

bool detail::overlaps(const Schedule &S, TaskId T, Span W) {
  if (!present(S, T))
    return false;
  int64_t B = S.Start[T], E = S.End[T];
  if (E == B)
    return B >= W.Begin && B < W.End;
  return B < W.End && E > W.Begin;
}

llvm::BitVector detail::shownTasks(const RunData &D, const Schedule &S,
                                   Span W) {
  const Graph &G = *D.G;
  llvm::BitVector Reported(G.Iterations.size());
  for (size_t I : D.Reported)
    Reported.set(I);
  llvm::BitVector Out(G.numTasks());
  for (TaskId T = 0; T < G.numTasks(); ++T) {
    int32_t It = G.IterationOf[T];
    if ((It >= 0 && Reported.test(size_t(It)) && present(S, T)) ||
        overlaps(S, T, W))
      Out.set(T);
  }
  return Out;
}

ResourceId detail::resourceOf(const Graph &G, TaskId T) {
  if (G.isLeaf(T))
    return G.Res[T];
  TaskId L = G.FirstLeaf[T];
  return L == graph::NoTask ? graph::NoResource : G.Res[L];
}

uint32_t detail::depthOf(const Graph &G, TaskId T) {
  uint32_t D = 0;
  for (TaskId P = G.Parent[T]; P != graph::NoTask; P = G.Parent[P])
    ++D;
  return D;
}

std::vector<ResourceId> detail::displayOrder(const Graph &G) {
  std::vector<ResourceId> Out(G.Resources.size());
  for (ResourceId R = 0; R < Out.size(); ++R)
    Out[R] = R;
  std::stable_sort(Out.begin(), Out.end(), [&](ResourceId A, ResourceId B) {
    const graph::Resource &X = G.Resources[A], &Y = G.Resources[B];
    return std::make_tuple(unsigned(X.Kind), X.Device, A) <
           std::make_tuple(unsigned(Y.Kind), Y.Device, B);
  });
  return Out;
}

llvm::BitVector
detail::criticalTasks(const Graph &G,
                      const std::vector<sim::CriticalPath> &Paths) {
  llvm::BitVector On(G.numTasks());
  for (const sim::CriticalPath &P : Paths)
    for (const sim::PathSegment &S : P.Segments)
      if (S.Kind == sim::SegmentKind::Run)
        On.set(S.Task);
  return On;
}

std::vector<sim::PathShare>
detail::sumShares(const std::vector<std::vector<sim::PathShare>> &Lists) {
  llvm::StringMap<int64_t> Sum;
  for (const auto &L : Lists)
    for (const sim::PathShare &S : L)
      Sum[S.Label] += S.Time;
  std::vector<sim::PathShare> Out;
  for (auto &E : Sum)
    Out.push_back({E.getKey().str(), E.getValue()});
  std::sort(Out.begin(), Out.end(),
            [](const sim::PathShare &A, const sim::PathShare &B) {
              return A.Time != B.Time ? A.Time > B.Time : A.Label < B.Label;
            });
  return Out;
}

std::vector<memory::Curve> detail::memoryCurves(const RunData &D,
                                                const Schedule &S) {
  std::vector<memory::Curve> Out;
  if (!D.Memory)
    return Out;
  if (!S.Simulated) {
    for (memory::PoolId P = 0; P < D.Memory->Pools.size(); ++P)
      Out.push_back(D.Memory->measured(P));
    return Out;
  }
  const memory::MemoryModel *M =
      D.Predicted && &S == &*D.Predicted && D.PredictedMemory
          ? D.PredictedMemory
          : D.Memory;
  return M->profile({S.Start, S.End}, *D.G).Curves;
}

std::vector<std::pair<int64_t, int64_t>>
detail::curveSteps(const memory::Curve &C, Span W) {
  std::vector<std::pair<int64_t, int64_t>> Out;
  size_t I = static_cast<size_t>(
      std::lower_bound(C.Time.begin(), C.Time.end(), W.Begin) - C.Time.begin());
  int64_t Level = I == 0 ? C.Start : C.Level[I - 1];
  Out.push_back({W.Begin, Level});
  while (I < C.size() && C.Time[I] < W.End) {
    int64_t T = C.Time[I], High = C.Level[I];
    for (; I < C.size() && C.Time[I] == T; ++I)
      High = std::max(High, C.Level[I]);
    Level = C.Level[I - 1];
    if (High > Level)
      Out.push_back({T, High});
    Out.push_back({T, Level});
  }
  Out.push_back({W.End, Level});
  return Out;
}

int64_t detail::capacityOf(const RunData &D, int32_t DeviceId) {
  for (const auto &[Id, Bytes] : D.DeviceMemory)
    if (Id == DeviceId)
      return Bytes;
  return 0;
}

int64_t detail::gpuBusy(const Graph &G, const Schedule &S, Span W) {
  std::vector<std::pair<int64_t, int64_t>> Iv;
  for (TaskId T = 0; T < G.numTasks(); ++T) {
    if (!G.isGpu(T) || !present(S, T))
      continue;
    int64_t B = std::max(S.Start[T], W.Begin), E = std::min(S.End[T], W.End);
    if (E > B)
      Iv.push_back({B, E});
  }
  std::sort(Iv.begin(), Iv.end());
  int64_t Busy = 0, CurB = 0, CurE = INT64_MIN;
  for (auto [B, E] : Iv) {
    if (B > CurE) {
      if (CurE != INT64_MIN)
        Busy += CurE - CurB;
      CurB = B;
      CurE = E;
    } else {
      CurE = std::max(CurE, E);
    }
  }
  if (CurE != INT64_MIN)
    Busy += CurE - CurB;
  return Busy;
}

//===- ModelBlocks.cpp - A model's repeated blocks of layers --------------===//

#include "graph/ModelBlocks.h"

#include <algorithm>
#include <map>
#include <optional>

using namespace dd;
using namespace dd::graph;

std::string_view graph::layerBaseName(std::string_view Name) {
  std::string_view Out = Name.substr(0, Name.find('#'));
  size_t End = Out.size();
  while (End > 1 && Out[End - 1] >= '0' && Out[End - 1] <= '9')
    --End;
  if (End < Out.size() && End > 1 &&
      (Out[End - 1] == '_' || Out[End - 1] == '.'))
    --End;
  return Out.substr(0, End);
}

namespace {

struct Candidate {
  size_t Start = 0;
  uint32_t Period = 0, Count = 0;
  int64_t Time = 0;
};

} // namespace

ModelBlocks graph::findModelBlocks(const Graph &G, unsigned MinLayers) {
  ModelBlocks Out;
  size_t NL = G.Layers.size();
  // Each layer's own GPU time, then its subtree's (children come after
  // their parent: summed from the last layer back).
  std::vector<int64_t> Own(NL, 0);
  int64_t All = 0;
  for (TaskId T = 0; T < G.numTasks(); ++T) {
    if (G.isRemoved(T) || !G.isGpu(T))
      continue;
    if (G.Kind[T] == TaskKind::Kernel || G.Kind[T] == TaskKind::Comm)
      All += G.Dur[T];
    if (G.LayerOf[T] != NoLayer)
      Own[G.LayerOf[T]] += G.Dur[T];
  }
  Out.AllGpuTime = std::max<int64_t>(1, All);
  std::vector<int64_t> Subtree = Own;
  for (size_t L = NL; L-- > 0;)
    if (G.Layers[L].Parent != NoLayer)
      Subtree[G.Layers[L].Parent] += Subtree[L];
  std::vector<uint32_t> Depth(NL, 0);
  for (size_t L = 0; L < NL; ++L)
    if (G.Layers[L].Parent != NoLayer)
      Depth[L] = Depth[G.Layers[L].Parent] + 1;
  std::map<uint32_t, std::vector<LayerId>> ByDepth;
  for (size_t L = 0; L < NL; ++L)
    ByDepth[Depth[L]].push_back(static_cast<LayerId>(L));

  double Tenth = static_cast<double>(Out.AllGpuTime) / 10;
  auto Better = [&](const Candidate &A, const Candidate *B) {
    if (!B)
      return true;
    bool BigA = static_cast<double>(A.Time) >= Tenth;
    bool BigB = static_cast<double>(B->Time) >= Tenth;
    if (BigA != BigB)
      return BigA;
    if (BigA && A.Count != B->Count)
      return A.Count > B->Count;
    return A.Time > B->Time;
  };
  std::optional<Candidate> Best;
  const std::vector<LayerId> *BestSeq = nullptr;
  for (const auto &[D, Seq] : ByDepth) {
    size_t N = Seq.size();
    std::vector<std::string_view> Names(N);
    std::vector<int64_t> Times(N + 1, 0);
    for (size_t I = 0; I < N; ++I) {
      Names[I] = layerBaseName(G.Layers[Seq[I]].Name);
      Times[I + 1] = Times[I] + Subtree[Seq[I]];
    }
    std::vector<size_t> ByName(N);
    for (size_t I = 0; I < N; ++I)
      ByName[I] = I;
    std::stable_sort(ByName.begin(), ByName.end(),
                     [&](size_t A, size_t B) { return Names[A] < Names[B]; });
    std::vector<size_t> Periods;
    for (size_t A = 0; A < N; ++A)
      for (size_t M = 1; M < 5 && A + M < N; ++M)
        if (Names[ByName[A + M]] == Names[ByName[A]])
          Periods.push_back(ByName[A + M] - ByName[A]);
    std::sort(Periods.begin(), Periods.end());
    Periods.erase(std::unique(Periods.begin(), Periods.end()), Periods.end());
    for (size_t P : Periods) {
      if (P < MinLayers || P > N / 2)
        continue;
      size_t Run = 0;
      for (size_t I = 0; I + P < N; ++I) {
        Run = Names[I] == Names[I + P] ? Run + 1 : 0;
        if (Run < P)
          continue;
        Candidate C;
        C.Period = static_cast<uint32_t>(P);
        C.Count = static_cast<uint32_t>((Run + P) / P);
        C.Start = I - Run + 1;
        C.Time = Times[C.Start + C.Count * P] - Times[C.Start];
        if (Better(C, Best ? &*Best : nullptr)) {
          Best = C;
          BestSeq = &Seq;
        }
      }
    }
  }
  if (!Best)
    return Out;
  Out.Period = Best->Period;
  Out.Count = Best->Count;
  Out.GpuTime = Best->Time;
  Out.Layers.assign(BestSeq->begin() + Best->Start,
                    BestSeq->begin() + Best->Start +
                        size_t(Best->Count) * Best->Period);
  return Out;
}

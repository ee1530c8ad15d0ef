//===- Compare.cpp - Two runs of one job side by side ---------------------===//

#include "whatif/Compare.h"

#include "graph/KernelClass.h"
#include "whatif/Iterations.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

using namespace dd;
using namespace dd::whatif;

namespace {

/// Where an iteration's time went: task time by row label. \p Current
/// reads the durations as they are (a model's prediction), else as traced.
/// Rows of the GPU time of one layer, the largest LayersShown of them.
constexpr std::string_view LayerPrefix = "  layer ";
constexpr size_t LayersShown = 8;

} // namespace

std::map<std::string, int64_t> dd::whatif::breakdown(const graph::Graph &G,
                                                     size_t It, bool Current) {
  std::map<std::string, int64_t> M;
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    if (G.IterationOf[T] != static_cast<int32_t>(It) || !G.isLeaf(T) ||
        G.isRemoved(T) || G.Res[T] == graph::NoResource)
      continue;
    int64_t D = Current                             ? G.Dur[T]
                : G.MeasuredDur[T] == graph::NoTime ? 0
                                                    : G.MeasuredDur[T];
    if (G.isGpu(T)) {
      M["GPU work (sum)"] += D;
      M[fmt::format("  {}",
                    graph::kernelClassName(graph::kernelClassOf(G, T)))] += D;
      // Layers match across the traces by name (their order of appearance
      // in the forward pass: conv2d#26 is the same layer in both).
      if (G.LayerOf[T] != graph::NoLayer)
        M[std::string(LayerPrefix) + G.Layers[G.LayerOf[T]].Name] += D;
    } else {
      M["CPU calls (sum)"] += D;
      M[fmt::format("  {} (CPU)", graph::phaseName(G.PhaseOf[T]))] += D;
    }
  }
  return M;
}

ComparedRun dd::whatif::comparedRun(const std::string &Path,
                                    const Replayed &R) {
  ComparedRun S;
  S.Path = Path;
  S.It = R.Chosen.front();
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(R.G, MStart, MEnd);
  const graph::Iteration &I = R.G.Iterations[S.It];
  S.Measured = measuredPointTime(R.G, I.End, MEnd) -
               measuredPointTime(R.G, I.Begin, MEnd);
  IterationLists L = iterationLists(R.G);
  for (size_t J = 0; J < L.Lengths.size(); ++J)
    if (L.Busy[J] && L.Lengths[J] > 0)
      S.Times.push_back(L.Lengths[J]);
  if (S.Times.empty())
    S.Times.push_back(S.Measured);
  std::vector<int64_t> Sorted = S.Times;
  std::sort(Sorted.begin(), Sorted.end());
  S.Min = Sorted.front();
  S.Max = Sorted.back();
  S.Median = Sorted[(Sorted.size() - 1) / 2];
  return S;
}

Comparison dd::whatif::compare(Replayed &Before, const std::string &BeforePath,
                               const Replayed &After,
                               const std::string &AfterPath,
                               const bc::Program *Model,
                               const std::vector<vm::Setting> &Settings,
                               RunMemory Mem) {
  Comparison C;
  C.Before = comparedRun(BeforePath, Before);
  C.After = comparedRun(AfterPath, After);
  C.Change = relative(C.After.Measured, C.Before.Measured);
  std::map<std::string, int64_t> BB = breakdown(Before.G, C.Before.It, false);
  std::map<std::string, int64_t> AB = breakdown(After.G, C.After.It, false);
  std::map<std::string, int64_t> PB;
  if (Model) {
    Baseline B;
    B.Tr = &Before.In.Trace;
    B.TracePath = BeforePath;
    B.G = &Before.G;
    B.Chosen = {C.Before.It};
    B.Base = &Before.Base;
    C.Run = predict(B, Before.G, *Model, Settings, std::move(Mem),
                    vm::DefaultMaxSteps);
    if (!C.Run->ok())
      return C;
    C.Predicted = C.Run->Out.front();
    PB = breakdown(Before.G, C.Before.It, true);
  }
  auto Get = [](const std::map<std::string, int64_t> &M, const std::string &K) {
    auto It = M.find(K);
    return It == M.end() ? int64_t(0) : It->second;
  };
  std::vector<std::string> Rows, Layers;
  for (const auto *M : {&BB, &AB, &PB})
    for (const auto &[K, V] : *M) {
      std::vector<std::string> &To =
          K.rfind(LayerPrefix, 0) == 0 ? Layers : Rows;
      if (std::find(To.begin(), To.end(), K) == To.end())
        To.push_back(K);
    }
  // The layers with the most GPU time before or after, largest first.
  std::stable_sort(Layers.begin(), Layers.end(),
                   [&](const std::string &A, const std::string &B) {
                     return std::max(Get(BB, A), Get(AB, A)) >
                            std::max(Get(BB, B), Get(AB, B));
                   });
  if (Layers.size() > LayersShown)
    Layers.resize(LayersShown);
  // GPU rows, then CPU rows; in each the sum, then its parts by name.
  auto Key = [](const std::string &S) {
    bool Cpu = S.find("(CPU)") != std::string::npos || S.rfind("CPU", 0) == 0;
    bool Sum = S.find("(sum)") != std::string::npos;
    return std::make_tuple(Cpu, !Sum, S);
  };
  std::sort(Rows.begin(), Rows.end(),
            [&](const std::string &A, const std::string &B) {
              return Key(A) < Key(B);
            });
  if (!Layers.empty()) {
    Rows.push_back(
        fmt::format("GPU work by layer (the {} largest)", Layers.size()));
    Rows.insert(Rows.end(), Layers.begin(), Layers.end());
  }
  for (const std::string &R : Rows) {
    using Kind = ComparisonRow::Kind;
    Kind K = R.rfind("GPU work by layer", 0) == 0   ? Kind::Heading
             : R.find("(sum)") != std::string::npos ? Kind::Sum
                                                    : Kind::Part;
    C.Rows.push_back({K, R, Get(BB, R), Get(AB, R), Get(PB, R)});
  }
  return C;
}

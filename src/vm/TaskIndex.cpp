//===- TaskIndex.cpp - Tasks by iteration, layer and resource -------------===//
//
// What `select ... where iteration == N`, `l.tasks` and `r.tasks` read
// instead of a pass over the whole graph: a model that asks once per
// iteration (or per layer) would otherwise cost the graph's size each time.
//
//===----------------------------------------------------------------------===//

#include "support/Work.h"
#include "vm/VMImpl.h"

using namespace dd;
using namespace dd::vm;
using graph::TaskId;

const Interpreter::TaskIndex &Interpreter::taskIndex() {
  const graph::Graph &G = graph();
  size_t N = G.numTasks();
  if (N < Index.Indexed)
    Index = TaskIndex();
  Index.ByIteration.resize(G.Iterations.size());
  // The graph's iterations do not change while a model runs; where two
  // share a number, the later one is the one a select names.
  if (Index.IterationByNumber.empty())
    for (size_t I = 0; I < G.Iterations.size(); ++I)
      Index.IterationByNumber[static_cast<double>(G.Iterations[I].Number)] =
          static_cast<uint32_t>(I);
  Index.ByLayer.resize(G.Layers.size());
  Index.ByResource.resize(G.Resources.size());
  for (TaskId T = static_cast<TaskId>(Index.Indexed); T < N; ++T) {
    if (int32_t It = G.IterationOf[T];
        It >= 0 && static_cast<size_t>(It) < Index.ByIteration.size())
      Index.ByIteration[static_cast<size_t>(It)].push_back(T);
    if (graph::LayerId L = G.LayerOf[T];
        L != graph::NoLayer && L < Index.ByLayer.size()) {
      Index.ByLayer[L].push_back(T);
      if (int32_t It = G.IterationOf[T]; It >= 0)
        Index.ByIterationLayer[(uint64_t(uint32_t(It)) << 32) | L].push_back(T);
    }
    if (graph::ResourceId R = G.Res[T];
        R != graph::NoResource && R < Index.ByResource.size())
      Index.ByResource[R].push_back(T);
  }
  work::add(work::Counter::VmIndexed, N - Index.Indexed);
  Index.Indexed = N;
  return Index;
}

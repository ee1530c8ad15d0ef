//===- GraphFixture.h - Hand-built graphs for tests -------------*- C++ -*-===//
#ifndef DD_TESTS_GRAPHFIXTURE_H
#define DD_TESTS_GRAPHFIXTURE_H

#include "graph/Graph.h"

namespace ddtest {

using namespace dd::graph;

/// A small graph builder: tasks in resource order, measured times optional.
struct MiniGraph {
  Graph G;
  ResourceId thread(const char *Name) {
    return G.addResource(ResourceKind::CpuThread, -1, 1, Name);
  }
  ResourceId stream(const char *Name) {
    return G.addResource(ResourceKind::GpuStream, 0, 7, Name);
  }
  ResourceId channel(const char *Name) {
    return G.addResource(ResourceKind::Channel, -1, 0, Name);
  }
  /// A task on \p R after the ones added before, \p Gap after the previous.
  TaskId task(ResourceId R, const char *Name, int64_t Dur, int64_t Gap = 0,
              TaskKind K = TaskKind::CpuOp) {
    TaskId T = G.addTask(K, Name, R, Dur);
    G.Gap[T] = Gap;
    G.OrderKey[T] = static_cast<int64_t>(T);
    return T;
  }
  void edge(TaskId A, TaskId B, Anchor At = Anchor::EndToStart,
            int64_t Delay = 0, EdgeKind K = EdgeKind::Script) {
    G.addEdge(A, B, K, At, Delay);
  }
};

} // namespace ddtest

#endif

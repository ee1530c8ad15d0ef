//===- ChakraEt.h - An iteration as a Chakra execution trace ---*- C++ -*-===//
//
// Chakra (MLCommons) execution traces are what ASTRA-sim replays on a
// simulated cluster. writeChakra writes one iteration of one rank's graph,
// as the model left it: one node per task that runs (containers and removed
// tasks are not nodes), with its duration, kind and work; a control
// dependency on the task before it on its thread or stream, and a data
// dependency for every other edge of the simulated graph that ends at it
// (Graph::Lowered: between tasks that run, around removed ones), its kind
// kept in the node's "dep_kinds" attribute; collectives as COMM_COLL_NODEs with
// their type and size. The schema is export/chakra_et.proto; docs/chakra.md
// says how to run ASTRA-sim on the files.
//
//===----------------------------------------------------------------------===//
#ifndef DD_EXPORT_CHAKRAET_H
#define DD_EXPORT_CHAKRAET_H

#include "graph/Graph.h"

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <string>

namespace dd::exporter {

struct ChakraOptions {
  size_t Iteration = 0; ///< index into G.Iterations
  int64_t Rank = 0;     ///< written into the metadata
  std::string Source;   ///< the trace, for the metadata
  std::string Model;    ///< the model applied, "" for none
};

/// What writeChakra wrote.
struct ChakraStats {
  size_t Nodes = 0, CpuNodes = 0, CommNodes = 0;
  size_t CtrlDeps = 0, DataDeps = 0;
  /// Data dependencies by graph::EdgeKind.
  std::array<size_t, graph::NumEdgeKinds> ByKind{};
  /// Communication tasks written as computation: their collective type is
  /// not one Chakra names (send/recv without peers, unknown kernels).
  size_t CommAsCompute = 0;
  /// Collectives written with comm_size 0: the trace records no size for
  /// them (ASTRA-sim would simulate them as moving nothing).
  size_t CommWithoutSize = 0;
};

/// The Chakra file of iteration O.Iteration of \p G (finalized): a
/// GlobalMetadata and the nodes, each length-delimited. \p Start is each task's
/// start on the schedule exported (a simulation of \p G), ns; start_time_micros
/// counts from the iteration's first task.
std::string writeChakra(const graph::Graph &G, llvm::ArrayRef<int64_t> Start,
                        const ChakraOptions &O, ChakraStats &Stats);

} // namespace dd::exporter

#endif

//===- GraphFile.h - A graph written to bytes and read back -----*- C++ -*-===//
//
// The persistent part of a graph (its task columns, GraphColumns.def; its
// resources, edges, layers, iterations, strings, collectives and process
// groups), written compactly and read back exactly: a graph read back and
// finalized replays, and every model changes it, as the graph written did.
// The derived indexes are not written; finalize rebuilds them.
//
// Reading checks everything a later step would trust: every id within its
// table, every enumeration within its values, strings unique, the edges'
// and resources' kinds, no cycle (finalize). A damaged file is an error
// with the offset where reading stopped, never a graph that crashes later.
// A file's version is its container's business (job/RankFile.h).
//
//===----------------------------------------------------------------------===//
#ifndef DD_GRAPH_GRAPHFILE_H
#define DD_GRAPH_GRAPHFILE_H

#include "graph/Graph.h"
#include "support/ByteStream.h"

#include "llvm/Support/Error.h"

namespace dd::graph {

/// Appends \p G's persistent part to \p W.
void writeGraph(const Graph &G, ByteWriter &W);

/// Reads a graph writeGraph wrote, and finalizes it. An error says what was
/// wrong and where ("task 12's resource 40 of 9 resources at byte 5123").
llvm::Expected<Graph> readGraph(ByteReader &R);

} // namespace dd::graph

#endif

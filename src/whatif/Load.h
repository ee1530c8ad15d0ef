//===- Load.h - One trace read, its graph built and replayed ----*- C++ -*-===//
//
// What every command on one trace starts from: the trace read (only the
// reported iterations and their neighbours where the command allows it and
// the trace does: Focus.h), its graph built, the reported iterations chosen
// and the graph replayed. Warnings and what stopped it are values.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_LOAD_H
#define DD_WHATIF_LOAD_H

#include "builder/GraphBuilder.h"
#include "graph/Graph.h"
#include "sim/Simulator.h"
#include "trace/Trace.h"
#include "whatif/Problem.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

/// What a command reads of one trace.
struct TraceRequest {
  std::string Path;
  graph::BuildOptions Build; ///< --window, --calibration
  std::string Iteration;     ///< "" (the steady-state one), a number, "all"
  /// Read only the reported iterations and their neighbours, where the
  /// trace allows (never with a window).
  bool Focus = false;
  /// Every memory record (a report's memory model needs them all).
  bool Memory = false;
};

/// A trace read: the graph options it is built with, the trace, and where
/// its iterations lie among the file's (given to the graph).
struct Input {
  graph::BuildOptions Build;
  trace::Trace Trace;
  graph::Graph::IterationSpan Span;
};

/// Reads \p R's trace, timed as the "load" phase, with a progress line on a
/// terminal for a slow one. Its warnings are in Trace.Warnings.
llvm::Expected<Input> readInput(const TraceRequest &R);

/// Builds the graph of \p In, timed as the "graph" phase.
llvm::Expected<graph::Graph> buildGraph(const Input &In,
                                        graph::BuildStats *Stats);

/// A trace read, its graph built, the reported iterations chosen and the
/// graph replayed: what commands that compare what-ifs start from.
struct Replayed {
  Input In;
  graph::Graph G;
  std::vector<size_t> Chosen;
  sim::SimResult Base;
};

/// Reads \p R's trace whole (not focused), builds its graph, chooses its
/// iterations and replays it; or says what stopped it (a trace that cannot
/// be read, a graph that cannot be built or simulated, an iteration it does
/// not have), with the trace's warnings either way.
Result<Replayed> loadReplayed(const TraceRequest &R);

} // namespace dd::whatif

#endif

//===- Focus.h - Reading only the iterations a command reports --*- C++ -*-===//
//
// A command that reports one iteration (replay's default: a steady-state
// one) needs the graph of that iteration, not of all of them. On a Kineto
// trace whose iterations are ProfilerStep#N annotations, a light first pass
// (trace/Survey.h) finds every iteration, the command's choice is made on
// them, and only the events of the reported iterations and of one on either
// side are read in full: the graph starts and ends in an iteration of
// context, so the reported ones replay as they do in the graph of the whole
// trace. See docs/replay.md.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_FOCUS_H
#define DD_WHATIF_FOCUS_H

#include "graph/Graph.h"
#include "trace/Trace.h"
#include "trace/TraceReader.h"

#include <optional>
#include <string>
#include <string_view>

namespace dd::whatif {

struct FocusedTrace {
  trace::Trace Trace;
  /// Where the trace's iterations lie among the file's; TraceIterations 0
  /// when the trace holds the whole file (every iteration was needed).
  graph::Graph::IterationSpan Span;
};

/// Reads the events of \p Path that the iterations named by \p Choice (""
/// for the steady-state one, or a number; not "all") and their neighbours
/// need, and all its memory records with \p Memory (the graph needs none;
/// the memory model of a report needs every one). nullopt where that cannot be
/// done or the file cannot be read so: a run.cupti file, a trace without
/// ProfilerStep#N iterations, input the reader refuses. The caller then reads
/// the file as usual, and reports what is wrong with it in the usual words.
std::optional<FocusedTrace> readFocusedTrace(const std::string &Path,
                                             std::string_view Choice,
                                             bool Memory,
                                             const trace::ProgressFn &Progress);

/// The trace of \p Path: only what \p Choice needs when \p Focus and
/// readFocusedTrace can do it, else the whole file (Span then says so).
llvm::Expected<FocusedTrace> readTraceFor(const std::string &Path, bool Focus,
                                          std::string_view Choice, bool Memory,
                                          const trace::ProgressFn &Progress);

} // namespace dd::whatif

#endif

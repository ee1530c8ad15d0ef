//===- Iterations.h - Which iterations a command reports --------*- C++ -*-===//
//
// The iterations of a graph or of a surveyed trace: the default
// (steady-state) one, a choice by number, what is odd about the markers,
// and measured times on the simulator's axis to compare replays with.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_ITERATIONS_H
#define DD_WHATIF_ITERATIONS_H

#include "graph/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dd::whatif {

/// Parses a --window value "START:END" (microseconds from the trace start).
llvm::Expected<std::pair<int64_t, int64_t>> parseWindow(std::string_view S);

/// Which iterations a command reports: "" (the default, a steady-state
/// one), a number as the trace numbers them, or "all".
llvm::Expected<std::vector<size_t>> chooseIterations(const graph::Graph &G,
                                                     std::string_view Choice);
/// The same over iterations given by their numbers and measured lengths
/// (and which hold GPU work: \p Busy, as for defaultIteration).
llvm::Expected<std::vector<size_t>>
chooseIterations(llvm::ArrayRef<int64_t> Numbers,
                 llvm::ArrayRef<int64_t> Lengths, std::string_view Choice,
                 llvm::ArrayRef<uint8_t> Busy = {});
/// The default iteration: the median-length one, first and last excluded,
/// among those that hold GPU work (\p Busy, by iteration; all when it is
/// empty or none does), so that markers around no work (a profiler
/// schedule's empty steps, stray annotations) never make the steady state.
/// For a graph of part of a trace it is the trace's (Graph::Span), and
/// G.Iterations.size() when that one is not in the graph.
size_t defaultIteration(const graph::Graph &G);
/// The numbers and measured lengths of a graph's iterations, and which hold
/// GPU work.
struct IterationLists {
  std::vector<int64_t> Numbers, Lengths;
  std::vector<uint8_t> Busy;
};
IterationLists iterationLists(const graph::Graph &G);
size_t defaultIteration(llvm::ArrayRef<int64_t> Lengths,
                        llvm::ArrayRef<uint8_t> Busy = {});
/// Which of the iterations [Begin[I], End[I]) hold GPU work: one of
/// \p WorkStarts (the starts of kernels, copies and sets) lies in it.
std::vector<uint8_t> iterationsWithWork(llvm::ArrayRef<int64_t> Begin,
                                        llvm::ArrayRef<int64_t> End,
                                        std::vector<int64_t> WorkStarts);
/// What is odd about a trace's iteration markers, given by start: markers
/// that begin before the one before them ends (nested or repeated),
/// numbers on more than one marker, markers around no GPU work (\p Busy).
/// One warning per kind, naming the first case.
std::vector<std::string> markerWarnings(llvm::ArrayRef<int64_t> Numbers,
                                        llvm::ArrayRef<int64_t> Begin,
                                        llvm::ArrayRef<int64_t> End,
                                        llvm::ArrayRef<uint8_t> Busy);

/// Measured and simulated busy time of the GPU streams inside [Begin, End).
int64_t gpuBusy(const graph::Graph &G, const std::vector<int64_t> &Start,
                const std::vector<int64_t> &End, int64_t Begin, int64_t End_);

/// Measured start and end of the tasks, on the simulator's time axis
/// (ns from the graph's origin), for comparisons with a SimResult.
void measuredTimes(const graph::Graph &G, std::vector<int64_t> &Start,
                   std::vector<int64_t> &End);
/// The measured time of an iteration boundary on that axis.
int64_t measuredPointTime(const graph::Graph &G,
                          const graph::Iteration::Point &P,
                          const std::vector<int64_t> &End);

} // namespace dd::whatif

#endif

//===- Compare.h - Two runs of one job side by side -------------*- C++ -*-===//
//
// Back-testing: two traces of one job, before and after a change, each at
// its steady-state iteration (BEFORE's may be chosen), with the spread of
// AFTER's iterations; with a model, what it predicts from BEFORE; and where
// the time went, side by side: GPU time by kernel class and by layer (the
// largest), CPU time by phase, and their sums, measured before, measured
// after and as the model left BEFORE's graph.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_COMPARE_H
#define DD_WHATIF_COMPARE_H

#include "whatif/Load.h"
#include "whatif/Predict.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

/// One side of a comparison: its reported iteration and how long it took,
/// and the measured time of each of its iterations that holds GPU work,
/// with their minimum, median (the lower middle) and maximum.
struct ComparedRun {
  std::string Path;
  size_t It = 0; ///< into its graph's iterations
  int64_t Measured = 0;
  std::vector<int64_t> Times;
  int64_t Min = 0, Median = 0, Max = 0;
};
ComparedRun comparedRun(const std::string &Path, const Replayed &R);

/// Task time in an iteration by row label ("GPU work (sum)", "  gemm",
/// "  layer to#1", "CPU calls (sum)", "  forward (CPU)"): as traced, or
/// with \p Current, the durations as they are (a model's prediction).
std::map<std::string, int64_t> breakdown(const graph::Graph &G, size_t It,
                                         bool Current);

/// A row of the comparison; a heading ("GPU work by layer (the 8
/// largest)") has no times.
struct ComparisonRow {
  enum class Kind { Heading, Sum, Part } K;
  std::string Label; ///< as the text shows it, indented under its sum
  int64_t Before = 0, After = 0, Predicted = 0;
};

struct Comparison {
  ComparedRun Before, After;
  double Change = 0; ///< (after - before) / before, measured
  /// With a model: its run on BEFORE's graph (Run->R.Ok false, or
  /// SimError, where it failed) and the reported iteration's outcome.
  std::optional<Prediction> Run;
  std::optional<Outcome> Predicted;
  std::vector<ComparisonRow> Rows;
};

/// (A - B) / B, 0 where B is.
inline double relative(int64_t A, int64_t B) {
  return B ? double(A - B) / double(B) : 0.0;
}

/// Compares \p Before and \p After; with \p Model (and \p Mem holding its
/// device-memory setting), runs it on Before's graph first, which it
/// changes. Rows are GPU rows, then CPU rows, each sum before its parts,
/// then the largest layers under their heading.
Comparison compare(Replayed &Before, const std::string &BeforePath,
                   const Replayed &After, const std::string &AfterPath,
                   const bc::Program *Model,
                   const std::vector<vm::Setting> &Settings, RunMemory Mem);

} // namespace dd::whatif

#endif

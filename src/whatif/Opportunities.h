//===- Opportunities.h - Ranked one-line what-ifs ---------------*- C++ -*-===//
//
// "Where is the gain, and how much is there?": a ranked list of what-ifs,
// each a one-line model (every kernel class F times faster, each phase, the
// top layers, data loading gone, the CPU side F times faster, communication
// F times faster, synchronisations removed, the optimizer fused), each run
// as `ddscript run` would run it: compiled from its text, on a copy of the
// trace's graph, simulated, its steady state compared with the replay's.
// The what-ifs run on threads, each result in its own slot, so the ranking
// does not depend on them.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_OPPORTUNITIES_H
#define DD_WHATIF_OPPORTUNITIES_H

#include "whatif/JobPredict.h"
#include "whatif/Predict.h"

#include <string>
#include <vector>

namespace dd::whatif {

/// One what-if: what it changes in words, its model (one line of the
/// language) and its outcome on the reported iteration.
struct WhatIf {
  std::string What;  ///< "gemm kernels 2x faster"
  std::string Model; ///< the model's text, one line
  Outcome Result;
  std::string Error; ///< when the model or its simulation failed
};

/// The what-ifs worth trying on \p G's iteration \p It, each making its
/// tasks \p Factor times faster.
std::vector<WhatIf> candidates(const graph::Graph &G, size_t It, double Factor);

/// The ranked what-ifs: fastest prediction first, those that predict the
/// same time with a gain merged into one row, at most Top of them; the
/// what-ifs that failed as warnings about the trace.
struct Opportunities {
  std::vector<WhatIf> Ranked;
  std::vector<Problem> Warnings;
  int64_t BaselineNs = 0; ///< the replay's steady state they compare with
};

/// Runs every candidate of \p B's first reported iteration on a copy of
/// \p B's graph (on threads), each compiled with \p StdlibDirs on the
/// search path, and ranks them.
Opportunities rankOpportunities(const Baseline &B, double Factor, size_t Top,
                                const std::vector<std::string> &StdlibDirs);

} // namespace dd::whatif

#endif

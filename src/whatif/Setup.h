//===- Setup.h - A trace set up for models to run on ------------*- C++ -*-===//
//
// What `ddscript run` sets up for one trace before a model runs: the trace
// read, its graph built, the reported iterations chosen (by default the
// steady-state one), the profiler's overhead taken out (the per-event model,
// a fit to a measured time, or nothing) and the graph replayed. The golden
// tests, the stdlib tests and the Python module run models through it, so
// that they see what users see.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_SETUP_H
#define DD_WHATIF_SETUP_H

#include "whatif/Load.h"
#include "whatif/Predict.h"
#include "whatif/Problem.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace dd::whatif {

/// The request \p Req for \p R's trace applied to its graph (applyProfiler,
/// its warnings in the fit) and, where its CPU work changed, \p R's
/// baseline replayed again. Fails only where the graph cannot be simulated.
llvm::Expected<ProfilerFit> applyProfiler(Replayed &R,
                                          const ProfilerRequest &Req);

/// A trace set up for runs: every run takes a copy of G (or G itself).
struct RunSetup {
  std::string TracePath;
  Input In;
  graph::Graph G;
  std::vector<size_t> Chosen;
  sim::SimResult Base;
  ProfilerFit Fit;
  /// The baseline predict() takes; it points into this object.
  Baseline baseline() const;
};

/// \p R (a trace or a rank, read, its graph replayed) set up for runs with
/// \p Req applied (applyProfiler). The fit's warnings stay in the setup's
/// Fit.Warnings: they are about predictions, and the caller tells them
/// where it runs one. Fails where the graph cannot be simulated again.
llvm::Expected<std::unique_ptr<RunSetup>>
makeSetup(std::string TracePath, Replayed &&R, const ProfilerRequest &Req);

/// Loads \p R (loadReplayed), with the trace's warnings, and sets it up
/// (makeSetup). A graph that cannot be simulated once the profiler's cost
/// is out fails as Internal.
Result<std::unique_ptr<RunSetup>> setupRun(const TraceRequest &R,
                                           const ProfilerRequest &Req);

} // namespace dd::whatif

#endif

//===- Predict.h - A model run on a trace, for the commands -----*- C++ -*-===//
//
// The command line's side of whatif/Predict.h: --unprofiled read, the
// profiler's request applied with its warnings printed, the trace set up
// for `run` (RunSetup), and the JSON and report forms of a run's changes.
//
//===----------------------------------------------------------------------===//
#ifndef DD_DRIVER_PREDICT_H
#define DD_DRIVER_PREDICT_H

#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Session.h"
#include "graph/Graph.h"
#include "sim/Simulator.h"
#include "trace/Trace.h"
#include "vm/VM.h"
#include "whatif/Predict.h"
#include "whatif/RunMemory.h"
#include "whatif/Setup.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dd::driver {

using whatif::Backlog;
using whatif::backlogText;
using whatif::Baseline;
using whatif::DefaultPerEventNs;
using whatif::Outcome;
using whatif::predict;
using whatif::Prediction;
using whatif::ProfilerFit;
using whatif::ProfilerRequest;
using whatif::RunMemory;
using whatif::Steady;
using whatif::steadyState;
using whatif::steadyStates;

/// \p B as the JSON member \p Key: null when nothing piles up.
void writeBacklog(JsonWriter &W, const char *Key, const Backlog &B);

/// Reads --unprofiled's \p Text into \p Out: empty (not given) is the
/// per-event model at its default cost for one trace, nothing for a job;
/// "profiled" (--profiled) nothing; `per-event[=COST]`; or a duration. False,
/// with the error reported, for anything else, or a value given for a job.
bool parseUnprofiled(const std::string &Text, const TraceOptions &T,
                     ProfilerRequest &Out);

/// What `run` and `opportunities` do with a loaded trace: the request for
/// that trace applied to \p R's graph (whatif::applyProfiler, its warnings
/// printed) and, where its CPU work changed, \p R's baseline replayed
/// again. None, the error reported, where the graph cannot be simulated.
std::optional<ProfilerFit> applyProfiler(Replayed &R,
                                         const ProfilerRequest &Req,
                                         const std::string &TracePath);

/// What `ddscript run` sets up for one trace (whatif/Setup.h).
using whatif::RunSetup;
/// setupRun's result: the setup, or the exit status after the error was
/// printed.
struct RunSetupResult {
  std::unique_ptr<RunSetup> Setup;
  int Rc = 0;
};
/// With \p TellFit the fit's warnings are printed after the trace's, as
/// `run` prints them; else they stay in Setup->Fit.Warnings for the caller
/// to tell at each run (the Python module, whose load may only replay).
RunSetupResult setupRun(const TraceOptions &T, const ProfilerRequest &Req,
                        bool TellFit = true);

/// The "changes" object of run's JSON: counts and time moved per phase.
void writeChanges(JsonWriter &W, const vm::ChangeStats &C);
/// The same counts for the report's "What changed": (what, how much).
std::vector<std::pair<std::string, std::string>>
describeChanges(const vm::ChangeStats &C);

} // namespace dd::driver

#endif

//===- Session.h - Loading traces and models for the commands ---*- C++ -*-===//
#ifndef DD_DRIVER_SESSION_H
#define DD_DRIVER_SESSION_H

#include "builder/GraphBuilder.h"
#include "driver/Commands.h"
#include "driver/Console.h"
#include "job/Job.h"
#include "job/RankFile.h"
#include "sim/Simulator.h"
#include "trace/Trace.h"
#include "vm/VM.h"
#include "whatif/Iterations.h"
#include "whatif/JobLoad.h"
#include "whatif/JobPredict.h"
#include "whatif/Load.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dd::driver {

using whatif::chooseIterations;
using whatif::defaultIteration;
using whatif::gpuBusy;
using whatif::IterationLists;
using whatif::iterationLists;
using whatif::iterationsWithWork;
using whatif::markerWarnings;
using whatif::measuredPointTime;
using whatif::measuredTimes;
using whatif::parseWindow;

/// Exit codes of the ddscript command.
enum ExitCode : int { ExitOk = 0, ExitBadInput = 2, ExitInternal = 3 };

/// A file a command reads or writes, and what it is to the command ("the
/// trace being read"; for outputs, the option: "--report").
struct NamedPath {
  std::string What, Path;
};

/// The exit status of a command that \p P stopped: 3 for a graph that
/// could not be simulated, else 2.
inline int exitFor(const whatif::Problem &P) {
  return P.Internal ? ExitInternal : ExitBadInput;
}

/// \p R's warnings printed, then what stopped it; its value, or none.
template <typename T> std::optional<T> reported(whatif::Result<T> &&R) {
  for (const whatif::Problem &W : R.Warnings)
    reportWarning(W.File, W.Message);
  if (R.Failed)
    reportError(R.Failed->File, R.Failed->Message);
  return std::move(R.Value);
}
/// reported, and in \p Rc the command's exit status so far (exitFor).
template <typename T>
std::optional<T> reported(whatif::Result<T> &&R, int &Rc) {
  Rc = R.Failed ? exitFor(*R.Failed) : ExitOk;
  return reported(std::move(R));
}

/// Refuses, with one error line, an output that is one of \p Inputs or
/// another output (FileIO.h: sameFile, so also through links): writing it
/// would destroy what the command reads, or keep only one of two outputs.
/// Devices such as /dev/null are never refused. Returns whether all may be
/// written.
bool checkOutputPaths(const std::vector<NamedPath> &Outputs,
                      const std::vector<NamedPath> &Inputs);

/// Expands --trace (files, directories of traces, quoted globs) into
/// O.TracePaths, sorted within each directory or glob, and sets O.TracePath
/// to the first; false, the error printed, when one names nothing or a
/// file is given twice. \p Command names the command for "takes one trace"
/// when it does not read jobs (\p Job false).
bool resolveTraces(TraceOptions &O, std::string_view Command, bool Job);

/// Loads a trace, with a progress line for slow loads.
llvm::Expected<trace::Trace> loadTrace(const std::string &Path);

/// What every trace command starts from: its graph options and its trace.
using CommandInput = whatif::Input;
/// The graph options of a command (--window, --calibration); prints the
/// error and returns nullopt for a bad value.
std::optional<graph::BuildOptions> buildOptionsFor(const TraceOptions &O);

/// Reads the command's graph options (--window, --calibration), then loads
/// its trace, printing the trace's warnings; nullopt, the error printed, for
/// a bad option or a trace that cannot be read. With \p Focus, for a
/// command that reports the iterations --iteration names, only those
/// iterations and their neighbours are read where the trace allows it
/// (whatif/Focus.h).
std::optional<CommandInput> loadInputFor(const TraceOptions &O,
                                         bool Focus = false);
/// Builds the graph, timed as the "graph" phase.
llvm::Expected<graph::Graph> buildGraphTimed(const CommandInput &In,
                                             graph::BuildStats *Stats);
/// buildGraphTimed, printing the error against the trace and returning
/// nullopt when the graph cannot be built.
std::optional<graph::Graph> buildGraphFor(const TraceOptions &O,
                                          const CommandInput &In,
                                          graph::BuildStats *Stats = nullptr);

/// A job's ranks, each trace of O.TracePaths read and its graph built.
using whatif::LoadedRanks;

using whatif::readRank;
/// Loads every rank on threads (each reads only the iterations it needs
/// when --iteration names one) and builds its graph; nullopt, the error
/// printed, for a trace that cannot be read, a --window, or traces of
/// different world sizes.
std::optional<LoadedRanks> loadRanksFor(const TraceOptions &O);
/// --clock.
job::Clock clockFor(const TraceOptions &O);

/// A job: the ranks' traces of O.TracePaths joined (job/Job.h).
struct LoadedJob {
  job::Job Job;
  bool RanksFromTraces; ///< from distributedInfo, else the order given
  std::string Iteration, DefaultFrom; ///< as in LoadedRanks
};
/// Which of \p J's iterations a command reports: --iteration \p Iteration
/// (by default, the first trace's steady-state one, \p DefaultFrom saying
/// which trace), as indices into J.Iterations; nullopt, the error printed
/// (saying where a default came from), when it cannot be chosen.
std::optional<std::vector<size_t>>
chooseJobIterations(const job::Job &J, const std::string &Iteration,
                    const std::string &DefaultFrom);
/// Loads every rank (on threads; each reads only the iterations it needs
/// when --iteration names one), builds its graph and joins them; nullopt,
/// the error printed, for a trace that cannot be read or ranks that do not
/// make one job (driver/JobReplay.cpp).
std::optional<LoadedJob> loadJobFor(const TraceOptions &O);

/// For commands that report one iteration: false, the error printed
/// ("\p Command reports one iteration: give --iteration N, ..."), when
/// --iteration is "all".
bool oneIteration(const TraceOptions &O, std::string_view Command);

/// A trace read whole, its graph built, the reported iterations chosen and
/// the graph replayed: what commands that compare what-ifs start from.
using whatif::Replayed;
/// Loads O.TracePath so; nullopt, the error printed, when it cannot.
std::optional<Replayed> loadReplayed(const TraceOptions &O);

} // namespace dd::driver

#endif

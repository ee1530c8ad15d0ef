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

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dd::driver {

/// Exit codes of the ddscript command.
enum ExitCode : int { ExitOk = 0, ExitBadInput = 2, ExitInternal = 3 };

/// A file a command reads or writes, and what it is to the command ("the
/// trace being read"; for outputs, the option: "--report").
struct NamedPath {
  std::string What, Path;
};

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
struct CommandInput {
  graph::BuildOptions Build;
  trace::Trace Trace;
  /// Where the trace's iterations lie among the file's, when it holds only
  /// some (see driver/Focus.h); given to the graph.
  graph::Graph::IterationSpan Span;
};
/// The graph options of a command (--window, --calibration); prints the
/// error and returns nullopt for a bad value.
std::optional<graph::BuildOptions> buildOptionsFor(const TraceOptions &O);

/// Reads the command's graph options (--window, --calibration), then loads
/// its trace, printing the trace's warnings; nullopt, the error printed, for
/// a bad option or a trace that cannot be read. With \p Focus, for a
/// command that reports the iterations --iteration names, only those
/// iterations and their neighbours are read where the trace allows it
/// (driver/Focus.h).
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
struct LoadedRanks {
  std::vector<job::RankGraph> Graphs; ///< in the order given
  bool RanksFromTraces = false; ///< from distributedInfo, else the order given
  std::map<int32_t, vm::DeviceFacts> Devices; ///< by rank
  /// The job's world size as every trace's distributedInfo says it (a job
  /// may be given some of its ranks); -1 when they do not all say one.
  int64_t WorldSize = -1;
  /// The iteration to report: --iteration, or by default the steady-state
  /// one of the first trace (DefaultFrom), which every other rank read
  /// focused; "" when there is none (a trace without iterations).
  std::string Iteration;
  std::string DefaultFrom;
  /// Per rank, in Graphs' order: a trace of ddscript's own collector, whose
  /// cost is not the PyTorch profiler's (no per-event model for it).
  std::vector<bool> FromCollector;
  /// Per rank, in Graphs' order: the trace it was read from (a reduced
  /// rank's is the trace `reduce` read, as it was given there).
  std::vector<std::string> Sources;
};

/// One rank of a job read from its trace \p Path as the job's commands read
/// it (only what iteration \p Choice needs, where the trace allows), and
/// its graph built: what a job loads, and what `reduce` writes
/// (job/RankFile.h), so that a reduced rank is the rank its trace gives.
llvm::Expected<job::ReducedRank> readRank(const std::string &Path,
                                          std::string_view Choice,
                                          const graph::BuildOptions &BO,
                                          const std::string &Calibration);
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
struct Replayed {
  CommandInput In;
  graph::Graph G;
  std::vector<size_t> Chosen;
  sim::SimResult Base;
};
/// Loads O.TracePath so; nullopt, the error printed, when it cannot.
std::optional<Replayed> loadReplayed(const TraceOptions &O);

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

} // namespace dd::driver

#endif

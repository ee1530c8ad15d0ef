//===- JobPredict.h - A model run on every rank of a job --------*- C++ -*-===//
//
// `ddscript run MODEL --trace r0.json.gz r1.json.gz ...` below its flags and
// printing: the profiler's cost per event taken out of each rank (the job
// as traced replayed first, for the measured times' check), the unchanged
// ranks joined and replayed (the baseline), the model run on every rank's
// graph on its own (on threads: the ranks share nothing a model can change),
// and the changed ranks joined and simulated together. A collective
// member's duration is its transfer, so that `shrink (select comm) by 2`
// halves the transfer and the wait follows from the simulation;
// communication a model inserts is paired across ranks by order on
// same-named channels. See docs/multirank.md.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_JOBPREDICT_H
#define DD_WHATIF_JOBPREDICT_H

#include "bytecode/Bytecode.h"
#include "graph/Edit.h"
#include "job/Job.h"
#include "sim/Simulator.h"
#include "vm/VM.h"
#include "whatif/Predict.h"
#include "whatif/Problem.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

/// A job's ranks, each read from its trace (or reduced rank) and its graph
/// built: what the job's commands start from.
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

/// Which of \p J's iterations a command reports: \p Iteration (by default,
/// the first trace's steady-state one, \p DefaultFrom saying which trace),
/// as indices into J.Iterations; the error says where a default came from.
llvm::Expected<std::vector<size_t>>
chooseJobIterations(const job::Job &J, const std::string &Iteration,
                    const std::string &DefaultFrom);

/// One job iteration's times: the job's, and each rank's (by rank index).
/// Simulated, each also as a steady state (steadyState): a rank whose work
/// piles up past its iterations holds every rank that meets it at a
/// collective, so the job's steady state is its span, or the most work one
/// resource of one rank has per iteration, or the span plus the most any
/// rank falls further behind each iteration, whichever is longest.
struct JobTimes {
  int64_t Number = 0;
  std::string Label;
  int64_t Job = 0;                ///< first rank's begin to last rank's end
  int64_t JobSteady = 0;          ///< the job's steady state (Job if measured)
  std::vector<int64_t> Ranks;     ///< each rank's iteration span
  std::vector<Steady> RankSteady; ///< simulated: each rank's steady state
  /// The rank whose backlog sets the job's steady state; -1 if none does.
  int64_t PilingRank = -1;
};

/// The times of the job iterations numbered \p Numbers in \p R (simulated)
/// or as measured (\p R null).
std::vector<JobTimes> timesOf(const job::Job &J, const sim::SimResult *R,
                              const std::vector<int64_t> &Numbers);

/// What a model run on a job is given.
struct JobModelRequest {
  const bc::Program *Program = nullptr;
  std::string ModelPath; ///< what errors about the changed job name
  std::vector<vm::Setting> Settings;
  uint64_t MaxSteps = vm::DefaultMaxSteps;
  ProfilerRequest Profiler;
  job::Clock Clock = job::Clock::Collectives;
  /// Keep the unchanged job, its replay and each rank's lateness at the
  /// first reported iteration's collectives (for a timeline or a report).
  bool KeepBaseline = false;
};

/// What a model run on a job gave. Failed says what stopped it, if
/// anything; ModelRan whether the model ran on the ranks (their output in
/// Printed, and FailedRank the first rank it failed on).
struct JobPrediction {
  std::optional<Problem> Failed;
  bool ModelRan = false;
  /// What the models printed: once when every rank printed the same, else
  /// each rank's under "rank N:".
  std::string Printed;
  std::optional<size_t> FailedRank; ///< index into Job's ranks
  vm::RunResult FailedRun;          ///< that rank's run (its Error)
  std::string FailedPath;           ///< that rank's trace

  /// Per reported iteration: as measured, replayed (without the profiler's
  /// cost where it was taken out), replayed with it (empty where it was
  /// not: the check of the measured times), and predicted.
  std::vector<JobTimes> Measured, Replayed, ProfiledReplayed, Predicted;
  graph::ProfilerCost Cost; ///< over every rank it was taken out of
  size_t CostRanks = 0;     ///< how many ranks that was
  size_t JobIterations = 0; ///< the iterations every rank has
  size_t Collectives = 0;   ///< matched in the unchanged job
  vm::ChangeStats Stats;    ///< summed over the ranks
  uint64_t Steps = 0;       ///< the VM's, summed over the ranks

  /// The changed job and its simulation.
  std::optional<job::Job> Job;
  std::optional<sim::SimResult> Run;
  /// With KeepBaseline: the unchanged job, its replay, and per rank its
  /// late arrivals at the first reported iteration's collectives.
  std::optional<job::Job> BaseJob;
  std::optional<sim::SimResult> BaseRun;
  std::vector<int64_t> BaseLate;
};

/// Runs \p Req's model on every rank of \p L (its graphs are consumed).
JobPrediction predictJob(LoadedRanks &&L, const JobModelRequest &Req);

} // namespace dd::whatif

#endif

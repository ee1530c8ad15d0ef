//===- JobReplay.h - A job replayed as traced -------------------*- C++ -*-===//
//
// What `ddscript replay` reports of a job, as values: per reported job
// iteration, its measured and replayed time (first rank's begin to last
// rank's end), each rank's, how late each reaches the collectives, the
// stragglers (the latest ranks, each with the job's time were it on time,
// simulated) and the critical path across ranks.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_JOBREPLAY_H
#define DD_WHATIF_JOBREPLAY_H

#include "job/Job.h"
#include "sim/CriticalPath.h"
#include "sim/Simulator.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace dd::whatif {

/// One rank in a job iteration.
struct RankRow {
  int32_t Rank;
  int64_t Measured, Replayed, Late;
  double error() const {
    return Measured ? double(Replayed - Measured) / double(Measured) : 0.0;
  }
};

/// A rank later than the median at the collectives, and the job's time
/// were it not.
struct Straggler {
  int32_t Rank;
  int64_t Late, JobWithout;
  double Scale; ///< the factor its own work needed; -1: no gain at any
};

/// One reported job iteration.
struct JobReport {
  const job::JobIteration *It;
  size_t Ordinal;
  int64_t Measured, Replayed;
  std::vector<RankRow> Ranks;
  std::vector<Straggler> Stragglers;
  sim::CriticalPath Path;
  double error() const {
    return Measured ? double(Replayed - Measured) / double(Measured) : 0.0;
  }
};

/// A job replayed, and its reported iterations.
struct JobReplay {
  sim::SimResult R;
  std::vector<JobReport> Reports;
};

/// Replays \p J (timed as the "simulate" phase) and reports each of
/// \p Chosen (indices into J.Iterations). Fails only where the job cannot
/// be simulated.
llvm::Expected<JobReplay> replayJob(const job::Job &J,
                                    const std::vector<size_t> &Chosen);

} // namespace dd::whatif

#endif

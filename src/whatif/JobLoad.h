//===- JobLoad.h - A job's ranks read, each its graph built -----*- C++ -*-===//
//
// What a job's commands start from: every rank read on threads, from its
// trace or its reduced rank (job/RankFile.h), each only as far as the
// reported iteration needs where the trace allows, and its graph built.
// Warnings and what stopped it are values; the commands print them.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_JOBLOAD_H
#define DD_WHATIF_JOBLOAD_H

#include "builder/GraphBuilder.h"
#include "job/RankFile.h"
#include "whatif/JobPredict.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dd::whatif {

/// One rank of a job read from its trace \p Path as the job's commands read
/// it (only what iteration \p Choice needs, where the trace allows), and
/// its graph built: what a job loads, and what `reduce` writes
/// (job/RankFile.h), so that a reduced rank is the rank its trace gives.
llvm::Expected<job::ReducedRank> readRank(const std::string &Path,
                                          std::string_view Choice,
                                          const graph::BuildOptions &BO,
                                          const std::string &Calibration);

/// One rank as `ddscript reduce` writes it: its .ddg's bytes and what is
/// said of it.
struct ReducedFile {
  std::string Bytes;
  int64_t Rank = -1, WorldSize = -1; ///< as the trace says them; -1: not
  size_t Tasks = 0, Iterations = 0, TraceIterations = 0;
  int64_t FirstNumber = 0, LastNumber = 0; ///< of the iterations kept
  uint64_t TraceBytes = 0;                 ///< the trace file's size
};

/// Reads the rank at \p Trace as a job reads it (readRank), refuses an
/// iteration \p Choice the trace does not have (unless "all") and a rank
/// no job can have, and encodes it (job/RankFile.h); the trace's warnings
/// on the way.
Result<ReducedFile> reduceRank(const std::string &Trace,
                               const std::string &Choice,
                               const graph::BuildOptions &BO,
                               const std::string &Calibration);

/// What a job is read as.
struct RankRequest {
  std::vector<std::string> Paths; ///< traces and reduced ranks, one per rank
  graph::BuildOptions Build;      ///< no window: a job is matched by iterations
  std::string Calibration;        ///< "exact" or "typical"
  /// "" (the first trace's steady-state one), a number, or "all".
  std::string Iteration;
};

/// Loads every rank of \p Req on threads. By default each reads the first
/// trace's steady-state iteration and its neighbours only: each reads its
/// own first, and one whose choice differs is read again. What stops it: a
/// trace that cannot be read, ranks not of one job; the ranks' warnings in
/// order either way.
Result<LoadedRanks> loadRanks(const RankRequest &Req);

} // namespace dd::whatif

#endif

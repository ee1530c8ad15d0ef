//===- Export.h - Each rank's iteration, as a model leaves it, as Chakra -===//
//
// `ddscript export --format chakra` below its flags and printing: the
// reported iteration of one trace (set up as `run` sets it up) or of each
// rank of a job, with a model applied first if one is given, as Chakra
// execution traces (export/ChakraEt.h). A job's ranks are joined as
// `replay` joins them, so that ASTRA-sim is never handed ranks that cannot
// run together, and each is then set up alone at the job's iteration (each
// rank's own default could be another). Nothing is written here: the
// files' bytes are the result.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_EXPORT_H
#define DD_WHATIF_EXPORT_H

#include "bytecode/Bytecode.h"
#include "export/ChakraEt.h"
#include "job/Job.h"
#include "vm/VM.h"
#include "whatif/JobPredict.h"
#include "whatif/Problem.h"
#include "whatif/Setup.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

/// The iteration a job's export writes: the one `replay` reports of the job
/// (its ranks joined with clock \p C), as the number every rank's graph is
/// chosen by.
Result<std::string> jobIteration(const LoadedRanks &L, job::Clock C);

/// Each of \p L's ranks (its graphs consumed) set up as a run on one trace
/// sets it up, at \p Iteration: its device and rank as the job read them,
/// its graph replayed, no profiler's cost taken out. In L.Graphs' order.
Result<std::vector<std::unique_ptr<RunSetup>>>
setupRanks(LoadedRanks &&L, const std::string &Iteration);

/// The model an export applies first; no Program: the graph as traced.
struct ExportModel {
  const bc::Program *Program = nullptr;
  std::string Path; ///< written into each file's metadata, and errors
  std::vector<vm::Setting> Settings;
  uint64_t MaxSteps = vm::DefaultMaxSteps;
};

/// One rank's file: what export writes for it and what it holds.
struct ExportedRank {
  int64_t Rank = 0;
  std::string Trace;     ///< what was read (a trace or a reduced rank)
  std::string Iteration; ///< the label of the iteration written
  std::string Bytes;     ///< the Chakra ET file
  exporter::ChakraStats Stats;
};

/// What an export gave: a file per rank, in the order given, or what
/// stopped it: a Problem, or the model's error (ModelError, with the
/// rank's run in FailedRun).
struct ChakraExport {
  std::vector<ExportedRank> Ranks;
  std::optional<Problem> Failed;
  bool ModelError = false;
  vm::RunResult FailedRun;
  /// What the model printed, rank after rank, up to where it stopped.
  std::string Printed;
};

/// \p Setups (one trace's, or a job's ranks from setupRanks) exported at
/// their first chosen iteration, \p M applied to each first (its graph
/// changed). \p Traces names what each was read from, \p Sources the trace
/// behind it (for a reduced rank, the one `reduce` read). A rank is the
/// trace's distributedInfo's, else its place in the list; two of one rank
/// are refused.
ChakraExport exportChakra(std::vector<std::unique_ptr<RunSetup>> &Setups,
                          const std::vector<std::string> &Traces,
                          const std::vector<std::string> &Sources,
                          const ExportModel &M);

} // namespace dd::whatif

#endif

//===- RankFile.h - A job's rank reduced to its graph -----------*- C++ -*-===//
//
// `ddscript reduce` reads one rank's trace as a job's command would (its
// reported iterations and their neighbours), builds and calibrates its
// graph, and writes it with what the job's join and its commands read of
// the trace: its rank and world size, its device, its warnings, which
// iteration it was read for. A job's commands take such files in place of
// traces (a .ddg is recognised by its first bytes, not its name), and print
// what they print from the traces, but the inputs' names.
//
// The file: 8 bytes of magic ("\x89DDGRANK"), the format version as 4 bytes
// little-endian, then one gzip member holding the body (ByteStream records:
// the rank's facts, then graph/GraphFile.h's graph). A reader takes its own
// version only: a file of another version is refused with both versions
// named, and the advice to reduce the trace again (the graph's columns and
// their meaning change with the builder; a reduced rank is a cache of its
// trace, not an archive).
//
//===----------------------------------------------------------------------===//
#ifndef DD_JOB_RANKFILE_H
#define DD_JOB_RANKFILE_H

#include "graph/Graph.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dd::job {

/// The version this ddscript writes and reads.
constexpr uint32_t RankFileVersion = 1;
constexpr std::string_view RankFileMagic = "\x89"
                                           "DDGRANK";

struct ReducedRank {
  std::string Source; ///< the trace it was reduced from, as given
  int64_t Rank = -1, WorldSize = -1; ///< distributedInfo's, or -1
  bool FromCollector = false;        ///< trace::Trace::FromCollector
  std::string DeviceName;            ///< the trace's first device, if any
  int64_t DeviceMemory = 0;
  int32_t DeviceSms = 0;
  std::vector<std::string> Warnings; ///< the trace's, as a job prints them
  /// The --iteration it was read for ("" the trace's steady-state one, a
  /// number, or "all"), and the number of its steady-state iteration (-1
  /// where it has none): a job's command that needs another iteration
  /// refuses the file, as its graph holds the wrong ones.
  std::string Iteration;
  int64_t Steady = -1;
  std::string Calibration; ///< --calibration: "exact" or "typical"
  graph::Graph G;
};

/// Whether \p Head (a file's first bytes, at least 8) is a rank file's.
bool isRankFile(std::string_view Head);
/// Whether the file at \p Path starts as a rank file does (false for one
/// that cannot be read: its reader then says why).
bool isRankFilePath(const std::string &Path);

/// The bytes of \p R's file.
llvm::Expected<std::string> encodeRankFile(const ReducedRank &R);
/// Reads the rank file at \p Path; an error in one line says what is wrong
/// (not a rank file, another version, damaged at which byte).
llvm::Expected<ReducedRank> readRankFile(const std::string &Path);
/// The body of a rank file, inflated (what follows its header): the rank's
/// facts and its graph, every one checked. The fuzz target's entry.
llvm::Expected<ReducedRank> parseRankBody(std::string_view Body);

} // namespace dd::job

#endif

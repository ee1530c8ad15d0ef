//===- Reduce.cpp - ddscript reduce: a job's rank, read once --------------===//
//
// `ddscript reduce --trace RANK.json.gz -o RANK.ddg` reads one rank as a
// job's commands read it (its reported iteration and the two beside it,
// where the trace allows: whatif/Focus.h), builds and calibrates its graph
// and writes it with what the job's commands read of the trace
// (job/RankFile.h). Each rank is independent work: a scheduler runs one
// reduce per rank (or per group of ranks, several --trace and an -o
// folder) wherever it likes, and one `ddscript replay --trace FOLDER`
// joins them, reading a few MB per rank instead of its JSON
// (docs/multirank.md, "Beyond one machine").
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Session.h"
#include "job/RankFile.h"
#include "support/FileIO.h"
#include "support/Parallel.h"
#include "trace/TraceReader.h"
#include "whatif/JobLoad.h"

#include <fmt/format.h>

#include <filesystem>

using namespace dd;
using namespace dd::driver;
namespace fs = std::filesystem;

namespace {

/// One rank reduced, and where it goes.
struct Reduced : whatif::ReducedFile {
  std::string Trace, Output;
};

/// The name a rank's file gets in an -o folder: its trace's, .ddg for the
/// trace's extension.
std::string reducedName(const std::string &Trace) {
  std::string Name = fs::path(Trace).filename().string();
  for (std::string_view Ext : {".json.gz", ".json", ".cupti"})
    if (Name.size() > Ext.size() &&
        Name.compare(Name.size() - Ext.size(), Ext.size(), Ext) == 0) {
      Name.resize(Name.size() - Ext.size());
      break;
    }
  return Name + ".ddg";
}

} // namespace

int dd::driver::runReduce(const ReduceOptions &R, const TraceOptions &O) {
  if (!O.Window.empty()) {
    reportError("ddscript", "--window: a reduced rank is read as a job's "
                            "ranks are, by its iterations");
    return ExitBadInput;
  }
  auto BO = buildOptionsFor(O);
  if (!BO)
    return ExitBadInput;
  for (const std::string &P : O.TracePaths)
    if (job::isRankFilePath(P)) {
      reportError(P, "already a reduced rank: give its trace");
      return ExitBadInput;
    }
  // One trace and -o a file; or several (a group of ranks) and -o a
  // folder, each written as its trace's name with .ddg.
  std::error_code EC;
  bool ToFolder = O.TracePaths.size() > 1 || fs::is_directory(R.Output, EC) ||
                  (!R.Output.empty() && R.Output.back() == '/');
  if (O.TracePaths.size() > 1 && fs::path(R.Output).extension() == ".ddg" &&
      !fs::is_directory(R.Output, EC)) {
    reportError("ddscript",
                fmt::format("-o {}: {} traces are written into a folder, one "
                            ".ddg each: give -o DIR/",
                            R.Output, O.TracePaths.size()));
    return ExitBadInput;
  }
  if (!ToFolder && fs::path(R.Output).extension() != ".ddg") {
    reportError("ddscript",
                fmt::format("-o {}: a reduced rank's name ends in .ddg (a "
                            "job's folder may hold traces beside them)",
                            R.Output));
    return ExitBadInput;
  }
  // The folder it goes to is made (a scheduler's task writes into the
  // job's folder, which the first one makes).
  fs::path Dir =
      ToFolder ? fs::path(R.Output) : fs::path(R.Output).parent_path();
  if (!Dir.empty() && !fs::is_directory(Dir, EC)) {
    std::error_code Made;
    fs::create_directories(Dir, Made);
    // Another task may have made it meanwhile.
    if (!fs::is_directory(Dir, EC)) {
      reportError(Dir.string(),
                  "cannot make this folder: " +
                      (Made ? Made.message() : std::string("not a folder")));
      return ExitBadInput;
    }
  }
  std::vector<Reduced> Ranks(O.TracePaths.size());
  std::vector<NamedPath> Inputs, Outputs;
  for (size_t I = 0; I < Ranks.size(); ++I) {
    Ranks[I].Trace = O.TracePaths[I];
    Ranks[I].Output =
        ToFolder ? (fs::path(R.Output) / reducedName(O.TracePaths[I])).string()
                 : R.Output;
    Inputs.push_back({"a trace being read", O.TracePaths[I]});
    Outputs.push_back({"-o", Ranks[I].Output});
  }
  if (!checkOutputPaths(Outputs, Inputs))
    return ExitBadInput;
  std::vector<whatif::Result<whatif::ReducedFile>> Done(Ranks.size());
  parallelFor(Ranks.size(), trace::defaultLoadThreads(), [&](size_t I) {
    Done[I] =
        whatif::reduceRank(Ranks[I].Trace, O.Iteration, *BO, O.Calibration);
  });
  for (size_t I = 0; I < Ranks.size(); ++I) {
    auto F = reported(std::move(Done[I]));
    if (!F)
      return ExitBadInput;
    static_cast<whatif::ReducedFile &>(Ranks[I]) = std::move(*F);
  }
  // Every rank or none: a group's task that fails leaves no half of it.
  AtomicFiles Files;
  for (const Reduced &Rk : Ranks)
    if (auto E = Files.add(Rk.Output, Rk.Bytes)) {
      reportError(Rk.Output, llvm::toString(std::move(E)));
      return ExitBadInput;
    }
  if (auto E = Files.commit()) {
    reportError(R.Output, llvm::toString(std::move(E)));
    return ExitBadInput;
  }
  std::string Out;
  for (const Reduced &Rk : Ranks) {
    std::string Iterations =
        Rk.Iterations == 0 ? std::string("no iterations")
        : Rk.Iterations == 1 && Rk.TraceIterations == 1
            ? std::string("its 1 iteration")
        : Rk.Iterations == Rk.TraceIterations
            ? fmt::format("all {} iterations", Rk.Iterations)
            : fmt::format("iterations {} to {} of {}", Rk.FirstNumber,
                          Rk.LastNumber, Rk.TraceIterations);
    if (O.Format == OutputFormat::Json) {
      writeJson([&](JsonWriter &W) {
        W.beginObject()
            .field("output", Rk.Output)
            .field("trace", Rk.Trace)
            .field("rank", Rk.Rank)
            .field("world_size", Rk.WorldSize)
            .field("tasks", static_cast<uint64_t>(Rk.Tasks))
            .field("iterations", static_cast<uint64_t>(Rk.Iterations))
            .field("trace_iterations",
                   static_cast<uint64_t>(Rk.TraceIterations))
            .field("bytes", static_cast<uint64_t>(Rk.Bytes.size()))
            .field("trace_bytes", Rk.TraceBytes)
            .endObject();
      });
      continue;
    }
    Out += fmt::format(
        "{}: {}{}, {} tasks, {} ({:.2f}x the trace file)\n", Rk.Output,
        Rk.Rank < 0 ? std::string()
        : Rk.WorldSize > 0
            ? fmt::format("rank {} of {}, ", Rk.Rank, Rk.WorldSize)
            : fmt::format("rank {}, ", Rk.Rank),
        Iterations, formatCount(Rk.Tasks),
        formatBytes(static_cast<int64_t>(Rk.Bytes.size())),
        Rk.TraceBytes ? double(Rk.Bytes.size()) / double(Rk.TraceBytes) : 0.0);
  }
  writeOut(Out);
  return ExitOk;
}

//===- Export.cpp - ddscript export ---------------------------------------===//
//
// `ddscript export --format chakra --trace T... [--model M] -o DIR`: the
// reported iteration of each rank's graph, as a model leaves it, as a
// Chakra execution trace DIR/chakra.RANK.et (export/ChakraEt.h), the files
// ASTRA-sim takes as a workload (docs/chakra.md). Each rank is set up as
// `run` sets up one trace (iteration choice, focused read), so a job's
// ranks are exported one at a time, each its part of the job's iteration
// (the one `replay` reports); collectives keep their order per rank,
// which is how ASTRA-sim pairs them.
//
//===----------------------------------------------------------------------===//

#include "whatif/Export.h"
#include "driver/Commands.h"
#include "driver/Console.h"
#include "driver/Format.h"
#include "driver/Predict.h"
#include "driver/Run.h"
#include "driver/Session.h"
#include "export/ChakraEt.h"
#include "support/FileIO.h"
#include "support/Format.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

using namespace dd;
using namespace dd::driver;
namespace fs = std::filesystem;

namespace {

/// A rank's file, and where it goes.
struct RankFile : whatif::ExportedRank {
  std::string Path;
};

std::string kindsText(const exporter::ChakraStats &S) {
  std::string Out;
  for (unsigned K = 0; K < graph::NumEdgeKinds; ++K)
    if (S.ByKind[K])
      Out += fmt::format("{}{} {}", Out.empty() ? "" : ", ",
                         graph::edgeKindName(static_cast<graph::EdgeKind>(K)),
                         S.ByKind[K]);
  return Out.empty() ? "none" : Out;
}

/// Files chakra.N.et in \p Dir that an earlier export left, for ranks this
/// one did not write: ASTRA-sim takes every rank of the workload's prefix,
/// so they are removed (their names returned).
std::vector<std::string> removeStaleRanks(const std::string &Dir,
                                          const std::vector<RankFile> &Files) {
  std::set<std::string> Written;
  for (const RankFile &F : Files)
    Written.insert(fs::path(F.Path).filename().string());
  std::vector<std::string> Stale;
  std::error_code Ec;
  for (fs::directory_iterator It(Dir, Ec), End; !Ec && It != End;
       It.increment(Ec)) {
    std::string Name = It->path().filename().string();
    if (Name.size() <= 10 || Name.compare(0, 7, "chakra.") != 0 ||
        Name.compare(Name.size() - 3, 3, ".et") != 0 || Written.count(Name))
      continue;
    std::string_view Digits(Name.data() + 7, Name.size() - 10);
    if (Digits.find_first_not_of("0123456789") != std::string_view::npos ||
        !It->is_regular_file(Ec))
      continue;
    Stale.push_back(Name);
  }
  std::sort(Stale.begin(), Stale.end());
  std::vector<std::string> Removed;
  for (const std::string &Name : Stale)
    if (fs::remove(fs::path(Dir) / Name, Ec))
      Removed.push_back(Name);
  return Removed;
}

std::string joinNames(const std::vector<std::string> &Names) {
  std::string Out;
  for (size_t I = 0; I < Names.size() && I < 8; ++I)
    Out += (I ? ", " : "") + Names[I];
  if (Names.size() > 8)
    Out += fmt::format(" and {} more", Names.size() - 8);
  return Out;
}

} // namespace

int dd::driver::runExport(const ExportOptions &E, const TraceOptions &T) {
  if (E.OutDir.empty()) {
    reportError("ddscript", "export needs -o DIR, the folder to write to");
    return ExitBadInput;
  }
  std::error_code Ec;
  if (fs::exists(E.OutDir, Ec) && !fs::is_directory(E.OutDir, Ec)) {
    reportError(E.OutDir, "-o names a file; export writes a folder of "
                          "Chakra files (one per rank)");
    return ExitBadInput;
  }
  std::unique_ptr<PreparedModel> PM;
  ModelOptions M;
  M.Model = E.Model;
  M.Settings = E.Settings;
  M.MaxSteps = E.MaxSteps;
  if (!E.Model.empty()) {
    PM = prepareModel(M);
    if (!PM)
      return ExitBadInput;
    if (combinationCount(PM->Axes) > 1) {
      reportError("ddscript", "export writes one graph: give each --set "
                              "parameter one value");
      return ExitBadInput;
    }
  }
  // One trace is set up as `run` sets it up; a job's ranks are joined to
  // find the job's iteration, and each is then set up alone at it
  // (whatif/Export.h).
  std::vector<std::unique_ptr<RunSetup>> Setups;
  std::vector<std::string> Traces, Sources;
  if (!T.Job) {
    Traces = {T.TracePath};
    Sources = Traces;
    if (PM && !checkRun(*PM, T))
      return ExitBadInput;
    RunSetupResult Setup = setupRun(T, ProfilerRequest());
    if (!Setup.Setup)
      return Setup.Rc;
    Setups.push_back(std::move(Setup.Setup));
  } else {
    std::optional<LoadedRanks> L = loadRanksFor(T);
    if (!L)
      return ExitBadInput;
    auto JobIteration = reported(whatif::jobIteration(*L, clockFor(T)));
    if (!JobIteration)
      return ExitBadInput;
    TraceOptions One = T;
    One.Iteration = *JobIteration;
    if (PM && !checkRun(*PM, One))
      return ExitBadInput;
    Sources = L->Sources;
    for (const job::RankGraph &RG : L->Graphs)
      Traces.push_back(RG.Path);
    int Rc;
    auto Ranks = reported(whatif::setupRanks(std::move(*L), *JobIteration), Rc);
    if (!Ranks)
      return Rc;
    Setups = std::move(*Ranks);
  }
  whatif::ExportModel Model;
  if (PM) {
    Model.Program = &PM->Model.Program;
    Model.Path = PM->Path;
    Model.Settings = combination(PM->Axes, 0);
    Model.MaxSteps = E.MaxSteps;
  }
  whatif::ChakraExport X = whatif::exportChakra(Setups, Traces, Sources, Model);
  writeErr(X.Printed);
  if (X.ModelError) {
    reportDiagnostic(PM->SM, X.FailedRun.Error);
    return ExitBadInput;
  }
  if (X.Failed) {
    reportError(X.Failed->File, X.Failed->Message);
    return ExitBadInput;
  }
  std::vector<RankFile> Files;
  for (whatif::ExportedRank &R : X.Ranks) {
    RankFile F{std::move(R), {}};
    F.Path =
        (fs::path(E.OutDir) / fmt::format("chakra.{}.et", F.Rank)).string();
    Files.push_back(std::move(F));
  }
  // Nothing written over an input.
  std::vector<NamedPath> Outs, Ins;
  for (const RankFile &F : Files) {
    Outs.push_back({"-o", F.Path});
    Ins.push_back({"the trace being read", F.Trace});
  }
  if (PM)
    Ins.push_back({"the model being read", PM->Path});
  if (!checkOutputPaths(Outs, Ins))
    return ExitBadInput;
  fs::create_directories(E.OutDir, Ec);
  if (Ec) {
    reportError(E.OutDir, "cannot create the folder: " + Ec.message());
    return ExitBadInput;
  }
  // All files or none: each rank is written to a temporary first, and
  // only once all are whole do they replace what the folder held.
  AtomicFiles Out;
  for (const RankFile &F : Files)
    if (auto Err = Out.add(F.Path, F.Bytes)) {
      reportError(F.Path,
                  llvm::toString(std::move(Err)) + "; the folder is as it was");
      return ExitBadInput;
    }
  if (auto Err = Out.commit()) {
    reportError(E.OutDir, llvm::toString(std::move(Err)));
    return ExitBadInput;
  }
  std::vector<std::string> Removed = removeStaleRanks(E.OutDir, Files);

  if (T.Format == OutputFormat::Json) {
    writeJson([&](JsonWriter &W) {
      W.beginObject().field("format", "chakra");
      W.field("workload", (fs::path(E.OutDir) / "chakra").string());
      W.key("files").beginArray();
      for (const RankFile &F : Files) {
        W.beginObject().field("rank", F.Rank).field("path", F.Path);
        W.field("trace", F.Trace).field("iteration", F.Iteration);
        W.field("nodes", static_cast<uint64_t>(F.Stats.Nodes));
        W.field("cpu_nodes", static_cast<uint64_t>(F.Stats.CpuNodes));
        W.field("comm_nodes", static_cast<uint64_t>(F.Stats.CommNodes));
        W.field("comm_as_compute",
                static_cast<uint64_t>(F.Stats.CommAsCompute));
        W.field("ctrl_deps", static_cast<uint64_t>(F.Stats.CtrlDeps));
        W.field("data_deps", static_cast<uint64_t>(F.Stats.DataDeps));
        W.key("data_deps_by_kind").beginObject();
        for (unsigned K = 0; K < graph::NumEdgeKinds; ++K)
          W.field(graph::edgeKindName(static_cast<graph::EdgeKind>(K)),
                  static_cast<uint64_t>(F.Stats.ByKind[K]));
        W.endObject().field("bytes", static_cast<uint64_t>(F.Bytes.size()));
        W.endObject();
      }
      W.endArray();
      W.key("removed").beginArray();
      for (const std::string &R : Removed)
        W.value(R);
      W.endArray().endObject();
    });
    return ExitOk;
  }
  for (const RankFile &F : Files)
    writeOut(fmt::format(
        "rank {}: {} ({} of {}): {} nodes ({} on the CPU, {} collectives), "
        "{} dependencies ({} control, {} data: {})\n",
        F.Rank, F.Path, F.Iteration, F.Trace, F.Stats.Nodes, F.Stats.CpuNodes,
        F.Stats.CommNodes, F.Stats.CtrlDeps + F.Stats.DataDeps,
        F.Stats.CtrlDeps, F.Stats.DataDeps, kindsText(F.Stats)));
  size_t Unnamed = 0, Unsized = 0;
  for (const RankFile &F : Files) {
    Unnamed += F.Stats.CommAsCompute;
    Unsized += F.Stats.CommWithoutSize;
  }
  if (Unsized)
    reportWarning(E.OutDir,
                  fmt::format("{} collective(s) written with comm_size 0: the "
                              "trace records no size for them (no In msg "
                              "nelems, no shapes on the operator that launched "
                              "them); ASTRA-sim would move no bytes",
                              Unsized));
  if (Unnamed)
    writeOut(fmt::format("note: {} communication task(s) have no collective "
                         "type Chakra names (send/recv, unknown kernels) and "
                         "were written as computation\n",
                         Unnamed));
  if (!Removed.empty())
    writeOut(fmt::format("note: removed {} file(s) an earlier export left in "
                         "{}, ranks this job does not have, which ASTRA-sim "
                         "would have read as its own: {}\n",
                         Removed.size(), E.OutDir, joinNames(Removed)));
  writeOut(fmt::format("workload   {} (ASTRA-sim: --workload-configuration="
                       "{})\n",
                       (fs::path(E.OutDir) / "chakra").string(),
                       (fs::path(E.OutDir) / "chakra").string()));
  return ExitOk;
}

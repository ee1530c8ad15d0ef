//===- JobLoad.cpp - A job's ranks read, each its graph built -------------===//

#include "whatif/JobLoad.h"

#include "job/RankFile.h"
#include "support/Parallel.h"
#include "support/Progress.h"
#include "trace/TraceReader.h"
#include "whatif/Focus.h"
#include "whatif/Iterations.h"

#include <fmt/format.h>

#include <algorithm>
#include <sys/stat.h>

using namespace dd;
using namespace dd::whatif;

llvm::Expected<job::ReducedRank>
dd::whatif::readRank(const std::string &Path, std::string_view Choice,
                     const graph::BuildOptions &BO,
                     const std::string &Calibration) {
  auto F = whatif::readTraceFor(Path, Choice != "all", Choice, false, nullptr);
  if (!F)
    return F.takeError();
  const trace::Trace &T = F->Trace;
  job::ReducedRank R;
  R.Source = Path;
  R.Rank = T.Distributed.Rank;
  R.WorldSize = T.Distributed.WorldSize;
  R.FromCollector = T.FromCollector;
  if (!T.Devices.empty()) {
    R.DeviceName = T.Devices.front().Name;
    R.DeviceMemory = T.Devices.front().TotalGlobalMem;
    R.DeviceSms = T.Devices.front().NumSms;
  }
  R.Warnings = T.Warnings;
  R.Iteration = std::string(Choice);
  R.Calibration = Calibration;
  auto G = graph::buildGraph(T, BO, nullptr);
  if (!G)
    return G.takeError();
  G->Span = F->Span;
  R.G = std::move(*G);
  size_t D = defaultIteration(R.G);
  R.Steady = D < R.G.Iterations.size() ? R.G.Iterations[D].Number : -1;
  return R;
}

namespace {

/// One rank as loaded: its graph, or what went wrong.
struct Loaded {
  std::string Path;
  std::string Source; ///< the trace it was read from (a .ddg's, or Path)
  int64_t Rank = -1, WorldSize = -1;
  bool FromCollector = false;
  vm::DeviceFacts Device;
  std::optional<graph::Graph> G;
  std::string Error;
  std::vector<std::string> Warnings;
};

/// The iteration a rank is read for, a number where \p Choice is "" (its
/// steady-state one, \p Steady) and it has one.
std::string iterationOf(std::string_view Choice, int64_t Steady) {
  if (Choice.empty() && Steady >= 0)
    return std::to_string(Steady);
  return std::string(Choice);
}

/// \p L as its rank \p R gives it (read from its trace or its .ddg).
void fill(job::ReducedRank R, Loaded &L) {
  L.Warnings = std::move(R.Warnings);
  L.Source = std::move(R.Source);
  L.Rank = R.Rank;
  L.WorldSize = R.WorldSize;
  L.FromCollector = R.FromCollector;
  L.Device.Name = std::move(R.DeviceName);
  L.Device.Memory = R.DeviceMemory;
  L.Device.Sms = R.DeviceSms;
  L.G = std::move(R.G);
}

/// Loads the reduced rank \p L.Path (job/RankFile.h), which must have been
/// read for the iteration \p Choice and with the calibration
/// \p Calibration: its graph is then the one its trace would give.
void loadReduced(std::string_view Choice, const std::string &Calibration,
                 Loaded &L) {
  auto R = job::readRankFile(L.Path);
  if (!R) {
    L.Error = llvm::toString(R.takeError());
    return;
  }
  if (R->Calibration != Calibration) {
    L.Error = fmt::format("reduced with --calibration {}, and this command "
                          "asks for {}: reduce {} again with --calibration {}",
                          R->Calibration, Calibration, R->Source, Calibration);
    return;
  }
  std::string Want = iterationOf(Choice, R->Steady);
  std::string Has = iterationOf(R->Iteration, R->Steady);
  if (Want != Has) {
    auto Say = [](const std::string &I) {
      return I == "all"  ? std::string("every iteration")
             : I.empty() ? std::string("its trace's iterations")
                         : "iteration " + I;
    };
    L.Error = fmt::format(
        "reduced for {}, and the job reads {}{}: reduce {} again with "
        "--iteration {} (or give the job --iteration {})",
        Say(Has), Say(Want),
        Choice.empty() ? " (its own steady-state one)" : "", R->Source,
        Want.empty() ? std::string("N") : Want, Has.empty() ? "N" : Has);
    return;
  }
  fill(std::move(*R), L);
}

/// Loads \p L.Path, a trace or a reduced rank, reading only what iteration
/// \p Choice ("" for the trace's steady-state one, or a number; "all":
/// everything) needs where it can.
void loadRank(std::string_view Choice, const graph::BuildOptions &BO,
              const std::string &Calibration, Loaded &L) {
  if (job::isRankFilePath(L.Path))
    return loadReduced(Choice, Calibration, L);
  auto R = readRank(L.Path, Choice, BO, Calibration);
  if (!R) {
    L.Error = llvm::toString(R.takeError());
    return;
  }
  fill(std::move(*R), L);
}

} // namespace

Result<LoadedRanks> dd::whatif::loadRanks(const RankRequest &Req) {
  Result<LoadedRanks> Out;
  auto Fail = [&](const std::string &File, std::string Message) {
    Out.Failed = Problem{File, std::move(Message), false};
    return std::move(Out);
  };
  if (Req.Build.Window)
    return Fail("ddscript", "--window takes one trace: a job's ranks are "
                            "matched by their iterations");
  std::vector<Loaded> Ranks(Req.Paths.size());
  for (size_t I = 0; I < Ranks.size(); ++I)
    Ranks[I].Path = Req.Paths[I];
  // The default iteration is the steady-state one of the first trace, and
  // every rank reads only it and its neighbours. Each rank first reads its
  // own steady-state one (in step with the others, they agree); a rank
  // whose choice differs from the first trace's is read again, on that one.
  std::string Choice = Req.Iteration;
  PhaseTimer Timer("load");
  Progress P(fmt::format("loading {} ranks", Ranks.size()));
  auto LoadAll = [&](const std::vector<size_t> &Which, std::string_view C) {
    parallelFor(Which.size(), trace::defaultLoadThreads(), [&](size_t K) {
      loadRank(C, Req.Build, Req.Calibration, Ranks[Which[K]]);
    });
  };
  std::vector<size_t> All(Ranks.size());
  for (size_t I = 0; I < All.size(); ++I)
    All[I] = I;
  LoadAll(All, Choice);
  auto SteadyOf = [](const Loaded &L) -> std::optional<int64_t> {
    if (!L.G)
      return std::nullopt;
    size_t D = defaultIteration(*L.G);
    if (D >= L.G->Iterations.size())
      return std::nullopt;
    return L.G->Iterations[D].Number;
  };
  if (Choice.empty() && Ranks.size() > 1)
    if (std::optional<int64_t> First = SteadyOf(Ranks[0])) {
      Choice = std::to_string(*First);
      std::vector<size_t> Again;
      for (size_t I = 1; I < Ranks.size(); ++I)
        // A rank read whole holds every iteration; one read focused holds
        // its own choice and the two beside it.
        if (Ranks[I].G && Ranks[I].G->Span.TraceIterations != 0 &&
            SteadyOf(Ranks[I]) != First) {
          Ranks[I].G.reset();
          Ranks[I].Warnings.clear();
          Again.push_back(I);
        }
      LoadAll(Again, Choice);
    }
  P.done();
  Timer.stop();
  for (const Loaded &L : Ranks) {
    for (const std::string &W : L.Warnings)
      Out.Warnings.push_back({L.Path, W, false});
    if (!L.G)
      return Fail(L.Path, L.Error);
  }
  for (const Loaded &L : Ranks)
    if (std::string E = job::rankLimitError(L.Rank, L.WorldSize); !E.empty())
      return Fail(L.Path, E);
  // Ranks: from distributedInfo when every trace has one, else the order.
  bool FromTraces = std::all_of(Ranks.begin(), Ranks.end(),
                                [](const Loaded &L) { return L.Rank >= 0; });
  for (size_t I = 1; I < Ranks.size(); ++I)
    if (FromTraces && Ranks[I].WorldSize != Ranks[0].WorldSize)
      return Fail(Ranks[I].Path,
                  fmt::format("world size {}, but {} says {}: the traces "
                              "are not of one job",
                              Ranks[I].WorldSize, Ranks[0].Path,
                              Ranks[0].WorldSize));
  LoadedRanks &L = Out.Value.emplace();
  L.RanksFromTraces = FromTraces;
  if (std::all_of(Ranks.begin(), Ranks.end(), [&](const Loaded &L) {
        return L.WorldSize > 0 && L.WorldSize == Ranks[0].WorldSize;
      }))
    L.WorldSize = Ranks[0].WorldSize;
  L.Iteration = Choice;
  if (Req.Iteration.empty() && !Choice.empty())
    L.DefaultFrom = Ranks[0].Path;
  for (size_t I = 0; I < Ranks.size(); ++I) {
    int32_t Rank = FromTraces ? static_cast<int32_t>(Ranks[I].Rank)
                              : static_cast<int32_t>(I);
    L.Graphs.push_back({Rank, Ranks[I].Path, std::move(*Ranks[I].G)});
    L.Devices[Rank] = Ranks[I].Device;
    L.FromCollector.push_back(Ranks[I].FromCollector);
    L.Sources.push_back(Ranks[I].Source);
  }
  return Out;
}

Result<ReducedFile> dd::whatif::reduceRank(const std::string &Trace,
                                           const std::string &Choice,
                                           const graph::BuildOptions &BO,
                                           const std::string &Calibration) {
  Result<ReducedFile> Out;
  auto Fail = [&](std::string Message) {
    Out.Failed = Problem{Trace, std::move(Message)};
    return std::move(Out);
  };
  auto Rank = readRank(Trace, Choice, BO, Calibration);
  if (!Rank)
    return Fail(llvm::toString(Rank.takeError()));
  job::ReducedRank &R = *Rank;
  for (std::string &W : R.Warnings)
    Out.Warnings.push_back({Trace, std::move(W)});
  // An iteration the trace does not have is refused here, as replay would,
  // not when the job is joined.
  if (Choice != "all")
    if (auto Chosen = chooseIterations(R.G, Choice); !Chosen)
      return Fail(llvm::toString(Chosen.takeError()));
  if (std::string E = job::rankLimitError(R.Rank, R.WorldSize); !E.empty())
    return Fail(std::move(E));
  auto Bytes = job::encodeRankFile(R);
  if (!Bytes)
    return Fail(llvm::toString(Bytes.takeError()));
  ReducedFile F;
  F.Bytes = std::move(*Bytes);
  F.Rank = R.Rank;
  F.WorldSize = R.WorldSize;
  F.Tasks = R.G.numTasks();
  F.Iterations = R.G.Iterations.size();
  F.TraceIterations = R.G.traceIterationCount();
  if (F.Iterations) {
    F.FirstNumber = R.G.Iterations.front().Number;
    F.LastNumber = R.G.Iterations.back().Number;
  }
  struct stat St;
  if (::stat(Trace.c_str(), &St) == 0)
    F.TraceBytes = static_cast<uint64_t>(St.st_size);
  Out.Value = std::move(F);
  return Out;
}

//===- JobReplay.cpp - ddscript replay of a job's ranks -------------------===//
//
// `ddscript replay --trace r0.json.gz r1.json.gz ...`: every rank's graph is
// built (on threads), job::joinRanks matches their collectives and joins
// them, and one simulation replays the job. Reported: the job's iteration
// (first rank's begin to last rank's end), each rank's, the stragglers (how
// late each rank reaches collectives, and the job's time were it on time),
// and the critical path across ranks.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Outputs.h"
#include "driver/Session.h"
#include "job/Job.h"
#include "job/RankFile.h"
#include "sim/CriticalPath.h"
#include "support/Parallel.h"
#include "support/Progress.h"
#include "trace/TraceReader.h"
#include "whatif/Focus.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace dd;
using namespace dd::driver;

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

struct RankRow {
  int32_t Rank;
  int64_t Measured, Replayed, Late;
  double error() const {
    return Measured ? double(Replayed - Measured) / double(Measured) : 0.0;
  }
};

struct Straggler {
  int32_t Rank;
  int64_t Late, JobWithout;
  double Scale; ///< the factor its own work needed; -1: no gain at any
};

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

/// How many ranks get a simulated what-if each: the latest ones.
constexpr size_t MaxWhatIfs = 8;

/// The ranks later than the median rank at the collectives of \p It, the
/// latest first (at most MaxWhatIfs), each with the job's iteration were it
/// as fast as needed to be no later than the median rank.
std::vector<Straggler> stragglers(const job::Job &J, const sim::SimResult &Base,
                                  const job::JobIteration &It,
                                  const std::vector<int64_t> &Late) {
  std::vector<int64_t> Sorted = Late;
  std::sort(Sorted.begin(), Sorted.end());
  int64_t Median = Sorted.empty() ? 0 : Sorted[(Sorted.size() - 1) / 2];
  std::vector<size_t> Order;
  for (size_t I = 0; I < Late.size(); ++I)
    if (Late[I] > Median)
      Order.push_back(I);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](size_t A, size_t B) { return Late[A] > Late[B]; });
  if (Order.size() > MaxWhatIfs)
    Order.resize(MaxWhatIfs);
  // The what-ifs share the graph and run on threads; each result has its
  // slot, so the order does not depend on which finishes first.
  std::vector<std::optional<job::StragglerWhatIf>> Found(Order.size());
  parallelFor(Order.size(), trace::defaultLoadThreads(), [&](size_t K) {
    auto W = job::asFastAsNeeded(J, Base, It, Order[K], Median);
    if (W)
      Found[K] = *W;
    else
      llvm::consumeError(W.takeError());
  });
  std::vector<Straggler> Out;
  for (size_t K = 0; K < Order.size(); ++K)
    if (Found[K])
      Out.push_back({J.Ranks[Order[K]].Rank, Late[Order[K]], Found[K]->JobTime,
                     Found[K]->Scale});
  std::stable_sort(Out.begin(), Out.end(),
                   [](const Straggler &A, const Straggler &B) {
                     return A.JobWithout < B.JobWithout;
                   });
  return Out;
}

void printText(const job::Job &J, const std::vector<JobReport> &Reports,
               bool RanksFromTraces) {
  std::string Out;
  const graph::Graph &G = J.G;
  Out += fmt::format(
      "job        {} ranks ({}), {} collectives matched {}\n", J.Ranks.size(),
      RanksFromTraces ? "ranks from the traces' distributedInfo"
                      : "ranks in the order given: the traces do not "
                        "say",
      G.numCollectives(), J.Matching);
  if (J.ClockMode == job::Clock::Trace) {
    Out += "clocks     the traces' own (--clock trace)\n";
  } else if (G.numCollectives()) {
    std::string Offsets;
    for (const job::JobRank &R : J.Ranks)
      Offsets += fmt::format("{}{} {}{}", Offsets.empty() ? "" : ", ", R.Rank,
                             R.ClockOffset < 0 ? "-" : "+",
                             formatDuration(std::llabs(R.ClockOffset)));
    Out += fmt::format("clocks     offsets from the collectives' ends "
                       "(--clock trace to keep the traces'): {}\n",
                       Offsets);
  } else {
    Out += "clocks     the traces' own: no collectives to align them by\n";
  }
  if (J.ClampedTransfers)
    Out += fmt::format("           {} collective members ended before the "
                       "last member arrived (clock noise): replayed with no "
                       "transfer time\n",
                       J.ClampedTransfers);
  for (const JobReport &Rep : Reports) {
    Out += fmt::format("\niteration  {} ({} of {})\n", Rep.It->Label,
                       Rep.Ordinal + 1, J.Iterations.size());
    Out += fmt::format("measured   {}   (the job: first rank's begin to "
                       "last rank's end)\n",
                       formatDuration(Rep.Measured));
    Out +=
        fmt::format("replayed   {}   error {}\n", formatDuration(Rep.Replayed),
                    formatPercent(Rep.error(), true));
    Table T;
    T.row({"rank", "measured", "replayed", "error", "late at collectives"});
    for (size_t C = 1; C < 5; ++C)
      T.alignRight(C);
    for (const RankRow &R : Rep.Ranks)
      T.row({std::to_string(R.Rank), formatDuration(R.Measured),
             formatDuration(R.Replayed), formatPercent(R.error(), true),
             formatDuration(R.Late)});
    Out += T.render();
    if (!Rep.Stragglers.empty()) {
      Out += "stragglers (the job's iteration were the rank's own work fast "
             "enough to be no later at collectives than the median rank)\n";
      Table S;
      S.alignRight(1);
      S.alignRight(2);
      for (const Straggler &St : Rep.Stragglers)
        S.row({fmt::format("rank {}", St.Rank),
               fmt::format("late {}", formatDuration(St.Late)),
               St.Scale > 0    ? fmt::format("work x{:.2f}", St.Scale)
               : St.Scale == 0 ? std::string("work x0, still late")
                               : std::string("no gain at any speed"),
               fmt::format("job {}", formatDuration(St.JobWithout)),
               fmt::format("({})",
                           formatPercent(Rep.Replayed ? double(St.JobWithout -
                                                               Rep.Replayed) /
                                                            double(Rep.Replayed)
                                                      : 0.0,
                                         true))});
      Out += S.render();
    }
    Out += fmt::format("critical path  {}\n", formatDuration(Rep.Path.Length));
    Out += renderPathShares(G, Rep.Path);
  }
  writeOut(Out);
}

void printJson(const job::Job &J, const std::vector<JobReport> &Reports) {
  for (const JobReport &Rep : Reports) {
    std::string Out;
    JsonWriter W(Out);
    W.beginObject();
    W.field("iteration", Rep.It->Number);
    W.field("label", Rep.It->Label);
    W.field("job_measured_ns", Rep.Measured);
    W.field("job_replayed_ns", Rep.Replayed);
    W.field("error", Rep.error());
    W.field("collectives", J.G.numCollectives());
    W.field("matching", J.Matching);
    W.field("clock",
            J.ClockMode == job::Clock::Trace ? "trace" : "collectives");
    W.key("ranks").beginArray();
    for (size_t I = 0; I < Rep.Ranks.size(); ++I) {
      const RankRow &R = Rep.Ranks[I];
      W.beginObject()
          .field("rank", R.Rank)
          .field("trace", J.Ranks[I].Path)
          .field("measured_ns", R.Measured)
          .field("replayed_ns", R.Replayed)
          .field("error", R.error())
          .field("late_ns", R.Late)
          .field("clock_offset_ns", J.Ranks[I].ClockOffset)
          .endObject();
    }
    W.endArray();
    W.key("stragglers").beginArray();
    for (const Straggler &S : Rep.Stragglers) {
      W.beginObject()
          .field("rank", S.Rank)
          .field("late_ns", S.Late)
          .field("job_without_ns", S.JobWithout)
          .key("work_scale");
      if (S.Scale >= 0)
        W.value(S.Scale);
      else
        W.null(); // the job gains nothing at any factor
      W.endObject();
    }
    W.endArray();
    W.field("critical_path_ns", Rep.Path.Length);
    W.key("critical_path").beginArray();
    for (const auto &S : sim::sharesByActivity(J.G, Rep.Path))
      W.beginObject().field("what", S.Label).field("ns", S.Time).endObject();
    W.endArray();
    W.endObject();
    Out += '\n';
    writeOut(Out);
  }
}

} // namespace

llvm::Expected<job::ReducedRank>
dd::driver::readRank(const std::string &Path, std::string_view Choice,
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

std::optional<LoadedRanks> dd::driver::loadRanksFor(const TraceOptions &O) {
  if (!O.Window.empty()) {
    reportError("ddscript", "--window takes one trace: a job's ranks are "
                            "matched by their iterations");
    return std::nullopt;
  }
  auto BO = buildOptionsFor(O);
  if (!BO)
    return std::nullopt;

  std::vector<Loaded> Ranks(O.TracePaths.size());
  for (size_t I = 0; I < Ranks.size(); ++I)
    Ranks[I].Path = O.TracePaths[I];
  // The default iteration is the steady-state one of the first trace, and
  // every rank reads only it and its neighbours. Each rank first reads its
  // own steady-state one (in step with the others, they agree); a rank
  // whose choice differs from the first trace's is read again, on that one.
  std::string Choice = O.Iteration;
  PhaseTimer Timer("load");
  Progress P(fmt::format("loading {} ranks", Ranks.size()));
  auto LoadAll = [&](const std::vector<size_t> &Which, std::string_view C) {
    parallelFor(Which.size(), trace::defaultLoadThreads(), [&](size_t K) {
      loadRank(C, *BO, O.Calibration, Ranks[Which[K]]);
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
      reportWarning(L.Path, W);
    if (!L.G) {
      reportError(L.Path, L.Error);
      return std::nullopt;
    }
  }
  for (const Loaded &L : Ranks)
    if (std::string E = job::rankLimitError(L.Rank, L.WorldSize); !E.empty()) {
      reportError(L.Path, E);
      return std::nullopt;
    }
  // Ranks: from distributedInfo when every trace has one, else the order.
  bool FromTraces = std::all_of(Ranks.begin(), Ranks.end(),
                                [](const Loaded &L) { return L.Rank >= 0; });
  for (size_t I = 1; I < Ranks.size(); ++I)
    if (FromTraces && Ranks[I].WorldSize != Ranks[0].WorldSize) {
      reportError(Ranks[I].Path,
                  fmt::format("world size {}, but {} says {}: the traces "
                              "are not of one job",
                              Ranks[I].WorldSize, Ranks[0].Path,
                              Ranks[0].WorldSize));
      return std::nullopt;
    }
  LoadedRanks Out;
  Out.RanksFromTraces = FromTraces;
  if (std::all_of(Ranks.begin(), Ranks.end(), [&](const Loaded &L) {
        return L.WorldSize > 0 && L.WorldSize == Ranks[0].WorldSize;
      }))
    Out.WorldSize = Ranks[0].WorldSize;
  Out.Iteration = Choice;
  if (O.Iteration.empty() && !Choice.empty())
    Out.DefaultFrom = Ranks[0].Path;
  for (size_t I = 0; I < Ranks.size(); ++I) {
    int32_t Rank = FromTraces ? static_cast<int32_t>(Ranks[I].Rank)
                              : static_cast<int32_t>(I);
    Out.Graphs.push_back({Rank, Ranks[I].Path, std::move(*Ranks[I].G)});
    Out.Devices[Rank] = Ranks[I].Device;
    Out.FromCollector.push_back(Ranks[I].FromCollector);
    Out.Sources.push_back(Ranks[I].Source);
  }
  return Out;
}

std::optional<std::vector<size_t>>
dd::driver::chooseJobIterations(const job::Job &J, const std::string &Iteration,
                                const std::string &DefaultFrom) {
  auto Chosen = whatif::chooseJobIterations(J, Iteration, DefaultFrom);
  if (!Chosen) {
    reportError("ddscript", llvm::toString(Chosen.takeError()));
    return std::nullopt;
  }
  return std::move(*Chosen);
}

job::Clock dd::driver::clockFor(const TraceOptions &O) {
  return O.Clock == "trace" ? job::Clock::Trace : job::Clock::Collectives;
}

std::optional<LoadedJob> dd::driver::loadJobFor(const TraceOptions &O) {
  auto L = loadRanksFor(O);
  if (!L)
    return std::nullopt;
  PhaseTimer JoinTimer("join");
  auto J = job::joinRanks(std::move(L->Graphs), clockFor(O));
  if (!J) {
    reportError("ddscript", llvm::toString(J.takeError()));
    return std::nullopt;
  }
  return LoadedJob{std::move(*J), L->RanksFromTraces, L->Iteration,
                   L->DefaultFrom};
}

int dd::driver::runJobReplay(const TraceOptions &O) {
  if (!checkOutputPaths(O))
    return ExitBadInput;
  if (O.Diverging) {
    reportError("ddscript", "--diverging takes one trace; a job's replay "
                            "prints its numbers and writes a --timeline or a "
                            "--report");
    return ExitBadInput;
  }
  auto L = loadJobFor(O);
  if (!L)
    return ExitBadInput;
  job::Job *J = &L->Job;
  bool FromTraces = L->RanksFromTraces;

  auto Chosen = chooseJobIterations(*J, L->Iteration, L->DefaultFrom);
  if (!Chosen)
    return ExitBadInput;

  PhaseTimer SimTimer("simulate");
  auto R = sim::simulate(J->G);
  if (!R) {
    reportError("ddscript", llvm::toString(R.takeError()));
    return ExitInternal;
  }
  std::vector<JobReport> Reports;
  for (size_t C : *Chosen) {
    const job::JobIteration &It = J->Iterations[C];
    JobReport Rep{&It, C, 0, 0, {}, {}, {}};
    job::Span M = job::measuredSpan(*J, It), S = job::simulatedSpan(*J, *R, It);
    Rep.Measured = M.length();
    Rep.Replayed = S.length();
    std::vector<int64_t> Late = job::lateness(*J, *R, It);
    for (size_t I = 0; I < J->Ranks.size(); ++I) {
      const graph::Iteration &RI = J->G.Iterations[It.PerRank[I]];
      auto [B, E] = sim::iterationSpan(J->G, *R, RI);
      Rep.Ranks.push_back({J->Ranks[I].Rank, RI.measured(), E - B, Late[I]});
    }
    Rep.Stragglers = stragglers(*J, *R, It, Late);
    Rep.Path = job::criticalPath(*J, *R, It);
    Reports.push_back(std::move(Rep));
  }
  SimTimer.stop();
  if (O.Format == OutputFormat::Json)
    printJson(*J, Reports);
  else
    printText(*J, Reports, FromTraces);
  if (O.TimelinePath.empty() && O.ReportPath.empty())
    return ExitOk;
  // The timeline and the report: the first reported job iteration, each
  // rank measured and replayed as a pair of processes; the report's summary
  // and critical path are the job's.
  report::RunData D;
  D.G = &J->G;
  D.Command = "replay";
  std::vector<size_t> Reported(Reports.front().It->PerRank.begin(),
                               Reports.front().It->PerRank.end());
  std::sort(Reported.begin(), Reported.end());
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(J->G, MStart, MEnd);
  D.Measured = measuredSchedule(J->G, MStart, MEnd);
  D.Replayed = simulatedSchedule("replayed", J->G, *R, Reported);
  for (size_t I = 0; I < J->Ranks.size(); ++I)
    D.Ranks.push_back({J->Ranks[I].Rank, J->Ranks[I].FirstResource,
                       I + 1 < J->Ranks.size() ? J->Ranks[I + 1].FirstResource
                                               : static_cast<graph::ResourceId>(
                                                     J->G.Resources.size())});
  const JobReport &First = Reports.front();
  report::JobSummary Sum;
  Sum.Label = First.It->Label;
  Sum.Measured = First.Measured;
  Sum.Replayed = First.Replayed;
  for (const RankRow &Row : First.Ranks)
    Sum.Ranks.push_back({Row.Rank, Row.Measured, Row.Replayed, Row.Late});
  for (const Straggler &S : First.Stragglers)
    Sum.Stragglers.push_back({S.Rank, S.Late, S.JobWithout, S.Scale});
  D.Job = std::move(Sum);
  D.Replayed.Paths = {First.Path};
  D.Replayed.PathShares = {sim::sharesByActivity(J->G, First.Path)};
  trace::Trace NoDevices;
  return writeOutputs(O, NoDevices, Reported, D);
}

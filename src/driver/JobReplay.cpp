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

#include "whatif/JobReplay.h"
#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Outputs.h"
#include "driver/Session.h"
#include "job/Job.h"
#include "sim/CriticalPath.h"
#include "support/Progress.h"
#include "whatif/Focus.h"

#include <fmt/format.h>

#include <cstdio>

using namespace dd;
using namespace dd::driver;

namespace {

using whatif::JobReport;
using whatif::RankRow;
using whatif::Straggler;

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
    writeJson([&](JsonWriter &W) {
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
    });
  }
}

} // namespace

std::optional<LoadedRanks> dd::driver::loadRanksFor(const TraceOptions &O) {
  if (!O.Window.empty()) {
    reportError("ddscript", "--window takes one trace: a job's ranks are "
                            "matched by their iterations");
    return std::nullopt;
  }
  auto BO = buildOptionsFor(O);
  if (!BO)
    return std::nullopt;
  return reported(whatif::loadRanks(
      {O.TracePaths, std::move(*BO), O.Calibration, O.Iteration}));
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

  auto Rp = whatif::replayJob(*J, *Chosen);
  if (!Rp) {
    reportError("ddscript", llvm::toString(Rp.takeError()));
    return ExitInternal;
  }
  const sim::SimResult *R = &Rp->R;
  const std::vector<JobReport> &Reports = Rp->Reports;
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

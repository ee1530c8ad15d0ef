//===- JobRun.cpp - ddscript run of a model on a job's ranks --------------===//
//
// `ddscript run MODEL --trace r0.json.gz r1.json.gz ...`: the ranks read
// (loadRanksFor), the model run on each and the changed job simulated by
// the what-if library (whatif/JobPredict.h), and its result printed as text
// or JSON, with the job's timeline and report. See docs/multirank.md.
//
//===----------------------------------------------------------------------===//

#include "driver/JobRun.h"
#include "whatif/JobPredict.h"

#include "driver/Format.h"
#include "driver/Outputs.h"
#include "driver/Predict.h"
#include "driver/Session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <optional>

using namespace dd;
using namespace dd::driver;
using whatif::JobTimes;

namespace {

/// What piles up on the job's ranks, before (\p Rp) and after (\p Pr) the
/// model, when it does: as for one trace (run's backlog lines), for the rank
/// that sets the job's steady state, with how many more pile up.
std::string jobBacklogLines(const JobTimes &Rp, const JobTimes &Pr) {
  std::string S;
  auto Line = [&](const char *Which, const JobTimes &Tm) {
    size_t Piling = 0, Shown = Tm.RankSteady.size();
    for (size_t I = 0; I < Tm.RankSteady.size(); ++I)
      if (Tm.RankSteady[I].Piling.piling()) {
        ++Piling;
        if (Shown == Tm.RankSteady.size() ||
            static_cast<int64_t>(I) == Tm.PilingRank)
          Shown = I;
      }
    if (!Piling)
      return;
    S += fmt::format("           {}: work piles up ({}{}), so repeated the "
                     "job falls behind: {} per iteration\n",
                     Which, backlogText(Tm.RankSteady[Shown].Piling),
                     Piling > 1 ? fmt::format("; on {} ranks", Piling) : "",
                     formatDuration(Tm.JobSteady));
  };
  Line("replayed", Rp);
  Line("predicted", Pr);
  if (!S.empty())
    S +=
        fmt::format("           the speedup compares steady states: {} "
                    "replayed, {} predicted\n",
                    formatDuration(Rp.JobSteady), formatDuration(Pr.JobSteady));
  return S;
}

double changeOf(int64_t Base, int64_t Pred) {
  return Base ? double(Pred - Base) / double(Base) : 0.0;
}

std::string speedupText(int64_t Base, int64_t Pred) {
  return Pred > 0 ? fmt::format("{:.3f}x", double(Base) / double(Pred)) : "-";
}

/// The replayed schedule of the unchanged job \p Base, on the changed job
/// \p J's task ids: each rank's tasks keep their index within the rank (a
/// model appends what it inserts, which the replay does not hold).
struct MovedSchedule {
  std::vector<int64_t> Start, End;
  report::Schedule S;
};

void moveSchedule(const job::Job &Base, const sim::SimResult &R,
                  const job::Job &J, const std::vector<size_t> &Reported,
                  MovedSchedule &M) {
  M.Start.assign(J.G.numTasks(), graph::NoTime);
  M.End.assign(J.G.numTasks(), graph::NoTime);
  for (size_t I = 0; I < J.Ranks.size(); ++I) {
    const job::JobRank &From = Base.Ranks[I], &To = J.Ranks[I];
    for (graph::TaskId T = From.FirstTask; T < From.EndTask; ++T) {
      M.Start[T - From.FirstTask + To.FirstTask] = R.Start[T];
      M.End[T - From.FirstTask + To.FirstTask] = R.End[T];
    }
  }
  M.S = simulatedSchedule("replayed", Base.G, R, Reported);
  M.S.Start = M.Start;
  M.S.End = M.End;
  // The critical paths walk the unchanged graph: their tasks move too.
  for (sim::CriticalPath &P : M.S.Paths)
    for (sim::PathSegment &Seg : P.Segments)
      if (Seg.Task != graph::NoTask) {
        size_t I = job::rankIndexOf(Base, Seg.Task);
        Seg.Task = Seg.Task - Base.Ranks[I].FirstTask + J.Ranks[I].FirstTask;
      }
}

/// `run MODEL --trace JOB --timeline/--report`: the first reported job
/// iteration, each rank measured and predicted on the timeline; the page's
/// summary the job's numbers with each rank's.
int writeJobOutputs(const TraceOptions &T, const std::string &Path,
                    const compiler::CompiledModel &Model,
                    const std::vector<SettingAxis> &Axes,
                    const whatif::JobPrediction &P) {
  if (!wantsOutputs(T))
    return ExitOk;
  const vm::ChangeStats &Stats = P.Stats;
  const std::vector<JobTimes> &Measured = P.Measured, &Replayed = P.Replayed,
                              &Predicted = P.Predicted,
                              &ProfiledReplayed = P.ProfiledReplayed;
  const job::Job &Base = *P.BaseJob, &J = *P.Job;
  const sim::SimResult &BaseRun = *P.BaseRun, &R = *P.Run;
  const std::vector<int64_t> &BaseLate = P.BaseLate;
  const job::JobIteration *First = nullptr;
  for (const job::JobIteration &It : J.Iterations)
    if (It.Number == Measured.front().Number)
      First = &It;
  if (!First || Base.G.Iterations.size() != J.G.Iterations.size()) {
    reportError(Path, "the model changed the job's iterations: no timeline "
                      "or report");
    return ExitBadInput;
  }
  std::vector<size_t> Reported(First->PerRank.begin(), First->PerRank.end());
  std::sort(Reported.begin(), Reported.end());
  report::RunData D;
  D.G = &J.G;
  D.Command = "run";
  D.ModelPath = Path;
  D.ModelDescription = Model.Description;
  for (const compiler::ParamSummary &Pm : Model.Params)
    D.Params.push_back({Pm.Name, shownValue(Axes, Pm, true)});
  D.Changes = describeChanges(Stats);
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(J.G, MStart, MEnd);
  D.Measured = measuredSchedule(J.G, MStart, MEnd);
  MovedSchedule Moved;
  moveSchedule(Base, BaseRun, J, Reported, Moved);
  D.Replayed = std::move(Moved.S);
  D.Predicted = simulatedSchedule("predicted", J.G, R, Reported);
  for (size_t I = 0; I < J.Ranks.size(); ++I)
    D.Ranks.push_back({J.Ranks[I].Rank, J.Ranks[I].FirstResource,
                       I + 1 < J.Ranks.size() ? J.Ranks[I + 1].FirstResource
                                              : static_cast<graph::ResourceId>(
                                                    J.G.Resources.size())});
  report::JobSummary Sum;
  Sum.Label = Measured.front().Label;
  Sum.Measured = Measured.front().Job;
  Sum.Replayed = Replayed.front().Job;
  Sum.Predicted = Predicted.front().JobSteady;
  Sum.ReplayedSteady = Replayed.front().JobSteady;
  Sum.HasStragglers = false;
  bool Profiled = !ProfiledReplayed.empty();
  if (Profiled)
    Sum.ProfiledReplay = ProfiledReplayed.front().Job;
  for (size_t I = 0; I < J.Ranks.size(); ++I)
    Sum.Ranks.push_back(
        {J.Ranks[I].Rank, Measured.front().Ranks[I], Replayed.front().Ranks[I],
         BaseLate[I], Predicted.front().RankSteady[I].Time,
         Replayed.front().RankSteady[I].Time,
         Profiled ? ProfiledReplayed.front().Ranks[I] : int64_t(-1)});
  D.Job = std::move(Sum);
  trace::Trace NoDevices;
  return writeOutputs(T, NoDevices, Reported, D);
}

} // namespace

whatif::JobModelRequest dd::driver::jobModelRequest(
    const compiler::CompiledModel &Model, const std::string &Path,
    const std::vector<SettingAxis> &Axes, uint64_t MaxSteps,
    const ProfilerRequest &Profiler, const TraceOptions &T) {
  whatif::JobModelRequest Req;
  Req.Program = &Model.Program;
  Req.ModelPath = Path;
  Req.Settings = combination(Axes, 0);
  RunMemory Unused;
  (void)Unused.takeSettings(Req.Settings, Model.Program);
  Req.MaxSteps = MaxSteps;
  Req.Profiler = Profiler;
  Req.Clock = clockFor(T);
  Req.KeepBaseline = wantsOutputs(T);
  return Req;
}

int dd::driver::reportJobFailure(const whatif::JobPrediction &P,
                                 SourceManager &SM) {
  if (!P.Failed)
    return ExitOk;
  reportError(P.Failed->File, P.Failed->Message);
  if (P.FailedRank)
    reportDiagnostic(SM, P.FailedRun.Error);
  return exitFor(*P.Failed);
}

int dd::driver::runJobModel(const ModelOptions &M, const TraceOptions &T,
                            const compiler::CompiledModel &Model,
                            SourceManager &SM, const std::string &Path,
                            const std::vector<SettingAxis> &Axes,
                            const ProfilerRequest &Profiler) {
  if (combinationCount(Axes) > 1) {
    reportError("ddscript", "a sweep takes one trace: run the job once per "
                            "value");
    return ExitBadInput;
  }
  auto L = loadRanksFor(T);
  if (!L)
    return ExitBadInput;
  whatif::JobPrediction P = whatif::predictJob(
      std::move(*L),
      jobModelRequest(Model, Path, Axes, M.MaxSteps, Profiler, T));
  if (P.ModelRan)
    (T.Format == OutputFormat::Json ? writeErr : writeOut)(P.Printed);
  if (int Rc = reportJobFailure(P, SM))
    return Rc;
  const job::Job *J = &*P.Job;
  const std::vector<JobTimes> &Measured = P.Measured, &Replayed = P.Replayed,
                              &Predicted = P.Predicted,
                              &ProfiledReplayed = P.ProfiledReplayed;
  const graph::ProfilerCost &Cost = P.Cost;
  size_t CostRanks = P.CostRanks, Collectives = P.Collectives,
         JobIterations = P.JobIterations;
  const vm::ChangeStats &Stats = P.Stats;
  uint64_t Steps = P.Steps;
  const std::string &Printed = P.Printed;
  for (const std::string &U : J->Unpaired)
    reportWarning(Path, U);

  if (T.Format == OutputFormat::Json) {
    for (size_t K = 0; K < Measured.size(); ++K)
      writeJson([&](JsonWriter &W) {
        W.beginObject();
        W.field("model", Path);
        W.key("traces").beginArray();
        for (const job::JobRank &JR : J->Ranks)
          W.value(JR.Path);
        W.endArray();
        W.field("iteration", Measured[K].Number);
        W.field("label", Measured[K].Label);
        W.field("job_measured_ns", Measured[K].Job);
        W.field("job_baseline_ns", Replayed[K].Job);
        W.field("job_predicted_ns", Predicted[K].JobSteady);
        W.key("speedup");
        if (Predicted[K].JobSteady > 0)
          W.value(double(Replayed[K].JobSteady) /
                  double(Predicted[K].JobSteady));
        else
          W.null();
        W.field("job_baseline_steady_ns", Replayed[K].JobSteady);
        W.field("job_predicted_span_ns", Predicted[K].Job);
        // The replay's error is the replay with the profiler's cost against
        // the measured times; the speedup is against the replay without it.
        const JobTimes &Check =
            ProfiledReplayed.empty() ? Replayed[K] : ProfiledReplayed[K];
        W.field("replay_error", changeOf(Measured[K].Job, Check.Job));
        W.key("job_profiled_replay_ns");
        if (ProfiledReplayed.empty())
          W.null();
        else
          W.value(ProfiledReplayed[K].Job);
        W.key("profiler").beginObject();
        W.field("per_event_ns",
                ProfiledReplayed.empty() ? int64_t(0) : Profiler.PerEventNs);
        W.field("events", Cost.Events);
        W.field("removed_ns", Cost.Removed);
        W.field("ranks", static_cast<int64_t>(CostRanks));
        W.endObject();
        W.key("params").beginObject();
        for (const compiler::ParamSummary &Pm : Model.Params)
          W.field(Pm.Name, shownValue(Axes, Pm, false));
        W.endObject();
        W.key("changes");
        writeChanges(W, Stats);
        W.field("collectives", Collectives);
        W.field("matching", J->Matching);
        W.field("kept_collectives",
                J->G.numCollectives() - J->InsertedCollectives);
        W.field("inserted_collectives", J->InsertedCollectives);
        W.key("unpaired").beginArray();
        for (const std::string &U : J->Unpaired)
          W.value(U);
        W.endArray();
        W.key("ranks").beginArray();
        for (size_t I = 0; I < J->Ranks.size(); ++I) {
          const Steady &SR = Replayed[K].RankSteady[I],
                       &SP = Predicted[K].RankSteady[I];
          W.beginObject()
              .field("rank", J->Ranks[I].Rank)
              .field("measured_ns", Measured[K].Ranks[I]);
          if (!ProfiledReplayed.empty()) // the replay with the profiler's cost
            W.field("profiled_replay_ns", ProfiledReplayed[K].Ranks[I]);
          W.field("baseline_ns", Replayed[K].Ranks[I])
              .field("predicted_ns", SP.Time)
              .field("baseline_steady_ns", SR.Time)
              .field("predicted_span_ns", Predicted[K].Ranks[I]);
          writeBacklog(W, "baseline_backlog", SR.Piling);
          writeBacklog(W, "backlog", SP.Piling);
          W.endObject();
        }
        W.endArray();
        W.field("output", Printed);
        W.field("steps", Steps);
        W.endObject();
      });
    return writeJobOutputs(T, Path, Model, Axes, P);
  }

  std::string S =
      modelLines(Path, Model, Axes,
                 fmt::format("{} ranks: {} ... {}", J->Ranks.size(),
                             J->Ranks.front().Path, J->Ranks.back().Path));
  S += fmt::format("job        {} collectives matched {}\n", Collectives,
                   J->Matching);
  size_t Kept = J->G.numCollectives() - J->InsertedCollectives;
  if (Kept != Collectives || J->InsertedCollectives)
    S += fmt::format("           after the model: {} of them kept, {} paired "
                     "from the communication it inserted\n",
                     Kept, J->InsertedCollectives);
  for (size_t K = 0; K < Measured.size(); ++K) {
    const JobTimes &Ms = Measured[K], &Rp = Replayed[K], &Pr = Predicted[K];
    S += fmt::format("\niteration  {} (of {} in common)\n", Ms.Label,
                     JobIterations);
    S += fmt::format("measured   {}   (the job: first rank's begin to last "
                     "rank's end)\n",
                     formatDuration(Ms.Job));
    // The replay the measured times check: with the profiler's cost.
    const JobTimes &Check = ProfiledReplayed.empty() ? Rp : ProfiledReplayed[K];
    S += fmt::format("replayed   {}   error {}\n", formatDuration(Check.Job),
                     formatPercent(changeOf(Ms.Job, Check.Job), true));
    if (ProfiledReplayed.empty()) {
      if (K == 0)
        S += "profiler   the ranks' CPU work as traced (--profiled, or "
             "traces of ddscript's collector)\n";
    } else {
      if (K == 0)
        S += fmt::format(
            "profiler   {} per recorded CPU event, {} events on {} of {} "
            "ranks: {} of CPU work taken out (from the gap before each, then "
            "at most half its call; --profiled keeps it)\n",
            formatDuration(Profiler.PerEventNs), formatCount(Cost.Events),
            CostRanks, J->Ranks.size(), formatDuration(Cost.Removed));
      S += fmt::format("unprofiled {}   the job's replay without the "
                       "profiler's cost: what the speedup is against\n",
                       formatDuration(Rp.Job));
    }
    S += fmt::format("predicted  {}   speedup {} ({})\n",
                     formatDuration(Pr.JobSteady),
                     speedupText(Rp.JobSteady, Pr.JobSteady),
                     formatPercent(changeOf(Rp.JobSteady, Pr.JobSteady), true));
    S += jobBacklogLines(Rp, Pr);
    Table Tb;
    Tb.row({"rank", "measured",
            ProfiledReplayed.empty() ? "replayed" : "unprofiled", "predicted",
            "speedup"});
    for (size_t C = 1; C < 5; ++C)
      Tb.alignRight(C);
    for (size_t I = 0; I < J->Ranks.size(); ++I)
      Tb.row({std::to_string(J->Ranks[I].Rank), formatDuration(Ms.Ranks[I]),
              formatDuration(Rp.Ranks[I]),
              formatDuration(Pr.RankSteady[I].Time),
              speedupText(Rp.RankSteady[I].Time, Pr.RankSteady[I].Time)});
    S += Tb.render();
  }
  S += fmt::format("\nchanges    (all ranks) selected {}, scaled {}, inserted "
                   "{}, removed {}, dependencies added {}, schedules {}\n",
                   formatCount(Stats.Selected), formatCount(Stats.Scaled),
                   formatCount(Stats.Inserted), formatCount(Stats.Removed),
                   formatCount(Stats.Dependencies),
                   formatCount(Stats.Scheduled));
  S += "memory     not predicted for a job: run the model on one rank's "
       "trace for its peak\n";
  writeOut(S);
  return writeJobOutputs(T, Path, Model, Axes, P);
}

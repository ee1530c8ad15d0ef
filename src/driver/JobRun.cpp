//===- JobRun.cpp - ddscript run of a model on a job's ranks --------------===//
//
// `ddscript run MODEL --trace r0.json.gz r1.json.gz ...`: the ranks are
// read and matched (job::prepareRanks), the model runs on every rank's
// graph on its own, as it would on that rank's trace (on threads: the ranks
// do not share anything the model can change), and the changed ranks are
// joined and simulated together. A collective member's duration is its
// transfer, so that `shrink (select comm) by 2` halves the transfer and the
// wait follows from the simulation; communication a model inserts is paired
// across ranks by order on same-named channels. See docs/multirank.md.
//
//===----------------------------------------------------------------------===//

#include "driver/JobRun.h"
#include "support/Checked.h"

#include "driver/Format.h"
#include "driver/Outputs.h"
#include "driver/Predict.h"
#include "driver/Progress.h"
#include "driver/Session.h"
#include "graph/Edit.h"
#include "support/Parallel.h"
#include "trace/TraceReader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <optional>

using namespace dd;
using namespace dd::driver;

namespace {

/// One job iteration's times: the job's, and each rank's (by rank index).
/// Simulated, each also as a steady state (driver::steadyState): a rank
/// whose work piles up past its iterations holds every rank that meets it
/// at a collective, so the job's steady state is its span, or the most
/// work one resource of one rank has per iteration, or the span plus the
/// most any rank falls further behind each iteration, whichever is longest.
struct JobTimes {
  int64_t Number = 0;
  std::string Label;
  int64_t Job = 0;                ///< first rank's begin to last rank's end
  int64_t JobSteady = 0;          ///< the job's steady state (Job if measured)
  std::vector<int64_t> Ranks;     ///< each rank's iteration span
  std::vector<Steady> RankSteady; ///< simulated: each rank's steady state
  /// The rank whose backlog sets the job's steady state; -1 if none does.
  int64_t PilingRank = -1;
};

/// The times of the job iterations numbered \p Numbers in \p R (simulated)
/// or as measured (\p R null).
std::vector<JobTimes> timesOf(const job::Job &J, const sim::SimResult *R,
                              const std::vector<int64_t> &Numbers) {
  std::vector<JobTimes> Out;
  std::optional<sim::IterationLoad> Load;
  if (R)
    Load = sim::iterationLoad(J.G, *R);
  for (int64_t N : Numbers)
    for (const job::JobIteration &It : J.Iterations) {
      if (It.Number != N)
        continue;
      JobTimes T;
      T.Number = N;
      T.Label = It.Label;
      T.Job = R ? job::simulatedSpan(J, *R, It).length()
                : job::measuredSpan(J, It).length();
      T.JobSteady = T.Job;
      for (size_t I = 0; I < It.PerRank.size(); ++I) {
        uint32_t RI = It.PerRank[I];
        const graph::Iteration &GI = J.G.Iterations[RI];
        if (!R) {
          T.Ranks.push_back(GI.measured());
          continue;
        }
        auto [B, E] = sim::iterationSpan(J.G, *R, GI);
        T.Ranks.push_back(E - B);
        Steady S = steadyState(J.G, *Load, *R, RI);
        int64_t Held = std::max(S.Piling.PerIteration, T.Job + S.Piling.Growth);
        if (S.Piling.piling() && Held > T.JobSteady) {
          T.JobSteady = Held;
          T.PilingRank = static_cast<int64_t>(I);
        }
        T.RankSteady.push_back(std::move(S));
      }
      Out.push_back(std::move(T));
    }
  return Out;
}

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

void addStats(vm::ChangeStats &To, const vm::ChangeStats &From) {
  To.Selected += From.Selected;
  To.Scaled += From.Scaled;
  To.Inserted += From.Inserted;
  To.Removed += From.Removed;
  To.Dependencies += From.Dependencies;
  To.Scheduled += From.Scheduled;
  for (unsigned P = 0; P < graph::NumPhases; ++P)
    To.MovedByPhase[P] =
        addSaturating(To.MovedByPhase[P], From.MovedByPhase[P]);
}

/// What the model did on one rank.
struct RankRun {
  vm::RunResult R;
  graph::ResourceId Resources = 0; ///< the rank graph's, after the model
};

/// The ranks' schedules as one policy of the joined graph.
sim::SchedulePolicy joinPolicies(const job::Job &J,
                                 const std::vector<RankRun> &Runs) {
  sim::SchedulePolicy P;
  const graph::Graph &G = J.G;
  P.ResourceOrder.resize(G.Resources.size());
  for (graph::ResourceId R = 0; R < G.Resources.size(); ++R)
    P.ResourceOrder[R] = G.Resources[R].Order;
  P.Priority.assign(G.numTasks(), 0);
  for (size_t I = 0; I < Runs.size(); ++I) {
    const sim::SchedulePolicy &From = Runs[I].R.Policy;
    const job::JobRank &JR = J.Ranks[I];
    for (size_t R = 0; R < From.ResourceOrder.size(); ++R)
      P.ResourceOrder[JR.FirstResource + R] = From.ResourceOrder[R];
    for (size_t T = 0; T < From.Priority.size(); ++T)
      P.Priority[JR.FirstTask + T] = From.Priority[T];
  }
  return P;
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
                    const vm::ChangeStats &Stats, const job::Job &Base,
                    const sim::SimResult &BaseRun,
                    const std::vector<int64_t> &BaseLate, const job::Job &J,
                    const sim::SimResult &R,
                    const std::vector<JobTimes> &Measured,
                    const std::vector<JobTimes> &Replayed,
                    const std::vector<JobTimes> &Predicted) {
  if (!wantsOutputs(T))
    return ExitOk;
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
  for (size_t I = 0; I < J.Ranks.size(); ++I)
    Sum.Ranks.push_back({J.Ranks[I].Rank, Measured.front().Ranks[I],
                         Replayed.front().Ranks[I], BaseLate[I],
                         Predicted.front().RankSteady[I].Time,
                         Replayed.front().RankSteady[I].Time});
  D.Job = std::move(Sum);
  trace::Trace NoDevices;
  return writeOutputs(T, NoDevices, Reported, D);
}

} // namespace

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
  // The profiler's cost per event, out of each rank's CPU work as for one
  // trace (not out of a collector trace's: its cost is not the PyTorch
  // profiler's). The ranks as traced are replayed first, for what the
  // measured times check, and freed before the changed ones are joined
  // (kept beside them, they were a third copy of every rank's graph).
  graph::ProfilerCost Cost;
  size_t CostRanks = 0;
  std::vector<JobTimes> ProfiledAll; ///< every job iteration, as traced
  if (Profiler.PerEventNs > 0) {
    for (size_t I = 0; I < L->Graphs.size(); ++I) {
      if (Profiler.ByDefault && L->FromCollector[I])
        continue;
      graph::Graph &G = L->Graphs[I].G;
      std::string Error;
      if (!G.finalized() && !G.finalize(&Error)) {
        reportError(L->Graphs[I].Path, Error);
        return ExitBadInput;
      }
      ++CostRanks;
    }
    if (CostRanks) {
      PhaseTimer ProfiledTimer("profiled replay");
      auto PP = job::prepareRanks(L->Graphs, clockFor(T));
      auto PJ = PP ? job::joinPrepared(std::move(*PP))
                   : llvm::Expected<job::Job>(PP.takeError());
      if (!PJ) {
        reportError("ddscript", llvm::toString(PJ.takeError()));
        return ExitBadInput;
      }
      auto PR = sim::simulate(PJ->G);
      if (!PR) {
        reportError("ddscript", llvm::toString(PR.takeError()));
        return ExitInternal;
      }
      std::vector<int64_t> All;
      for (const job::JobIteration &It : PJ->Iterations)
        All.push_back(It.Number);
      ProfiledAll = timesOf(*PJ, &*PR, All);
    }
    for (size_t I = 0; I < L->Graphs.size() && CostRanks; ++I) {
      if (Profiler.ByDefault && L->FromCollector[I])
        continue;
      graph::Graph &G = L->Graphs[I].G;
      graph::ProfilerCost C =
          graph::removeProfilerCost(G, Profiler.PerEventNs, G.Dur, G.Gap);
      Cost.Events += C.Events;
      Cost.Removed = addSaturating(Cost.Removed, C.Removed);
    }
  }
  PhaseTimer JoinTimer("join");
  // The replay with the profiler's cost: what the measured times check.
  std::vector<JobTimes> ProfiledReplayed;
  auto P = job::prepareRanks(std::move(L->Graphs), clockFor(T));
  if (!P) {
    reportError("ddscript", llvm::toString(P.takeError()));
    return ExitBadInput;
  }
  // The baseline: the unchanged ranks joined and replayed, on a copy.
  std::vector<int64_t> Numbers;
  std::vector<JobTimes> Measured, Replayed;
  // Per rank: the reported iteration's index in the rank's own graph and
  // its replayed time in the job (the model's baseline).
  std::vector<std::pair<size_t, int64_t>> RankIters;
  size_t JobIterations = 0, Collectives = 0;
  // For --timeline and --report: the unchanged job and its replay, and per
  // rank its late arrivals at the first reported iteration's collectives.
  std::optional<job::Job> BaseJob;
  std::optional<sim::SimResult> BaseRun;
  std::vector<int64_t> BaseLate;
  {
    auto Base = job::joinPrepared(*P);
    if (!Base) {
      reportError("ddscript", llvm::toString(Base.takeError()));
      return ExitBadInput;
    }
    auto Chosen = chooseJobIterations(*Base, L->Iteration, L->DefaultFrom);
    if (!Chosen)
      return ExitBadInput;
    JobIterations = Base->Iterations.size();
    for (size_t C : *Chosen)
      Numbers.push_back(Base->Iterations[C].Number);
    JoinTimer.stop();
    PhaseTimer BaseTimer("baseline");
    auto R = sim::simulate(Base->G);
    if (!R) {
      reportError("ddscript", llvm::toString(R.takeError()));
      return ExitInternal;
    }
    Measured = timesOf(*Base, nullptr, Numbers);
    Replayed = timesOf(*Base, &*R, Numbers);
    for (int64_t Number : Numbers)
      for (const JobTimes &Times : ProfiledAll)
        if (Times.Number == Number)
          ProfiledReplayed.push_back(Times);
    if (!ProfiledAll.empty() && ProfiledReplayed.size() != Numbers.size()) {
      reportError("ddscript", "internal error: the job as traced lacks an "
                              "iteration the job without the profiler has");
      return ExitInternal;
    }
    Collectives = Base->G.numCollectives();
    const job::JobIteration *First = nullptr;
    for (const job::JobIteration &It : Base->Iterations)
      if (It.Number == Numbers.front())
        First = &It;
    for (size_t I = 0; I < Base->Ranks.size(); ++I) {
      uint32_t GI = First->PerRank[I];
      auto [B, E] = sim::iterationSpan(Base->G, *R, Base->G.Iterations[GI]);
      RankIters.push_back({GI - Base->Ranks[I].Iterations.front(), E - B});
    }
    if (wantsOutputs(T)) {
      BaseLate = job::lateness(*Base, *R, *First);
      BaseJob = std::move(*Base);
      BaseRun = std::move(*R);
    }
  }

  // The model, on every rank's graph on its own.
  size_t N = P->Ranks.size();
  std::vector<RankRun> Runs(N);
  std::vector<int64_t> JobRanks;
  for (const job::RankGraph &RG : P->Ranks)
    JobRanks.push_back(RG.Rank);
  std::vector<vm::Setting> Settings = combination(Axes, 0);
  RunMemory Unused;
  (void)Unused.takeSettings(Settings, Model.Program);
  {
    PhaseTimer ModelTimer("model");
    parallelFor(N, trace::defaultLoadThreads(), [&](size_t I) {
      job::RankGraph &RG = P->Ranks[I];
      vm::RunEnv Env;
      Env.G = &RG.G;
      Env.TracePath = RG.Path;
      Env.Device = L->Devices.at(RG.Rank);
      Env.Device.MemBandwidth = vm::estimateMemBandwidth(RG.G);
      Env.Device.PcieBandwidth = vm::estimatePcieBandwidth(RG.G);
      // The job's size: as its traces record it when they do (some of
      // its ranks may be all that was given), else the ranks given.
      Env.WorldSize = std::max(L->WorldSize, static_cast<int64_t>(N));
      Env.Rank = RG.Rank;
      Env.JobRanks = JobRanks;
      Env.CommWait = &P->Wait[I];
      auto [Report, BaseNs] = RankIters[I];
      Env.ReportIteration = Report;
      Env.BaselineNs = BaseNs;
      Env.NoMemoryReason = "a job's memory is not modelled: run the model "
                           "on one rank's trace for its memory";
      graph::Graph *GP = &RG.G;
      // simulate() in a model sees its rank alone: collective members
      // take their transfers, without waiting for the other ranks.
      Env.Simulate =
          [GP, Report = Report](
              const sim::SchedulePolicy &Pol) -> llvm::Expected<int64_t> {
        auto R = sim::simulate(*GP, &Pol);
        if (!R)
          return R.takeError();
        return sim::iterationTime(*GP, *R, GP->Iterations[Report]);
      };
      vm::RunOptions RO;
      RO.MaxSteps = M.MaxSteps;
      RO.Settings = Settings;
      // The ranks share one output budget: 300 ranks printing 32 MiB each
      // grew to 7 GB before they failed.
      RO.MaxOutputBytes =
          std::max<uint64_t>(uint64_t(1) << 20, RO.MaxOutputBytes / N);
      Runs[I].R = vm::run(Model.Program, Env, RO);
    });
  }
  // What the models printed: once when every rank printed the same.
  bool Same = true;
  for (const RankRun &R : Runs)
    Same &= R.R.Output == Runs.front().R.Output;
  std::string Printed;
  for (size_t I = 0; I < N; ++I) {
    if (Same && I > 0)
      break;
    if (!Same && !Runs[I].R.Output.empty())
      Printed += fmt::format("rank {}:\n", P->Ranks[I].Rank);
    Printed += Runs[I].R.Output;
  }
  (T.Format == OutputFormat::Json ? writeErr : writeOut)(Printed);
  for (size_t I = 0; I < N; ++I)
    if (!Runs[I].R.Ok) {
      reportError(P->Ranks[I].Path, fmt::format("the model failed on rank {}:",
                                                P->Ranks[I].Rank));
      reportDiagnostic(SM, Runs[I].R.Error);
      return ExitBadInput;
    }
  vm::ChangeStats Stats;
  uint64_t Steps = 0;
  for (const RankRun &R : Runs) {
    addStats(Stats, R.R.Stats);
    Steps += R.R.Steps;
  }

  // The changed ranks, joined and simulated.
  auto J = job::joinPrepared(std::move(*P));
  if (!J) {
    reportError("ddscript", llvm::toString(J.takeError()));
    return ExitBadInput;
  }
  PhaseTimer PredictTimer("predict");
  sim::SchedulePolicy Policy = joinPolicies(*J, Runs);
  auto R = sim::simulate(J->G, &Policy);
  if (!R) {
    reportError(Path, llvm::toString(R.takeError()));
    return ExitBadInput;
  }
  std::vector<JobTimes> Predicted = timesOf(*J, &*R, Numbers);
  PredictTimer.stop();
  if (Predicted.size() != Measured.size()) {
    reportError(Path, "the model changed the job's iterations");
    return ExitBadInput;
  }
  for (const std::string &U : J->Unpaired)
    reportWarning(Path, U);

  if (T.Format == OutputFormat::Json) {
    std::string S;
    JsonWriter W(S);
    for (size_t K = 0; K < Measured.size(); ++K) {
      W.beginObject();
      W.field("model", Path);
      W.key("traces").beginArray();
      for (const job::JobRank &JR : J->Ranks)
        W.value(JR.Path);
      W.endArray();
      W.field("iteration", Measured[K].Number);
      W.field("label", Measured[K].Label);
      W.field("job_measured_ns", Measured[K].Job);
      W.field("job_replayed_ns", Replayed[K].Job);
      W.field("job_predicted_ns", Predicted[K].JobSteady);
      W.key("speedup");
      if (Predicted[K].JobSteady > 0)
        W.value(double(Replayed[K].JobSteady) / double(Predicted[K].JobSteady));
      else
        W.null();
      W.field("job_replayed_steady_ns", Replayed[K].JobSteady);
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
            .field("measured_ns", Measured[K].Ranks[I])
            .field("replayed_ns", Replayed[K].Ranks[I])
            .field("predicted_ns", SP.Time)
            .field("replayed_steady_ns", SR.Time)
            .field("predicted_span_ns", Predicted[K].Ranks[I]);
        writeBacklog(W, "baseline_backlog", SR.Piling);
        writeBacklog(W, "backlog", SP.Piling);
        W.endObject();
      }
      W.endArray();
      W.field("output", Printed);
      W.field("steps", Steps);
      W.endObject();
      S += '\n';
    }
    writeOut(S);
    return writeJobOutputs(T, Path, Model, Axes, Stats, *BaseJob, *BaseRun,
                           BaseLate, *J, *R, Measured, Replayed, Predicted);
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
            "profiler   {} per recorded CPU event x {} events on {} of {} "
            "ranks: {} of CPU work taken out (--profiled keeps it)\n",
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
  return writeJobOutputs(T, Path, Model, Axes, Stats, *BaseJob, *BaseRun,
                         BaseLate, *J, *R, Measured, Replayed, Predicted);
}

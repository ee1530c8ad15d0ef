//===- JobPredict.cpp - A model run on every rank of a job ----------------===//

#include "whatif/JobPredict.h"

#include "support/Checked.h"
#include "support/Error.h"
#include "support/Parallel.h"
#include "support/Progress.h"
#include "trace/TraceReader.h"
#include "whatif/Iterations.h"

#include <fmt/format.h>

#include <algorithm>

using namespace dd;
using namespace dd::whatif;

static std::string iterationError(const std::string &Iteration,
                                  const std::string &DefaultFrom,
                                  llvm::Error E) {
  std::string Msg = llvm::toString(std::move(E));
  if (DefaultFrom.empty())
    return Msg + " (the job's iterations are those every rank has)";
  return fmt::format("the default iteration is the steady-state one of {} "
                     "(iteration {}), and not every rank has it: give "
                     "--iteration N",
                     DefaultFrom, Iteration);
}

llvm::Expected<std::vector<size_t>>
dd::whatif::chooseJobIterations(const job::Job &J, const std::string &Iteration,
                                const std::string &DefaultFrom) {
  // As for one trace, over the job's iterations and their spans.
  std::vector<int64_t> Numbers, Lengths;
  for (const job::JobIteration &It : J.Iterations) {
    Numbers.push_back(It.Number);
    Lengths.push_back(job::measuredSpan(J, It).length());
  }
  auto Chosen = chooseIterations(Numbers, Lengths, Iteration);
  if (!Chosen)
    return makeError(
        iterationError(Iteration, DefaultFrom, Chosen.takeError()));
  return std::move(*Chosen);
}

/// The times of the job iterations numbered \p Numbers in \p R (simulated)
/// or as measured (\p R null).
std::vector<JobTimes> dd::whatif::timesOf(const job::Job &J,
                                          const sim::SimResult *R,
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

namespace {

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

} // namespace

JobPrediction dd::whatif::predictJob(LoadedRanks &&L,
                                     const JobModelRequest &Req) {
  JobPrediction Out;
  auto fail = [&](std::string File, std::string Message,
                  bool Internal = false) -> JobPrediction {
    Out.Failed = Problem{std::move(File), std::move(Message), Internal};
    return std::move(Out);
  };
  // The profiler's cost per event, out of each rank's CPU work as for one
  // trace (not out of a collector trace's: its cost is not the PyTorch
  // profiler's). The ranks as traced are replayed first, for what the
  // measured times check, and freed before the changed ones are joined
  // (kept beside them, they were a third copy of every rank's graph).
  const ProfilerRequest &Profiler = Req.Profiler;
  graph::ProfilerCost &Cost = Out.Cost;
  size_t &CostRanks = Out.CostRanks;
  std::vector<JobTimes> ProfiledAll; ///< every job iteration, as traced
  if (Profiler.PerEventNs > 0) {
    for (size_t I = 0; I < L.Graphs.size(); ++I) {
      if (Profiler.ByDefault && L.FromCollector[I])
        continue;
      graph::Graph &G = L.Graphs[I].G;
      std::string Error;
      if (!G.finalized() && !G.finalize(&Error))
        return fail(L.Graphs[I].Path, Error);
      ++CostRanks;
    }
    if (CostRanks) {
      PhaseTimer ProfiledTimer("profiled replay");
      auto PP = job::prepareRanks(L.Graphs, Req.Clock);
      auto PJ = PP ? job::joinPrepared(std::move(*PP))
                   : llvm::Expected<job::Job>(PP.takeError());
      if (!PJ)
        return fail("ddscript", llvm::toString(PJ.takeError()));
      auto PR = sim::simulate(PJ->G);
      if (!PR)
        return fail("ddscript", llvm::toString(PR.takeError()), true);
      std::vector<int64_t> All;
      for (const job::JobIteration &It : PJ->Iterations)
        All.push_back(It.Number);
      ProfiledAll = timesOf(*PJ, &*PR, All);
    }
    for (size_t I = 0; I < L.Graphs.size() && CostRanks; ++I) {
      if (Profiler.ByDefault && L.FromCollector[I])
        continue;
      graph::Graph &G = L.Graphs[I].G;
      graph::ProfilerCost C =
          graph::removeProfilerCost(G, Profiler.PerEventNs, G.Dur, G.Gap);
      Cost.Events += C.Events;
      Cost.Removed = addSaturating(Cost.Removed, C.Removed);
    }
  }
  PhaseTimer JoinTimer("join");
  // The replay with the profiler's cost: what the measured times check.
  std::vector<JobTimes> &ProfiledReplayed = Out.ProfiledReplayed;
  auto P = job::prepareRanks(std::move(L.Graphs), Req.Clock);
  if (!P)
    return fail("ddscript", llvm::toString(P.takeError()));
  // The baseline: the unchanged ranks joined and replayed, on a copy.
  std::vector<int64_t> Numbers;
  std::vector<JobTimes> &Measured = Out.Measured, &Replayed = Out.Replayed;
  // Per rank: the reported iteration's index in the rank's own graph and
  // its replayed time in the job (the model's baseline).
  std::vector<std::pair<size_t, int64_t>> RankIters;
  {
    auto Base = job::joinPrepared(*P);
    if (!Base)
      return fail("ddscript", llvm::toString(Base.takeError()));
    auto Chosen = chooseJobIterations(*Base, L.Iteration, L.DefaultFrom);
    if (!Chosen)
      return fail("ddscript", llvm::toString(Chosen.takeError()));
    Out.JobIterations = Base->Iterations.size();
    for (size_t C : *Chosen)
      Numbers.push_back(Base->Iterations[C].Number);
    JoinTimer.stop();
    PhaseTimer BaseTimer("baseline");
    auto R = sim::simulate(Base->G);
    if (!R)
      return fail("ddscript", llvm::toString(R.takeError()), true);
    Measured = timesOf(*Base, nullptr, Numbers);
    Replayed = timesOf(*Base, &*R, Numbers);
    for (int64_t Number : Numbers)
      for (const JobTimes &Times : ProfiledAll)
        if (Times.Number == Number)
          ProfiledReplayed.push_back(Times);
    if (!ProfiledAll.empty() && ProfiledReplayed.size() != Numbers.size())
      return fail("ddscript",
                  "internal error: the job as traced lacks an iteration the "
                  "job without the profiler has",
                  true);
    Out.Collectives = Base->G.numCollectives();
    const job::JobIteration *First = nullptr;
    for (const job::JobIteration &It : Base->Iterations)
      if (It.Number == Numbers.front())
        First = &It;
    for (size_t I = 0; I < Base->Ranks.size(); ++I) {
      uint32_t GI = First->PerRank[I];
      auto [B, E] = sim::iterationSpan(Base->G, *R, Base->G.Iterations[GI]);
      RankIters.push_back({GI - Base->Ranks[I].Iterations.front(), E - B});
    }
    if (Req.KeepBaseline) {
      Out.BaseLate = job::lateness(*Base, *R, *First);
      Out.BaseJob = std::move(*Base);
      Out.BaseRun = std::move(*R);
    }
  }

  // The model, on every rank's graph on its own.
  size_t N = P->Ranks.size();
  std::vector<RankRun> Runs(N);
  std::vector<int64_t> JobRanks;
  for (const job::RankGraph &RG : P->Ranks)
    JobRanks.push_back(RG.Rank);
  {
    PhaseTimer ModelTimer("model");
    parallelFor(N, trace::defaultLoadThreads(), [&](size_t I) {
      job::RankGraph &RG = P->Ranks[I];
      vm::RunEnv Env;
      Env.G = &RG.G;
      Env.TracePath = RG.Path;
      Env.Device = L.Devices.at(RG.Rank);
      Env.Device.MemBandwidth = vm::estimateMemBandwidth(RG.G);
      Env.Device.PcieBandwidth = vm::estimatePcieBandwidth(RG.G);
      // The job's size: as its traces record it when they do (some of
      // its ranks may be all that was given), else the ranks given.
      Env.WorldSize = std::max(L.WorldSize, static_cast<int64_t>(N));
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
      RO.MaxSteps = Req.MaxSteps;
      RO.Settings = Req.Settings;
      // The ranks share one output budget: 300 ranks printing 32 MiB each
      // grew to 7 GB before they failed.
      RO.MaxOutputBytes =
          std::max<uint64_t>(uint64_t(1) << 20, RO.MaxOutputBytes / N);
      Runs[I].R = vm::run(*Req.Program, Env, RO);
    });
  }
  // What the models printed: once when every rank printed the same.
  bool Same = true;
  for (const RankRun &R : Runs)
    Same &= R.R.Output == Runs.front().R.Output;
  Out.ModelRan = true;
  std::string &Printed = Out.Printed;
  for (size_t I = 0; I < N; ++I) {
    if (Same && I > 0)
      break;
    if (!Same && !Runs[I].R.Output.empty())
      Printed += fmt::format("rank {}:\n", P->Ranks[I].Rank);
    Printed += Runs[I].R.Output;
  }
  for (size_t I = 0; I < N; ++I)
    if (!Runs[I].R.Ok) {
      Out.FailedRank = I;
      Out.FailedPath = P->Ranks[I].Path;
      Out.FailedRun = std::move(Runs[I].R);
      return fail(P->Ranks[I].Path, fmt::format("the model failed on rank {}:",
                                                P->Ranks[I].Rank));
    }
  for (const RankRun &R : Runs) {
    addStats(Out.Stats, R.R.Stats);
    Out.Steps += R.R.Steps;
  }

  // The changed ranks, joined and simulated.
  auto J = job::joinPrepared(std::move(*P));
  if (!J)
    return fail("ddscript", llvm::toString(J.takeError()));
  PhaseTimer PredictTimer("predict");
  sim::SchedulePolicy Policy = joinPolicies(*J, Runs);
  auto R = sim::simulate(J->G, &Policy);
  if (!R)
    return fail(Req.ModelPath, llvm::toString(R.takeError()));
  Out.Predicted = timesOf(*J, &*R, Numbers);
  PredictTimer.stop();
  if (Out.Predicted.size() != Measured.size())
    return fail(Req.ModelPath, "the model changed the job's iterations");
  Out.Job = std::move(*J);
  Out.Run = std::move(*R);
  return Out;
}

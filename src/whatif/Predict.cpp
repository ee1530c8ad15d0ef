//===- Predict.cpp - One run of a model against a trace's graph -----------===//

#include "whatif/Predict.h"

#include "graph/Edit.h"
#include "support/Progress.h"
#include "whatif/Iterations.h"

#include <fmt/format.h>

#include <cmath>

using namespace dd;
using namespace dd::whatif;

Prediction dd::whatif::predict(const Baseline &B, graph::Graph &G,
                               const bc::Program &P,
                               const std::vector<vm::Setting> &Settings,
                               RunMemory Mem, uint64_t MaxSteps) {
  Prediction Out;
  const trace::Trace &Tr = *B.Tr;
  vm::RunEnv Env;
  Env.G = &G;
  Env.TracePath = B.TracePath;
  if (!Tr.Devices.empty()) {
    Env.Device.Name = Tr.Devices.front().Name;
    Env.Device.Memory = Tr.Devices.front().TotalGlobalMem;
    Env.Device.Sms = Tr.Devices.front().NumSms;
  }
  Env.Device.MemBandwidth = vm::estimateMemBandwidth(G);
  Env.Device.PcieBandwidth = vm::estimatePcieBandwidth(G);
  if (Tr.Distributed.Present) {
    Env.WorldSize = Tr.Distributed.WorldSize;
    Env.Rank = Tr.Distributed.Rank;
  }
  size_t Report = B.Chosen.front();
  Env.ReportIteration = Report;
  Env.BaselineNs = sim::iterationTime(G, *B.Base, G.Iterations[Report]);
  graph::Graph *GP = &G;
  Env.Simulate =
      [GP,
       Report](const sim::SchedulePolicy &Policy) -> llvm::Expected<int64_t> {
    auto R = sim::simulate(*GP, &Policy);
    if (!R)
      return R.takeError();
    return sim::iterationTime(*GP, *R, GP->Iterations[Report]);
  };
  Mem.prepare(Tr, G, *B.Base, B.Chosen, Env);
  // The replay's steady state, before the model changes the graph.
  std::vector<Steady> BaseSteady = B.BaseSteady.size() == B.Chosen.size()
                                       ? B.BaseSteady
                                       : steadyStates(G, *B.Base, B.Chosen);
  vm::RunOptions RO;
  RO.MaxSteps = MaxSteps;
  RO.Settings = Settings;
  {
    PhaseTimer ModelTimer("model");
    Out.R = vm::run(P, Env, RO);
  }
  if (!Out.R.Ok) {
    Out.Mem = std::move(Mem);
    return Out;
  }
  PhaseTimer PredictTimer("predict");
  auto Pred = sim::simulate(G, &Out.R.Policy);
  PredictTimer.stop();
  if (!Pred) {
    Out.SimError = llvm::toString(Pred.takeError());
    Out.Mem = std::move(Mem);
    return Out;
  }
  Mem.finish(G, *Pred, Out.R.Stats);
  Out.Mem = std::move(Mem);
  // After the model: its inserted tasks have no measured time, but the
  // vectors must cover them.
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(G, MStart, MEnd);
  sim::IterationLoad PredLoad = sim::iterationLoad(G, *Pred);
  for (size_t K = 0; K < B.Chosen.size(); ++K) {
    size_t I = B.Chosen[K];
    const graph::Iteration &It = G.Iterations[I];
    Outcome O;
    O.Index = I;
    O.Measured = measuredPointTime(G, It.End, MEnd) -
                 measuredPointTime(G, It.Begin, MEnd);
    if (B.Unprofiled.Applied) {
      O.Profiled = O.Measured;
      O.Measured = B.Unprofiled.Target;
      O.CpuScale = B.Unprofiled.CpuScale;
      O.CpuScaleLow = B.Unprofiled.ScaleLow;
      O.CpuScaleHigh = B.Unprofiled.ScaleHigh;
    }
    if (B.Unprofiled.PerEvent) {
      O.ProfiledReplay = B.Unprofiled.profiledReplay(K);
      O.PerEventNs = B.Unprofiled.PerEventNs;
      O.ProfilerEvents = B.Unprofiled.Events;
      O.ProfilerRemoved = B.Unprofiled.Removed;
    }
    O.Baseline = sim::iterationTime(G, *B.Base, It);
    O.PredictedSpan = sim::iterationTime(G, *Pred, It);
    const Steady &SB = BaseSteady[K];
    Steady SP = steadyState(G, PredLoad, *Pred, I);
    O.BaselineSteady = SB.Time;
    O.BasePiling = SB.Piling;
    O.Predicted = O.PredictedSpan > 0 ? SP.Time : 0;
    O.PredPiling = SP.Piling;
    Out.Out.push_back(O);
  }
  Out.Pred = std::move(*Pred);
  return Out;
}

std::string Outcome::speedupText() const {
  return emptied() ? std::string("-") : fmt::format("{:.3f}x", speedup());
}

void Outcome::speedupJson(JsonWriter &W) const {
  W.key("speedup");
  if (emptied())
    W.null();
  else
    W.value(speedup());
}

std::string dd::whatif::backlogText(const Backlog &B) {
  std::string What;
  if (!B.Resource.empty())
    What = fmt::format("{} has {} of work per iteration", B.Resource,
                       formatDuration(B.PerIteration));
  if (B.Growth > 0)
    What += fmt::format("{}each iteration's work finishes {} further past "
                        "its end",
                        What.empty() ? "" : ", and ", formatDuration(B.Growth));
  return What;
}

std::vector<Steady>
dd::whatif::steadyStates(const graph::Graph &G, const sim::SimResult &R,
                         const std::vector<size_t> &Chosen) {
  sim::IterationLoad Load = sim::iterationLoad(G, R);
  std::vector<Steady> Out;
  for (size_t I : Chosen)
    Out.push_back(steadyState(G, Load, R, I));
  return Out;
}

Steady dd::whatif::steadyState(const graph::Graph &G,
                               const sim::IterationLoad &Load,
                               const sim::SimResult &R, size_t I) {
  const std::vector<std::vector<int64_t>> &Work = Load.Work;
  Steady S;
  S.Time = sim::iterationTime(G, R, G.Iterations[I]);
  // The window: the iteration and its neighbours (of its rank).
  std::vector<size_t> Window;
  for (size_t J = I > 0 ? I - 1 : 0; J <= I + 1 && J < G.Iterations.size(); ++J)
    if (G.Iterations[J].Rank == G.Iterations[I].Rank)
      Window.push_back(J);
  int64_t Time = 0;
  for (size_t J : Window)
    Time += sim::iterationTime(G, R, G.Iterations[J]);
  if (Time <= 0 || I >= Work.size())
    return S;
  graph::ResourceId Most = graph::NoResource;
  int64_t MostWork = 0;
  for (graph::ResourceId Res = 0; Res < G.Resources.size(); ++Res) {
    int64_t W = 0;
    for (size_t J : Window)
      W += J < Work.size() && Res < Work[J].size() ? Work[J][Res] : 0;
    if (W > MostWork) {
      MostWork = W;
      Most = Res;
    }
  }
  int64_t N = static_cast<int64_t>(Window.size());
  if (Most != graph::NoResource &&
      double(MostWork) > double(Time) * (1 + BacklogMargin)) {
    S.Piling.Resource = G.Resources[Most].Name;
    S.Piling.PerIteration = MostWork / N;
  }
  // Work that no one resource overloads can still fall behind, through a
  // cycle of dependencies across resources (the optimizer's kernels wait
  // for communication that waits for backward): how much later, after its
  // iteration's end, each iteration's work finishes.
  if (N >= 2) {
    auto Behind = [&](size_t K) {
      int64_t Done =
          Window[K] < Load.Done.size() ? Load.Done[Window[K]] : INT64_MIN;
      int64_t End = sim::iterationSpan(G, R, G.Iterations[Window[K]]).second;
      return Done == INT64_MIN ? 0 : std::max<int64_t>(0, Done - End);
    };
    int64_t Growth = (Behind(Window.size() - 1) - Behind(0)) / (N - 1);
    if (double(Growth) > double(Time / N) * BacklogMargin)
      S.Piling.Growth = Growth;
  }
  if (!S.Piling.piling())
    return S;
  S.Piling.IterationTime = Time / N;
  S.Piling.Window = Window.size();
  S.Time = std::max({S.Time, S.Piling.PerIteration, S.Time + S.Piling.Growth});
  return S;
}

llvm::Expected<ProfilerFit>
dd::whatif::fitUnprofiled(graph::Graph &G, const std::vector<size_t> &Chosen,
                          int64_t Target) {
  ProfilerFit F;
  F.Applied = true;
  F.Target = Target;
  // The reported iterations' mean replay with CPU work times S.
  std::vector<int64_t> Dur, Gap;
  auto ReplayAt = [&](double S) -> llvm::Expected<int64_t> {
    Dur = G.Dur;
    Gap = G.Gap;
    graph::scaleCpuTime(G, S, Dur, Gap);
    sim::TimeOverride O{Dur, Gap};
    auto R = sim::simulate(G, nullptr, &O);
    if (!R)
      return R.takeError();
    int64_t Sum = 0;
    for (size_t I : Chosen)
      Sum += sim::iterationTime(G, *R, G.Iterations[I]);
    return Sum / static_cast<int64_t>(Chosen.size());
  };
  // Bisection in log S: the replay grows with S (more CPU time never
  // finishes sooner), to within 0.01% of Target or 40 halvings.
  double Lo = std::log(MinCpuScale), Hi = std::log(MaxCpuScale);
  auto AtLo = ReplayAt(MinCpuScale);
  if (!AtLo)
    return AtLo.takeError();
  auto AtHi = ReplayAt(MaxCpuScale);
  if (!AtHi)
    return AtHi.takeError();
  // Where even free CPU work replays slower than Target, the run without
  // the profiler is bound by its GPU work, and any CPU speed up to where
  // the replay starts to grow fits it: the fit takes that knee (0.5% above
  // the floor), the slowest CPU consistent with the measurement.
  int64_t Aim = Target;
  F.Floor = *AtLo;
  F.GpuBound = double(*AtLo) * 200 >= double(Target) * 201;
  if (*AtLo >= Target)
    Aim = *AtLo + *AtLo / 200;
  // The log-scale whose replay is nearest Aim, by bisection: the replay
  // grows with S (more CPU time never finishes sooner).
  auto Solve = [&](int64_t Aim) -> llvm::Expected<std::pair<double, int64_t>> {
    double L = Lo, H = Hi;
    if (*AtHi <= Aim)
      return std::make_pair(H, *AtHi);
    double Best = L;
    int64_t BestReplay = *AtLo;
    for (int Step = 0; Step < 40; ++Step) {
      double Mid = (L + H) / 2;
      auto At = ReplayAt(std::exp(Mid));
      if (!At)
        return At.takeError();
      if (std::llabs(*At - Aim) < std::llabs(BestReplay - Aim))
        Best = Mid, BestReplay = *At;
      if (std::fabs(double(*At - Aim)) * 10000 <= double(Aim))
        break;
      (*At < Aim ? L : H) = Mid;
    }
    return std::make_pair(Best, BestReplay);
  };
  auto Fit = Solve(Aim);
  if (!Fit)
    return Fit.takeError();
  auto [Best, BestReplay] = *Fit;
  // How well the measurement determines the scale: the scales whose
  // replay is within 1% of Target (a run-to-run spread of GPU-bound
  // runs). Near the GPU-only floor the replay hardly moves with CPU time,
  // and a wide range of CPU speeds fits.
  F.ScaleLow = MinCpuScale;
  if (*AtLo < Target - Target / 100) {
    auto Low = Solve(Target - Target / 100);
    if (!Low)
      return Low.takeError();
    F.ScaleLow = std::exp(Low->first);
  }
  if (F.GpuBound) {
    F.ScaleHigh = std::exp(Best); // any scale up to the knee
  } else {
    auto High = Solve(Target + Target / 100);
    if (!High)
      return High.takeError();
    F.ScaleHigh = std::exp(High->first);
  }
  F.CpuScale = std::exp(Best);
  F.Replayed = BestReplay;
  // Within 2%: the profiler's own cost on the GPU (CUPTI's per-kernel
  // records) and on launch delays is not modelled, so closer is not asked.
  F.Reached = std::fabs(double(BestReplay - Target)) * 50 <= double(Target);
  graph::scaleCpuTime(G, F.CpuScale);
  return F;
}

/// The profiler's recording options a trace shows: its operators' input
/// shapes (record_shapes), memory records (profile_memory), Python
/// function events (with_stack). Memory records taken out of the file after
/// it was recorded (Trace::DroppedMemoryRecords) still say profile_memory.
struct RecordingOptions {
  bool Shapes = false, Memory = false, Stack = false;
};
static RecordingOptions recordingOptions(const trace::Trace &T) {
  RecordingOptions O;
  for (trace::EventId E = 0; E < T.numEvents() && !(O.Shapes && O.Stack); ++E) {
    O.Stack |= T.Kind[E] == trace::EventKind::PythonFunction;
    O.Shapes |= T.Kind[E] == trace::EventKind::CpuOp &&
                T.arg(E, trace::ArgKey::InputDims) != nullptr;
  }
  O.Memory = !T.Memory.empty() || T.DroppedMemoryRecords > 0;
  return O;
}

/// The per-event model's default cost applied to a trace recorded with
/// other options than the ones it was fitted on: the warning, or "". It
/// names the options the trace lacks and the ones it adds.
static std::string recordingOptionsWarning(const trace::Trace &T,
                                           const ProfilerFit &F) {
  if (!F.PerEvent || F.PerEventNs != DefaultPerEventNs)
    return "";
  RecordingOptions O = recordingOptions(T);
  std::string Without, With;
  for (auto [On, Name] : {std::pair{O.Shapes, "record_shapes"},
                          std::pair{O.Memory, "profile_memory"}})
    if (!On)
      Without += std::string(Without.empty() ? "" : " and ") + Name;
  if (O.Stack)
    With = "with_stack";
  if (Without.empty() && With.empty())
    return "";
  std::string Differs = !Without.empty() && !With.empty()
                            ? "without " + Without + ", and with " + With
                        : !Without.empty() ? "without " + Without
                                           : "with " + With + " as well";
  return fmt::format("the profiler's cost per event ({}) was fitted on "
                     "traces recorded with record_shapes and "
                     "profile_memory; this one was recorded {}: its cost per "
                     "event may differ (give --unprofiled per-event=COST, or "
                     "--unprofiled TIME measured without the profiler)",
                     formatDuration(F.PerEventNs), Differs);
}

/// `--unprofiled per-event`: the cost taken out of \p G, counted over the
/// reported iteration, with that iteration's replay before and after.
static llvm::Expected<ProfilerFit>
applyPerEvent(graph::Graph &G, const std::vector<size_t> &Chosen,
              int64_t PerEventNs) {
  ProfilerFit F;
  F.PerEvent = true;
  F.PerEventNs = PerEventNs;
  auto Before = sim::simulate(G);
  if (!Before)
    return Before.takeError();
  int64_t Sum = 0;
  for (size_t I : Chosen) {
    F.ProfiledReplays.push_back(
        sim::iterationTime(G, *Before, G.Iterations[I]));
    Sum += F.ProfiledReplays.back();
  }
  F.ProfiledReplay = Sum / static_cast<int64_t>(Chosen.size());
  graph::ProfilerCost C = graph::removeProfilerCost(
      G, PerEventNs, G.Dur, G.Gap, static_cast<int32_t>(Chosen.front()));
  F.Events = C.Events;
  F.Removed = C.Removed;
  return F;
}

/// A fit to the measured time, with what makes it uncertain as warnings.
static llvm::Expected<ProfilerFit>
applyFit(graph::Graph &G, const std::vector<size_t> &Chosen, int64_t Target) {
  auto F = fitUnprofiled(G, Chosen, Target);
  if (!F)
    return F.takeError();
  if (F->GpuBound)
    F->Warnings.push_back(fmt::format(
        "--unprofiled {}: with no CPU time at all the iteration "
        "replays in {} (its GPU work, and the profiler's cost "
        "there, are not scaled): without the profiler it is "
        "bound by GPU work, and any CPU speed up to x{:.3f} fits; "
        "that one is taken (an upper bound on CPU time, so "
        "what-ifs that shorten GPU work may be pessimistic)",
        formatDuration(F->Target), formatDuration(F->Floor), F->CpuScale));
  else if (F->Reached && F->ScaleHigh > 2 * F->ScaleLow)
    F->Warnings.push_back(fmt::format(
        "--unprofiled {}: the iteration replays within {} of its "
        "GPU work alone ({}), so CPU speeds from x{:.3f} to "
        "x{:.3f} all replay it within 1%; x{:.3f} is taken, and "
        "a what-if that leaves the run bound by CPU work (one "
        "that shortens GPU work) is uncertain by that much",
        formatDuration(F->Target),
        formatPercent(double(F->Target - F->Floor) / double(F->Target), false),
        formatDuration(F->Floor), F->ScaleLow, F->ScaleHigh, F->CpuScale));
  else if (!F->Reached)
    F->Warnings.push_back(fmt::format("--unprofiled {}: CPU work x{} replays "
                                      "the iteration in {} only",
                                      formatDuration(F->Target), MaxCpuScale,
                                      formatDuration(F->Replayed)));
  // A time longer than the traced run's adds CPU work: the profiler only
  // ever makes a run slower, so the measurement is likely of another run.
  if (F->CpuScale > 1)
    F->Warnings.push_back(fmt::format(
        "--unprofiled {}: longer than the iteration with the profiler, so "
        "CPU work is scaled up (x{:.3f}), not down: is it a measurement of "
        "this run without the profiler?",
        formatDuration(F->Target), F->CpuScale));
  return F;
}

llvm::Expected<ProfilerFit>
dd::whatif::applyProfiler(graph::Graph &G, const std::vector<size_t> &Chosen,
                          const trace::Trace &T, const ProfilerRequest &Req) {
  ProfilerRequest For = Req.forTrace(T);
  llvm::Expected<ProfilerFit> F = ProfilerFit();
  if (For.PerEventNs > 0)
    F = applyPerEvent(G, Chosen, For.PerEventNs);
  else if (For.Target)
    F = applyFit(G, Chosen, *For.Target);
  if (!F)
    return F.takeError();
  std::string W = recordingOptionsWarning(T, *F);
  if (!W.empty())
    F->Warnings.push_back(std::move(W));
  return F;
}

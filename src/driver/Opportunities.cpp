//===- Opportunities.cpp - ddscript opportunities -------------------------===//
//
// The ranked what-ifs of whatif/Opportunities.h on the trace read once and
// its graph built once, printed as a table with their models, or JSON;
// --report writes the page of the replay with the ranked list on it.
// Every listed prediction is what `ddscript run` gives for the printed
// model.
//
//===----------------------------------------------------------------------===//

#include "whatif/Opportunities.h"
#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Models.h"
#include "driver/Outputs.h"
#include "driver/Predict.h"
#include "driver/Session.h"
#include "driver/Sweep.h"

#include <fmt/format.h>

#include <cstdio>

using namespace dd;
using namespace dd::driver;

namespace {

using whatif::WhatIf;

/// The ranked what-ifs as JSON, on stdout.
void printJson(const std::string &TracePath, const graph::Iteration &It,
               int64_t BaseNs, const ProfilerFit &Fit, double Factor,
               const std::vector<WhatIf> &Ok) {
  writeJson([&](JsonWriter &W) {
    W.beginObject();
    W.field("trace", TracePath);
    W.field("iteration", It.Number);
    W.field("label", It.Label);
    W.field("baseline_ns", BaseNs);
    if (Fit.Applied) {
      W.field("unprofiled_ns", Fit.Target);
      W.field("cpu_scale", Fit.CpuScale);
    }
    if (Fit.PerEvent)
      profilerJson(W, Fit.ProfiledReplay, Fit.PerEventNs, Fit.Events,
                   Fit.Removed);
    W.field("factor", Factor);
    W.key("opportunities").beginArray();
    for (const WhatIf &X : Ok) {
      W.beginObject()
          .field("what", X.What)
          .field("model", X.Model)
          .field("predicted_ns", X.Result.Predicted)
          .field("gain_ns", X.Result.BaselineSteady - X.Result.Predicted);
      X.Result.speedupJson(W);
      W.endObject();
    }
    W.endArray();
    W.endObject();
  });
}

/// The ranked what-ifs as a table, then their models, on stdout.
void printText(const std::string &TracePath, const graph::Iteration &It,
               int64_t BaseNs, const ProfilerFit &Fit,
               const std::vector<WhatIf> &Ok) {
  std::string S =
      fmt::format("trace      {}\niteration  {}\n", TracePath, It.Label);
  if (Fit.Applied)
    S += fmt::format("measured   {} without the profiler (--unprofiled); "
                     "CPU work scaled x{:.3f} before the what-ifs\n",
                     formatDuration(Fit.Target), Fit.CpuScale);
  if (Fit.PerEvent)
    S +=
        profilerLine(Fit.PerEventNs, Fit.Events, Fit.Removed) +
        fmt::format("replayed   {} with the profiler; {} without it\n\n",
                    formatDuration(Fit.ProfiledReplay), formatDuration(BaseNs));
  else
    S += fmt::format("replayed   {}\n\n", formatDuration(BaseNs));
  Table Tb;
  Tb.row({"", "what if", "predicted", "speedup", "gain"});
  for (size_t C = 2; C < 5; ++C)
    Tb.alignRight(C);
  for (size_t I = 0; I < Ok.size(); ++I) {
    const Outcome &O = Ok[I].Result;
    Tb.row({std::to_string(I + 1), Ok[I].What, formatDuration(O.Predicted),
            O.speedupText(), formatDuration(O.BaselineSteady - O.Predicted)});
  }
  S += Tb.render();
  S += "\nEach is a model `ddscript run` runs alike (save a line as a .dd "
       "file):\n";
  for (size_t I = 0; I < Ok.size(); ++I)
    S += fmt::format("  {:>2}  {}\n", I + 1, Ok[I].Model);
  writeOut(S);
}

} // namespace

int dd::driver::runOpportunities(const OpportunityOptions &Opt,
                                 const TraceOptions &T) {
  if (!(Opt.Factor > 1) || !(Opt.Factor < 1e9)) {
    reportError("ddscript",
                fmt::format("--factor must be above 1 (got {:g})", Opt.Factor));
    return ExitBadInput;
  }
  if (!oneIteration(T, "opportunities") || !checkOutputPaths(T))
    return ExitBadInput;
  ProfilerRequest Unprofiled;
  if (!parseUnprofiled(Opt.Unprofiled, T, Unprofiled))
    return ExitBadInput;
  auto Rp = loadReplayed(T);
  if (!Rp)
    return ExitBadInput;
  CommandInput *In = &Rp->In;
  graph::Graph *G = &Rp->G;
  std::vector<size_t> *Chosen = &Rp->Chosen;
  sim::SimResult *Base = &Rp->Base;
  auto Fitted = applyProfiler(*Rp, Unprofiled, T.TracePath);
  if (!Fitted)
    return ExitInternal;
  const ProfilerFit &Fit = *Fitted;
  // The what-ifs need the trace's devices, not its memory records.
  trace::Trace Light;
  Light.Path = In->Trace.Path;
  Light.Devices = In->Trace.Devices;
  Light.Distributed = In->Trace.Distributed;
  Baseline B;
  B.Tr = &Light;
  B.TracePath = T.TracePath;
  B.G = &*G;
  B.Chosen = *Chosen;
  B.Base = &*Base;
  B.BaseSteady = steadyStates(*G, *Base, B.Chosen);
  B.Unprofiled = Fit;

  whatif::Opportunities R =
      whatif::rankOpportunities(B, Opt.Factor, Opt.Top, stdlibDirs());
  for (const whatif::Problem &W : R.Warnings)
    reportWarning(W.File, W.Message);
  const std::vector<WhatIf> &Ok = R.Ranked;
  const graph::Iteration &It = G->Iterations[Chosen->front()];
  int64_t BaseNs = R.BaselineNs;
  if (T.Format == OutputFormat::Json)
    printJson(T.TracePath, It, BaseNs, Fit, Opt.Factor, Ok);
  else
    printText(T.TracePath, It, BaseNs, Fit, Ok);
  if (T.ReportPath.empty())
    return ExitOk;
  // The page: the replay of the unchanged graph, and the ranked what-ifs.
  report::RunData D;
  D.G = &*G;
  D.Command = "opportunities";
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(*G, MStart, MEnd);
  D.Measured = measuredSchedule(*G, MStart, MEnd);
  D.Unprofiled = Fit.Applied ? Fit.Target : 0;
  D.ProfiledReplays = profiledReplays(Fit, Chosen->size());
  D.Replayed = simulatedSchedule("replayed", *G, *Base, *Chosen);
  std::optional<memory::MemoryModel> Mem = memoryForOutputs(In->Trace, *G);
  D.Memory = Mem ? &*Mem : nullptr;
  report::OpportunityList L;
  L.BaselineNs = BaseNs;
  L.Factor = Opt.Factor;
  for (const WhatIf &W : Ok)
    L.Entries.push_back({W.What, W.Model, W.Result.Predicted,
                         W.Result.BaselineSteady - W.Result.Predicted});
  D.Opportunities = std::move(L);
  return writeOutputs(T, In->Trace, *Chosen, D);
}

//===- Opportunities.cpp - ddscript opportunities -------------------------===//
//
// "Where is the gain, and how much is there?": a ranked list of what-ifs,
// each a one-line model (every kernel class F times faster, each phase, the
// top layers, data loading gone, the CPU side F times faster, communication
// F times faster, synchronisations removed, the optimizer fused), each run
// as `ddscript run` would run it: compiled from its text, on a copy of the
// trace's graph, simulated, its steady state compared with the replay's.
// The trace is read and its graph built once; the what-ifs run on threads,
// each result in its own slot, so the output does not depend on them. Every
// listed prediction is what `ddscript run` gives for the printed model.
// --report writes the page of the replay with the ranked list on it.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Models.h"
#include "driver/Outputs.h"
#include "driver/Predict.h"
#include "driver/Session.h"
#include "driver/Sweep.h"
#include "graph/KernelClass.h"
#include "support/Parallel.h"
#include "support/Progress.h"
#include "trace/TraceReader.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>

using namespace dd;
using namespace dd::driver;

namespace {

struct WhatIf {
  std::string What;  ///< "gemm kernels 2x faster"
  std::string Model; ///< the model's text, one line
  Outcome Result;
  std::string Error; ///< when the model or its simulation failed
};

/// A string literal of the language for \p S.
std::string quoted(std::string_view S) {
  std::string Out = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\')
      Out += '\\';
    Out += C;
  }
  return Out + "\"";
}

std::string factorText(double F) { return fmt::format("{:g}", F); }

/// The what-ifs worth trying on \p G's iteration \p It.
std::vector<WhatIf> candidates(const graph::Graph &G, size_t It, double F) {
  std::vector<WhatIf> Out;
  std::string Fx = factorText(F);
  // GPU time of the iteration by kernel class, phase and layer.
  std::vector<int64_t> ByClass(graph::NumKernelClasses, 0);
  std::vector<int64_t> ByPhase(graph::NumPhases, 0),
      CpuByPhase(graph::NumPhases, 0);
  std::vector<int64_t> ByLayer(G.Layers.size(), 0);
  int64_t Gpu = 0;
  bool DataLoading = false, Syncs = false, Steps = false;
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    std::string_view N = G.name(T);
    if (G.isContainer(T)) {
      DataLoading |= graph::isDataLoaderRange(N);
      Steps |= G.Kind[T] == graph::TaskKind::Annotation &&
               N.rfind("ProfilerStep#", 0) == 0;
      continue;
    }
    Syncs |= G.Kind[T] == graph::TaskKind::Runtime &&
             N.find("Synchronize") != std::string_view::npos;
    if (G.IterationOf[T] != static_cast<int32_t>(It))
      continue;
    int64_t D = G.MeasuredDur[T] == graph::NoTime ? 0 : G.MeasuredDur[T];
    if (!G.isGpu(T)) {
      CpuByPhase[static_cast<unsigned>(G.PhaseOf[T])] += D;
      continue;
    }
    Gpu += D;
    ByClass[static_cast<unsigned>(graph::kernelClassOf(G, T))] += D;
    ByPhase[static_cast<unsigned>(G.PhaseOf[T])] += D;
    if (G.LayerOf[T] != graph::NoLayer)
      ByLayer[G.LayerOf[T]] += D;
  }
  auto Add = [&](std::string What, std::string Model) {
    Out.push_back({std::move(What), std::move(Model), {}, {}});
  };
  // Kernel classes with at least 1% of the iteration's GPU time.
  // Communication kernels are `communication` below: one what-if, once.
  for (unsigned C = 0; C < graph::NumKernelClasses; ++C) {
    auto K = static_cast<graph::KernelClass>(C);
    if (K == graph::KernelClass::other || K == graph::KernelClass::comm ||
        ByClass[C] * 100 < Gpu || ByClass[C] == 0)
      continue;
    std::string Name(graph::kernelClassName(K));
    Add(fmt::format("{} work {}x faster", Name, Fx),
        fmt::format("shrink (select gpu where class == {}) by {}", quoted(Name),
                    Fx));
  }
  for (graph::Phase P : {graph::Phase::Forward, graph::Phase::Backward,
                         graph::Phase::Optimizer}) {
    unsigned I = static_cast<unsigned>(P);
    if (ByPhase[I] + CpuByPhase[I] == 0)
      continue;
    std::string Name = graph::phaseName(P);
    Add(fmt::format("{} (CPU calls and GPU work) {}x faster", Name, Fx),
        fmt::format("shrink (select task where phase == {} and not container) "
                    "by {}",
                    quoted(Name), Fx));
  }
  // The five layers with the most GPU time.
  std::vector<size_t> Layers;
  for (size_t L = 0; L < ByLayer.size(); ++L)
    if (ByLayer[L] > 0)
      Layers.push_back(L);
  std::stable_sort(Layers.begin(), Layers.end(),
                   [&](size_t A, size_t B) { return ByLayer[A] > ByLayer[B]; });
  if (Layers.size() > 5)
    Layers.resize(5);
  for (size_t L : Layers)
    Add(fmt::format("layer {} {}x faster", G.Layers[L].Name, Fx),
        fmt::format("shrink (select task where layer.name == {} and not "
                    "container) by {}",
                    quoted(G.Layers[L].Name), Fx));
  if (DataLoading)
    Add("data loading gone (DataLoader __next__ 1000000x faster)",
        "shrink (select cpu where container and name ~ "
        "/DataLoader.*__next__/) by 1000000");
  if (Steps)
    Add(fmt::format("the CPU side {}x faster (calls and the time between "
                    "them in each step)",
                    Fx),
        fmt::format("shrink (select annotation where name ~ "
                    "/^ProfilerStep#/) by {}",
                    Fx));
  if (ByClass[static_cast<unsigned>(graph::KernelClass::comm)] > 0)
    Add(fmt::format("communication {}x faster", Fx),
        fmt::format("shrink (select comm) by {}", Fx));
  if (Syncs)
    Add("synchronisations removed (cuda*Synchronize calls)",
        "remove (select runtime where name ~ /Synchronize/)");
  if (ByPhase[static_cast<unsigned>(graph::Phase::Optimizer)] > 0) {
    // fused_adam sizes its kernels by Adam's traffic per gradient byte;
    // another optimizer's fused step moves less (SGD) or more.
    std::string Opt;
    for (graph::TaskId T = 0; T < G.numTasks() && Opt.empty(); ++T) {
      std::string_view N = G.name(T);
      if (N.rfind("Optimizer.step#", 0) == 0) {
        std::string_view Cls = N.substr(15);
        Opt = std::string(Cls.substr(0, Cls.find('.')));
      }
    }
    bool Adam = Opt.empty() || Opt.find("Adam") != std::string::npos;
    Add(Adam ? std::string("the optimizer fused (std.fused_adam)")
             : fmt::format("the optimizer fused (std.fused_adam, sized as "
                           "Adam's: the trace's optimizer is {})",
                           Opt),
        "import std.fused_adam");
  }
  return Out;
}

/// The ranked what-ifs as JSON, on stdout.
void printJson(const std::string &TracePath, const graph::Iteration &It,
               int64_t BaseNs, const ProfilerFit &Fit, double Factor,
               const std::vector<WhatIf> &Ok) {
  std::string S;
  JsonWriter W(S);
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
  S += '\n';
  writeOut(S);
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

  std::vector<WhatIf> All = candidates(*G, Chosen->front(), Opt.Factor);
  std::vector<std::string> Dirs = stdlibDirs();
  {
    PhaseTimer Timer("what-ifs");
    Progress Bar(fmt::format("{} what-ifs", All.size()));
    std::atomic<size_t> Done{0};
    parallelFor(All.size(), trace::defaultLoadThreads(), [&](size_t I) {
      WhatIf &W = All[I];
      SourceManager SM;
      DiagEngine Diags;
      compiler::CompileOptions CO;
      CO.StdlibDirs = Dirs;
      auto M = compiler::compileSource("what-if.dd", W.Model, CO, SM, Diags);
      if (!M) {
        W.Error = renderDiagnostics(SM, Diags);
        return;
      }
      graph::Graph Copy = *G;
      Prediction P =
          predict(B, Copy, M->Program, {}, RunMemory(), vm::DefaultMaxSteps);
      if (!P.R.Ok)
        W.Error = P.R.Error.Message;
      else if (!P.SimError.empty())
        W.Error = P.SimError;
      else
        W.Result = P.Out.front();
      Bar.update(double(++Done) / double(All.size()));
    });
    Bar.done();
  }
  std::vector<WhatIf> Ok;
  for (WhatIf &W : All) {
    if (!W.Error.empty()) {
      reportWarning(T.TracePath,
                    "what-if \"" + W.Model + "\" failed: " + W.Error);
      continue;
    }
    Ok.push_back(std::move(W));
  }
  std::stable_sort(Ok.begin(), Ok.end(), [](const WhatIf &A, const WhatIf &B) {
    return A.Result.Predicted < B.Result.Predicted;
  });
  // What-ifs that predict the same time to the nanosecond, with a gain, are
  // one change seen twice (the optimizer's kernels, and its phase whose CPU
  // calls are off the critical path): one row, naming the other.
  std::vector<WhatIf> Merged;
  for (WhatIf &W : Ok) {
    if (!Merged.empty() &&
        Merged.back().Result.Predicted == W.Result.Predicted &&
        W.Result.Predicted < W.Result.BaselineSteady) {
      Merged.back().What += " (the same: " + W.What + ")";
      continue;
    }
    Merged.push_back(std::move(W));
  }
  Ok = std::move(Merged);
  if (Ok.size() > Opt.Top)
    Ok.resize(Opt.Top);
  const graph::Iteration &It = G->Iterations[Chosen->front()];
  int64_t BaseNs = Ok.empty() ? 0 : Ok.front().Result.BaselineSteady;
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

//===- Opportunities.cpp - Ranked one-line what-ifs -----------------------===//

#include "whatif/Opportunities.h"

#include "compiler/Compiler.h"
#include "graph/KernelClass.h"
#include "support/Diagnostics.h"
#include "support/Parallel.h"
#include "support/Progress.h"
#include "trace/TraceReader.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

using namespace dd;
using namespace dd::whatif;

namespace {

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
} // namespace

std::vector<WhatIf> dd::whatif::candidates(const graph::Graph &G, size_t It,
                                           double F) {
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

Opportunities
dd::whatif::rankOpportunities(const Baseline &B, double Factor, size_t Top,
                              const std::vector<std::string> &StdlibDirs) {
  Opportunities Out;
  const graph::Graph &G = *B.G;
  std::vector<WhatIf> All = candidates(G, B.Chosen.front(), Factor);
  {
    PhaseTimer Timer("what-ifs");
    Progress Bar(fmt::format("{} what-ifs", All.size()));
    std::atomic<size_t> Done{0};
    parallelFor(All.size(), trace::defaultLoadThreads(), [&](size_t I) {
      WhatIf &W = All[I];
      SourceManager SM;
      DiagEngine Diags;
      compiler::CompileOptions CO;
      CO.StdlibDirs = StdlibDirs;
      auto M = compiler::compileSource("what-if.dd", W.Model, CO, SM, Diags);
      if (!M) {
        W.Error = renderDiagnostics(SM, Diags);
        return;
      }
      graph::Graph Copy = G;
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
      Out.Warnings.push_back(
          {B.TracePath, "what-if \"" + W.Model + "\" failed: " + W.Error});
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
  if (Ok.size() > Top)
    Ok.resize(Top);
  Out.BaselineNs = Ok.empty() ? 0 : Ok.front().Result.BaselineSteady;
  Out.Ranked = std::move(Ok);
  return Out;
}

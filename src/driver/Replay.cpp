//===- Replay.cpp - ddscript replay ---------------------------------------===//

#include "whatif/Replay.h"
#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Outputs.h"
#include "driver/Session.h"
#include "sim/CriticalPath.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

using namespace dd;
using namespace dd::driver;

namespace {

std::string shortName(std::string_view S) {
  return S.size() <= 60 ? std::string(S) : std::string(S.substr(0, 57)) + "...";
}

using IterationReport = whatif::IterationReplay;

void printText(const std::string &Path, const graph::Graph &G,
               const graph::BuildStats &Stats,
               const std::vector<IterationReport> &Reports, size_t Default) {
  std::string Out;
  Out += fmt::format("trace      {}\n", Path);
  if (Reports.size() == 1) {
    const IterationReport &R = Reports[0];
    size_t Index = R.Index;
    Out +=
        fmt::format("iteration  {} ({} of {}{})\n", G.Iterations[Index].Label,
                    G.iterationOrdinal(Index), G.traceIterationCount(),
                    Index == Default ? ", steady state" : "");
    Out += fmt::format("measured   {}\n", formatDuration(R.Measured));
    Out += fmt::format("replayed   {}   error {}\n", formatDuration(R.Replayed),
                       formatPercent(R.error(), true));
    Out += fmt::format(
        "GPU busy   {} measured, {} replayed ({} of the "
        "iteration)\n",
        formatDuration(R.MeasuredBusy), formatDuration(R.ReplayedBusy),
        formatPercent(R.Replayed ? double(R.ReplayedBusy) / double(R.Replayed)
                                 : 0.0));
    Out += boundByLine(G, R.Path);
    Out += fmt::format("\ncritical path  {}\n", formatDuration(R.Path.Length));
    Out += renderPathShares(G, R.Path);
    Out += longestTasksLines(G, R.Path);
    auto Phases = sim::sharesByPhase(G, R.Path);
    if (!Phases.empty()) {
      Out += "  by phase (running time on the path):";
      for (const auto &S : Phases)
        Out += fmt::format(" {} {},", S.Label, formatDuration(S.Time));
      Out.back() = '\n';
    }
    auto Layers = sim::sharesByLayer(G, R.Path);
    if (!Layers.empty()) {
      Out += "  by layer (running time on the path):";
      size_t N = 0;
      for (const auto &S : Layers) {
        if (++N > 6)
          break;
        Out += fmt::format(" {} {},", S.Label, formatDuration(S.Time));
      }
      Out.back() = '\n';
    }
  } else {
    Table T;
    T.row({"iteration", "measured", "replayed", "error"});
    T.alignRight(1);
    T.alignRight(2);
    T.alignRight(3);
    double SumAbs = 0;
    for (const IterationReport &R : Reports) {
      T.row({G.Iterations[R.Index].Label, formatDuration(R.Measured),
             formatDuration(R.Replayed), formatPercent(R.error(), true)});
      SumAbs += std::fabs(R.error());
    }
    Out += T.render("");
    Out += fmt::format("mean |error| {} over {} iterations\n",
                       formatPercent(SumAbs / double(Reports.size())),
                       Reports.size());
  }
  Out += fmt::format("\n");
  if (G.Span.TraceIterations)
    Out += fmt::format(
        "graph      iterations {} to {} of {} ({} to {}): the reported ones "
        "and one on either side\n           (--iteration all builds the "
        "graph of every iteration)\n",
        G.iterationOrdinal(0), G.iterationOrdinal(G.Iterations.size() - 1),
        G.traceIterationCount(), G.Iterations.front().Label,
        G.Iterations.back().Label);
  Out += fmt::format(
      "model      {} tasks ({} GPU), {} CPU containers; edges: launch {}, "
      "sync {}, queue-full {}, event-wait {}, wake {}, fwd-bwd {}\n",
      formatCount(Stats.CpuLeaves + Stats.GpuTasks),
      formatCount(Stats.GpuTasks), formatCount(Stats.Containers),
      formatCount(Stats.EdgesByKind[unsigned(graph::EdgeKind::Launch)]),
      formatCount(Stats.EdgesByKind[unsigned(graph::EdgeKind::Sync)]),
      formatCount(Stats.EdgesByKind[unsigned(graph::EdgeKind::QueueFull)]),
      formatCount(Stats.EdgesByKind[unsigned(graph::EdgeKind::EventWait)]),
      formatCount(Stats.EdgesByKind[unsigned(graph::EdgeKind::Wake)]),
      formatCount(Stats.EdgesByKind[unsigned(graph::EdgeKind::FwdBwd)]));
  Out += fmt::format(
      "           launch queue depth {} ({}); typical launch latency {}, "
      "stream gap {}, wake-up {}\n",
      Stats.QueueCapacity,
      Stats.QueueCapacityMeasured
          ? fmt::format("measured from {} blocked launches",
                        Stats.QueueBlockedCalls)
          : fmt::format("assumed: no launch blocked in {}",
                        G.Span.TraceIterations ? "the iterations read"
                                               : "this trace"),
      formatDuration(Stats.TypicalLaunchLatency),
      formatDuration(Stats.TypicalStreamGap),
      formatDuration(Stats.TypicalWake));
  std::string Dropped;
  for (unsigned K = 0; K < graph::NumEdgeKinds; ++K)
    if (Stats.DroppedByKind[K])
      Dropped += fmt::format("{}{} {}", Dropped.empty() ? "" : ", ",
                             Stats.DroppedByKind[K],
                             graph::edgeKindName(graph::EdgeKind(K)));
  if (Stats.GpuWithoutLauncher || Stats.OverlappingLeaves ||
      Stats.ClampedDelays)
    Out += fmt::format("           trace quirks: {} GPU ops without a traced "
                       "launch{}{}, {} overlapping CPU calls, {} dependencies "
                       "the times contradict by under 2 us\n",
                       Stats.GpuWithoutLauncher,
                       G.Span.TraceIterations
                           ? " in the iterations read (work queued before "
                             "them counts here)"
                           : "",
                       Stats.GpuQueuedBefore
                           ? fmt::format(" ({} queued before the first traced "
                                         "call: they run in stream order, "
                                         "and syncs wait for them)",
                                         Stats.GpuQueuedBefore)
                           : "",
                       Stats.OverlappingLeaves, Stats.ClampedDelays);
  if (Stats.OverlappingGpu)
    Out +=
        fmt::format("           {} GPU ops start before the one before "
                    "them on their stream ends (by up to {}); the replay "
                    "runs a stream's work one at a time\n",
                    Stats.OverlappingGpu, formatDuration(Stats.MaxGpuOverlap));
  if (!Dropped.empty())
    Out += fmt::format("           inferred dependencies the times disprove "
                       "(dropped): {}\n",
                       Dropped);
  writeOut(Out);
}

void printJson(const graph::Graph &G,
               const std::vector<IterationReport> &Reports) {
  // One JSON object per line, one line per iteration.
  for (const IterationReport &R : Reports) {
    writeJson([&](JsonWriter &W) {
      W.beginObject();
      W.field("iteration", G.Iterations[R.Index].Number);
      W.field("label", G.Iterations[R.Index].Label);
      W.field("measured_ns", R.Measured);
      W.field("replayed_ns", R.Replayed);
      W.field("error", R.error());
      W.field("measured_gpu_busy_ns", R.MeasuredBusy);
      W.field("replayed_gpu_busy_ns", R.ReplayedBusy);
      W.field("critical_path_ns", R.Path.Length);
      // Where the graph lies among the trace's iterations (whatif/Focus.h).
      W.field("graph_first_iteration", G.iterationOrdinal(0));
      W.field("graph_iterations", G.Iterations.size());
      W.field("trace_iterations", G.traceIterationCount());
      auto Shares = [&](const char *Key, const std::vector<sim::PathShare> &V) {
        W.key(Key).beginArray();
        for (const auto &S : V)
          W.beginObject()
              .field("what", S.Label)
              .field("ns", S.Time)
              .endObject();
        W.endArray();
      };
      Shares("critical_path", sim::sharesByActivity(G, R.Path));
      Shares("bound_by", sim::sharesByBound(G, R.Path));
      writeLongestTasks(W, G, R.Path);
      Shares("critical_path_phases", sim::sharesByPhase(G, R.Path));
      Shares("critical_path_layers", sim::sharesByLayer(G, R.Path));
      W.endObject();
    });
  }
}

std::string describeBinding(const graph::Graph &G, uint32_t By) {
  switch (By) {
  case sim::BindOrigin:
    return "origin";
  case sim::BindResource:
    return "resource predecessor";
  case sim::BindOwn:
    return "own duration";
  case sim::BindDispatch:
    return "dispatch";
  case sim::BindCollective:
    return "the last rank to reach its collective";
  default: {
    const graph::Edge &E = G.Lowered[By];
    return fmt::format("{} edge from #{} {}", graph::edgeKindName(E.Kind),
                       E.Src, shortName(G.name(E.Src)));
  }
  }
}

void printDiverging(const graph::Graph &G, const sim::SimResult &R,
                    const std::vector<int64_t> &MStart,
                    const std::vector<int64_t> &MEnd, unsigned Limit) {
  std::vector<graph::TaskId> Order;
  for (graph::TaskId T = 0; T < G.numTasks(); ++T)
    if (G.isLeaf(T) && !G.isRemoved(T) && MStart[T] != graph::NoTime &&
        (R.Start[T] != MStart[T] || R.End[T] != MEnd[T]))
      Order.push_back(T);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](auto A, auto B) { return MStart[A] < MStart[B]; });
  std::string Out =
      fmt::format("{} tasks replay differently from the trace\n", Order.size());
  for (size_t I = 0; I < Order.size() && I < Limit; ++I) {
    graph::TaskId T = Order[I];
    Out += fmt::format(
        "  #{} {} on {}: start {} (trace {}), end {} (trace {}); start by "
        "{}; end by {}\n",
        T, shortName(G.name(T)), G.Resources[G.Res[T]].Name,
        R.Start[T] - MStart[T], MStart[T], R.End[T] - MEnd[T], MEnd[T],
        describeBinding(G, R.StartBy[T]), describeBinding(G, R.EndBy[T]));
  }
  writeErr(Out);
}

} // namespace

int dd::driver::runReplay(const TraceOptions &O) {
  // Every caller (the CLI, the Python module) goes through this check.
  if (!checkOutputPaths(O))
    return ExitBadInput;
  auto In = loadInputFor(O, /*Focus=*/true);
  if (!In)
    return ExitBadInput;
  const trace::Trace *T = &In->Trace;
  graph::BuildStats Stats;
  auto G = buildGraphFor(O, *In, &Stats);
  if (!G)
    return ExitBadInput;
  auto Chosen = chooseIterations(*G, O.Iteration);
  if (!Chosen) {
    reportError(O.TracePath, llvm::toString(Chosen.takeError()));
    return ExitBadInput;
  }
  std::optional<memory::MemoryModel> Mem;
  if (wantsOutputs(O))
    Mem = memoryForOutputs(*T, *G);
  auto Rp = whatif::replay(*G, *Chosen);
  if (!Rp) {
    reportError(O.TracePath, llvm::toString(Rp.takeError()));
    return ExitInternal;
  }
  const sim::SimResult *R = &Rp->R;
  const std::vector<int64_t> &MStart = Rp->MStart, &MEnd = Rp->MEnd;
  const std::vector<IterationReport> &Reports = Rp->Iterations;
  if (O.Diverging)
    printDiverging(*G, *R, MStart, MEnd, O.Diverging);
  if (O.Format == OutputFormat::Json)
    printJson(*G, Reports);
  else
    printText(O.TracePath, *G, Stats, Reports, defaultIteration(*G));
  if (!wantsOutputs(O))
    return ExitOk;
  report::RunData D;
  D.G = &*G;
  D.Command = "replay";
  D.Measured = measuredSchedule(*G, MStart, MEnd);
  D.Replayed = simulatedSchedule("replayed", *G, *R, *Chosen);
  D.Memory = Mem ? &*Mem : nullptr;
  return writeOutputs(O, *T, *Chosen, D);
}

//===- Inspect.cpp - ddscript inspect -------------------------------------===//

#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Session.h"
#include "whatif/Inspection.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

using namespace dd;
using namespace dd::driver;

namespace {

using Named = whatif::Named;
using Facts = whatif::Inspection;

void printText(const trace::Trace &T, const graph::Graph *G,
               const std::string &IterationNote, const Facts &F) {
  std::string Out;
  Out += fmt::format("trace       {}\n", T.Path);
  Out += fmt::format("format      {}, schema {}{}\n",
                     trace::sourceFormatName(T.Format), T.SchemaVersion,
                     T.BaseTimeNs ? ", times relative to baseTimeNanoseconds"
                                  : "");
  for (const auto &D : T.Devices)
    Out += fmt::format("device      GPU {}: {} ({} SMs, compute {}.{}, {})\n",
                       D.Id, D.Name, D.NumSms, D.ComputeMajor, D.ComputeMinor,
                       formatBytes(D.TotalGlobalMem));
  if (T.Distributed.Present)
    Out += fmt::format(
        "distributed rank {} of {}{}\n", T.Distributed.Rank,
        T.Distributed.WorldSize < 0 ? std::string("?")
                                    : std::to_string(T.Distributed.WorldSize),
        T.Distributed.Backend.empty() ? ""
                                      : " (" + T.Distributed.Backend + ")");
  Out += fmt::format("span        {}\n", formatDuration(F.Span));
  Out += "events     ";
  for (const auto &[K, N] : F.Kinds)
    Out += fmt::format(" {} {},", formatCount(N), K);
  Out.back() = '\n';
  if (!T.SkippedCategories.empty()) {
    Out += "not modelled";
    for (const auto &[K, N] : T.SkippedCategories)
      Out += fmt::format(" {} {},", formatCount(N), K);
    Out.back() = '\n';
  }
  if (!F.Memory.empty()) {
    // The records alone; `ddscript memory` places them on the replay.
    Out += "memory     ";
    for (const memory::RecordSummary &M : F.Memory) {
      Out += fmt::format(" {}: peak {} allocated{}{}, {} records;",
                         memory::poolLabel(M.DeviceType, M.DeviceId),
                         formatBytes(M.PeakAllocated),
                         M.HasTotals ? "" : " above the first record",
                         M.PeakReserved == trace::NoValue
                             ? ""
                             : ", " + formatBytes(M.PeakReserved) + " reserved",
                         formatCount(M.Records));
    }
    Out.back() = '\n';
  }

  if (G) {
    size_t Def = defaultIteration(*G);
    std::vector<int64_t> S, E;
    measuredTimes(*G, S, E);
    Out += fmt::format("\niterations  {} from {}; default {} (steady state)\n",
                       G->Iterations.size(), IterationNote,
                       G->Iterations[Def].Label);
    Table Tb;
    Tb.alignRight(1);
    for (size_t I = 0; I < G->Iterations.size(); ++I) {
      const auto &It = G->Iterations[I];
      if (G->Iterations.size() > 12 && I >= 5 && I + 5 < G->Iterations.size()) {
        if (I == 5)
          Tb.row({"...", ""});
        continue;
      }
      Tb.row({It.Label, formatDuration(measuredPointTime(*G, It.End, E) -
                                       measuredPointTime(*G, It.Begin, E))});
    }
    Out += Tb.render();
    Out += fmt::format(
        "GPU busy    {} of {} in the iterations ({})\n",
        formatDuration(F.GpuBusyInIterations), formatDuration(F.IterationsTime),
        formatPercent(F.IterationsTime ? double(F.GpuBusyInIterations) /
                                             double(F.IterationsTime)
                                       : 0.0));
  } else {
    Out += fmt::format("\niterations  none: {}\n", IterationNote);
  }

  Out += "\nthreads\n";
  Table Th;
  Th.alignRight(1);
  for (const Named &N : F.Threads)
    Th.row({N.Name, formatCount(N.Count) + " events"});
  Out += Th.render();
  Out += "streams\n";
  Table St;
  St.alignRight(1);
  St.alignRight(2);
  for (const Named &N : F.Streams)
    St.row({N.Name, formatCount(N.Count) + " events",
            formatDuration(N.Time) + " busy"});
  Out += St.render();

  int64_t KernelTotal = 0;
  for (trace::EventId X = 0; X < T.numEvents(); ++X)
    if (T.Kind[X] == trace::EventKind::Kernel)
      KernelTotal += T.Dur[X];
  if (!F.Kernels.empty()) {
    Out += "\ntop kernels by time\n";
    Table K;
    K.alignRight(0);
    K.alignRight(1);
    K.alignRight(2);
    for (const Named &N : F.Kernels)
      K.row({formatDuration(N.Time),
             formatPercent(KernelTotal ? double(N.Time) / double(KernelTotal)
                                       : 0.0),
             formatCount(N.Count) + "x", shorten(N.Name, 90)});
    Out += K.render();
  }
  if (!F.Classes.empty()) {
    Out +=
        G ? "\nkernel classes (GPU time of the graph's tasks; see `k.class`)\n"
          : "\nkernel classes (GPU time of the trace, by kernel names alone: "
            "no graph)\n";
    Table K;
    for (size_t C = 1; C < 4; ++C)
      K.alignRight(C);
    bool AnyFlops = false;
    for (int64_t T : F.ClassFlopsTime)
      AnyFlops |= T > 0;
    bool AnyMoved = false;
    for (int64_t T : F.ClassMovedTime)
      AnyMoved |= T > 0;
    for (size_t I = 0; I < F.Classes.size(); ++I) {
      const Named &N = F.Classes[I];
      std::vector<std::string> Row = {
          N.Name, formatDuration(N.Time),
          formatPercent(F.ClassTotal ? double(N.Time) / double(F.ClassTotal)
                                     : 0.0),
          formatCount(N.Count) + "x"};
      // Achieved TFLOP/s over the kernels whose FLOPs the shapes give.
      if (AnyFlops) {
        std::string Cell;
        if (F.ClassFlopsTime[I] > 0) {
          Cell = fmt::format(
              "{:.1f} TFLOP/s ({} of it sized",
              F.ClassFlops[I] / double(F.ClassFlopsTime[I]) / 1e3,
              formatPercent(double(F.ClassFlopsTime[I]) / double(N.Time)));
          if (F.ClassPeakFlops[I] > 0)
            Cell += fmt::format(
                "; {} of the {}'s peaks{}",
                formatPercent(F.ClassPeakShareFlops[I] / F.ClassPeakFlops[I]),
                F.PeakGpu,
                F.ClassPeakShareFlops[I] < F.ClassFlops[I]
                    ? ", where the names show the precision"
                    : "");
          Cell += ")";
        }
        Row.push_back(Cell);
      }
      // Achieved bandwidth over the kernels whose bytes the shapes give
      // (bytes moved at least: a lower bound on the traffic).
      if (AnyMoved) {
        std::string Cell;
        if (F.ClassMovedTime[I] > 0) {
          double GBs = F.ClassMoved[I] / double(F.ClassMovedTime[I]);
          Cell = fmt::format("{:.0f} GB/s", GBs);
          if (F.SpecBandwidth > 0)
            Cell +=
                fmt::format(" ({} of the {}'s)",
                            formatPercent(GBs / F.SpecBandwidth), F.PeakGpu);
        }
        Row.push_back(Cell);
      }
      K.row(Row);
    }
    Out += K.render();
  }
  if (G && !F.Layers.empty()) {
    std::vector<Named> L = F.Layers;
    std::stable_sort(L.begin(), L.end(), [](const Named &A, const Named &B) {
      return A.Time > B.Time;
    });
    Out += fmt::format("\nlayers      {} (top by GPU time)\n", L.size());
    Table Ly;
    Ly.alignRight(1);
    Ly.alignRight(2);
    for (size_t I = 0; I < L.size() && I < 10; ++I)
      Ly.row({L[I].Name, formatDuration(L[I].Time),
              formatCount(L[I].Count) + " GPU ops"});
    Out += Ly.render();
  }
  writeOut(Out);
}

void printJson(const trace::Trace &T, const graph::Graph *G,
               const std::string &IterationNote, const Facts &F) {
  writeJson([&](JsonWriter &W) {
    W.beginObject();
    W.field("trace", T.Path);
    W.field("format", trace::sourceFormatName(T.Format));
    W.field("schema_version", T.SchemaVersion);
    W.key("devices").beginArray();
    for (const auto &D : T.Devices)
      W.beginObject()
          .field("id", D.Id)
          .field("name", D.Name)
          .field("sms", D.NumSms)
          .field("memory_bytes", D.TotalGlobalMem)
          .endObject();
    W.endArray();
    if (T.Distributed.Present)
      W.key("distributed")
          .beginObject()
          .field("rank", T.Distributed.Rank)
          .field("world_size", T.Distributed.WorldSize)
          .field("backend", T.Distributed.Backend)
          .endObject();
    W.field("span_ns", F.Span);
    W.key("memory").beginArray();
    for (const memory::RecordSummary &M : F.Memory) {
      W.beginObject()
          .field("device", memory::poolLabel(M.DeviceType, M.DeviceId))
          .field("records", M.Records)
          .field("peak_allocated_bytes", M.PeakAllocated)
          .field("peak_relative", !M.HasTotals);
      if (M.PeakReserved == trace::NoValue)
        W.key("peak_reserved_bytes").null();
      else
        W.field("peak_reserved_bytes", M.PeakReserved);
      W.endObject();
    }
    W.endArray();
    W.key("events").beginObject();
    for (const auto &[K, N] : F.Kinds)
      W.field(K, N);
    W.endObject();
    W.key("iterations").beginArray();
    if (G) {
      std::vector<int64_t> S, E;
      measuredTimes(*G, S, E);
      for (const auto &It : G->Iterations)
        W.beginObject()
            .field("iteration", It.Number)
            .field("label", It.Label)
            .field("measured_ns", measuredPointTime(*G, It.End, E) -
                                      measuredPointTime(*G, It.Begin, E))
            .endObject();
    }
    W.endArray();
    W.field("iteration_source", IterationNote);
    if (G) {
      W.field("default_iteration", G->Iterations[defaultIteration(*G)].Number);
      W.field("gpu_busy_ns", F.GpuBusyInIterations);
      W.field("iterations_ns", F.IterationsTime);
    }
    auto List = [&](const char *Key, const std::vector<Named> &V,
                    const char *CountKey, const char *TimeKey) {
      W.key(Key).beginArray();
      for (const Named &N : V)
        W.beginObject()
            .field("name", N.Name)
            .field(CountKey, N.Count)
            .field(TimeKey, N.Time)
            .endObject();
      W.endArray();
    };
    List("threads", F.Threads, "events", "busy_ns");
    List("streams", F.Streams, "events", "busy_ns");
    List("top_kernels", F.Kernels, "count", "total_ns");
    List("layers", F.Layers, "gpu_ops", "gpu_ns");
    W.key("kernel_classes").beginArray();
    for (size_t I = 0; I < F.Classes.size(); ++I) {
      W.beginObject()
          .field("name", F.Classes[I].Name)
          .field("gpu_ops", F.Classes[I].Count)
          .field("gpu_ns", F.Classes[I].Time)
          .field("flops", F.ClassFlops[I])
          .field("flops_gpu_ns", F.ClassFlopsTime[I])
          .field("bytes_moved", F.ClassMoved[I])
          .field("bytes_moved_gpu_ns", F.ClassMovedTime[I]);
      if (F.ClassPeakFlops[I] > 0)
        W.field("peak_share", F.ClassPeakShareFlops[I] / F.ClassPeakFlops[I]);
      W.endObject();
    }
    W.endArray();
    W.endObject();
  });
}

} // namespace

int dd::driver::runInspect(const TraceOptions &O) {
  auto In = loadInputFor(O);
  if (!In)
    return ExitBadInput;
  const trace::Trace *T = &In->Trace;
  // Without GPU work there is nothing ddscript can model.
  if (!graph::hasGpuWork(*T)) {
    reportError(O.TracePath, graph::noGpuWorkMessage(*T));
    return ExitBadInput;
  }
  graph::BuildStats Stats;
  auto G = buildGraphTimed(*In, &Stats);
  std::string Note;
  std::optional<graph::Graph> Model;
  if (G) {
    Model = std::move(*G);
    Note = Stats.IterationSource;
  } else {
    Note = llvm::toString(G.takeError());
  }
  Facts F = whatif::inspect(*T, Model ? &*Model : nullptr);
  if (O.Format == OutputFormat::Json)
    printJson(*T, Model ? &*Model : nullptr, Note, F);
  else
    printText(*T, Model ? &*Model : nullptr, Note, F);
  return ExitOk;
}

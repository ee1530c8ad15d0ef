//===- Inspection.cpp - What a trace holds --------------------------------===//

#include "whatif/Inspection.h"

#include "graph/KernelClass.h"
#include "ops/Gpus.h"
#include "whatif/Iterations.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::whatif;

namespace {

/// GPU time by kernel class, and the FLOPs recorded shapes give with the
/// time of the kernels that carry them.
struct ClassTally {
  std::vector<Named> C{graph::NumKernelClasses};
  std::vector<double> Flops = std::vector<double>(graph::NumKernelClasses, 0);
  std::vector<int64_t> FlopsTime =
      std::vector<int64_t>(graph::NumKernelClasses, 0);
  std::vector<double> PeakFlops =
      std::vector<double>(graph::NumKernelClasses, 0);
  std::vector<double> PeakShareFlops =
      std::vector<double>(graph::NumKernelClasses, 0);
  std::vector<double> Moved = std::vector<double>(graph::NumKernelClasses, 0);
  std::vector<int64_t> MovedTime =
      std::vector<int64_t>(graph::NumKernelClasses, 0);
  int64_t Total = 0;
  /// \p Fl: the work's FLOPs, NaN when unknown; \p PeakTflops: the GPU's
  /// dense peak for its precision, 0 when either is unknown.
  void add(graph::KernelClass K, int64_t Time, double Fl, double PeakTflops,
           double Bytes = std::nan("")) {
    unsigned I = static_cast<unsigned>(K);
    if (!std::isnan(Bytes)) {
      Moved[I] += Bytes;
      MovedTime[I] += Time;
    }
    ++C[I].Count;
    C[I].Time += Time;
    Total += Time;
    if (!std::isnan(Fl)) {
      Flops[I] += Fl;
      FlopsTime[I] += Time;
      if (PeakTflops > 0) {
        // TFLOP/s = 1e3 FLOP per ns.
        PeakFlops[I] += double(Time) * PeakTflops * 1e3;
        PeakShareFlops[I] += Fl;
      }
    }
  }
  /// The classes with any work, in the table's order, into \p F.
  void into(Inspection &F) {
    F.ClassTotal = Total;
    for (unsigned I = 0; I < graph::NumKernelClasses; ++I)
      if (C[I].Count) {
        C[I].Name = std::string(
            graph::kernelClassName(static_cast<graph::KernelClass>(I)));
        F.Classes.push_back(std::move(C[I]));
        F.ClassFlops.push_back(Flops[I]);
        F.ClassFlopsTime.push_back(FlopsTime[I]);
        F.ClassPeakFlops.push_back(PeakFlops[I]);
        F.ClassPeakShareFlops.push_back(PeakShareFlops[I]);
        F.ClassMoved.push_back(Moved[I]);
        F.ClassMovedTime.push_back(MovedTime[I]);
      }
  }
};

} // namespace

Inspection dd::whatif::inspect(const trace::Trace &T, const graph::Graph *G) {
  Inspection F;
  std::vector<uint64_t> PerKind(trace::NumEventKinds, 0);
  llvm::DenseMap<trace::TrackId, uint64_t> PerTrack;
  llvm::DenseMap<trace::TrackId, int64_t> BusyTrack;
  llvm::StringMap<Named> Kern;
  int64_t Lo = INT64_MAX, Hi = INT64_MIN;
  for (trace::EventId E = 0; E < T.numEvents(); ++E) {
    ++PerKind[static_cast<unsigned>(T.Kind[E])];
    ++PerTrack[T.TrackOf[E]];
    Lo = std::min(Lo, T.Start[E]);
    Hi = std::max(Hi, T.end(E));
    if (trace::isGpuWork(T.Kind[E])) {
      BusyTrack[T.TrackOf[E]] += T.Dur[E];
      if (T.Kind[E] == trace::EventKind::Kernel) {
        Named &K = Kern[T.name(E)];
        ++K.Count;
        K.Time += T.Dur[E];
      }
    }
  }
  F.Span = Hi > Lo ? Hi - Lo : 0;
  for (unsigned K = 0; K < trace::NumEventKinds; ++K)
    if (PerKind[K])
      F.Kinds.emplace_back(trace::eventKindName(trace::EventKind(K)),
                           PerKind[K]);
  if (!T.Memory.empty())
    F.Kinds.emplace_back("[memory]", T.Memory.size());
  F.Memory = memory::summarizeRecords(T);
  // Devices first, the host last.
  std::stable_sort(
      F.Memory.begin(), F.Memory.end(),
      [](const memory::RecordSummary &A, const memory::RecordSummary &B) {
        return (A.DeviceType != 0) > (B.DeviceType != 0);
      });
  for (trace::TrackId Tr = 0; Tr < T.Tracks.size(); ++Tr) {
    auto It = PerTrack.find(Tr);
    if (It == PerTrack.end())
      continue;
    Named N{T.trackLabel(Tr), It->second, BusyTrack.lookup(Tr)};
    (T.Tracks[Tr].IsDevice ? F.Streams : F.Threads).push_back(N);
  }
  for (auto &E : Kern) {
    Named N = E.getValue();
    N.Name = E.getKey().str();
    F.Kernels.push_back(N);
  }
  std::sort(F.Kernels.begin(), F.Kernels.end(),
            [](const Named &A, const Named &B) {
              return A.Time != B.Time ? A.Time > B.Time : A.Name < B.Name;
            });
  if (F.Kernels.size() > 10)
    F.Kernels.resize(10);

  if (G) {
    std::vector<int64_t> S, E;
    measuredTimes(*G, S, E);
    int64_t Begin = measuredPointTime(*G, G->Iterations.front().Begin, E);
    int64_t End = measuredPointTime(*G, G->Iterations.back().End, E);
    F.IterationsTime = End - Begin;
    F.GpuBusyInIterations = gpuBusy(*G, S, E, Begin, End);
    std::vector<Named> L(G->Layers.size());
    for (size_t I = 0; I < L.size(); ++I)
      L[I].Name = G->Layers[I].Name;
    for (graph::TaskId X = 0; X < G->numTasks(); ++X) {
      if (G->LayerOf[X] == graph::NoLayer || !G->isGpu(X))
        continue;
      ++L[G->LayerOf[X]].Count;
      L[G->LayerOf[X]].Time += G->MeasuredDur[X];
    }
    F.Layers = std::move(L);
    ClassTally Tally;
    std::vector<double> Flops = graph::taskFlops(*G);
    std::vector<double> Moved = graph::taskMovedBytes(*G);
    const ops::GpuSpec *Spec =
        T.Devices.empty() ? nullptr : ops::gpuForDevice(T.Devices.front().Name);
    if (Spec) {
      F.PeakGpu = Spec->Key;
      F.SpecBandwidth = Spec->BandwidthGBs;
    }
    // The GPU's dense peak for a kernel's precision (its fp32 one where it
    // has no path for it); 0 where the name shows no precision.
    auto Peak = [&](graph::TaskId X) {
      std::string_view P = graph::kernelPrecision(G->name(X));
      return !Spec || P.empty() ? 0.0 : ops::peakTflops(*Spec, P);
    };
    for (graph::TaskId X = 0; X < G->numTasks(); ++X)
      if (G->isGpu(X) && G->MeasuredDur[X] != graph::NoTime)
        Tally.add(graph::kernelClassOf(*G, X), G->MeasuredDur[X], Flops[X],
                  std::isnan(Flops[X]) ? 0.0 : Peak(X), Moved[X]);
    Tally.into(F);
  } else {
    // No graph: the trace's GPU work by its names alone.
    ClassTally Tally;
    for (trace::EventId E = 0; E < T.numEvents(); ++E) {
      if (!trace::isGpuWork(T.Kind[E]))
        continue;
      graph::TaskKind K =
          T.Kind[E] == trace::EventKind::Memcpy   ? graph::TaskKind::Memcpy
          : T.Kind[E] == trace::EventKind::Memset ? graph::TaskKind::Memset
                                                  : graph::TaskKind::Kernel;
      Tally.add(graph::classifyKernel(T.name(E), K, "", false), T.Dur[E],
                std::nan(""), 0.0);
    }
    Tally.into(F);
  }
  return F;
}

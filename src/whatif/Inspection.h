//===- Inspection.h - What a trace holds ------------------------*- C++ -*-===//
//
// What `ddscript inspect` reports of a trace, as values: its events by
// kind, threads and streams with their busy time, the top kernels, GPU
// time by kernel class with the work recorded shapes give and the share of
// the GPU's peak it reached, GPU time by layer, memory records by device,
// and how busy the GPU was over the iterations.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_INSPECTION_H
#define DD_WHATIF_INSPECTION_H

#include "graph/Graph.h"
#include "memory/MemoryModel.h"
#include "trace/Trace.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dd::whatif {

/// A thread, stream, kernel, class or layer: how many and how long.
struct Named {
  std::string Name;
  uint64_t Count = 0;
  int64_t Time = 0;
};

/// What a trace holds (inspect's facts).
struct Inspection {
  std::vector<std::pair<std::string, uint64_t>> Kinds;
  std::vector<Named> Threads, Streams, Kernels, Layers;
  /// GPU time of the graph's tasks by kernel class (graph/KernelClass.h),
  /// in the classes' order, those with none left out.
  std::vector<Named> Classes;
  int64_t ClassTotal = 0;
  /// Per class (as Classes): the FLOPs known from recorded shapes
  /// (k.flops) and the GPU time of the kernels that carry them.
  std::vector<double> ClassFlops;
  std::vector<int64_t> ClassFlopsTime;
  /// Per class: the FLOPs the sized kernels' time allowed at the GPU's
  /// peaks for their precision (the catalogue's); 0 where the GPU is not
  /// in it; and the FLOPs of those kernels (ClassPeakShareFlops /
  /// ClassPeakFlops is the share of peak achieved). Kernels whose name
  /// shows no precision are left out of both.
  std::vector<double> ClassPeakFlops, ClassPeakShareFlops;
  /// Per class: the bytes moved known from recorded shapes (k.bytes_moved)
  /// and the GPU time of the kernels that carry them.
  std::vector<double> ClassMoved;
  std::vector<int64_t> ClassMovedTime;
  double SpecBandwidth = 0; ///< the catalogue's, GB/s; 0 when none
  std::string PeakGpu;      ///< the catalogue entry, "" when none
  std::vector<memory::RecordSummary> Memory;
  int64_t Span = 0;
  int64_t GpuBusyInIterations = -1, IterationsTime = 0;
};

/// The facts of \p T; with its graph \p G (null where it could not be
/// built), by iteration, class and layer from the graph, else from the
/// trace's GPU work by name alone.
Inspection inspect(const trace::Trace &T, const graph::Graph *G);

} // namespace dd::whatif

#endif

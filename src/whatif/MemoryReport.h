//===- MemoryReport.h - Peak device memory of a replay ----------*- C++ -*-===//
//
// What `ddscript memory` reports, as values: per device, the peak of an
// iteration (or of the whole replayed window), measured from the trace's
// memory records and replayed from the memory model placed on the replay of
// the unchanged graph; where it happens, what is live there by class and by
// block; each iteration's peak and allocation pattern against the
// reference iteration's; the device's capacity.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_MEMORYREPORT_H
#define DD_WHATIF_MEMORYREPORT_H

#include "memory/MemoryModel.h"
#include "sim/Simulator.h"
#include "trace/Trace.h"
#include "whatif/Problem.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

/// Where an event of a curve happens: the allocation or free's task.
struct Where {
  bool Inside = false; ///< else the level the span opens with
  std::string Op, Layer = "-", Phase = "-", Iteration = "-";
  int64_t Time = 0;
};

/// How an iteration's allocations compare with the reference iteration's.
struct Pattern {
  uint64_t Allocs = 0;
  int64_t Bytes = 0;
  std::string Verdict; ///< "reference", "identical", "same sizes, ...", ...
  bool Same = false;
};

struct IterationRow {
  size_t Index;
  memory::Peak Measured, Replayed;
  Pattern Pat;
};

/// A block live at the peak, and when it was allocated and freed.
struct TopBlock {
  memory::BlockId B;
  std::string Allocated, Freed;
};

/// Everything reported for one device pool.
struct DeviceReport {
  memory::PoolId P;
  const memory::Pool *Pl;
  std::string Name;
  int64_t Capacity = 0;
  memory::Peak Measured, Replayed;
  Where At;
  std::vector<int64_t> ByClass;
  std::vector<TopBlock> Top;
  std::vector<IterationRow> Iterations;
  bool Periodic = true;
  uint64_t SteadyAllocsMin = 0, SteadyAllocsMax = 0;
  int64_t SteadyPeakMin = 0, SteadyPeakMax = 0;
  double error() const {
    return Measured.Bytes ? double(Replayed.Bytes - Measured.Bytes) /
                                double(Measured.Bytes)
                          : 0.0;
  }
};

/// The span reported: the whole replayed window, or one iteration.
struct Span {
  bool Whole = true;
  size_t Iteration = 0;
  int64_t MeasuredFrom = INT64_MIN, MeasuredTo = INT64_MAX;
  int64_t ReplayedFrom = INT64_MIN, ReplayedTo = INT64_MAX;
  std::string Label;
};

/// The memory of a trace's graph: the model, the span, each device's
/// report; or what stopped it (no device records in the replayed
/// iterations, an iteration it does not have, a graph that cannot be
/// simulated: Internal).
struct MemoryReport {
  std::optional<memory::MemoryModel> M;
  Span S;
  std::vector<DeviceReport> Devices;
  std::optional<Problem> Failed;
};

/// The report of \p T's graph \p G (trace \p Path) for \p Iteration ("":
/// the steady-state one, a number, or "all": the whole window), listing
/// the \p Top largest blocks live at each peak.
MemoryReport reportMemory(const trace::Trace &T, const graph::Graph &G,
                          const std::string &Path, const std::string &Iteration,
                          unsigned Top);

} // namespace dd::whatif

#endif

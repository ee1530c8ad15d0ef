//===- ReportImpl.h - Shared by the report's outputs ------------*- C++ -*-===//
//
// Private to src/report: windows, resources in display order, lanes that
// nest, critical paths and memory curves of a schedule, number formats.
//
//===----------------------------------------------------------------------===//
#ifndef DD_REPORT_REPORTIMPL_H
#define DD_REPORT_REPORTIMPL_H

#include "graph/KernelClass.h"
#include "report/Report.h"
#include "sim/CriticalPath.h"

#include "llvm/ADT/BitVector.h"

#include <string>
#include <string_view>
#include <vector>

namespace dd::report::detail {

using graph::Graph;
using graph::ResourceId;
using graph::TaskId;

/// The reported iterations on \p S: from the first one's begin to the last
/// one's end.
Span window(const RunData &D, const Schedule &S);
/// "ProfilerStep#9", or "ProfilerStep#5 to ProfilerStep#10".
std::string windowLabel(const RunData &D);

/// Whether task \p T is on \p S. Every access to a schedule's times goes
/// through this (or overlaps): a schedule may be shorter than the graph.
inline bool present(const Schedule &S, TaskId T) {
  return T < S.Start.size() && S.Start[T] != graph::NoTime &&
         S.End[T] != graph::NoTime;
}
/// Whether task \p T is on \p S and overlaps \p W (a zero-length task: lies
/// in it).
bool overlaps(const Schedule &S, TaskId T, Span W);
/// The tasks the outputs show of \p S: those of the reported iterations and
/// any other that overlaps the window \p W (a prediction can push an
/// iteration's work past its end; the trace has work outside iterations).
llvm::BitVector shownTasks(const RunData &D, const Schedule &S, Span W);
/// The resource a task runs on; a container's is its leaves'.
ResourceId resourceOf(const Graph &G, TaskId T);
/// How deep \p T is nested in containers (0: outermost).
uint32_t depthOf(const Graph &G, TaskId T);
/// Resources in display order: CPU threads, GPU streams by device, channels.
std::vector<ResourceId> displayOrder(const Graph &G);

/// An interval to place on a row. Parent is the index of the item it should
/// nest in (~0u: none); its lane is tried first.
struct LaneItem {
  int64_t Begin, End;
  uint32_t Depth;
  uint32_t Parent;
};
/// Places items on lanes so that the items of each lane nest perfectly
/// (Chrome's X events must): returns each item's lane and sets \p NumLanes.
/// Lane 0 gets everything that nests; overlapping items go to further lanes.
std::vector<uint32_t> assignLanes(const std::vector<LaneItem> &Items,
                                  uint32_t &NumLanes);
/// Indices of \p Items in the order they nest: by begin, longer first,
/// outer first.
std::vector<uint32_t> nestingOrder(const std::vector<LaneItem> &Items);

/// The tasks that run on any of \p Paths.
llvm::BitVector criticalTasks(const Graph &G,
                              const std::vector<sim::CriticalPath> &Paths);
/// Shares summed over several paths, largest first, as the sim's are.
std::vector<sim::PathShare>
sumShares(const std::vector<std::vector<sim::PathShare>> &Lists);

/// The memory curve of each pool on \p S: the records' own for the measured
/// times, else the model placed on \p S. Empty without a model.
std::vector<memory::Curve> memoryCurves(const RunData &D, const Schedule &S);
/// \p C over \p W as steps (time, level): the level W opens with (before
/// any event at its start); for each time with events, the highest level
/// reached at that time when it is above the level after them (allocations
/// and frees at one instant), then that level; the level W ends with. The
/// highest level is memory::peakIn's.
std::vector<std::pair<int64_t, int64_t>> curveSteps(const memory::Curve &C,
                                                    Span W);
/// Device memory of \p DeviceId, 0 when unknown.
int64_t capacityOf(const RunData &D, int32_t DeviceId);

/// Union of GPU work inside \p W on \p S.
int64_t gpuBusy(const Graph &G, const Schedule &S, Span W);

/// The kernels of the steady-state iteration with work from recorded shapes,
/// against the roofs of the trace's GPU (Roofline.cpp).
struct Roofline {
  static constexpr size_t MaxPoints = 2000;
  struct Point {
    double Intensity; ///< FLOPs per byte moved
    double Tflops;    ///< achieved over the traced duration
    int64_t Ns;       ///< traced duration
    graph::KernelClass Class;
    TaskId Task;
  };
  struct ClassRow {
    uint64_t Kernels = 0, Sized = 0; ///< all, and with work from shapes
    int64_t Ns = 0, SizedNs = 0;
    double Flops = 0, Bytes = 0; ///< of the sized kernels
  };
  std::string Iteration; ///< its label; empty: no steady-state iteration
  /// The longest sized kernels, at most MaxPoints, longest first.
  std::vector<Point> Points;
  size_t SizedKernels = 0; ///< all sized kernels (Points may hold fewer)
  int64_t SizedNs = 0, KernelNs = 0;
  std::vector<ClassRow> Classes; ///< by graph::KernelClass
  /// The catalogue's entry for the trace's GPU: "" when it has none.
  std::string Gpu;
  double BandwidthGBs = 0;
  std::vector<std::pair<std::string, double>> Peaks; ///< name, TFLOP/s
};
/// Empty (no Iteration) where the page shows no roofline: opportunities,
/// compare and sweeps, or no steady-state iteration.
Roofline roofline(const RunData &D);

/// The JSON object the HTML report's script draws from (PageData.cpp), with
/// the page's roofline \p R.
std::string pageData(const RunData &D, const Roofline &R);

/// Kineto's category for a task kind ("cpu_op", "kernel", ...).
const char *chromeCategory(graph::TaskKind K);
/// "2.121x".
std::string formatSpeedup(int64_t Before, int64_t After);
/// Escapes text for HTML element content and attribute values.
std::string htmlEscape(std::string_view S);
/// Makes JSON safe inside a <script> element (every "<" escaped).
std::string scriptSafe(std::string Json);

} // namespace dd::report::detail

#endif

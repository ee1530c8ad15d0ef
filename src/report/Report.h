//===- Report.h - The timeline and the HTML report of a run -----*- C++ -*-===//
//
// What `replay` and `run` show besides their text: a Chrome-trace timeline
// (Perfetto, chrome://tracing) with the measured iterations and the
// prediction as two processes side by side, and one self-contained HTML page
// with the numbers, a before/after timeline per resource, per-phase and
// per-layer bars, the memory curve, the critical path and, for sweeps,
// predicted time against the swept parameter; `opportunities` and `compare`
// write the page too, with their ranked what-ifs or their two traces side
// by side. See docs/report.md.
//
// The driver fills a RunData (the graph, the measured, replayed and predicted
// task times, the memory model) and calls renderTimeline or renderHtml; both
// return the file's text, the same bytes for the same input.
//
//===----------------------------------------------------------------------===//
#ifndef DD_REPORT_REPORT_H
#define DD_REPORT_REPORT_H

#include "graph/Graph.h"
#include "memory/MemoryModel.h"
#include "sim/CriticalPath.h"
#include "sim/Simulator.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dd::report {

/// An interval on a schedule's time axis: ns from the graph's origin.
struct Span {
  int64_t Begin = 0, End = 0;
  int64_t length() const { return End - Begin; }
};

/// Where a run's tasks were, or would be, in time: the trace's own times, or
/// a simulation of the graph.
struct Schedule {
  std::string Label; ///< "measured", "replayed", "predicted"
  /// Per task, ns from the graph's origin; graph::NoTime where the task is
  /// not on this schedule (inserted tasks in the trace, removed ones in a
  /// prediction). May be shorter than the graph (a replay simulated before
  /// the model inserted tasks): the tasks past its end are not on it.
  llvm::ArrayRef<int64_t> Start, End;
  bool Simulated = false;       ///< false for the measured times
  std::vector<Span> Iterations; ///< per graph iteration
  /// Per reported iteration, in RunData::Reported's order: its critical path
  /// and the path's time by activity (sim::sharesByActivity); empty for the
  /// measured times. Taken when the schedule is simulated: a model changes
  /// the graph (and its lowered edges) after the replay.
  std::vector<sim::CriticalPath> Paths;
  std::vector<std::vector<sim::PathShare>> PathShares;
};

/// One value of a swept parameter: as the user wrote it, and as a number in
/// base units (ns, bytes, bytes/ns, plain) when it is one.
struct SweepValue {
  std::string Text;
  std::optional<double> Number;
};

/// One run of a sweep: the parameters' values and the predicted time.
struct SweepPoint {
  std::vector<SweepValue> Values; ///< one per Sweep::Params
  int64_t PredictedNs = 0;
  /// The predicted peak (-1: the trace has no memory records) and the
  /// device memory it is compared with (0: unknown).
  int64_t PeakBytes = -1, DeviceMemory = 0;
  bool outOfMemory() const {
    return PeakBytes >= 0 && DeviceMemory > 0 && PeakBytes > DeviceMemory;
  }
};

/// The results of a sweep. The plot puts the first parameter on the x axis
/// (numeric when all its values are numbers, else in the order given) and
/// draws one line per combination of the others.
struct Sweep {
  std::vector<std::string> Params;
  std::vector<SweepPoint> Points;
  int64_t BaselineNs = 0; ///< the replayed iteration, for reference
};

/// A job's iteration as `replay` of several traces reports it: the job's
/// span, each rank's, and the stragglers' what-ifs.
struct JobSummary {
  std::string Label;                  ///< the iteration ("ProfilerStep#10")
  int64_t Measured = 0, Replayed = 0; ///< first rank's begin to last's end
  /// A job's run with the profiler's cost taken out: the job replayed with
  /// it (what `replay` reports; Replayed is then the replay without it,
  /// which the speedup is against); -1 otherwise.
  int64_t ProfiledReplay = -1;
  /// A job's run: the job as the model changed it, and the replay, as
  /// steady states (the speedup compares them); Predicted -1 for a replay.
  int64_t Predicted = -1, ReplayedSteady = 0;
  struct RankRow {
    int32_t Rank = 0;
    int64_t Measured = 0, Replayed = 0;
    int64_t Late = 0;       ///< how late it arrived at the collectives, in all
    int64_t Predicted = -1; ///< a job's run: the rank's predicted time
    int64_t ReplayedSteady = 0;  ///< a job's run: the replay's steady state
    int64_t ProfiledReplay = -1; ///< as the job's
  };
  std::vector<RankRow> Ranks;
  /// False for a job's run, which does not rank stragglers.
  bool HasStragglers = true;
  struct Straggler {
    int32_t Rank = 0;
    int64_t Late = 0, JobWithout = 0;
    double WorkScale = 1; ///< the factor its work needed; -1: no gain at any
  };
  std::vector<Straggler> Stragglers;
};

/// The what-ifs `opportunities` ranked: each a one-line model run on a copy
/// of the replayed graph, the fastest first, as the command lists them.
struct OpportunityList {
  int64_t BaselineNs = 0; ///< the replay's steady state
  double Factor = 2;      ///< --factor
  struct Entry {
    std::string What;  ///< "gemm work 2x faster"
    std::string Model; ///< its line of the language
    int64_t PredictedNs = 0, GainNs = 0;
  };
  std::vector<Entry> Entries;
};

/// What `compare` reports: the measured iterations of two traces of one
/// job, before and after a change, the model's prediction from the first
/// (with --model), and where the time went, row by row in the order and
/// groups of the command's text.
struct Comparison {
  struct Side {
    std::string Trace, Label; ///< the file; the iteration ("ProfilerStep#9")
    int64_t MeasuredNs = 0;
  };
  Side Before, After;
  /// The after run's iterations: min, median, max (the error is against
  /// the median); 0 where unknown.
  int64_t AfterMinNs = 0, AfterMedianNs = 0, AfterMaxNs = 0;
  std::string ModelPath;              ///< empty: a plain diff
  std::optional<int64_t> PredictedNs; ///< the model's steady state
  enum class RowKind {
    Sum,     ///< a group's total ("GPU work (sum)")
    Part,    ///< a part of the group above ("conv", "forward (CPU)")
    Heading, ///< a group without a total: no numbers
  };
  struct Row {
    RowKind Kind = RowKind::Part;
    std::string What; ///< as the command's JSON names it
    int64_t BeforeNs = 0, AfterNs = 0, PredictedNs = 0;
  };
  std::vector<Row> Rows;
};

/// Everything the outputs show about one `replay`, `run`, `opportunities`
/// or `compare`.
struct RunData {
  const graph::Graph *G = nullptr; ///< finalized; after the model's changes
  std::string Command;             ///< "replay" or "run"
  std::string TracePath;
  std::string ModelPath, ModelDescription;                 ///< run only
  std::vector<std::pair<std::string, std::string>> Params; ///< name, value
  /// What the model did, as the command reports it ("scaled", "8,772").
  std::vector<std::pair<std::string, std::string>> Changes;
  /// The reported iterations: ascending indices into G->Iterations.
  std::vector<size_t> Reported;
  size_t SteadyState = 0; ///< the default iteration's index
  Schedule Measured, Replayed;
  std::optional<Schedule> Predicted; ///< run only
  /// The memory model of the unchanged graph; null when the trace has no
  /// device memory records.
  const memory::MemoryModel *Memory = nullptr;
  /// run: the blocks as the model's memory statements left them, which the
  /// predicted schedule places (null: Memory's).
  const memory::MemoryModel *PredictedMemory = nullptr;
  /// Device memory capacity by device id (0: unknown).
  std::vector<std::pair<int32_t, int64_t>> DeviceMemory;
  /// The trace's GPU as its device properties name it ("" when none): the
  /// roofline's roofs come from the catalogue's entry for it.
  std::string DeviceName;
  std::optional<Sweep> SweepResults;
  /// A job (several ranks joined in one graph): each rank's resources, so
  /// that the timeline shows one process per rank and side. Empty for one
  /// trace.
  struct RankResources {
    int32_t Rank = 0;
    graph::ResourceId First = 0, End = 0;
  };
  std::vector<RankResources> Ranks;
  /// run --unprofiled: the iteration time measured without the profiler,
  /// which the numbers show as measured (the timeline keeps the trace's
  /// times); 0 otherwise.
  int64_t Unprofiled = 0;
  /// run with the profiler's cost taken out per event: each reported
  /// iteration's replay with it (what `replay` reports), in Reported's
  /// order, one per reported iteration. The numbers show these as
  /// replayed, and Replayed, the replay the speedup is against, as
  /// unprofiled. Empty otherwise.
  std::vector<int64_t> ProfiledReplays;
  /// A job's replay: its numbers, which the summary shows instead of the
  /// reported iterations' (one per rank).
  std::optional<JobSummary> Job;
  /// `opportunities`: the ranked what-ifs; the rest of the page shows the
  /// replay of the unchanged graph.
  std::optional<OpportunityList> Opportunities;
  /// `compare`: the two traces side by side; the rest of the page shows
  /// the before trace, replayed (and, with a model, predicted).
  std::optional<Comparison> Compared;

  /// The comparison the outputs draw: replayed vs predicted for `run`,
  /// measured vs replayed for `replay`.
  const Schedule &before() const { return Predicted ? Replayed : Measured; }
  const Schedule &after() const { return Predicted ? *Predicted : Replayed; }
};

/// Chrome-trace JSON: the measured iterations and after() as two processes
/// (for a job, two per rank), threads and streams named, launch flows,
/// memory counters, the model's changes in each task's args. Covers the
/// reported iterations.
std::string renderTimeline(const RunData &D);

/// The self-contained HTML report.
std::string renderHtml(const RunData &D);

} // namespace dd::report

#endif

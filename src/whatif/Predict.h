//===- Predict.h - One run of a model against a trace's graph ---*- C++ -*-===//
//
// What ddscript's what-if library does once per set of parameters: the
// profiler's cost taken out of a trace's graph (a fitted CPU scale, or a
// cost per recorded event), a model's bytecode run against the graph, the
// changed graph simulated, and the reported iterations' predicted times and
// steady states compared with the measured and replayed ones. A plain run
// does it once on the trace's graph; a sweep once per combination of the
// swept values, each on a fresh copy. Errors and warnings are values; the
// command line and the Python module print or raise them.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_PREDICT_H
#define DD_WHATIF_PREDICT_H

#include "graph/Graph.h"
#include "sim/Simulator.h"
#include "support/Format.h"
#include "trace/Trace.h"
#include "vm/VM.h"
#include "whatif/RunMemory.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

/// Work piling up: over an iteration and its neighbours, the work they put
/// on one resource exceeds the time they take, or their work finishes
/// further past their ends each iteration (by more than BacklogMargin):
/// repeated, the run would fall further behind each iteration.
struct Backlog {
  /// The resource whose work over the window exceeds its time (empty:
  /// none), and that work per iteration.
  std::string Resource;
  int64_t PerIteration = 0;
  /// How much later, past its iteration's end, each iteration's work
  /// finishes than the one before's (0: no growth beyond the margin).
  int64_t Growth = 0;
  int64_t IterationTime = 0; ///< the window's iterations' mean time
  size_t Window = 0;         ///< iterations in the window
  bool piling() const { return !Resource.empty() || Growth > 0; }
};
constexpr double BacklogMargin = 0.05;
/// What piles up, in words: "stream 7 has 12 ms of work per iteration, and
/// each iteration's work finishes 1 ms further past its end".
std::string backlogText(const Backlog &B);
/// An iteration's steady state: its time, or where work piles up, the
/// longest of: the overloaded resource's work per iteration, and its time
/// plus how much further behind its work falls each iteration.
struct Steady {
  int64_t Time = 0;
  Backlog Piling;
};
/// The steady state of iteration \p I of \p G as \p R times it, with
/// \p Load the iterations' load (sim::iterationLoad) of that graph and R.
Steady steadyState(const graph::Graph &G, const sim::IterationLoad &Load,
                   const sim::SimResult &R, size_t I);
/// steadyState of each of \p Chosen, the load computed once.
std::vector<Steady> steadyStates(const graph::Graph &G, const sim::SimResult &R,
                                 const std::vector<size_t> &Chosen);

/// The profiler's overhead taken out (`run --unprofiled TIME`): the factor
/// by which CPU work (leaf durations and the gaps between them on CPU
/// threads) is scaled so that the replay of the reported iterations lasts
/// TIME, the iteration time the user measured without the profiler.
struct ProfilerFit {
  bool Applied = false;
  int64_t Target = 0;   ///< the time measured without the profiler
  int64_t Replayed = 0; ///< their mean replay with the factor
  int64_t Floor = 0;    ///< their replay with (next to) no CPU time
  double CpuScale = 1.0;
  /// The scales whose replay is within 1% of Target: how well the
  /// measurement determines CpuScale (wide near the GPU-only floor).
  double ScaleLow = 1.0, ScaleHigh = 1.0;
  /// False where no factor in [MinCpuScale, MaxCpuScale] replays within
  /// 2% of Target: the nearest end of the range (Replayed says how far).
  bool Reached = true;
  /// Free CPU work still replays more than 0.5% slower than Target: the
  /// unprofiled run is bound by GPU work, and CpuScale is the largest that
  /// keeps the replay at that floor (an upper bound on CPU time).
  bool GpuBound = false;
  /// `--unprofiled per-event`: the profiler's cost per recorded CPU event
  /// taken out (graph::removeProfilerCost) instead of a fitted scale. The
  /// counts are the reported iteration's; ProfiledReplay is its replay
  /// before the cost came out (the check against the trace).
  bool PerEvent = false;
  int64_t PerEventNs = 0;
  uint64_t Events = 0;
  int64_t Removed = 0;
  int64_t ProfiledReplay = 0;
  /// Each reported iteration's replay before the cost came out, in the
  /// order of the reported iterations (ProfiledReplay is their mean).
  std::vector<int64_t> ProfiledReplays;
  /// The replay before the cost came out of the \p K-th reported iteration
  /// (their mean where they were not counted one by one).
  int64_t profiledReplay(size_t K) const {
    return K < ProfiledReplays.size() ? ProfiledReplays[K] : ProfiledReplay;
  }
  /// Whether the graph's CPU work was changed (and the baseline replayed
  /// again).
  bool changed() const { return Applied || PerEvent; }
  /// What makes the fit uncertain, or the cost per event a guess, in
  /// words (applyProfiler): the commands print them as warnings.
  std::vector<std::string> Warnings;
};
constexpr double MinCpuScale = 1.0 / 64, MaxCpuScale = 4.0;

/// Fits ProfilerFit::CpuScale by bisection on the replay of \p Chosen of
/// \p G (unchanged) and applies it to G. Fails only where G cannot be
/// simulated.
llvm::Expected<ProfilerFit> fitUnprofiled(graph::Graph &G,
                                          const std::vector<size_t> &Chosen,
                                          int64_t Target);

/// What --unprofiled asks for: the time measured without the profiler
/// (a fit of CPU speed to it), or the per-event model.
struct ProfilerRequest {
  std::optional<int64_t> Target;
  int64_t PerEventNs = 0; ///< above 0: `per-event[=TIME]`
  /// The per-event model by default (no --unprofiled, no --profiled): not
  /// for ddscript's own collector's traces (run.cupti), whose cost is not
  /// the PyTorch profiler's.
  bool ByDefault = false;
  /// This request for trace \p T.
  ProfilerRequest forTrace(const trace::Trace &T) const {
    ProfilerRequest R = *this;
    if (R.ByDefault && T.FromCollector)
      R.PerEventNs = 0;
    return R;
  }
};
/// The profiler's cost per recorded CPU event on the traces ddscript's
/// ground truth was recorded with (record_shapes and profile_memory on;
/// fitted by tests/cli/fit_profiler_cost.py, docs/validation.md).
constexpr int64_t DefaultPerEventNs = 5500;
/// The request \p Req applied to \p G, a graph of \p T whose reported
/// iterations are \p Chosen (unchanged by a model): the cost per event
/// taken out, or CPU work scaled to the measured time, or nothing. The
/// fit's warnings (GPU-bound, loosely determined, out of range; the per-event
/// cost applied to a trace recorded with other options than its fit's) are
/// in ProfilerFit::Warnings. Fails only where \p G cannot be simulated.
llvm::Expected<ProfilerFit> applyProfiler(graph::Graph &G,
                                          const std::vector<size_t> &Chosen,
                                          const trace::Trace &T,
                                          const ProfilerRequest &Req);

/// The trace side of a run, shared by every point of a sweep: the trace, its
/// unchanged graph, the reported iterations and the baseline replay.
struct Baseline {
  const trace::Trace *Tr = nullptr;
  std::string TracePath;
  const graph::Graph *G = nullptr;
  std::vector<size_t> Chosen;
  const sim::SimResult *Base = nullptr;
  /// The replay's steady state of each of Chosen (steadyStates of the
  /// unchanged graph): the same for every run of a sweep or every what-if,
  /// so computed once. predict computes it when it is left empty.
  std::vector<Steady> BaseSteady;
  ProfilerFit Unprofiled;
};

/// One reported iteration: measured, replayed and predicted time.
struct Outcome {
  size_t Index = 0; ///< into the graph's iterations
  /// Measured and Baseline (replayed) are the iteration's span; Predicted
  /// is the changed run's steady state (PredictedSpan, or more where work
  /// piles up), compared with the replay's (BaselineSteady).
  int64_t Measured = 0, Baseline = 0, Predicted = 0;
  int64_t BaselineSteady = 0, PredictedSpan = 0;
  Backlog BasePiling, PredPiling;
  /// With --unprofiled: Measured is the time measured without the
  /// profiler, Profiled the trace's, and CpuScale the fitted factor.
  int64_t Profiled = 0;
  double CpuScale = 1.0;
  /// ProfilerFit::ScaleLow and ScaleHigh.
  double CpuScaleLow = 1.0, CpuScaleHigh = 1.0;
  /// With `--unprofiled per-event`: Measured stays the trace's, Baseline is
  /// the replay without the profiler's cost, ProfiledReplay the replay with
  /// it; the cost per event, the events and the time taken out.
  int64_t ProfiledReplay = 0, PerEventNs = 0, ProfilerRemoved = 0;
  uint64_t ProfilerEvents = 0;
  /// The model removed all of the iteration's work: nothing is left to
  /// time, and there is no speedup to give.
  bool emptied() const { return Predicted <= 0; }
  double speedup() const {
    return Predicted > 0 ? double(BaselineSteady) / double(Predicted) : 0.0;
  }
  /// "1.234x", or "-" when emptied().
  std::string speedupText() const;
  /// Writes the speedup, or null when emptied().
  void speedupJson(JsonWriter &W) const;
  double replayError() const {
    int64_t Replayed = ProfiledReplay ? ProfiledReplay : Baseline;
    return Measured ? double(Replayed - Measured) / double(Measured) : 0.0;
  }
  /// (predicted - replayed) / replayed, steady states both.
  double change() const {
    return BaselineSteady
               ? double(Predicted - BaselineSteady) / double(BaselineSteady)
               : 0.0;
  }
};

/// What one run of a model gave.
struct Prediction {
  vm::RunResult R;
  RunMemory Mem;
  std::optional<sim::SimResult> Pred;
  std::vector<Outcome> Out; ///< per reported iteration
  /// The model's error: a runtime diagnostic (R.Ok false), or a one-line
  /// message when the changed graph cannot be simulated.
  std::string SimError;
  bool ok() const { return R.Ok && SimError.empty(); }
};

/// Runs \p P with \p Settings against \p G, a graph of \p B's trace that
/// the model changes (B.G itself, or a copy), and simulates the result.
/// \p Mem has taken its settings (device_memory) already.
Prediction predict(const Baseline &B, graph::Graph &G, const bc::Program &P,
                   const std::vector<vm::Setting> &Settings, RunMemory Mem,
                   uint64_t MaxSteps);

} // namespace dd::whatif

#endif

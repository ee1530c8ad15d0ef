//===- Sweep.h - --set values, one or many ----------------------*- C++ -*-===//
//
// `--set NAME=VALUE` sets a parameter; `--set NAME=V1,V2,V3` sweeps it: the
// model runs once per combination of the swept values, each time on a fresh
// copy of the trace's graph, and `ddscript run` prints a table (or JSON)
// instead of one prediction. See docs/models.md.
//
//===----------------------------------------------------------------------===//
#ifndef DD_DRIVER_SWEEP_H
#define DD_DRIVER_SWEEP_H

#include "compiler/Compiler.h"
#include "driver/Format.h"
#include "driver/Predict.h"
#include "report/Report.h"
#include "vm/VM.h"
#include "whatif/Sweep.h"

#include <optional>
#include <string>
#include <vector>

namespace dd::driver {

using whatif::combination;
using whatif::combinationCount;
using whatif::MaxSweepPoints;
using whatif::parseSettingAxes;
using whatif::SettingAxis;
using whatif::sweepRow;
using whatif::SweepRow;
using whatif::sweptAxes;

/// A parameter's value as run shows it: the value or values --set gave it
/// ("10Gbps, 40Gbps"), followed by " (--set)" or " (swept)" when \p Marked,
/// else its default as written.
std::string shownValue(const std::vector<SettingAxis> &Axes,
                       const compiler::ParamSummary &P, bool Marked);

/// The lines a run and a sweep start with: the model and what it is, each
/// parameter's value, the trace.
std::string modelLines(const std::string &ModelPath,
                       const compiler::CompiledModel &Model,
                       const std::vector<SettingAxis> &Axes,
                       const std::string &Trace);

/// The reported iteration (where it is among \p G's, whether it is the
/// steady-state one), its measured and its replayed time.
std::string iterationLines(const graph::Graph &G, const Outcome &O);
/// The `profiler` line of `--unprofiled per-event`: the cost per event, the
/// reported iteration's events and the CPU time taken out.
std::string profilerLine(int64_t PerEventNs, uint64_t Events, int64_t Removed);
/// The same as JSON fields: profiled_replay_ns and profiler {model,
/// per_event_ns, events, removed_ns}.
void profilerJson(JsonWriter &W, int64_t ProfiledReplay, int64_t PerEventNs,
                  uint64_t Events, int64_t Removed);

/// What the table and the JSON say besides the rows.
struct SweepHeader {
  std::string ModelPath, TracePath;
  const compiler::CompiledModel *Model = nullptr;
  std::vector<SettingAxis> Axes;
  const graph::Graph *G = nullptr;
  Outcome Base; ///< the reported iteration: measured and replayed
};

std::string sweepText(const SweepHeader &H, const std::vector<SweepRow> &Rows);
void writeSweepJson(JsonWriter &W, const SweepHeader &H,
                    const std::vector<SweepRow> &Rows);
/// The results as the HTML report's sweep plot takes them.
report::Sweep sweepForReport(const SweepHeader &H,
                             const std::vector<SweepRow> &Rows);

} // namespace dd::driver

#endif

//===- Outputs.h - --timeline and --report of the commands ------*- C++ -*-===//
#ifndef DD_DRIVER_OUTPUTS_H
#define DD_DRIVER_OUTPUTS_H

#include "driver/Commands.h"
#include "memory/MemoryModel.h"
#include "report/Report.h"
#include "support/SourceManager.h"
#include "trace/Trace.h"
#include "whatif/Predict.h"

#include <optional>
#include <vector>

namespace dd::driver {

/// Whether the command was asked for a timeline or a report.
inline bool wantsOutputs(const TraceOptions &O) {
  return !O.TimelinePath.empty() || !O.ReportPath.empty();
}

/// checkOutputPaths for --timeline and --report: the inputs are the traces
/// of \p O and, with \p Model, the .dd files read for the model.
bool checkOutputPaths(const TraceOptions &O,
                      const SourceManager *Model = nullptr);

/// The memory model of \p G (unchanged, built from \p T), when the trace has
/// device memory records in the replayed window; else none (the outputs
/// then have no memory views).
std::optional<memory::MemoryModel> memoryForOutputs(const trace::Trace &T,
                                                    const graph::Graph &G);

/// A schedule of the trace's own times, on the simulator's axis.
report::Schedule measuredSchedule(const graph::Graph &G,
                                  const std::vector<int64_t> &Start,
                                  const std::vector<int64_t> &End);
/// A schedule of a simulation of \p G, with the critical paths of the
/// \p Reported iterations. Call it before anything changes \p G.
report::Schedule simulatedSchedule(std::string Label, const graph::Graph &G,
                                   const sim::SimResult &R,
                                   const std::vector<size_t> &Reported);

/// report::RunData::ProfiledReplays of a command whose profiler's cost \p F
/// took out: one per reported iteration (\p Reported of them) where it was
/// taken out per event, else none.
std::vector<int64_t> profiledReplays(const whatif::ProfilerFit &F,
                                     size_t Reported);

/// Fills the parts of \p D every command shares (trace, devices, reported
/// iterations) and writes the files \p O asks for (a timeline whose name
/// ends in .gz gzip-compressed). Returns ExitOk, or ExitBadInput after
/// "ddscript: error: cannot write 'FILE': reason" when one cannot be written.
int writeOutputs(const TraceOptions &O, const trace::Trace &T,
                 const std::vector<size_t> &Reported, report::RunData &D);

} // namespace dd::driver

#endif

//===- JobRun.h - ddscript run of a model on a job's ranks ------*- C++ -*-===//
#ifndef DD_DRIVER_JOBRUN_H
#define DD_DRIVER_JOBRUN_H

#include "compiler/Compiler.h"
#include "driver/Commands.h"
#include "driver/Sweep.h"
#include "support/Diagnostics.h"

#include <string>
#include <vector>

namespace dd::driver {

/// `ddscript run` on several traces, one per rank: \p Model (loaded from
/// \p Path, its settings \p Axes checked) runs on every rank's graph and
/// the changed job is simulated as one (driver/JobRun.cpp).
/// \p Profiler: the profiler's cost per event, out of every rank's CPU work
/// (of PyTorch-profiler traces) before the model, as for one trace.
int runJobModel(const ModelOptions &M, const TraceOptions &T,
                const compiler::CompiledModel &Model, SourceManager &SM,
                const std::string &Path, const std::vector<SettingAxis> &Axes,
                const ProfilerRequest &Profiler);

} // namespace dd::driver

#endif

//===- JobRun.h - ddscript run of a model on a job's ranks ------*- C++ -*-===//
#ifndef DD_DRIVER_JOBRUN_H
#define DD_DRIVER_JOBRUN_H

#include "compiler/Compiler.h"
#include "driver/Commands.h"
#include "driver/Sweep.h"
#include "support/Diagnostics.h"
#include "whatif/JobPredict.h"

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

/// The request `run` gives whatif::predictJob for \p Model (from \p Path;
/// its one combination of \p Axes, device_memory taken out) on the job of
/// \p T: what `run` and the Python module's tables of a job's run share.
whatif::JobModelRequest
jobModelRequest(const compiler::CompiledModel &Model, const std::string &Path,
                const std::vector<SettingAxis> &Axes, uint64_t MaxSteps,
                const ProfilerRequest &Profiler, const TraceOptions &T);

/// What stopped \p P printed (with the failing rank's diagnostic against
/// \p SM): the exit status; ExitOk where nothing did.
int reportJobFailure(const whatif::JobPrediction &P, SourceManager &SM);

} // namespace dd::driver

#endif

//===- Run.h - ddscript run, in steps a caller can repeat -------*- C++ -*-===//
//
// `ddscript run` (runModel, Commands.h) prepares the model, checks its
// settings, sets the trace up (setupRun, Predict.h) and runs the model on
// it. The Python module takes the same steps, setting a trace up once and
// running many models on it.
//
//===----------------------------------------------------------------------===//
#ifndef DD_DRIVER_RUN_H
#define DD_DRIVER_RUN_H

#include "compiler/Compiler.h"
#include "driver/Commands.h"
#include "driver/Predict.h"
#include "driver/Sweep.h"
#include "support/SourceManager.h"

#include <memory>
#include <string>
#include <vector>

namespace dd::driver {

/// A model found and compiled, and its --set values parsed.
struct PreparedModel {
  SourceManager SM; ///< the model's sources, for its diagnostics
  std::string Path;
  compiler::CompiledModel Model;
  std::vector<SettingAxis> Axes;
};

/// Finds and compiles M.Model and parses M.Settings; null, the errors
/// printed, where it cannot.
std::unique_ptr<PreparedModel> prepareModel(const ModelOptions &M);

/// Checks what a run of \p P on one trace can be told before the trace is
/// loaded: every combination's values, and that a sweep reports one
/// iteration and writes no --timeline; false, the error printed, where not.
bool checkRun(const PreparedModel &P, const TraceOptions &T);

/// Runs \p P (checked by checkRun) on \p S: one prediction, or a sweep,
/// printed as T.Format says, with T's --timeline and --report written.
/// With \p KeepGraph the model changes a copy of S.G, so that S serves
/// another run; else S.G itself. Returns the exit status.
int runPrepared(const ModelOptions &M, const TraceOptions &T, PreparedModel &P,
                RunSetup &S, bool KeepGraph);

} // namespace dd::driver

#endif

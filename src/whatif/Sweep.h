//===- Sweep.h - A model's parameters, one value or many --------*- C++ -*-===//
//
// `--set NAME=VALUE` sets a parameter; `--set NAME=V1,V2,V3` sweeps it: the
// model runs once per combination of the swept values, each time on a fresh
// copy of the trace's graph. See docs/models.md.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_SWEEP_H
#define DD_WHATIF_SWEEP_H

#include "bytecode/Bytecode.h"
#include "vm/VM.h"
#include "whatif/Predict.h"

#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

/// One parameter and the values given for it, as written.
struct SettingAxis {
  std::string Name;
  std::vector<std::string> Values;
};

/// The most runs one sweep may ask for.
constexpr size_t MaxSweepPoints = 10'000;

/// Parses `--set` arguments: NAME=VALUE, or NAME=V1,V2,... to sweep (a
/// comma inside a value is written `\,`). A name given twice, an empty
/// name, or an empty value in a list is an error (returns nullopt and
/// sets \p Error).
std::optional<std::vector<SettingAxis>>
parseSettingAxes(const std::vector<std::string> &Args, std::string &Error);

/// How many runs the axes ask for (saturates at SIZE_MAX).
size_t combinationCount(const std::vector<SettingAxis> &Axes);

/// Combination \p Index, the first axis varying slowest (the order of
/// nested loops over the axes as given).
std::vector<vm::Setting> combination(const std::vector<SettingAxis> &Axes,
                                     size_t Index);

/// The axes with more than one value: the sweep's parameters.
std::vector<const SettingAxis *> sweptAxes(const std::vector<SettingAxis> &A);

/// One run of a sweep, as its outputs show it.
struct SweepRow {
  std::vector<vm::Setting> Settings; ///< the swept ones, in axis order
  Outcome Result;
  vm::ChangeStats Stats;
  std::string Output; ///< what the model printed
  uint64_t Steps = 0;
  bool HasMemory = false;
  int64_t PeakBytes = 0, DeviceMemory = 0; ///< predicted; 0: unknown
};

/// Makes a row from a run's prediction (which may then be dropped).
SweepRow sweepRow(std::vector<vm::Setting> Swept, const Prediction &P);

/// A sweep's runs: one row per combination, in order; or, where a run
/// failed, the rows before it, which combination (its swept values as
/// "NAME=V, ..."), and its prediction (its model's error or SimError).
struct SweepRun {
  std::vector<SweepRow> Rows;
  std::optional<std::string> FailedLabel;
  std::optional<Prediction> Failed;
};

/// Runs \p Program once per combination of \p Axes, each on a copy of
/// \p B's graph, with a progress line; stops at the first that fails.
SweepRun sweep(const Baseline &B, const bc::Program &Program,
               const std::vector<SettingAxis> &Axes, uint64_t MaxSteps);

} // namespace dd::whatif

#endif

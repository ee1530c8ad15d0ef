//===- Commands.h - The ddscript subcommands --------------------*- C++ -*-===//
#ifndef DD_DRIVER_COMMANDS_H
#define DD_DRIVER_COMMANDS_H

#include "vm/VM.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dd::driver {

enum class OutputFormat { Text, Json };

struct TraceOptions {
  /// The trace, or the first of a job's (see TracePaths).
  std::string TracePath;
  /// --trace as given: files, directories, globs; resolveTraces expands
  /// them. More than one file is a job, one trace per rank.
  std::vector<std::string> TracePaths;
  /// A job: more than one trace, or a reduced rank (`ddscript reduce`),
  /// which only a job's commands read (resolveTraces sets it).
  bool Job = false;
  /// A job's clocks: "collectives" (offsets estimated from matched
  /// collectives, the default) or "trace" (the traces' clocks as they are).
  std::string Clock = "collectives";
  std::string Iteration; ///< "", a number, or "all"
  std::string Window;    ///< "", or START:END in microseconds
  OutputFormat Format = OutputFormat::Text;
  /// replay: list this many tasks whose replayed start differs from the
  /// trace, earliest first (a check of the dependency model).
  unsigned Diverging = 0;
  /// "exact" (default) or "typical" dependency delays.
  std::string Calibration = "exact";
  /// memory: how many of the largest blocks live at the peak to list.
  unsigned Top = 10;
  /// replay, run: write a Chrome-trace timeline here; replay, run,
  /// opportunities, compare: an HTML report.
  std::string TimelinePath, ReportPath;
};

int runInspect(const TraceOptions &O);
int runReplay(const TraceOptions &O);
/// `ddscript replay` on several traces: the ranks of one job replayed
/// together (driver/JobReplay.cpp).
int runJobReplay(const TraceOptions &O);
int runMemory(const TraceOptions &O);

struct ModelOptions {
  std::string Model;                 ///< a path, or a standard model's name
  std::vector<std::string> Settings; ///< NAME=VALUE
  uint64_t MaxSteps = vm::DefaultMaxSteps;
  /// The iteration time measured without the profiler ("35.5ms"), or "":
  /// CPU work is scaled to match it before the model runs (ProfilerFit).
  std::string Unprofiled;
};

int runModel(const ModelOptions &M, const TraceOptions &T);

/// `ddscript opportunities`: a ranked list of simulated what-ifs.
struct OpportunityOptions {
  double Factor = 2;      ///< how much faster each what-if makes its tasks
  size_t Top = 10;        ///< how many to list
  std::string Unprofiled; ///< as run's --unprofiled
};
int runOpportunities(const OpportunityOptions &O, const TraceOptions &T);

/// `ddscript compare BEFORE AFTER [--model M]`: back-testing a prediction.
struct CompareOptions {
  std::string Before, After;
  std::string Model;                 ///< "" for a plain diff
  std::vector<std::string> Settings; ///< NAME=VALUE for the model
};
int runCompare(const CompareOptions &C, const TraceOptions &T);
/// `ddscript check`: compiles each model; with JSON, their diagnostics as
/// values an editor can show.
int runCheck(const std::vector<std::string> &Models,
             OutputFormat Format = OutputFormat::Text);
int runDisasm(const std::string &Model);
/// `ddscript models`: the models and libraries on the search path, with
/// their descriptions and parameters.
int runModels(OutputFormat Format);

/// `ddscript record`: runs a command under the CUPTI collector.
struct RecordOptions {
  std::string Output = "run.cupti";
  int Skip = -1;            ///< ProfilerStep#N ranges to skip; -1: not given
  int Iterations = -1;      ///< ProfilerStep#N ranges to record; -1: not given
  bool ProfilerApi = false; ///< record between cudaProfilerStart/Stop
  std::vector<std::string> Command;
  OutputFormat Format = OutputFormat::Text; ///< how the trace is described
};
int runRecord(const RecordOptions &O);

/// `ddscript convert`: any trace ddscript reads -> Chrome-trace JSON.
/// `ddscript export --format chakra -o DIR`: the reported iteration of each
/// rank, as a model leaves it, as Chakra execution traces (Export.cpp).
struct ExportOptions {
  std::string Format = "chakra";
  std::string OutDir;
  std::string Model;                 ///< "" for the graph as traced
  std::vector<std::string> Settings; ///< NAME=VALUE for the model
  uint64_t MaxSteps = vm::DefaultMaxSteps;
};
int runExport(const ExportOptions &E, const TraceOptions &T);

struct ReduceOptions {
  std::string Output; ///< a .ddg file, or a folder for several traces
};
int runReduce(const ReduceOptions &R, const TraceOptions &T);

struct ConvertOptions {
  std::string Input;
  std::string Output;
  OutputFormat Format = OutputFormat::Text; ///< how what was written is said
};
int runConvert(const ConvertOptions &O);

} // namespace dd::driver

#endif

//===- TraceReader.h - Load any supported trace file ------------*- C++ -*-===//
#ifndef DD_TRACE_TRACEREADER_H
#define DD_TRACE_TRACEREADER_H

#include "trace/Trace.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <string_view>

namespace dd::trace {

/// Called now and then during a load with the fraction done (0..1).
using ProgressFn = std::function<void(double)>;

/// Loads \p Path: Kineto/PyTorch-profiler Chrome-trace JSON (.json or gzip)
/// or a run.cupti file, told apart by content. Errors carry one line that
/// says what is wrong and where (line:column for JSON).
llvm::Expected<Trace> readTrace(const std::string &Path,
                                const ProgressFn &Progress = nullptr);

/// Parses Kineto JSON already in memory. \p Data must have at least 64 bytes
/// of spare capacity (simdjson reads in blocks).
llvm::Expected<Trace> parseKinetoJson(std::string &Data,
                                      const std::string &Path,
                                      const ProgressFn &Progress = nullptr);

/// True when \p Data starts with the run.cupti magic number.
bool isCuptiData(std::string_view Data);

/// Parses a run.cupti file already in memory (see docs/trace-format.md).
/// Truncated or damaged files, and versions this ddscript does not read,
/// are errors with one line naming what is wrong and where.
llvm::Expected<Trace> parseCupti(std::string_view Data,
                                 const std::string &Path);

} // namespace dd::trace

#endif

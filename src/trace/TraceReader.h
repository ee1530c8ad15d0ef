//===- TraceReader.h - Load any supported trace file ------------*- C++ -*-===//
#ifndef DD_TRACE_TRACEREADER_H
#define DD_TRACE_TRACEREADER_H

#include "support/InputStream.h"
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

/// readTrace of a file's bytes already in memory (\p Path names it in
/// messages): the same formats, told apart the same way.
llvm::Expected<Trace> parseTrace(std::string_view Data,
                                 const std::string &Path);

/// The windows JSON traces are parsed in (see JsonWalker).
constexpr size_t DefaultWindowBytes = size_t(4) << 20;

/// The threads a trace is loaded with: DDSCRIPT_THREADS when it is set to a
/// positive number, else the hardware's threads, at most 4 (beyond that,
/// committing the events in order is the bottleneck).
unsigned defaultLoadThreads();

/// The threads for \p ContentBytes of JSON read in windows of
/// \p WindowBytes: defaultLoadThreads(), but one below 12 windows (48 MB).
/// Threads parse ahead into batches, tens of MB of fresh memory in all;
/// below that size writing it costs more than the second thread saves
/// (measured on 15, 37, 49 and 110 MB traces, docs/validation.md).
unsigned loadThreadsFor(uint64_t ContentBytes, size_t WindowBytes);

/// Reads Kineto JSON from \p In, front to back in windows of about
/// \p WindowBytes (0: DefaultWindowBytes): memory follows the trace model,
/// not the file. With \p Threads > 1, windows are parsed on that many
/// threads (this one included) and committed in order: the trace, its
/// warnings and errors are the same as with one (0: defaultLoadThreads(),
/// one for files under 12 windows: loadThreadsFor).
llvm::Expected<Trace> readKinetoJson(InputStream &In, const std::string &Path,
                                     const ProgressFn &Progress = nullptr,
                                     size_t WindowBytes = 0,
                                     unsigned Threads = 0);

/// Parses Kineto JSON already in memory.
llvm::Expected<Trace> parseKinetoJson(std::string_view Data,
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

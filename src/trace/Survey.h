//===- Survey.h - Where a Kineto trace's events lie, and when ---*- C++ -*-===//
//
// A light first pass over a Kineto document: for each
// element of "traceEvents", where it starts in the text, when it starts in
// time and what sort of element it is, read from "ph", "cat", "name", "ts"
// (and "dur" of iteration markers) alone; the other top-level values are
// kept as text. A second pass can then read only some of the elements in
// full (excerptKinetoJson builds the document that holds them), which is how
// `ddscript replay` reads only the iterations it reports (whatif/Focus.cpp).
//
// The survey reads text the way the Kineto reader does (the same walker,
// the same string rules, the same timestamp parser), so an element's time
// here is its start in the trace the reader makes. Whatever the survey does
// not understand it marks to be kept, and the reader decides.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_SURVEY_H
#define DD_TRACE_SURVEY_H

#include "support/InputStream.h"
#include "trace/TraceReader.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dd::trace {

struct TraceSurvey {
  enum Flag : uint8_t {
    /// Its "ts" is a time (Start holds it).
    Timed = 1,
    /// GPU-side work or a flow point: a kernel, copy, set, GPU annotation,
    /// sync record, or a point of a launch or forward-backward flow.
    Device = 2,
    /// Named ProfilerStep#..., an iteration marker (in Markers too).
    StepMarker = 4,
    /// Needed whatever the time: metadata, elements without a readable "ts"
    /// (the reader reports what is wrong with them).
    Always = 8,
    /// A begin or end event (ph B or E), which the reader pairs.
    Paired = 16,
    /// A memory record ("[memory]"): the memory model needs all of them,
    /// the graph none.
    MemoryRecord = 32,
    /// GPU work: a kernel, copy or set (also Device).
    GpuWork = 64,
  };

  /// Per element of "traceEvents", in document order: the content offset
  /// of its first byte, its start in ns (with Timed), its flags.
  std::vector<uint64_t> Offset;
  std::vector<int64_t> Start;
  std::vector<uint8_t> Flags;

  /// The elements named ProfilerStep#..., with their start and duration
  /// (ns; Dur is -1 when it is missing or not a time).
  struct Marker {
    size_t Element;
    int64_t Start, Dur;
  };
  std::vector<Marker> Markers;

  /// Every other top-level value of the document: its key and its JSON.
  std::vector<std::pair<std::string, std::string>> Fields;

  bool AnyPaired = false;

  size_t numElements() const { return Offset.size(); }
};

/// Surveys the Kineto JSON read from \p In, front to back. Threads as for
/// readKinetoJson. Fails where the reader would (malformed JSON, no
/// "traceEvents"), with a message that may be less precise than the
/// reader's: callers that meet an error read the document in full.
llvm::Expected<TraceSurvey>
surveyKinetoJson(InputStream &In, const ProgressFn &Progress = nullptr,
                 unsigned Threads = 0);

/// A Kineto document with the top-level values of \p S and the elements I
/// for which \p Keep(I) holds (called in increasing order), in document
/// order, their text read again from \p In (InputStream::readAt: an
/// uncompressed file or memory) of \p ContentBytes bytes. Elements kept one
/// after another are read as one range.
llvm::Expected<std::string>
excerptKinetoJson(InputStream &In, uint64_t ContentBytes, const TraceSurvey &S,
                  llvm::function_ref<bool(size_t)> Keep);

} // namespace dd::trace

#endif

//===- ChromeJson.h - Writing a trace as Chrome-trace JSON ------*- C++ -*-===//
#ifndef DD_TRACE_CHROMEJSON_H
#define DD_TRACE_CHROMEJSON_H

#include "trace/Trace.h"

#include <string>

namespace dd::trace {

/// Writes \p T as Chrome-trace JSON in Kineto's schema: Perfetto and
/// chrome://tracing open it, and ddscript's Kineto reader reads it back into
/// the same model (events, tracks and thread names, correlation and
/// external ids, arguments, memory records, flows, devices, base time).
/// NVTX ranges are written with category "marker". \p Records, when given,
/// gets the number of traceEvents written (the events, thread names, memory
/// records and flow points).
std::string writeChromeJson(const Trace &T, size_t *Records = nullptr);

} // namespace dd::trace

#endif

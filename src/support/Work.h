//===- Work.h - Counts of the work a command does ---------------*- C++ -*-===//
//
// Deterministic work counters (Work.def): what each layer visited, counted
// instead of timed, so that a test can tell linear work from quadratic on
// any machine (tests/cli/check_complexity.py). The counts are process-wide
// totals of relaxed atomics: only amounts that the input decides are added,
// never what depends on scheduling, so that they are the same at any
// thread count. Callers add in bulk, once per pass or per call, never once
// per element of a hot loop.
//
// The driver writes them as one JSON object (name -> count) to the file
// DDSCRIPT_WORK_COUNTS names, when the command exits (driver/main.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_WORK_H
#define DD_SUPPORT_WORK_H

#include <cstdint>
#include <string>

namespace dd::work {

enum class Counter : uint8_t {
#define DD_WORK(Name, Description) Name,
#include "support/Work.def"
};

/// Adds \p N to \p C.
void add(Counter C, uint64_t N);
/// What \p C has counted so far in this process.
uint64_t get(Counter C);
/// The counter's name in Work.def ("TraceEvents").
const char *name(Counter C);
/// What one unit of \p C is.
const char *description(Counter C);
/// Every counter as one JSON object, name -> count, in Work.def's order.
std::string toJson();

} // namespace dd::work

#endif

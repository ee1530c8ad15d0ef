//===- RecordedBytes.h - The bytes an event's arguments describe -*- C++
//-*-===//
//
// A collective's payload ("In msg size", or "In msg nelems" and its
// dtype), else an operator's tensor inputs from "Input Dims" and "Input
// type" (ops/Sizes.h sizes them).
//
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_RECORDEDBYTES_H
#define DD_TRACE_RECORDEDBYTES_H

#include "trace/Trace.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <utility>

namespace dd::trace {

/// The bytes event \p E's arguments describe: a collective's input
/// payload, else its tensor inputs. None when the trace does not say.
std::optional<int64_t> recordedBytes(const Trace &T, EventId E);

/// recordedBytes over many events of one trace, each distinct ("Input
/// Dims", "Input type") pair read once: a trace recorded with shapes
/// repeats a few thousand of them over hundreds of thousands of operators.
class RecordedBytes {
public:
  explicit RecordedBytes(const Trace &T) : T(T) {}
  std::optional<int64_t> operator()(EventId E);

private:
  const Trace &T;
  llvm::DenseMap<std::pair<int64_t, int64_t>, std::optional<int64_t>> Inputs;
};

} // namespace dd::trace

#endif

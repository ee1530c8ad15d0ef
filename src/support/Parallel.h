//===- Parallel.h - Independent work items on threads -----------*- C++ -*-===//
//
// Runs Fn(0) .. Fn(N - 1) on up to Threads threads (the caller's among
// them), each item once, in no particular order; returns when all are done.
// Items must not depend on one another; a caller that keeps each result in
// its own slot gets output that does not depend on the threads. The first
// exception an item throws is rethrown to the caller once all threads have
// stopped; a thread that cannot start leaves its share to the others.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_PARALLEL_H
#define DD_SUPPORT_PARALLEL_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>

namespace dd {

void parallelFor(size_t N, unsigned Threads,
                 llvm::function_ref<void(size_t)> Fn);

} // namespace dd

#endif

//===- DeepStack.h - Recursive work on a stack of a known size --*- C++ -*-===//
//
// The parser recurses once or more per level a model nests (up to
// MaxParseNesting, src/syntax/AstBuilder.cpp), the checks and the compiler
// once per level (up to AstBuilder::MaxNesting), and the VM once per call a
// builtin makes into a model's function (sum(xs, f), sorted(xs, key),
// predicates, schedules; up to its 2,000 frames). Those limits were sized
// against the stack of the thread that happened to run them: 8 MB on the
// main thread by default (ulimit -s), less on threads some hosts make, and
// frames several times larger under AddressSanitizer, where 2,000 nested
// calls through a builtin overflowed 8 MB. runOnDeepStack runs such work on
// a thread of its own whose stack is DeepStackBytes, whatever the caller's,
// and waits for it; called on that thread already, it just calls Fn.
//
// Measured need (ulimit -s bisection, docs/validation.md): 2,000 calls
// through a builtin 14 MB under ASan, 2.3 MB in a release build; the
// parser at 1,024 levels 4.3 MB under ASan, 1.1 MB in a release build.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_DEEPSTACK_H
#define DD_SUPPORT_DEEPSTACK_H

#include "llvm/ADT/STLFunctionalExtras.h"

namespace dd {

/// The stack runOnDeepStack gives its work: four times the largest need
/// measured under AddressSanitizer. Only the pages the work touches are
/// ever committed.
constexpr unsigned DeepStackBytes = 64u << 20;

/// Runs \p Fn on a thread with a DeepStackBytes stack and returns when it
/// has; an exception \p Fn throws is thrown again here.
void runOnDeepStack(llvm::function_ref<void()> Fn);

} // namespace dd

#endif

//===- FuzzReplay.h - What the trace fuzz targets do with a trace -*- C++
//-*-===//
//
// A trace that reads becomes a graph and is replayed, as `ddscript replay`
// does: the graph build and the simulator see damaged traces too. Errors are
// fine (a damaged input is refused); crashes, sanitizer reports and hangs
// are not.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TESTS_FUZZ_FUZZREPLAY_H
#define DD_TESTS_FUZZ_FUZZREPLAY_H

#include "builder/GraphBuilder.h"
#include "sim/CriticalPath.h"
#include "sim/Simulator.h"
#include "trace/Trace.h"

#include "llvm/Support/Error.h"

namespace dd::fuzz {

inline void replay(const trace::Trace &T) {
  auto G = graph::buildGraph(T);
  if (!G) {
    llvm::consumeError(G.takeError());
    return;
  }
  auto R = sim::simulate(*G);
  if (!R) {
    llvm::consumeError(R.takeError());
    return;
  }
  for (const graph::Iteration &It : G->Iterations) {
    (void)sim::iterationTime(*G, *R, It);
    (void)sim::criticalPath(*G, *R, It.End, sim::pointTime(*G, *R, It.Begin));
  }
}

} // namespace dd::fuzz

#endif

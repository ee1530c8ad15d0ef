//===- rank.cpp - libFuzzer target: a reduced rank (.ddg) -----------------===//
//
// Bytes as a reduced rank's body (job::parseRankBody: the rank's facts, then
// graph::readGraph's graph, every id checked), past the file's header and
// its gzip member (whose checksum would stop most mutations). A graph that
// reads is replayed, its iterations timed and their critical paths walked,
// and joined as a job of one rank, as `ddscript replay` does with it.
//
//===----------------------------------------------------------------------===//

#include "job/Job.h"
#include "job/RankFile.h"
#include "sim/CriticalPath.h"
#include "sim/Simulator.h"

#include <string_view>

using namespace dd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Bytes(reinterpret_cast<const char *>(Data), Size);
  auto R = job::parseRankBody(Bytes);
  if (!R) {
    llvm::consumeError(R.takeError());
    return 0;
  }
  graph::Graph &G = R->G;
  auto S = sim::simulate(G);
  if (!S) {
    llvm::consumeError(S.takeError());
    return 0;
  }
  for (const graph::Iteration &It : G.Iterations) {
    (void)sim::iterationTime(G, *S, It);
    (void)sim::criticalPath(G, *S, It.End, sim::pointTime(G, *S, It.Begin));
  }
  std::vector<job::RankGraph> Ranks;
  Ranks.push_back({0, "r.ddg", std::move(G)});
  auto J = job::joinRanks(std::move(Ranks), job::Clock::Collectives);
  if (!J) {
    llvm::consumeError(J.takeError());
    return 0;
  }
  auto JS = sim::simulate(J->G);
  if (!JS)
    llvm::consumeError(JS.takeError());
  return 0;
}

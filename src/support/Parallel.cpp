#include "support/Parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

void dd::parallelFor(size_t N, unsigned Threads,
                     llvm::function_ref<void(size_t)> Fn) {
  std::atomic<size_t> Next{0};
  auto Work = [&] {
    for (size_t I; (I = Next++) < N;)
      Fn(I);
  };
  unsigned T = static_cast<unsigned>(
      std::min<size_t>(std::max(1u, Threads), std::max<size_t>(N, 1)));
  std::vector<std::thread> Pool;
  for (unsigned K = 1; K < T; ++K)
    Pool.emplace_back(Work);
  Work();
  for (std::thread &Th : Pool)
    Th.join();
}

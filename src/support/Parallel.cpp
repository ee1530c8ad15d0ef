#include "support/Parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

void dd::parallelFor(size_t N, unsigned Threads,
                     llvm::function_ref<void(size_t)> Fn) {
  std::atomic<size_t> Next{0};
  std::mutex M;
  std::exception_ptr Thrown;
  auto Work = [&] {
    try {
      for (size_t I; (I = Next++) < N;)
        Fn(I);
    } catch (...) {
      // The first exception is the caller's; the other threads stop
      // taking items.
      Next = N;
      std::lock_guard<std::mutex> L(M);
      if (!Thrown)
        Thrown = std::current_exception();
    }
  };
  unsigned T = static_cast<unsigned>(
      std::min<size_t>(std::max(1u, Threads), std::max<size_t>(N, 1)));
  std::vector<std::thread> Pool;
  // A thread that cannot start (a limit on threads or memory) leaves its
  // items to those that did.
  try {
    for (unsigned K = 1; K < T; ++K)
      Pool.emplace_back(Work);
  } catch (const std::system_error &) {
  }
  Work();
  for (std::thread &Th : Pool)
    Th.join();
  if (Thrown)
    std::rethrow_exception(Thrown);
}

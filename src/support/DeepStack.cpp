//===- DeepStack.cpp - Recursive work on a stack of a known size ----------===//

#include "support/DeepStack.h"

#include "llvm/Support/thread.h"

#include <exception>

using namespace dd;

namespace {
thread_local bool OnDeepStack = false;
} // namespace

void dd::runOnDeepStack(llvm::function_ref<void()> Fn) {
  if (OnDeepStack) {
    Fn();
    return;
  }
  std::exception_ptr Thrown;
  llvm::thread T(llvm::Optional<unsigned>(DeepStackBytes), [&] {
    OnDeepStack = true;
    try {
      Fn();
    } catch (...) {
      Thrown = std::current_exception();
    }
  });
  T.join();
  if (Thrown)
    std::rethrow_exception(Thrown);
}

//===- DeepStack.cpp - Recursive work on a stack of a known size ----------===//

#include "support/DeepStack.h"

#include "support/Exit.h"

#include <exception>
#include <pthread.h>

using namespace dd;

namespace {
thread_local bool OnDeepStack = false;
} // namespace

void dd::runOnDeepStack(llvm::function_ref<void()> Fn) {
  if (OnDeepStack) {
    Fn();
    return;
  }
  struct Call {
    llvm::function_ref<void()> Fn;
    std::exception_ptr Thrown;
  } C{Fn, nullptr};
  auto Body = [](void *Arg) -> void * {
    auto *C = static_cast<Call *>(Arg);
    OnDeepStack = true;
    try {
      C->Fn();
    } catch (...) {
      C->Thrown = std::current_exception();
    }
    return nullptr;
  };
  // Started by hand, not as llvm::thread, whose failure to start (no memory
  // for the stack under a limit) ends the process with a signal: here it
  // is running out of memory, exit 2 and a message.
  pthread_attr_t Attr;
  pthread_t T;
  if (pthread_attr_init(&Attr) != 0)
    exitOutOfMemory();
  pthread_attr_setstacksize(&Attr, DeepStackBytes);
  int Rc = pthread_create(&T, &Attr, Body, &C);
  pthread_attr_destroy(&Attr);
  if (Rc != 0)
    exitOutOfMemory();
  pthread_join(T, nullptr);
  if (C.Thrown)
    std::rethrow_exception(C.Thrown);
}

//===- Exit.cpp - Ending well: out of memory, signals, temporaries --------===//

#include "support/Exit.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <sys/resource.h>
#include <unistd.h>

using namespace dd;

namespace {

/// The temporaries, in fixed storage: the signal handler reads them without
/// allocating or locking.
constexpr int NumSlots = 64;
constexpr size_t PathBytes = 4096;
struct Slot {
  std::atomic<int> State{0}; ///< 0 free, 1 being filled, 2 live
  char Path[PathBytes];
};
Slot Slots[NumSlots];

void removeTemporaries() {
  for (Slot &S : Slots)
    if (S.State.load() == 2)
      ::unlink(S.Path);
}

void writeAll(const char *S, size_t N) {
  while (N) {
    ssize_t W = ::write(2, S, N);
    if (W <= 0)
      return;
    S += W;
    N -= static_cast<size_t>(W);
  }
}

extern "C" void onSignal(int Sig) {
  removeTemporaries();
  ::signal(Sig, SIG_DFL);
  ::raise(Sig);
}

void onTerminate() {
  // An exception no catch took: running out of memory is the user's
  // error; anything else is ddscript's, said as such (exit 3).
  removeTemporaries();
  const char *What = "an exception of unknown type";
  if (std::exception_ptr E = std::current_exception()) {
    try {
      std::rethrow_exception(E);
    } catch (const std::bad_alloc &) {
      exitOutOfMemory();
    } catch (const std::exception &X) {
      What = X.what();
    } catch (...) {
    }
  }
  const char Head[] = "ddscript: internal error: uncaught exception: ";
  const char Tail[] = " (a bug in ddscript: please report it with the "
                      "command that gave it)\n";
  writeAll(Head, sizeof(Head) - 1);
  writeAll(What, std::strlen(What));
  writeAll(Tail, sizeof(Tail) - 1);
  ::_exit(ExitInternalError);
}

void onLlvmBadAlloc(void *, const char *, bool) {
  // LLVM's containers allocate with malloc and report a failure here; as
  // an exception it unwinds to a catch that names the context (a model's
  // line), or to main's.
  throw std::bad_alloc();
}

} // namespace

void dd::exitOutOfMemory() {
  removeTemporaries();
  char Buf[512];
  struct rlimit R;
  int N;
  if (::getrlimit(RLIMIT_AS, &R) == 0 && R.rlim_cur != RLIM_INFINITY)
    N = std::snprintf(
        Buf, sizeof(Buf),
        "ddscript: error: out of memory: the process may use %llu MiB of "
        "address space (ulimit -v); a shorter --window, fewer ranks or "
        "fewer --threads need less\n",
        static_cast<unsigned long long>(R.rlim_cur >> 20));
  else
    N = std::snprintf(Buf, sizeof(Buf),
                      "ddscript: error: out of memory; a shorter --window, "
                      "fewer ranks or fewer --threads need less\n");
  if (N > 0)
    writeAll(Buf, std::min<size_t>(static_cast<size_t>(N), sizeof(Buf) - 1));
  ::_exit(ExitOutOfMemory);
}

void dd::installExitHandlers() {
  std::set_terminate(onTerminate);
  llvm::install_bad_alloc_error_handler(onLlvmBadAlloc);
  struct sigaction A;
  std::memset(&A, 0, sizeof(A));
  A.sa_handler = onSignal;
  sigemptyset(&A.sa_mask);
  for (int Sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction Old;
    // A signal the caller ignores (nohup) stays ignored.
    if (::sigaction(Sig, nullptr, &Old) == 0 && Old.sa_handler == SIG_IGN)
      continue;
    ::sigaction(Sig, &A, nullptr);
  }
}

int dd::registerTemporary(const std::string &Path) {
  if (Path.size() >= PathBytes)
    return -1;
  for (int I = 0; I < NumSlots; ++I) {
    int Free = 0;
    if (!Slots[I].State.compare_exchange_strong(Free, 1))
      continue;
    std::memcpy(Slots[I].Path, Path.c_str(), Path.size() + 1);
    Slots[I].State.store(2);
    return I;
  }
  return -1;
}

void dd::releaseTemporary(int Slot) {
  if (Slot >= 0 && Slot < NumSlots)
    Slots[Slot].State.store(0);
}

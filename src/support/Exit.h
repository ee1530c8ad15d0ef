//===- Exit.h - Ending well: out of memory, signals, temporaries -*- C++
//-*-===//
//
// How ddscript ends when it cannot go on, so that no input is harmed and the
// user reads why:
//
//   - out of memory (std::bad_alloc anywhere, LLVM's allocation failures, a
//     thread that cannot start): "ddscript: error: out of memory ..." with
//     the address-space limit where one is set, and exit 2, never a signal;
//   - an exception no catch took: "ddscript: internal error: ..." with its
//     message, exit 3 (ddscript's bug, said as such), not an abort;
//   - SIGINT, SIGTERM, SIGHUP: the temporaries being written beside their
//     targets (FileIO.h) are removed, and the process then dies of the
//     signal as it would have;
//   - a temporary is registered while it is written and released once it is
//     renamed or removed.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_EXIT_H
#define DD_SUPPORT_EXIT_H

#include <string>

namespace dd {

/// The exit status for running out of memory: that of bad input (the input
/// is too large for the memory the process may use).
constexpr int ExitOutOfMemory = 2;

/// The exit status of an internal error (an exception no catch took).
constexpr int ExitInternalError = 3;

/// Installs the handlers above; main calls it once, first.
void installExitHandlers();

/// Prints the out-of-memory error and exits with ExitOutOfMemory, removing
/// the temporaries. Allocates nothing.
[[noreturn]] void exitOutOfMemory();

/// Registers \p Path as a temporary to remove if the process is ended by a
/// signal or runs out of memory. Returns its slot for releaseTemporary, or
/// -1 where none is free (the file is then not removed on a signal).
int registerTemporary(const std::string &Path);
void releaseTemporary(int Slot);

} // namespace dd

#endif

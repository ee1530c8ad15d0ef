//===- FileIO.h - Reading and writing whole files, gzip-aware ---*- C++ -*-===//
//
// The one home of how ddscript opens what it reads and writes what it makes:
//
//   - what it reads must be a regular file: a directory, a pipe or a device
//     (/dev/zero, /dev/stdin from a pipe) is refused at once, without
//     blocking on a FIFO or reading forever (openRegularFile);
//   - what it writes never leaves half a file, nor destroys the old one on a
//     failure: the content goes to a temporary file beside the target, which
//     is then renamed over it (writeFileAtomically), so that two runs writing
//     one file leave one of them whole;
//   - callers refuse an output that is one of their inputs (sameFile: the same
//     device and inode, through symlinks and hard links).
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_FILEIO_H
#define DD_SUPPORT_FILEIO_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dd {

/// Opens \p Path read-only, refusing whatever is not a regular file ("cannot
/// read: a pipe (FIFO), not a regular file ..."); never blocks on a FIFO.
/// Returns the descriptor, which the caller closes, and its size in
/// \p Size.
llvm::Expected<int> openRegularFile(const std::string &Path, uint64_t &Size);

/// Reads the regular file \p Path whole, refusing one of more than
/// \p MaxBytes bytes.
llvm::Expected<std::string> readTextFile(const std::string &Path,
                                         uint64_t MaxBytes);

/// Reads \p Path completely. A gzip stream (detected by its magic bytes, not
/// by the file name) is inflated. The returned string has at least
/// \p Padding bytes of spare capacity, so parsers that read past the end in
/// blocks (simdjson) can use it in place.
llvm::Expected<std::string> readFileMaybeGzip(const std::string &Path,
                                              size_t Padding = 64);

/// True when \p Data starts with the gzip magic bytes.
bool isGzip(std::string_view Data);

/// Inflates a gzip stream (several members are concatenated), within the
/// bound InputStream sets (InputStream.h).
llvm::Expected<std::string> gunzip(std::string_view Data, size_t Padding);

/// Compresses \p Data into one gzip member, at zlib's \p Level (-1: its
/// default, 6; 1: fastest).
llvm::Expected<std::string> gzip(std::string_view Data, int Level = -1);

/// Writes \p Data to \p Path: to a temporary file in the same directory,
/// renamed over \p Path once whole (through a symlink, over the file it
/// names; keeping an old file's permissions). On any failure \p Path is as
/// it was. A device or FIFO (/dev/null) is written as it is.
llvm::Error writeFileAtomically(const std::string &Path, std::string_view Data);

/// Files written together, as writeFileAtomically writes one: each goes to
/// a temporary beside its target first (add), and none replaces its target
/// before all are whole (commit). A failure, or destruction before commit,
/// removes the temporaries, so every target is as it was: an export of eight
/// ranks that fills the disk at the fourth leaves no three new files among
/// old ones. A temporary is removed on SIGINT, SIGTERM and SIGHUP too
/// (Exit.h).
class AtomicFiles {
public:
  AtomicFiles() = default;
  AtomicFiles(const AtomicFiles &) = delete;
  AtomicFiles &operator=(const AtomicFiles &) = delete;
  ~AtomicFiles();
  llvm::Error add(const std::string &Path, std::string_view Data);
  /// Renames each temporary over its target; on a failure the rest are
  /// removed (those renamed before it stay renamed).
  llvm::Error commit();

private:
  void discard();
  struct Temporary {
    std::string Temp, Target;
    int Slot;
  };
  std::vector<Temporary> Pending;
};

/// Writes \p Data to \p Path as writeFileAtomically does, gzip-compressed
/// when the name ends in ".gz". Returns the number of bytes written.
llvm::Expected<size_t> writeFileMaybeGzip(const std::string &Path,
                                          std::string_view Data);

/// Whether \p A and \p B name one file: the same device and inode where both
/// exist (so also through symlinks and hard links), else the same path once
/// made absolute and its symlinks resolved.
bool sameFile(const std::string &A, const std::string &B);

/// What sameFile compares: two paths name one file when their identities
/// are equal. A caller comparing many paths resolves each once.
struct FileIdentity {
  bool Exists = false;
  uint64_t Device = 0, Inode = 0; ///< where it exists
  std::string Where;              ///< where it would be made, if not
  auto operator<=>(const FileIdentity &) const = default;
};
FileIdentity fileIdentity(const std::string &Path);

/// The file that holds ddscript's code in this process, as an absolute path
/// with its links resolved: the `ddscript` executable, or the Python
/// module's shared library; "" where the system does not say. What ships
/// beside it (the stdlib, the CUPTI collector) is found from here, wherever
/// the install or the build tree was moved.
std::string codeImagePath();

/// Whether \p Path exists and is neither a regular file nor a directory (a
/// device, a FIFO): written in place, never replaced.
bool isSpecialFile(const std::string &Path);

} // namespace dd

#endif

//===- InputStream.h - Sequential reading of a file, gzip-aware -*- C++ -*-===//
//
// Traces are large (a Kineto trace of a few training steps is often hundreds
// of MB, gigabytes are common) and usually gzip-compressed. Readers consume
// them front to back in windows, so that memory follows the window and the
// trace model, not the file. InputStream hands out the file's bytes in order,
// inflating gzip streams (told apart by their magic bytes, not the name) as
// it goes, from a file or from memory.
//
// Only regular files are read (FileIO.h: openRegularFile). A gzip stream may
// inflate to at most MaxInflateRatio times its compressed size, or
// MinInflateBound bytes where that is more: a damaged file or a
// decompression bomb (a few MB of gzip holding gigabytes of whitespace) is
// refused, not allowed to exhaust memory. Traces inflate 5-42x (the shipped
// ones; CUDA-graph traces the most).
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_INPUTSTREAM_H
#define DD_SUPPORT_INPUTSTREAM_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace dd {

class ContentBuffer;

/// The bound on what a gzip stream may inflate to: MaxInflateRatio times its
/// compressed size, and never less than MinInflateBound.
constexpr uint64_t MaxInflateRatio = 128;
constexpr uint64_t MinInflateBound = uint64_t(64) << 20;

class InputStream {
public:
  /// Opens \p Path for reading: a regular file. Errors say why ("cannot
  /// open: ...", "cannot read: a pipe (FIFO), not a regular file ...").
  static llvm::Expected<std::unique_ptr<InputStream>>
  open(const std::string &Path);
  /// Reads \p Data, which must outlive the stream.
  static std::unique_ptr<InputStream> fromMemory(std::string_view Data);

  ~InputStream();
  InputStream(const InputStream &) = delete;
  InputStream &operator=(const InputStream &) = delete;

  /// Reads up to \p Max bytes of content (inflated if the source is gzip)
  /// into \p Dst. Returns 0 only at the end. A truncated or corrupt gzip
  /// stream and read failures are errors.
  llvm::Expected<size_t> read(char *Dst, size_t Max);

  /// The next (up to) \p N bytes of content, without consuming them: the
  /// following reads return them again. Fewer at the end of the content.
  llvm::Expected<std::string_view> peek(size_t N);

  /// Reads everything that is left into a string with at least \p Padding
  /// bytes of spare capacity (for parsers that read past the end in blocks).
  llvm::Expected<std::string> readAll(size_t Padding = 64);

  /// From now on, appends everything read() hands out to \p Into (nullptr:
  /// stop): a copy of the content from the current position, to read
  /// again from memory.
  void keepCopy(ContentBuffer *Into) { Copy = Into; }

  /// Reads up to \p Max bytes of content at content offset \p Offset into
  /// \p Dst, wherever the stream stands, without moving it; fewer only at
  /// the end. Uncompressed sources only (content offsets are then source
  /// offsets): an error for gzip.
  llvm::Expected<size_t> readAt(uint64_t Offset, char *Dst, size_t Max);

  /// Bytes of the source (the file as stored) consumed so far, and its
  /// size: the fraction done, for progress lines. Size 0 when unknown.
  uint64_t sourcePosition() const;
  uint64_t sourceSize() const { return SourceSize; }
  bool isCompressed() const;

  /// The 1-based line and column of content offset \p Offset, found by
  /// reading the content again from the start (used for error messages
  /// only, so that reading never pays for counting lines).
  std::pair<uint64_t, uint64_t> lineColumnOf(uint64_t Offset);

private:
  InputStream() = default;
  struct Gzip;

  llvm::Expected<size_t> readRaw(char *Dst, size_t Max);
  llvm::Error start();

  std::string Path; ///< empty for memory streams
  int Fd = -1;
  std::string_view Memory; ///< the source of a memory stream
  uint64_t RawPos = 0;     ///< source bytes consumed
  uint64_t SourceSize = 0;
  std::string Peeked; ///< source bytes read to detect gzip
  size_t PeekedUsed = 0;
  std::unique_ptr<Gzip> Z; ///< set for gzip sources
  std::string Ahead;       ///< content peeked and not read yet
  size_t AheadUsed = 0;
  ContentBuffer *Copy = nullptr; ///< see keepCopy()
  llvm::Expected<size_t> readUncopied(char *Dst, size_t Max);
  llvm::Expected<size_t> readContent(char *Dst, size_t Max);
};

} // namespace dd

#endif

//===- FileContent.h - A file's whole content in memory ---------*- C++ -*-===//
//
// For readers that go over a file's content more than once: the file read
// into memory, a gzip file inflated (told apart by its magic bytes, not its
// name), in huge pages where the system gives them (support/HugePages.h).
// InputStream is the choice for reading a file once, front to back, and
// InputStream::readAt for reading parts of a plain file again.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_FILECONTENT_H
#define DD_SUPPORT_FILECONTENT_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace dd {

class FileContent {
public:
  /// Reads (inflating) \p Path. Errors say why in one line.
  static llvm::Expected<FileContent> load(const std::string &Path);

  FileContent() = default;
  FileContent(FileContent &&O) noexcept { *this = std::move(O); }
  FileContent &operator=(FileContent &&O) noexcept;
  FileContent(const FileContent &) = delete;
  FileContent &operator=(const FileContent &) = delete;
  ~FileContent() { release(); }

  std::string_view data() const { return {Base, Size}; }
  /// The file as stored (compressed or not), in bytes.
  size_t sourceSize() const { return SourceSize; }
  bool isCompressed() const { return Compressed; }
  /// Gives the memory back now.
  void release();

private:
  char *Base = nullptr;
  size_t Size = 0;   ///< bytes of content
  size_t Mapped = 0; ///< bytes of the mapping
  size_t SourceSize = 0;
  bool Compressed = false;
};

} // namespace dd

#endif

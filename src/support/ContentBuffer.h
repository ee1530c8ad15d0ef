//===- ContentBuffer.h - A file's content kept as it is read ----*- C++ -*-===//
//
// For readers that go over a compressed file's content more than once: an
// InputStream can keep a copy of everything it hands out (keepCopy), in
// memory that grows without moving what it holds (mremap) and that asks
// for 2 MB pages (support/HugePages.h). A plain file is read again with
// InputStream::readAt instead.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_CONTENTBUFFER_H
#define DD_SUPPORT_CONTENTBUFFER_H

#include <cstddef>
#include <string_view>

namespace dd {

class ContentBuffer {
public:
  ContentBuffer() = default;
  ContentBuffer(ContentBuffer &&O) noexcept {
    *this = static_cast<ContentBuffer &&>(O);
  }
  ContentBuffer &operator=(ContentBuffer &&O) noexcept;
  ContentBuffer(const ContentBuffer &) = delete;
  ContentBuffer &operator=(const ContentBuffer &) = delete;
  ~ContentBuffer() { release(); }

  /// Room for \p Bytes in all; false when the system has no memory for it.
  bool reserve(size_t Bytes);
  /// Appends \p N bytes; false when the system has no memory for them.
  bool append(const char *Data, size_t N);
  std::string_view data() const { return {Base, Size}; }
  /// Gives the memory back now; the buffer is empty.
  void release();

private:
  char *Base = nullptr;
  size_t Size = 0;   ///< bytes held
  size_t Mapped = 0; ///< bytes of the mapping
};

} // namespace dd

#endif

#include "support/ContentBuffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

using namespace dd;

ContentBuffer &ContentBuffer::operator=(ContentBuffer &&O) noexcept {
  if (this != &O) {
    release();
    Base = O.Base;
    Size = O.Size;
    Mapped = O.Mapped;
    O.Base = nullptr;
    O.Size = O.Mapped = 0;
  }
  return *this;
}

void ContentBuffer::release() {
  if (Base)
    ::munmap(Base, Mapped);
  Base = nullptr;
  Size = Mapped = 0;
}

bool ContentBuffer::reserve(size_t Bytes) {
  if (Bytes <= Mapped)
    return true;
  // Whole 2 MB pages, at least.
  size_t Huge = size_t(2) << 20;
  Bytes = (std::max(Bytes, Huge) + Huge - 1) & ~(Huge - 1);
  void *P = Base ? ::mremap(Base, Mapped, Bytes, MREMAP_MAYMOVE)
                 : ::mmap(nullptr, Bytes, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (P == MAP_FAILED)
    return false;
#ifdef MADV_HUGEPAGE
  // Written once, front to back: on virtual machines a fault per 4 KB page
  // costs more than the copy.
  (void)::madvise(P, Bytes, MADV_HUGEPAGE);
#endif
  Base = static_cast<char *>(P);
  Mapped = Bytes;
  return true;
}

bool ContentBuffer::append(const char *Data, size_t N) {
  if (Size + N > Mapped && !reserve(std::max(Size + N, Mapped * 2)))
    return false;
  if (N)
    std::memcpy(Base + Size, Data, N);
  Size += N;
  return true;
}

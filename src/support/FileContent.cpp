#include "support/FileContent.h"

#include "support/Error.h"
#include "support/InputStream.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

using namespace dd;

FileContent &FileContent::operator=(FileContent &&O) noexcept {
  if (this != &O) {
    release();
    Base = O.Base;
    Size = O.Size;
    Mapped = O.Mapped;
    SourceSize = O.SourceSize;
    Compressed = O.Compressed;
    O.Base = nullptr;
    O.Size = O.Mapped = 0;
  }
  return *this;
}

void FileContent::release() {
  if (Base && Mapped)
    ::munmap(Base, Mapped);
  Base = nullptr;
  Size = Mapped = 0;
}

namespace {

/// Anonymous memory for \p Bytes, in huge pages where the system gives
/// them: inflating writes every byte once, and on virtual machines a fault
/// per 4 KB page costs more than the copy.
char *anonymous(size_t Bytes) {
  void *P = ::mmap(nullptr, Bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (P == MAP_FAILED)
    return nullptr;
#ifdef MADV_HUGEPAGE
  (void)::madvise(P, Bytes, MADV_HUGEPAGE);
#endif
  return static_cast<char *>(P);
}

/// The inflated size a gzip file states in its last four bytes (modulo
/// 2^32, of its last member only): a first guess.
size_t statedSize(int Fd, size_t FileSize) {
  unsigned char B[4];
  if (FileSize < 18 || ::pread(Fd, B, 4, static_cast<off_t>(FileSize - 4)) != 4)
    return 0;
  return size_t(B[0]) | size_t(B[1]) << 8 | size_t(B[2]) << 16 |
         size_t(B[3]) << 24;
}

} // namespace

llvm::Expected<FileContent> FileContent::load(const std::string &Path) {
  auto In = InputStream::open(Path);
  if (!In)
    return In.takeError();
  FileContent C;
  C.SourceSize = static_cast<size_t>((*In)->sourceSize());
  C.Compressed = (*In)->isCompressed();
  size_t Cap = C.SourceSize + 1;
  if (C.Compressed) {
    int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
    size_t Stated = Fd >= 0 ? statedSize(Fd, C.SourceSize) : 0;
    if (Fd >= 0)
      ::close(Fd);
    Cap = std::max(Stated, C.SourceSize * 4);
  }
  Cap = std::max<size_t>(Cap + (size_t(1) << 20), size_t(1) << 21);
  C.Base = anonymous(Cap);
  if (!C.Base)
    return makeError("out of memory reading the file");
  C.Mapped = Cap;
  for (;;) {
    if (C.Size == C.Mapped) {
      size_t Grown = C.Mapped * 2;
      void *P = ::mremap(C.Base, C.Mapped, Grown, MREMAP_MAYMOVE);
      if (P == MAP_FAILED)
        return makeError("out of memory reading the file");
      C.Base = static_cast<char *>(P);
      C.Mapped = Grown;
    }
    auto N = (*In)->read(C.Base + C.Size, C.Mapped - C.Size);
    if (!N)
      return N.takeError();
    if (*N == 0)
      break;
    C.Size += *N;
  }
  return C;
}

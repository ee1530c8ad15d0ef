#include "support/Prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

void dd::prefault(void *Begin, size_t Bytes) {
#ifdef MADV_POPULATE_WRITE
  // Small ranges fault in quickly enough on their own.
  if (Bytes < (size_t(1) << 20))
    return;
  uintptr_t Page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t B = (reinterpret_cast<uintptr_t>(Begin) + Page - 1) & ~(Page - 1);
  uintptr_t E = (reinterpret_cast<uintptr_t>(Begin) + Bytes) & ~(Page - 1);
  if (E <= B)
    return;
#ifdef MADV_HUGEPAGE
  // Where the system hands out 2 MB pages on request (transparent huge
  // pages in "madvise" mode), a large range takes a few of them instead of
  // hundreds of small ones.
  uintptr_t Huge = uintptr_t(2) << 20;
  uintptr_t HB = (B + Huge - 1) & ~(Huge - 1), HE = E & ~(Huge - 1);
  if (HE > HB)
    (void)madvise(reinterpret_cast<void *>(HB), HE - HB, MADV_HUGEPAGE);
#endif
  (void)madvise(reinterpret_cast<void *>(B), E - B, MADV_POPULATE_WRITE);
#else
  (void)Begin;
  (void)Bytes;
#endif
}

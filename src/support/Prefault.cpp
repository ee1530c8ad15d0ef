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
  if (E > B)
    (void)madvise(reinterpret_cast<void *>(B), E - B, MADV_POPULATE_WRITE);
#else
  (void)Begin;
  (void)Bytes;
#endif
}

//===- HugePages.h - Large allocations in 2 MB pages ------------*- C++ -*-===//
//
// Loading a large trace writes hundreds of MB of fresh memory, and the first
// write to each 4 KB page is a fault; on virtual machines a fault can cost
// over 10 us, more than the work done on the page. Linux hands out 2 MB
// pages instead (transparent huge pages) where a range asks for them, which
// in the common "madvise" mode glibc's malloc does only when told so as the
// program starts (GLIBC_TUNABLES=glibc.malloc.hugetlb=1).
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_HUGEPAGES_H
#define DD_SUPPORT_HUGEPAGES_H

namespace dd {

/// Starts this program again, once, with glibc's malloc asking for huge
/// pages, where that helps: Linux with transparent huge pages in "madvise"
/// mode, glibc, GLIBC_TUNABLES not already saying, DDSCRIPT_HUGEPAGES not
/// "0", not under valgrind. Returns where it does not (or the restart
/// fails). In the program
/// started again it puts GLIBC_TUNABLES back as it was, so that programs
/// it runs (`ddscript record`) do not inherit the setting. Call it first
/// thing in main(), with main's argv, and \p Worth: whether the work ahead
/// is large enough to pay for a second start (about 10 ms). The restarted
/// program's own call restores the environment whatever it says.
void restartWithHugePages(char **Argv, bool Worth);

} // namespace dd

#endif

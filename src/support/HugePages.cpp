#include "support/HugePages.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#ifdef __linux__
#include <sys/prctl.h>
#include <unistd.h>
#endif

namespace {

/// Set in the restarted program: "=" and GLIBC_TUNABLES as it was, or "-"
/// where it was not set.
constexpr const char *Saved = "DDSCRIPT_SAVED_GLIBC_TUNABLES";

void restore(const char *Was) {
  if (Was[0] == '=')
    setenv("GLIBC_TUNABLES", Was + 1, 1);
  else
    unsetenv("GLIBC_TUNABLES");
}

bool madviseMode() {
  std::FILE *F = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!F)
    return false;
  char Buf[128] = {};
  size_t N = std::fread(Buf, 1, sizeof(Buf) - 1, F);
  std::fclose(F);
  Buf[N] = '\0';
  return std::strstr(Buf, "[madvise]") != nullptr;
}

} // namespace

void dd::restartWithHugePages(char **Argv, bool Worth) {
#if defined(__linux__) && defined(__GLIBC__)
  if (const char *Was = std::getenv(Saved)) {
    std::string Copy = Was;
    unsetenv(Saved);
    restore(Copy.c_str());
    // Started as /proc/self/exe, the process is named "exe" in ps and top:
    // give it its own name back.
    if (Argv[0]) {
      const char *Base = std::strrchr(Argv[0], '/');
      prctl(PR_SET_NAME, Base ? Base + 1 : Argv[0], 0, 0, 0);
    }
    return;
  }
  const char *Opt = std::getenv("DDSCRIPT_HUGEPAGES");
  if (!Worth || (Opt && std::strcmp(Opt, "0") == 0) || !madviseMode())
    return;
  // Under valgrind the restarted program would run outside it (valgrind
  // follows no exec by default), unseen by the tool the user ran.
  const char *Preload = std::getenv("LD_PRELOAD");
  if (Preload && std::strstr(Preload, "vgpreload"))
    return;
  const char *Tunables = std::getenv("GLIBC_TUNABLES");
  if (Tunables && std::strstr(Tunables, "glibc.malloc.hugetlb"))
    return;
  std::string Was = Tunables ? "=" + std::string(Tunables) : "-";
  std::string Now = Tunables && *Tunables
                        ? std::string(Tunables) + ":glibc.malloc.hugetlb=1"
                        : "glibc.malloc.hugetlb=1";
  setenv(Saved, Was.c_str(), 1);
  setenv("GLIBC_TUNABLES", Now.c_str(), 1);
  execv("/proc/self/exe", Argv);
  // Not restarted: go on as we are.
  unsetenv(Saved);
  restore(Was.c_str());
#else
  (void)Argv;
  (void)Worth;
#endif
}

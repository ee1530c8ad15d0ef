// Does what the CUDA driver does with CUDA_INJECTION64_PATH, without a GPU:
// loads the library and calls its InitializeInjection. `ddscript record`
// CLI tests run it as the recorded command.
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

int main() {
  const char *Path = std::getenv("CUDA_INJECTION64_PATH");
  if (!Path) {
    std::fprintf(stderr, "inject-probe: CUDA_INJECTION64_PATH is not set\n");
    return 1;
  }
  void *Lib = dlopen(Path, RTLD_NOW | RTLD_LOCAL);
  if (!Lib) {
    std::fprintf(stderr, "inject-probe: %s\n", dlerror());
    return 1;
  }
  auto *Init = reinterpret_cast<int (*)()>(dlsym(Lib, "InitializeInjection"));
  if (!Init) {
    std::fprintf(stderr, "inject-probe: no InitializeInjection\n");
    return 1;
  }
  return Init() == 1 ? 0 : 1;
}

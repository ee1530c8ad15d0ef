#include "ops/Gpus.h"

#include <cctype>

using namespace dd;
using namespace dd::ops;

static const GpuSpec Catalogue[] = {
#define DD_GPU(Key, Match, Fp32, Tf32, Half, Fp8, Bw, Units, Mem, L2, Host,    \
               Source)                                                         \
  {Key, Match, Fp32, Tf32, Half, Fp8, Bw, Units, Mem, L2, Host, Source},
#include "ops/Gpus.def"
};

llvm::ArrayRef<GpuSpec> ops::gpuCatalogue() { return Catalogue; }

static bool sameIgnoringCase(std::string_view A, std::string_view B) {
  if (A.size() != B.size())
    return false;
  for (size_t I = 0; I < A.size(); ++I)
    if (std::tolower(static_cast<unsigned char>(A[I])) !=
        std::tolower(static_cast<unsigned char>(B[I])))
      return false;
  return true;
}

const GpuSpec *ops::findGpu(std::string_view Key) {
  for (const GpuSpec &G : Catalogue)
    if (sameIgnoringCase(G.Key, Key))
      return &G;
  return nullptr;
}

const GpuSpec *ops::gpuForDevice(std::string_view Name) {
  for (const GpuSpec &G : Catalogue) {
    std::string_view M = G.Match;
    while (!M.empty()) {
      size_t Bar = M.find('|');
      std::string_view Alt = M.substr(0, Bar);
      if (!Alt.empty() && Name.find(Alt) != std::string_view::npos)
        return &G;
      if (Bar == std::string_view::npos)
        break;
      M.remove_prefix(Bar + 1);
    }
  }
  return nullptr;
}

double ops::peakTflops(const GpuSpec &G, std::string_view Precision) {
  double V = Precision == "fp8"    ? G.Fp8
             : Precision == "tf32" ? G.Tf32
             : Precision == "half" ? G.Half
                                   : 0.0;
  return V > 0 ? V : G.Fp32;
}

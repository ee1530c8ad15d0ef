//===- Gpus.h - The GPU catalogue -------------------------------*- C++ -*-===//
//
// Public peak figures of the GPUs people train on (Gpus.def, each with its
// source), for models that ask what a run would take on another GPU, and
// the lookup of a trace's GPU by its device name.
//
//===----------------------------------------------------------------------===//
#ifndef DD_OPS_GPUS_H
#define DD_OPS_GPUS_H

#include "llvm/ADT/ArrayRef.h"

#include <string_view>

namespace dd::ops {

struct GpuSpec {
  const char *Key;
  const char *Match;
  double Fp32, Tf32, Half, Fp8; ///< dense peak TFLOP/s; 0: no such path
  double BandwidthGBs;
  int Units; ///< SMs or CUs
  double MemoryGB, L2MB;
  double HostGBs; ///< host link (PCIe) per direction
  const char *Source;
};

/// \p G's dense peak TFLOP/s for a GEMM in \p Precision ("fp8", "tf32",
/// "half", "fp32", as graph::kernelPrecision names them): its fp32 peak
/// where it has no path for that precision.
double peakTflops(const GpuSpec &G, std::string_view Precision);

/// Every entry, in Gpus.def's order.
llvm::ArrayRef<GpuSpec> gpuCatalogue();
/// The entry whose key is \p Key (case-insensitive), or null.
const GpuSpec *findGpu(std::string_view Key);
/// The entry a device name ("NVIDIA H100 80GB HBM3") matches, or null.
const GpuSpec *gpuForDevice(std::string_view DeviceName);

} // namespace dd::ops

#endif

//===- GpusTest.cpp - The GPU catalogue: names as traces record them ------===//

#include "ops/Gpus.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace dd;

TEST_CASE("device names as traces record them find their entry") {
  // The CUDA and ROCm device names torch and Kineto write (deviceProperties'
  // "name"), and names that must not be taken for another part.
  struct Case {
    const char *Device, *Key;
  } Cases[] = {
      {"NVIDIA GeForce RTX 3060 Ti", "RTX-3060-Ti"},
      {"NVIDIA GeForce RTX 3060", "RTX-3060"},
      {"NVIDIA A100-SXM4-80GB", "A100-80GB"},
      {"NVIDIA A100-PCIE-40GB", "A100-PCIe"},
      {"NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"},
      {"NVIDIA A100-SXM4-40GB", "A100"},
      {"A100-SXM4-40GB", "A100"},
      {"NVIDIA A100-PG509-200", "A100"},
      {"NVIDIA H100 80GB HBM3", "H100"},
      {"NVIDIA H100", "H100"},
      {"NVIDIA H100 PCIe", "H100-PCIe"},
      {"NVIDIA H100 NVL", "H100-NVL"},
      {"NVIDIA H200", "H200"},
      {"NVIDIA H200 141GB HBM3e", "H200"},
      {"NVIDIA H200 NVL", "H200-NVL"},
      {"NVIDIA GH200 480GB", "GH200"},
      {"NVIDIA GH200 144G HBM3e", "GH200-144GB"},
      {"NVIDIA GH200 144GB HBM3e", "GH200-144GB"},
      {"NVIDIA B200", "B200"},
      {"Tesla T4", "T4"},
      {"Tesla V100-SXM2-32GB", "V100"},
      {"Tesla V100-DGXS-32GB", "V100"},
      {"Tesla V100-SXM2-16GB", "V100-16GB"},
      {"Tesla V100-PCIE-16GB", "V100-PCIe-16GB"},
      {"Tesla V100-PCIE-32GB", "V100-PCIe"},
      {"Tesla V100S-PCIE-32GB", "V100S"},
      {"Tesla P100-PCIE-16GB", "P100-PCIe"},
      {"Tesla P100-PCIE-12GB", "P100-PCIe-12GB"},
      {"Tesla P100-SXM2-16GB", "P100"},
      {"Quadro GP100", nullptr},
      {"AMD Radeon Graphics", nullptr},
      {"NVIDIA GeForce RTX 2080 Ti", "RTX-2080-Ti"},
      {"NVIDIA A10G", "A10G"},
      {"NVIDIA A10", "A10"},
      {"NVIDIA A30", "A30"},
      {"NVIDIA A40", "A40"},
      {"NVIDIA A16", "A16"},
      {"NVIDIA L4", "L4"},
      {"NVIDIA L40", "L40"},
      {"NVIDIA L40S", "L40S"},
      {"NVIDIA RTX A6000", "RTX-A6000"},
      {"NVIDIA RTX A5000", "RTX-A5000"},
      {"NVIDIA RTX A4500", "RTX-A4500"},
      {"NVIDIA RTX A4000", "RTX-A4000"},
      {"NVIDIA RTX A2000", "RTX-A2000"},
      {"NVIDIA RTX A2000 12GB", "RTX-A2000-12GB"},
      {"NVIDIA RTX A1000", nullptr},
      {"NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada"},
      {"NVIDIA RTX 5000 Ada Generation", "RTX-5000-Ada"},
      {"NVIDIA RTX 4000 Ada Generation", "RTX-4000-Ada"},
      {"NVIDIA RTX 4000 SFF Ada Generation", nullptr},
      {"Quadro RTX 6000", nullptr},
      {"NVIDIA GeForce RTX 4090", "RTX-4090"},
      {"NVIDIA GeForce RTX 4080 SUPER", "RTX-4080-SUPER"},
      {"NVIDIA GeForce RTX 4080", "RTX-4080"},
      {"NVIDIA GeForce RTX 4070 Ti SUPER", "RTX-4070-Ti-SUPER"},
      {"NVIDIA GeForce RTX 4070 Ti", "RTX-4070-Ti"},
      {"NVIDIA GeForce RTX 4070 SUPER", "RTX-4070-SUPER"},
      {"NVIDIA GeForce RTX 4070", "RTX-4070"},
      {"NVIDIA GeForce RTX 4060 Ti", "RTX-4060-Ti"},
      {"NVIDIA GeForce RTX 4060", "RTX-4060"},
      {"NVIDIA GeForce RTX 5090", "RTX-5090"},
      {"NVIDIA GeForce RTX 5080", "RTX-5080"},
      {"NVIDIA GeForce RTX 5070 Ti", "RTX-5070-Ti"},
      {"NVIDIA GeForce RTX 5070", "RTX-5070"},
      {"NVIDIA GeForce RTX 5060 Ti", "RTX-5060-Ti"},
      {"NVIDIA GeForce RTX 5060", "RTX-5060"},
      {"NVIDIA GeForce RTX 3090 Ti", "RTX-3090-Ti"},
      {"NVIDIA GeForce RTX 3090", "RTX-3090"},
      {"NVIDIA GeForce RTX 3080 Ti", "RTX-3080-Ti"},
      {"NVIDIA GeForce RTX 3080", "RTX-3080"},
      {"NVIDIA GeForce RTX 3080 12GB", "RTX-3080-12GB"},
      {"NVIDIA GeForce RTX 3070 Ti", "RTX-3070-Ti"},
      {"NVIDIA GeForce RTX 3070", "RTX-3070"},
      {"GeForce RTX 2080 SUPER", "RTX-2080-SUPER"},
      {"NVIDIA GeForce RTX 2080", "RTX-2080"},
      {"NVIDIA GeForce RTX 2070 SUPER", "RTX-2070-SUPER"},
      {"NVIDIA GeForce RTX 2070", "RTX-2070"},
      {"NVIDIA GeForce RTX 2060 SUPER", "RTX-2060-SUPER"},
      {"NVIDIA GeForce RTX 2060", "RTX-2060"},
      {"NVIDIA TITAN RTX", "TITAN-RTX"},
      {"TITAN RTX", "TITAN-RTX"},
      {"AMD Instinct MI300X", "MI300X"},
      {"AMD Instinct MI300X VF", "MI300X"},
      {"AMD Instinct MI325X", "MI325X"},
      {"AMD Instinct MI300A", "MI300A"},
      {"AMD Instinct MI250X", "MI250X"},
      {"AMD Instinct MI250X/MI250", "MI250X"},
      {"AMD Instinct MI250", "MI250"},
      {"AMD Instinct MI210", "MI210"},
      {"AMD Instinct MI100", "MI100"},
      {"NVIDIA T400", nullptr},
      {"NVIDIA GB200", "B200"},
  };
  for (const Case &C : Cases) {
    CAPTURE(C.Device);
    const ops::GpuSpec *G = ops::gpuForDevice(C.Device);
    if (!C.Key) {
      CHECK(G == nullptr);
      continue;
    }
    REQUIRE(G != nullptr);
    CHECK(std::string(G->Key) == C.Key);
  }
}

TEST_CASE("no entry is hidden by one before it, and each is whole") {
  std::set<std::string> Keys;
  for (const ops::GpuSpec &G : ops::gpuCatalogue()) {
    std::string Key = G.Key;
    CAPTURE(Key);
    CHECK(Keys.insert(G.Key).second);
    CHECK(ops::findGpu(G.Key) == &G);
    // Each alternative of its Match, as a device name, reaches it: an
    // earlier, less specific entry would take it first.
    std::string Match = G.Match;
    for (size_t At = 0; At <= Match.size();) {
      size_t Bar = Match.find('|', At);
      std::string Alt = Match.substr(
          At, Bar == std::string::npos ? std::string::npos : Bar - At);
      CAPTURE(Alt);
      const ops::GpuSpec *Found = ops::gpuForDevice("NVIDIA " + Alt);
      CHECK(Found == &G);
      if (Bar == std::string::npos)
        break;
      At = Bar + 1;
    }
    CHECK(G.Fp32 > 0);
    // A half-precision path, where there is one, is no slower than fp32.
    CHECK((G.Half == 0 || G.Half >= G.Fp32));
    CHECK(G.BandwidthGBs > 0);
    CHECK(G.Units > 0);
    CHECK(G.MemoryGB > 0);
    CHECK(G.HostGBs > 0);
    CHECK(std::string(G.Source).size() > 10);
  }
  CHECK(Keys.size() >= 40);
}

//===- cupti.cpp - libFuzzer target: a run.cupti recording ----------------===//
//
// Bytes as the run.cupti reader takes them (trace::parseCupti: records,
// string table, ids), then the graph built and replayed. The target starts
// past the format's check of its magic number, so that the fuzzer spends its
// time on the records.
//
//===----------------------------------------------------------------------===//

#include "FuzzReplay.h"

#include "trace/TraceReader.h"

#include <string_view>

using namespace dd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Bytes(reinterpret_cast<const char *>(Data), Size);
  auto T = trace::parseCupti(Bytes, "run.cupti");
  if (!T) {
    llvm::consumeError(T.takeError());
    return 0;
  }
  fuzz::replay(*T);
  return 0;
}

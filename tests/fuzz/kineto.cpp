//===- kineto.cpp - libFuzzer target: a trace file's bytes ----------------===//
//
// Bytes as `ddscript replay --trace F` reads them (trace::parseTrace: Kineto
// JSON, plain or gzip, or run.cupti, told apart by content), then the graph
// built and replayed. JSON is also read by the JSON reader in one window and in
// small ones, on one and on two threads: the reader promises the same trace
// and warnings whatever the windows, and the same errors too whatever the
// threads (docs/architecture.md), so a difference aborts.
//
//===----------------------------------------------------------------------===//

#include "FuzzReplay.h"

#include "support/InputStream.h"
#include "trace/TraceReader.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace dd;

namespace {

/// What a read gave, for comparing reads: the error, or the sizes of the
/// model and its warnings.
std::string summary(llvm::Expected<trace::Trace> &T) {
  if (!T)
    return "error: " + llvm::toString(T.takeError());
  std::string S = "events " + std::to_string(T->numEvents()) + ", flows " +
                  std::to_string(T->Flows.size()) + ", memory " +
                  std::to_string(T->Memory.size());
  for (const std::string &W : T->Warnings)
    S += "\nwarning: " + W;
  return S;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string_view Bytes(reinterpret_cast<const char *>(Data), Size);
  auto T = trace::parseTrace(Bytes, "fuzz.json");
  if (T)
    fuzz::replay(*T);
  else
    llvm::consumeError(T.takeError());
  if (trace::isCuptiData(Bytes))
    return 0;
  // The JSON reader itself (parseTrace refuses some bytes before it), in
  // one window, in small ones, and in small ones on two threads.
  auto Read = [&](size_t Window, unsigned Threads) {
    auto R = trace::readKinetoJson(*InputStream::fromMemory(Bytes), "fuzz.json",
                                   nullptr, Window, Threads);
    return summary(R);
  };
  auto Differ = [](const char *What, const std::string &A,
                   const std::string &B) {
    std::fprintf(stderr, "%s:\n%s\n---\n%s\n", What, A.c_str(), B.c_str());
    std::abort();
  };
  std::string Whole = Read(0, 1), Small = Read(64, 1), Threaded = Read(64, 2);
  // The threads never change what is read, errors included.
  if (Threaded != Small)
    Differ("64-byte windows, one thread, then two", Small, Threaded);
  // The windows do not change whether a document reads, nor what it reads.
  // (Where it is refused, the error found first may differ: a window
  // parsed as a whole can meet a later fault before an earlier one.)
  bool WholeOk = Whole.rfind("error: ", 0) != 0;
  bool SmallOk = Small.rfind("error: ", 0) != 0;
  if (WholeOk != SmallOk || (WholeOk && Whole != Small))
    Differ("one window, then 64-byte ones", Whole, Small);
  return 0;
}

#include "trace/TraceReader.h"

#include "support/Error.h"
#include "support/InputStream.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

using namespace dd;
using namespace dd::trace;

unsigned dd::trace::defaultLoadThreads() {
  if (const char *Env = std::getenv("DDSCRIPT_THREADS")) {
    char *End = nullptr;
    long N = std::strtol(Env, &End, 10);
    if (End != Env && *End == '\0' && N > 0)
      return static_cast<unsigned>(std::min<long>(N, 64));
  }
  unsigned Hw = std::thread::hardware_concurrency();
  return std::clamp(Hw, 1u, 4u);
}

unsigned dd::trace::loadThreadsFor(uint64_t ContentBytes, size_t WindowBytes) {
  return ContentBytes < 12 * uint64_t(WindowBytes) ? 1 : defaultLoadThreads();
}

/// What readTrace and parseTrace share: the format told apart by content.
static llvm::Expected<Trace> readTraceFrom(InputStream &In,
                                           const std::string &Path,
                                           const ProgressFn &Progress) {
  // The collector's binary format is told apart by its magic number.
  auto Head = In.peek(16);
  if (!Head)
    return Head.takeError();
  if (Progress)
    Progress(0.0);
  auto Read = [&]() -> llvm::Expected<Trace> {
    if (!isCuptiData(*Head)) {
      if (Head->substr(0, 4) == "DDCU")
        return makeError("corrupt run.cupti file: its magic number is "
                         "damaged, or the file is cut short");
      // The stream has inflated one gzip layer already (a gzip file's
      // content is read inflated): gzip magic here is a second layer.
      if (Head->substr(0, 2) == "\x1f\x8b")
        return makeError("not a trace: gzip inside gzip (the file was "
                         "compressed twice); gunzip it once and read that");
      if (Head->find('\0') != std::string_view::npos)
        return makeError("not a trace: a binary file that is neither gzip "
                         "nor run.cupti (no DDCUPTI magic number)");
      return readKinetoJson(In, Path, Progress);
    }
    auto Data = In.readAll();
    if (!Data)
      return Data.takeError();
    return parseCupti(*Data, Path);
  };
  auto T = Read();
  if (Progress)
    Progress(1.0);
  return T;
}

llvm::Expected<Trace> dd::trace::readTrace(const std::string &Path,
                                           const ProgressFn &Progress) {
  auto In = InputStream::open(Path);
  if (!In)
    return In.takeError();
  return readTraceFrom(**In, Path, Progress);
}

llvm::Expected<Trace> dd::trace::parseTrace(std::string_view Data,
                                            const std::string &Path) {
  auto In = InputStream::fromMemory(Data);
  return readTraceFrom(*In, Path, nullptr);
}

#include "trace/TraceReader.h"

#include "support/FileIO.h"

using namespace dd;
using namespace dd::trace;

llvm::Expected<Trace> dd::trace::readTrace(const std::string &Path,
                                           const ProgressFn &Progress) {
  auto Data = readFileMaybeGzip(Path);
  if (!Data)
    return Data.takeError();
  if (Progress)
    Progress(0.0);
  // The collector's binary format is told apart by its magic number.
  auto T = isCuptiData(*Data) ? parseCupti(*Data, Path)
                              : parseKinetoJson(*Data, Path, Progress);
  if (Progress)
    Progress(1.0);
  return T;
}

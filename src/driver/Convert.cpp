//===- Convert.cpp - ddscript convert -------------------------------------===//
//
// Writes any trace ddscript reads (run.cupti, Kineto JSON) as Chrome-trace
// JSON, for Perfetto or chrome://tracing; gzip-compressed when the output
// name ends in .gz.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Session.h"

#include "support/FileIO.h"
#include "trace/ChromeJson.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::driver;

int dd::driver::runConvert(const ConvertOptions &O) {
  if (!checkOutputPaths({{"-o", O.Output}},
                        {{"the trace being read", O.Input}}))
    return ExitBadInput;
  auto T = loadTrace(O.Input);
  if (!T) {
    reportError(O.Input, llvm::toString(T.takeError()));
    return ExitBadInput;
  }
  for (const std::string &W : T->Warnings)
    reportWarning(O.Input, W);
  size_t Records = 0;
  std::string Json = trace::writeChromeJson(*T, &Records);
  auto Written = writeFileMaybeGzip(O.Output, Json);
  if (!Written) {
    reportError(O.Output, llvm::toString(Written.takeError()));
    return ExitBadInput;
  }
  if (O.Format == OutputFormat::Json) {
    writeJson([&](JsonWriter &W) {
      W.beginObject()
          .field("trace", O.Input)
          .field("output", O.Output)
          .field("events", static_cast<uint64_t>(T->numEvents()))
          .field("records", static_cast<uint64_t>(Records))
          .field("bytes", static_cast<uint64_t>(*Written))
          .endObject();
    });
    return ExitOk;
  }
  writeOut(fmt::format("{}: {} events ({} records with thread names, "
                       "memory and flows), {} (open it in "
                       "https://ui.perfetto.dev)\n",
                       O.Output, formatCount(T->numEvents()),
                       formatCount(Records),
                       formatBytes(static_cast<int64_t>(*Written))));
  return ExitOk;
}

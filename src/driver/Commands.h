//===- Commands.h - The ddscript subcommands --------------------*- C++ -*-===//
#ifndef DD_DRIVER_COMMANDS_H
#define DD_DRIVER_COMMANDS_H

#include <string>

namespace dd::driver {

enum class OutputFormat { Text, Json };

struct TraceOptions {
  std::string TracePath;
  std::string Iteration; ///< "", a number, or "all"
  std::string Window;    ///< "", or START:END in microseconds
  OutputFormat Format = OutputFormat::Text;
  /// replay: list this many tasks whose replayed start differs from the
  /// trace, earliest first (a check of the dependency model).
  unsigned Diverging = 0;
  /// memory: how many of the largest blocks live at the peak to list.
  unsigned Top = 10;
};

int runInspect(const TraceOptions &O);
int runReplay(const TraceOptions &O);
int runMemory(const TraceOptions &O);

} // namespace dd::driver

#endif

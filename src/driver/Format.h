//===- Format.h - Human and JSON output helpers -----------------*- C++ -*-===//
#ifndef DD_DRIVER_FORMAT_H
#define DD_DRIVER_FORMAT_H

#include "sim/CriticalPath.h"
#include "support/Format.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dd::driver {

// The number formatters and the JSON writer live in support (the report
// library writes the same numbers); the commands use them by these names.
using dd::formatBytes;
using dd::formatCount;
using dd::formatDuration;
using dd::formatPercent;
using dd::jsonEscape;
using dd::JsonWriter;

/// A left-aligned text table; the last column may be long.
class Table {
public:
  void row(std::vector<std::string> Cells) { Rows.push_back(std::move(Cells)); }
  /// Right-align column \p C (numbers).
  void alignRight(size_t C) {
    if (RightAligned.size() <= C)
      RightAligned.resize(C + 1, false);
    RightAligned[C] = true;
  }
  std::string render(std::string_view Indent = "  ") const;

private:
  std::vector<std::vector<std::string>> Rows;
  std::vector<bool> RightAligned;
};

/// "bound by   framework overhead 54.7%, synchronisation 30.0%, ...": what
/// the critical path's time was (sim::sharesByBound), as a line.
std::string boundByLine(const graph::Graph &G, const sim::CriticalPath &P);
/// The tasks that ran longest on the path (at most 5), as lines.
std::string longestTasksLines(const graph::Graph &G,
                              const sim::CriticalPath &P);
/// Writes "critical_tasks": the tasks that ran longest on the path (at
/// most 10), each {name, resource, count, ns}.
void writeLongestTasks(JsonWriter &W, const graph::Graph &G,
                       const sim::CriticalPath &P);
/// The largest shares of a critical path by activity (at most 8), with
/// their time and share of the path, as a table.
std::string renderPathShares(const graph::Graph &G, const sim::CriticalPath &P);

} // namespace dd::driver

#endif

//===- Format.cpp - Text tables -------------------------------------------===//

#include "driver/Format.h"

#include <fmt/format.h>

#include <algorithm>

using namespace dd::driver;

std::string Table::render(std::string_view Indent) const {
  std::vector<size_t> Width;
  for (const auto &R : Rows)
    for (size_t C = 0; C < R.size(); ++C) {
      if (Width.size() <= C)
        Width.resize(C + 1, 0);
      Width[C] = std::max(Width[C], R[C].size());
    }
  std::string Out;
  for (const auto &R : Rows) {
    std::string Line(Indent);
    for (size_t C = 0; C < R.size(); ++C) {
      bool Right = C < RightAligned.size() && RightAligned[C];
      bool Last = C + 1 == R.size();
      size_t Pad = Width[C] - R[C].size();
      if (Right)
        Line.append(Pad, ' ');
      Line += R[C];
      if (!Last)
        Line.append((Right ? 0 : Pad) + 2, ' ');
    }
    while (!Line.empty() && Line.back() == ' ')
      Line.pop_back();
    Out += Line;
    Out += '\n';
  }
  return Out;
}

std::string dd::driver::renderPathShares(const graph::Graph &G,
                                         const sim::CriticalPath &P) {
  Table T;
  T.alignRight(1);
  T.alignRight(2);
  size_t Shown = 0;
  for (const sim::PathShare &S : sim::sharesByActivity(G, P)) {
    if (++Shown > 8)
      break;
    T.row({S.Label, formatDuration(S.Time),
           formatPercent(double(S.Time) /
                         double(std::max<int64_t>(1, P.Length)))});
  }
  return T.render();
}

std::string dd::driver::boundByLine(const graph::Graph &G,
                                    const sim::CriticalPath &P) {
  std::string Out;
  for (const sim::PathShare &S : sim::sharesByBound(G, P))
    Out += fmt::format(
        "{}{} {}", Out.empty() ? "" : ", ", S.Label,
        formatPercent(double(S.Time) / double(std::max<int64_t>(1, P.Length))));
  return Out.empty() ? Out : "bound by   " + Out + " (of the critical path)\n";
}

std::string dd::driver::longestTasksLines(const graph::Graph &G,
                                          const sim::CriticalPath &P) {
  std::vector<sim::PathTask> Top = sim::longestTasks(G, P, 5);
  if (Top.empty())
    return "";
  Table T;
  T.alignRight(2);
  T.alignRight(3);
  for (const sim::PathTask &X : Top)
    T.row({X.Name.size() <= 60 ? X.Name : X.Name.substr(0, 57) + "...",
           X.Resource, fmt::format("{}x", formatCount(X.Count)),
           formatDuration(X.Time)});
  return "  longest tasks on it:\n" + T.render("    ");
}

void dd::driver::writeLongestTasks(JsonWriter &W, const graph::Graph &G,
                                   const sim::CriticalPath &P) {
  W.key("critical_tasks").beginArray();
  for (const sim::PathTask &X : sim::longestTasks(G, P, 10))
    W.beginObject()
        .field("name", X.Name)
        .field("resource", X.Resource)
        .field("count", X.Count)
        .field("ns", X.Time)
        .endObject();
  W.endArray();
}

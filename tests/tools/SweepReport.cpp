//===- SweepReport.cpp - A report page with a synthetic sweep -------------===//
//
// usage: dd_sweep_report TRACE OUT.html
//
// The sweep feature is not in ddscript yet; its results will reach the page
// as report::Sweep. This writes the report of TRACE's replay with a made-up
// sweep of two parameters (a numeric "speedup" on the x axis, a categorical
// "overlap" as two lines) and prints, as one JSON object, the results it
// gave the page, so that tests/report/check_page.py can check the plot
// against them.
//
//===----------------------------------------------------------------------===//

#include "builder/GraphBuilder.h"
#include "driver/Outputs.h"
#include "driver/Session.h"
#include "report/Report.h"
#include "support/FileIO.h"
#include "support/Format.h"
#include "trace/TraceReader.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

using namespace dd;

int main(int Argc, char **Argv) {
  if (Argc != 3) {
    std::fprintf(stderr, "usage: dd_sweep_report TRACE OUT.html\n");
    return 2;
  }
  auto T = trace::readTrace(Argv[1]);
  if (!T) {
    std::fprintf(stderr, "%s\n", llvm::toString(T.takeError()).c_str());
    return 2;
  }
  auto G = graph::buildGraph(*T, {});
  if (!G) {
    std::fprintf(stderr, "%s\n", llvm::toString(G.takeError()).c_str());
    return 2;
  }
  auto R = sim::simulate(*G);
  if (!R)
    return 2;
  std::vector<int64_t> MStart, MEnd;
  driver::measuredTimes(*G, MStart, MEnd);

  report::RunData D;
  D.G = &*G;
  D.Command = "replay";
  D.TracePath = Argv[1];
  D.SteadyState = driver::defaultIteration(*G);
  D.Reported = {D.SteadyState};
  D.Measured = driver::measuredSchedule(*G, MStart, MEnd);
  D.Replayed = driver::simulatedSchedule("replayed", *G, *R, D.Reported);

  report::Sweep S;
  S.Params = {"speedup", "overlap"};
  S.BaselineNs = D.Replayed.Iterations[D.SteadyState].length();
  for (const char *Overlap : {"on", "off"})
    for (double Speedup : {1.0, 1.5, 2.0, 3.0, 4.0}) {
      report::SweepPoint P;
      P.Values = {{fmt::format("{}", Speedup), Speedup}, {Overlap, {}}};
      double Share = std::string(Overlap) == "on" ? 0.9 : 1.0;
      P.PredictedNs = std::llround(double(S.BaselineNs) * Share / Speedup);
      S.Points.push_back(P);
    }
  D.SweepResults = S;

  auto Written = writeFileMaybeGzip(Argv[2], report::renderHtml(D));
  if (!Written) {
    std::fprintf(stderr, "%s: error: %s\n", Argv[2],
                 llvm::toString(Written.takeError()).c_str());
    return 2;
  }
  std::string Out;
  JsonWriter W(Out);
  W.beginObject().key("params").beginArray();
  for (const std::string &P : S.Params)
    W.value(P);
  W.endArray().key("points").beginArray();
  for (const report::SweepPoint &P : S.Points) {
    W.beginObject().key("values").beginArray();
    for (const report::SweepValue &V : P.Values)
      W.value(V.Text);
    W.endArray().field("ns", P.PredictedNs).endObject();
  }
  W.endArray().endObject();
  std::puts(Out.c_str());
  return 0;
}

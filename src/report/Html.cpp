//===- Html.cpp - The self-contained HTML report --------------------------===//
//
// One file, nothing fetched: the numbers and tables are written here as
// HTML (they read the same as the command's text, and show without
// JavaScript); the charts are drawn by assets/report.js from the JSON of
// PageData.cpp, embedded in the page with the script and the style sheet.
//
//===----------------------------------------------------------------------===//

#include "report/ReportImpl.h"
#include "support/Format.h"

#include "llvm/ADT/StringMap.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ReportCss.inc"
#include "ReportJs.inc"

using namespace dd;
using namespace dd::report;
using namespace dd::report::detail;

namespace {

/// A table cell holding a duration, with the exact value for scripts.
std::string durationCell(const char *Id, int64_t Ns) {
  return fmt::format("<td{} class=\"num\" data-ns=\"{}\">{}</td>",
                     Id ? fmt::format(" id=\"{}\"", Id) : std::string(), Ns,
                     formatDuration(Ns));
}

/// The change from \p From to \p To, "+1.23%" ("-" when From is 0).
std::string changeText(int64_t From, int64_t To) {
  return From ? formatPercent(double(To - From) / double(From), true) : "-";
}

/// A table cell with changeText.
std::string changeCell(int64_t From, int64_t To) {
  return fmt::format("<td class=\"num\">{}</td>", changeText(From, To));
}

/// The summary's replayed row: \p R, and its error against measured \p M.
std::string replayedRow(int64_t M, int64_t R) {
  return "<tr><th>replayed</th>" + durationCell("replayed", R) +
         fmt::format("<td id=\"replay-error\">error {}</td></tr>\n",
                     changeText(M, R));
}

/// The summary's unprofiled row: \p R, the replay without the profiler's
/// cost, which the speedup is against.
std::string unprofiledRow(int64_t R) {
  return "<tr><th>unprofiled</th>" + durationCell("unprofiled", R) +
         "<td>the replay without the profiler's cost: what the speedup is "
         "against</td></tr>\n";
}

std::string percentOf(int64_t Part, int64_t Whole) {
  return Whole ? formatPercent(double(Part) / double(Whole)) : "-";
}

class HtmlWriter {
public:
  explicit HtmlWriter(const RunData &D) : D(D), G(*D.G) {}
  std::string write();

private:
  const RunData &D;
  const Graph &G;
  std::string Out;
  /// The page's roofline, drawn by its section and the page's data.
  Roofline RF;

  void header();
  void summary();
  void jobSummary();
  void iterationTable();
  void changes();
  void changedTasks();
  void timeline();
  void bars();
  void memory();
  void roofline();
  void critical();
  void sweep();
  void opportunities();
  void comparison();
};

void HtmlWriter::header() {
  Out += "<header><h1>ddscript report</h1><dl class=\"facts\">";
  auto Fact = [&](const char *K, const std::string &V) {
    Out += fmt::format("<dt>{}</dt><dd>{}</dd>", K, htmlEscape(V));
  };
  if (!D.ModelPath.empty())
    Fact("model", D.ModelPath + (D.ModelDescription.empty()
                                     ? ""
                                     : " (" + D.ModelDescription + ")"));
  for (const auto &[Name, Value] : D.Params)
    Fact("parameter", Name + " = " + Value);
  Fact(D.Compared ? "before" : "trace", D.TracePath);
  if (D.Compared)
    Fact("after",
         D.Compared->After.Trace + " (" + D.Compared->After.Label + ")");
  if (D.Job) {
    Fact("iteration", fmt::format("{} on each of the {} ranks", D.Job->Label,
                                  D.Job->Ranks.size()));
    Out += "</dl></header>\n";
    return;
  }
  std::string It = windowLabel(D);
  if (D.Reported.size() == 1)
    It += fmt::format(" ({} of {}{})", G.iterationOrdinal(D.Reported.front()),
                      G.traceIterationCount(),
                      D.Reported.front() == D.SteadyState ? ", steady state"
                                                          : "");
  Fact(D.Reported.size() == 1 ? "iteration" : "iterations", It);
  Out += "</dl></header>\n";
}

/// The time of the reported iterations on \p S: their sum.
int64_t reportedTime(const RunData &D, const Schedule &S) {
  int64_t N = 0;
  for (size_t I : D.Reported)
    N += S.Iterations[I].length();
  return N;
}

void HtmlWriter::summary() {
  if (D.Job) {
    jobSummary();
    return;
  }
  int64_t M = reportedTime(D, D.Measured), R = reportedTime(D, D.Replayed);
  Out += "<section id=\"summary\"><h2>Summary</h2>\n";
  if (D.Unprofiled) {
    Out += fmt::format("<p class=\"note\" id=\"unprofiled\">Measured without "
                       "the profiler (--unprofiled); the trace's iterations "
                       "took {}. The trace's CPU work was scaled to match "
                       "before the model ran; the timeline shows the trace's "
                       "times.</p>\n",
                       formatDuration(M));
    M = D.Unprofiled * static_cast<int64_t>(D.Reported.size());
  }
  if (D.Reported.size() > 1)
    Out += fmt::format("<p class=\"note\">Times of the {} reported iterations "
                       "together.</p>\n",
                       D.Reported.size());
  Out += "<table class=\"numbers\">";
  Out += "<tr><th>measured</th>" + durationCell("measured", M) +
         "<td></td></tr>\n";
  if (D.ProfiledReplays.empty()) {
    Out += replayedRow(M, R);
  } else {
    int64_t Profiled = 0;
    for (int64_t P : D.ProfiledReplays)
      Profiled += P;
    Out += replayedRow(M, Profiled) + unprofiledRow(R);
  }
  if (D.Predicted) {
    int64_t P = reportedTime(D, *D.Predicted);
    Out += "<tr><th>predicted</th>" + durationCell("predicted", P) +
           fmt::format("<td>speedup <span id=\"speedup\">{}</span> ({})</td>"
                       "</tr>\n",
                       formatSpeedup(R, P), changeText(R, P));
  }
  const Schedule &B = D.before(), &A = D.after();
  Span BW = window(D, B), AW = window(D, A);
  int64_t BB = gpuBusy(G, B, BW), AB = gpuBusy(G, A, AW);
  // The after side's busy time in the big column, as the rows above put the
  // after side's time there; the before side's beside it.
  Out += "<tr><th>GPU busy</th>" + durationCell("gpu-busy", AB) +
         fmt::format("<td>{} of the {} iteration; {} {}</td></tr>\n",
                     percentOf(AB, AW.length()), htmlEscape(A.Label),
                     formatDuration(BB), htmlEscape(B.Label));
  Out += "</table>\n";
  if (D.Reported.size() > 1)
    iterationTable();
  changes();
  Out += "</section>\n";
}

void HtmlWriter::jobSummary() {
  const JobSummary &J = *D.Job;
  bool Run = J.Predicted >= 0;
  Out += "<section id=\"summary\"><h2>Summary</h2>\n";
  Out +=
      fmt::format("<p class=\"note\">{} ranks {} together, iteration {}: "
                  "the job's time runs from the first rank's begin to the "
                  "last rank's end.</p>\n",
                  J.Ranks.size(), Run ? "replayed and predicted" : "replayed",
                  htmlEscape(J.Label));
  Out += "<table class=\"numbers\">";
  Out += "<tr><th>measured</th>" + durationCell("measured", J.Measured) +
         "<td></td></tr>\n";
  bool Profiled = J.ProfiledReplay >= 0;
  if (Profiled)
    Out +=
        replayedRow(J.Measured, J.ProfiledReplay) + unprofiledRow(J.Replayed);
  else
    Out += replayedRow(J.Measured, J.Replayed);
  if (Run)
    Out += "<tr><th>predicted</th>" + durationCell("predicted", J.Predicted) +
           fmt::format("<td>speedup <span id=\"speedup\">{}</span> ({})</td>"
                       "</tr>\n",
                       formatSpeedup(J.ReplayedSteady, J.Predicted),
                       changeText(J.ReplayedSteady, J.Predicted));
  Out += "</table>\n<h3>Ranks</h3>\n<p class=\"note\">Late at collectives: "
         "how long the others waited for the rank at the collectives of the "
         "iteration, in all, as replayed.</p>\n";
  Out += "<table class=\"grid\" id=\"ranks\"><tr><th>rank</th><th>"
         "measured</th><th>replayed</th><th>error</th>";
  Out += Profiled ? "<th>unprofiled</th>" : "";
  Out += "<th>late at collectives</th>";
  Out += Run ? "<th>predicted</th><th>speedup</th></tr>\n" : "</tr>\n";
  for (const JobSummary::RankRow &R : J.Ranks) {
    int64_t Shown = Profiled ? R.ProfiledReplay : R.Replayed;
    Out += fmt::format("<tr data-rank=\"{}\"><td>{}</td>", R.Rank, R.Rank) +
           durationCell(nullptr, R.Measured) + durationCell(nullptr, Shown) +
           changeCell(R.Measured, Shown);
    if (Profiled)
      Out += durationCell(nullptr, R.Replayed);
    Out += durationCell(nullptr, R.Late);
    if (Run)
      Out += durationCell(nullptr, R.Predicted) +
             fmt::format("<td class=\"num\">{}</td>",
                         formatSpeedup(R.ReplayedSteady, R.Predicted));
    Out += "</tr>\n";
  }
  Out += "</table>\n";
  if (!J.HasStragglers) {
    Out += "</section>\n";
    return;
  }
  Out += "<h3>Stragglers</h3>\n";
  if (J.Stragglers.empty()) {
    Out += "<p>No rank arrived at the collectives later than the median "
           "rank.</p>\n";
  } else {
    Out += "<p class=\"note\">The ranks later than the median rank at the "
           "collectives, latest first, each with the job's iteration were "
           "its own work fast enough to be no later than the median rank "
           "(a simulated what-if).</p>\n";
    Out += "<table class=\"grid\" id=\"stragglers\"><tr><th>rank</th><th>"
           "late</th><th>its work</th><th>job without the lateness</th><th>"
           "change</th></tr>\n";
    for (const JobSummary::Straggler &S : J.Stragglers)
      Out +=
          fmt::format("<tr data-straggler=\"{}\"><td>{}</td>", S.Rank, S.Rank) +
          durationCell(nullptr, S.Late) +
          (S.WorkScale >= 0
               ? fmt::format("<td class=\"num\">x{:.2f}</td>", S.WorkScale)
               : std::string("<td class=\"num\">any: no gain</td>")) +
          durationCell(nullptr, S.JobWithout) +
          changeCell(J.Replayed, S.JobWithout) + "</tr>\n";
    Out += "</table>\n";
  }
  Out += "</section>\n";
}

void HtmlWriter::iterationTable() {
  bool Profiled = !D.ProfiledReplays.empty();
  Out += "<table class=\"grid\" id=\"iterations\"><tr><th>iteration</th>"
         "<th>measured</th><th>replayed</th>";
  Out += Profiled ? "<th>unprofiled</th>" : "";
  if (D.Predicted)
    Out += "<th>predicted</th><th>speedup</th>";
  Out += "</tr>\n";
  for (size_t K = 0; K < D.Reported.size(); ++K) {
    size_t I = D.Reported[K];
    int64_t R = D.Replayed.Iterations[I].length();
    Out +=
        fmt::format("<tr data-iteration=\"{}\"><td>", G.Iterations[I].Number) +
        htmlEscape(G.Iterations[I].Label) + "</td>" +
        durationCell(nullptr, D.Unprofiled ? D.Unprofiled
                                           : D.Measured.Iterations[I].length());
    if (Profiled)
      Out += durationCell(nullptr, D.ProfiledReplays[K]);
    Out += durationCell(nullptr, R);
    if (D.Predicted) {
      int64_t P = D.Predicted->Iterations[I].length();
      Out += durationCell(nullptr, P) +
             fmt::format("<td class=\"num\">{}</td>", formatSpeedup(R, P));
    }
    Out += "</tr>\n";
  }
  Out += "</table>\n";
}

void HtmlWriter::changes() {
  Out += "<h3>What changed</h3>\n";
  if (!D.Predicted && D.SweepResults) {
    Out += fmt::format(
        "<p>The model ran {} times, once per combination of the swept "
        "parameters, each on a fresh copy of the graph: the sweep below "
        "gives each run's prediction. The timeline, the bars and the "
        "critical path show the replay of the unchanged graph; run one "
        "combination with <code>--report</code> to see what it "
        "changed.</p>\n",
        D.SweepResults->Points.size());
    return;
  }
  if (!D.Predicted && D.Opportunities) {
    Out += "<p>Nothing here: each what-if below ran on a copy of the graph. "
           "The timeline, the bars and the critical path show the replay of "
           "the unchanged graph; run a what-if's line with <code>ddscript "
           "run</code> and <code>--report</code> to see what it "
           "changes.</p>\n";
    return;
  }
  if (!D.Predicted) {
    Out += "<p>Nothing: this is the replay of the unchanged graph, compared "
           "with the trace.</p>\n";
    return;
  }
  if (!D.Changes.empty()) {
    Out += "<ul class=\"changes\">";
    for (const auto &[What, Value] : D.Changes)
      Out += fmt::format("<li>{} <b>{}</b></li>", htmlEscape(What),
                         htmlEscape(Value));
    Out += "</ul>\n";
  }
  changedTasks();
}

void HtmlWriter::changedTasks() {
  // Leaves of the reported iterations that the model changed, inserted or
  // removed, by name: their time on the replay and on the prediction.
  llvm::BitVector InReported(G.Iterations.size());
  for (size_t I : D.Reported)
    InReported.set(I);
  struct Row {
    std::string Name, Kind;
    uint64_t Count = 0;
    int64_t Before = 0, After = 0;
  };
  llvm::StringMap<Row> Rows;
  const Schedule &B = D.before(), &A = D.after();
  for (TaskId T = 0; T < G.numTasks(); ++T) {
    uint8_t F = G.Flags[T];
    int32_t It = G.IterationOf[T];
    if (!G.isLeaf(T) || It < 0 || !InReported.test(size_t(It)) ||
        !(F & (graph::TF_Changed | graph::TF_Inserted | graph::TF_Removed)))
      continue;
    std::string Key =
        fmt::format("{}\x1f{}", G.name(T), graph::taskKindName(G.Kind[T]));
    Row &R = Rows[Key];
    R.Name = std::string(G.name(T));
    R.Kind = graph::taskKindName(G.Kind[T]);
    ++R.Count;
    if (present(B, T))
      R.Before += B.End[T] - B.Start[T];
    if (present(A, T))
      R.After += A.End[T] - A.Start[T];
  }
  if (Rows.empty()) {
    Out += "<p>No task of the reported iterations changed.</p>\n";
    return;
  }
  std::vector<Row> Sorted;
  int64_t SumB = 0, SumA = 0;
  uint64_t SumN = 0;
  for (auto &E : Rows) {
    Sorted.push_back(E.getValue());
    SumB += E.getValue().Before;
    SumA += E.getValue().After;
    SumN += E.getValue().Count;
  }
  std::sort(Sorted.begin(), Sorted.end(), [](const Row &X, const Row &Y) {
    int64_t DX = std::abs(X.After - X.Before),
            DY = std::abs(Y.After - Y.Before);
    return DX != DY ? DX > DY
                    : std::tie(X.Name, X.Kind) < std::tie(Y.Name, Y.Kind);
  });
  Out += fmt::format(
      "<p>In the reported iterations, {} tasks changed: {} of task time on "
      "the {}, {} on the {}. The largest changes:</p>\n",
      formatCount(SumN), formatDuration(SumB), htmlEscape(B.Label),
      formatDuration(SumA), htmlEscape(A.Label));
  Out += fmt::format("<table class=\"grid\" id=\"changed-tasks\"><tr><th>task"
                     "</th><th>kind</th><th>count</th><th>{}</th><th>{}</th>"
                     "<th>change</th></tr>\n",
                     htmlEscape(B.Label), htmlEscape(A.Label));
  for (size_t I = 0; I < Sorted.size() && I < 12; ++I) {
    const Row &R = Sorted[I];
    Out += fmt::format(
        "<tr><td title=\"{}\">{}</td><td>{}</td>"
        "<td class=\"num\">{}</td>{}{}<td class=\"num\">{}{}"
        "</td></tr>\n",
        htmlEscape(R.Name), htmlEscape(shorten(R.Name, 240)), R.Kind,
        formatCount(R.Count), durationCell(nullptr, R.Before),
        durationCell(nullptr, R.After), R.After >= R.Before ? "+" : "",
        formatDuration(R.After - R.Before));
  }
  Out += "</table>\n";
}

void HtmlWriter::timeline() {
  Out += fmt::format(
      "<section id=\"timeline\"><h2>Timeline: {} and {}</h2>\n<p "
      "class=\"note\">"
      "Each resource has two rows, the {} above the {}, both from the start of "
      "{}; the dashed lines are iteration boundaries, and work of the "
      "iteration that ran past its end (GPU work queued behind the CPU) lies "
      "beyond them. Scroll to zoom, drag to pan, double-click to reset; "
      "hover a task "
      "for its details. Outlined: changed by the model; red: removed; "
      "black: inserted; the red line under a task: on the critical "
      "path.</p>\n<div id=\"tl\" class=\"chart\"></div></section>\n",
      htmlEscape(D.before().Label), htmlEscape(D.after().Label),
      htmlEscape(D.before().Label), htmlEscape(D.after().Label),
      htmlEscape(windowLabel(D)));
}

void HtmlWriter::bars() {
  Out += "<section id=\"bars\"><h2>Where the time went: by phase and by "
         "layer</h2>\n<p class=\"note\">Task time of the reported iterations "
         "on the GPU or the CPU, or running time on the critical path; "
         "before and after.</p>\n<div id=\"bar-metric\" class=\"controls\">"
         "</div><div id=\"bars-phase\" class=\"chart\"></div>"
         "<div id=\"bars-layer\" class=\"chart\"></div></section>\n";
}

void HtmlWriter::memory() {
  if (!D.Memory)
    return;
  const Schedule &B = D.before(), &A = D.after();
  Span BW = window(D, B), AW = window(D, A);
  std::vector<memory::Curve> BC = memoryCurves(D, B), AC = memoryCurves(D, A);
  Out += "<section id=\"memory\"><h2>Device memory</h2>\n";
  Out += fmt::format("<table class=\"grid\"><tr><th>device</th><th>peak {}"
                     "</th><th>peak {}</th><th>capacity</th></tr>\n",
                     htmlEscape(B.Label), htmlEscape(A.Label));
  bool AnyUnrecorded = false;
  for (memory::PoolId P = 0; P < D.Memory->Pools.size(); ++P) {
    const memory::Pool &Pool = D.Memory->Pools[P];
    if (!Pool.isDevice())
      continue;
    AnyUnrecorded |= !Pool.HasTotals;
    int64_t Cap = capacityOf(D, Pool.DeviceId);
    Out += fmt::format(
        "<tr><td>{}</td><td class=\"num\" data-bytes=\"{}\">{}</td>"
        "<td class=\"num\" data-bytes=\"{}\">{}</td><td class=\"num\">{}</td>"
        "</tr>\n",
        Pool.label(), memory::peakIn(BC[P], BW.Begin, BW.End).Bytes,
        formatBytes(memory::peakIn(BC[P], BW.Begin, BW.End).Bytes),
        memory::peakIn(AC[P], AW.Begin, AW.End).Bytes,
        formatBytes(memory::peakIn(AC[P], AW.Begin, AW.End).Bytes),
        Cap ? formatBytes(Cap) : "unknown");
  }
  Out += "</table>\n";
  if (AnyUnrecorded)
    Out += "<p class=\"note\">The trace's records carry no Total Allocated: "
           "levels are above the least level the records allow, not "
           "absolute.</p>\n";
  Out += "<div id=\"mem\" class=\"chart\"></div></section>\n";
}

void HtmlWriter::roofline() {
  const Roofline &R = RF;
  if (R.Iteration.empty() || !R.KernelNs)
    return;
  Out += fmt::format("<section id=\"roofline\"><h2>Roofline: the kernels of "
                     "{}</h2>\n",
                     htmlEscape(R.Iteration));
  if (R.Points.empty()) {
    Out += "<p class=\"note\">No kernel of this iteration has its work "
           "(FLOPs and bytes moved) from recorded shapes: record the trace "
           "with <code>torch.profiler.profile(record_shapes=True)</code>."
           "</p></section>\n";
    return;
  }
  std::string Roofs =
      R.Gpu.empty()
          ? fmt::format("the GPU catalogue does not know {}, so no roofs are "
                        "drawn",
                        htmlEscape(D.DeviceName.empty() ? std::string("its GPU")
                                                        : D.DeviceName))
          : fmt::format("the lines are the {} roofs of the GPU catalogue: "
                        "{:g} GB/s of memory bandwidth up to each dense peak",
                        htmlEscape(R.Gpu), R.BandwidthGBs);
  Out += fmt::format(
      "<p class=\"note\">{} of {} of this iteration's kernel time ({} "
      "kernels) have their FLOPs and bytes moved from recorded shapes; each "
      "dot is one kernel at its arithmetic intensity and the FLOP/s it "
      "achieved over its traced time, its area its time{}; {}.</p>\n"
      "<div id=\"roofline-plot\" class=\"chart\"></div>\n",
      formatDuration(R.SizedNs), formatDuration(R.KernelNs), R.SizedKernels,
      R.Points.size() < R.SizedKernels
          ? fmt::format(" (the {} longest drawn)", R.Points.size())
          : std::string(),
      Roofs);
  Out += "<table class=\"grid\" id=\"roofline-table\"><tr><th>class</th>"
         "<th>kernels</th><th>time</th><th>with shapes</th><th>TFLOP/s</th>"
         "<th>GB/s</th><th>FLOPs/byte</th></tr>\n";
  for (unsigned K = 0; K < R.Classes.size(); ++K) {
    const Roofline::ClassRow &C = R.Classes[K];
    if (!C.Kernels)
      continue;
    std::string Rates = "<td class=\"num\">-</td><td class=\"num\">-</td>"
                        "<td class=\"num\">-</td>";
    if (C.SizedNs > 0)
      Rates = fmt::format("<td class=\"num\">{:.2f}</td><td class=\"num\">"
                          "{:.1f}</td><td class=\"num\">{:.2f}</td>",
                          C.Flops / double(C.SizedNs) / 1e3,
                          C.Bytes / double(C.SizedNs), C.Flops / C.Bytes);
    Out += fmt::format(
        "<tr data-class=\"{}\" data-sized=\"{}\"><td>{}</td>"
        "<td class=\"num\">{}</td>{}<td class=\"num\">{}</td>{}</tr>\n",
        graph::kernelClassName(static_cast<graph::KernelClass>(K)), C.Sized,
        graph::kernelClassName(static_cast<graph::KernelClass>(K)), C.Kernels,
        durationCell(nullptr, C.Ns),
        C.Ns ? formatPercent(double(C.SizedNs) / double(C.Ns)) : "-", Rates);
  }
  Out += "</table></section>\n";
}

void HtmlWriter::critical() {
  const std::vector<sim::CriticalPath> &BP = D.before().Paths,
                                       &AP = D.after().Paths;
  auto Length = [](const std::vector<sim::CriticalPath> &Ps) {
    int64_t N = 0;
    for (const auto &P : Ps)
      N += P.Length;
    return N;
  };
  Out += "<section id=\"critical\"><h2>Critical path</h2>\n<p class=\"note\">"
         "From the end of each reported iteration back to its start, through "
         "whatever bound each point: a task running, a gap on its resource, "
         "a dependency's delay.</p>\n";
  bool HasB = !BP.empty();
  std::vector<sim::PathShare> SB = sumShares(D.before().PathShares),
                              SA = sumShares(D.after().PathShares);
  int64_t LB = Length(BP), LA = Length(AP);
  std::map<std::string, std::pair<int64_t, int64_t>> Both;
  for (const auto &S : SB)
    Both[S.Label].first = S.Time;
  for (const auto &S : SA)
    Both[S.Label].second = S.Time;
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> Rows(
      Both.begin(), Both.end());
  std::stable_sort(Rows.begin(), Rows.end(), [](const auto &X, const auto &Y) {
    return std::max(X.second.first, X.second.second) >
           std::max(Y.second.first, Y.second.second);
  });
  Out += "<table class=\"grid\" id=\"critical-shares\"><tr><th>what</th>";
  if (HasB)
    Out += fmt::format("<th>{}</th><th></th>", htmlEscape(D.before().Label));
  Out +=
      fmt::format("<th>{}</th><th></th></tr>\n", htmlEscape(D.after().Label));
  Out += "<tr class=\"total\"><td>length</td>";
  if (HasB)
    Out += durationCell("critical-before", LB) + "<td></td>";
  Out += durationCell("critical-after", LA) + "<td></td></tr>\n";
  for (const auto &[Label, T] : Rows) {
    Out += "<tr><td>" + htmlEscape(Label) + "</td>";
    if (HasB)
      Out += durationCell(nullptr, T.first) + "<td class=\"num\">" +
             percentOf(T.first, LB) + "</td>";
    Out += durationCell(nullptr, T.second) + "<td class=\"num\">" +
           percentOf(T.second, LA) + "</td></tr>\n";
  }
  Out += "</table>\n";

  // The tasks that ran longest on the after path, by name.
  std::vector<sim::PathTask> Top = sim::longestTasks(G, AP, 10);
  if (!Top.empty()) {
    Out += fmt::format("<h3>Longest tasks on the {} critical path</h3>\n"
                       "<table class=\"grid\" id=\"critical-tasks\"><tr><th>"
                       "task</th><th>resource</th><th>count</th><th>time</th>"
                       "</tr>\n",
                       htmlEscape(D.after().Label));
    for (const sim::PathTask &T : Top)
      Out += fmt::format("<tr><td title=\"{}\">{}</td><td>{}</td>"
                         "<td class=\"num\">{}</td>{}</tr>\n",
                         htmlEscape(T.Name), htmlEscape(shorten(T.Name, 240)),
                         htmlEscape(T.Resource), formatCount(T.Count),
                         durationCell(nullptr, T.Time));
    Out += "</table>\n";
  }
  Out += "</section>\n";
}

void HtmlWriter::sweep() {
  if (!D.SweepResults)
    return;
  const Sweep &S = *D.SweepResults;
  Out += fmt::format("<section id=\"sweep\"><h2>Sweep: predicted time against "
                     "{}</h2>\n<p class=\"note\">{} runs; the dashed line is "
                     "the replayed iteration ({}).</p>\n<div id=\"sweep-plot\" "
                     "class=\"chart\"></div>\n",
                     htmlEscape(S.Params.empty() ? std::string("the parameter")
                                                 : S.Params.front()),
                     S.Points.size(), formatDuration(S.BaselineNs));
  // The same results as a table, to read off, and without script.
  Out += "<table class=\"grid\" id=\"sweep-table\"><tr>";
  for (const std::string &P : S.Params)
    Out += "<th>" + htmlEscape(P) + "</th>";
  bool Memory =
      std::any_of(S.Points.begin(), S.Points.end(),
                  [](const SweepPoint &P) { return P.PeakBytes >= 0; });
  Out += "<th>predicted</th><th>speedup</th>";
  if (Memory)
    Out += "<th>peak memory</th><th>fits</th>";
  Out += "</tr>\n";
  for (const SweepPoint &P : S.Points) {
    Out += P.outOfMemory() ? "<tr class=\"oom\">" : "<tr>";
    for (const SweepValue &V : P.Values)
      Out += "<td>" + htmlEscape(V.Text) + "</td>";
    Out += durationCell(nullptr, P.PredictedNs) +
           fmt::format("<td class=\"num\">{}</td>",
                       formatSpeedup(S.BaselineNs, P.PredictedNs));
    if (Memory)
      Out += fmt::format(
          "<td class=\"num\">{}</td><td class=\"fits\">{}</td>",
          P.PeakBytes < 0
              ? std::string("-")
              : fmt::format("{:.3f} GiB",
                            double(P.PeakBytes) / (1024.0 * 1024 * 1024)),
          P.PeakBytes < 0 || P.DeviceMemory <= 0 ? "-"
          : P.outOfMemory()                      ? "NO: out of memory"
                                                 : "yes");
    Out += "</tr>\n";
  }
  Out += "</table></section>\n";
}

/// A table cell holding a signed difference: "+1.234 ms", "-830 ns".
std::string differenceCell(int64_t Ns) {
  return fmt::format("<td class=\"num\" data-ns=\"{}\">{}{}</td>", Ns,
                     Ns >= 0 ? "+" : "-", formatDuration(Ns >= 0 ? Ns : -Ns));
}

void HtmlWriter::opportunities() {
  if (!D.Opportunities)
    return;
  const OpportunityList &O = *D.Opportunities;
  Out += fmt::format(
      "<section id=\"opportunities\"><h2>Opportunities: where the gain "
      "is</h2>\n<p class=\"note\">{} what-ifs, each one line of the "
      "language run on a copy of the graph as <code>ddscript run</code> runs "
      "it, ranked by the predicted steady state of the iteration. Gain and "
      "share are against the replayed iteration ({}); the bars show the "
      "gain.</p>\n",
      O.Entries.size(), formatDuration(O.BaselineNs));
  if (O.Entries.empty()) {
    Out += "<p>No what-if could be run on this trace.</p></section>\n";
    return;
  }
  Out += "<div id=\"opportunity-bars\" class=\"chart\"></div>\n";
  Out += "<table class=\"grid\" id=\"opportunity-table\"><tr><th></th><th>"
         "what if</th><th>predicted</th><th>speedup</th><th>gain</th><th>"
         "share</th><th>model</th></tr>\n";
  for (size_t I = 0; I < O.Entries.size(); ++I) {
    const OpportunityList::Entry &E = O.Entries[I];
    Out += fmt::format("<tr data-opportunity=\"{}\"><td class=\"num\">{}"
                       "</td><td>{}</td>",
                       I + 1, I + 1, htmlEscape(E.What)) +
           durationCell(nullptr, E.PredictedNs) +
           fmt::format("<td class=\"num\">{}</td>",
                       formatSpeedup(O.BaselineNs, E.PredictedNs)) +
           durationCell(nullptr, E.GainNs) +
           fmt::format("<td class=\"num\">{}</td><td><code>{}</code></td>"
                       "</tr>\n",
                       percentOf(E.GainNs, O.BaselineNs), htmlEscape(E.Model));
  }
  Out += "</table></section>\n";
}

void HtmlWriter::comparison() {
  if (!D.Compared)
    return;
  const Comparison &C = *D.Compared;
  int64_t B = C.Before.MeasuredNs, A = C.After.MeasuredNs;
  Out += fmt::format(
      "<section id=\"compare\"><h2>Compare: before and after</h2>\n<p "
      "class=\"note\">Two traces of one job, before and after a change: "
      "each one's measured steady-state iteration{}. The rest of the page "
      "shows the before trace, {}.</p>\n",
      C.PredictedNs ? "; the model's prediction from the before trace, and "
                      "its error against the after one"
                    : "",
      C.PredictedNs ? "replayed and as the model changed it"
                    : "measured and replayed");
  // The row of one side, its last cell left open.
  auto Side = [&](const char *Name, const char *Id, const Comparison::Side &S) {
    return fmt::format("<tr><th>{}</th>", Name) +
           durationCell(Id, S.MeasuredNs) +
           fmt::format("<td>{} of {}", htmlEscape(S.Label),
                       htmlEscape(S.Trace));
  };
  Out += "<table class=\"numbers\">";
  Out += Side("before", "compare-before", C.Before) + "</td></tr>\n";
  Out += Side("after", "compare-after", C.After) +
         fmt::format("; change <span id=\"compare-change\">{}</span> ({})"
                     "</td></tr>\n",
                     changeText(B, A), formatSpeedup(B, A));
  int64_t Median = C.AfterMedianNs ? C.AfterMedianNs : A;
  if (C.AfterMedianNs)
    Out += fmt::format("<tr><th></th><td></td><td>after's iterations: min "
                       "{}, median <span id=\"compare-after-median\">{}"
                       "</span>, max {}</td></tr>\n",
                       formatDuration(C.AfterMinNs),
                       formatDuration(C.AfterMedianNs),
                       formatDuration(C.AfterMaxNs));
  if (C.PredictedNs)
    Out +=
        "<tr><th>predicted</th>" +
        durationCell("compare-predicted", *C.PredictedNs) +
        fmt::format("<td>from before by {}: error <span "
                    "id=\"compare-error\">{}</span> against after's "
                    "median (were nothing to change: <span "
                    "id=\"compare-same-error\">{}</span>)</td></tr>\n",
                    htmlEscape(C.ModelPath), changeText(Median, *C.PredictedNs),
                    changeText(Median, B));
  Out += "</table>\n<div id=\"compare-bars\" class=\"chart\"></div>\n";
  Out += "<h3>Where the time went</h3>\n<p class=\"note\">Task time in "
         "each iteration: GPU work by kernel class, CPU calls by phase, and "
         "the layers with the most GPU time before or after, matched by "
         "name.</p>\n";
  Out += "<table class=\"grid\" id=\"compare-breakdown\"><tr><th></th><th>"
         "before</th><th>after</th><th>change</th>";
  if (C.PredictedNs)
    Out += "<th>predicted</th><th>vs after</th>";
  Out += "</tr>\n";
  for (const Comparison::Row &R : C.Rows) {
    if (R.Kind == Comparison::RowKind::Heading) {
      Out += fmt::format("<tr class=\"heading\"><th colspan=\"{}\">{}</th>"
                         "</tr>\n",
                         C.PredictedNs ? 6 : 4, htmlEscape(R.What));
      continue;
    }
    Out += fmt::format("<tr class=\"{}\" data-what=\"{}\"><td>{}</td>",
                       R.Kind == Comparison::RowKind::Sum ? "total" : "part",
                       htmlEscape(R.What), htmlEscape(R.What)) +
           durationCell(nullptr, R.BeforeNs) +
           durationCell(nullptr, R.AfterNs) +
           differenceCell(R.AfterNs - R.BeforeNs);
    if (C.PredictedNs)
      Out += durationCell(nullptr, R.PredictedNs) +
             differenceCell(R.PredictedNs - R.AfterNs);
    Out += "</tr>\n";
  }
  Out += "</table></section>\n";
}

std::string HtmlWriter::write() {
  RF = detail::roofline(D);
  std::string Title =
      D.Compared ? "ddscript report: compare " + D.Compared->Before.Trace +
                       " and " + D.Compared->After.Trace
                 : "ddscript report: " +
                       (D.ModelPath.empty() ? D.Command : D.ModelPath) +
                       " on " + D.TracePath;
  Out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, "
         "initial-scale=1\">\n<title>" +
         htmlEscape(Title) + "</title>\n<style>\n";
  Out += ReportCss;
  Out += "</style></head>\n<body>\n";
  header();
  summary();
  sweep();
  opportunities();
  comparison();
  timeline();
  bars();
  memory();
  roofline();
  critical();
  Out += "<noscript><p>The charts need JavaScript; the numbers and tables do "
         "not.</p></noscript>\n";
  Out += "<script type=\"application/json\" id=\"dd-data\">";
  Out += scriptSafe(pageData(D, RF));
  Out += "</script>\n<script>\n";
  Out += ReportJs;
  Out += "</script>\n</body></html>\n";
  return Out;
}

} // namespace

std::string report::renderHtml(const RunData &D) {
  return HtmlWriter(D).write();
}

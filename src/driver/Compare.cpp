//===- Compare.cpp - ddscript compare BEFORE AFTER ------------------------===//
//
// Back-testing: two traces of one job, before and after a change. Reported:
// the measured steady-state iteration of each; with --model, what the model
// predicts from BEFORE and its error against AFTER, beside the "nothing
// changes" guess; then where the time went, side by side (GPU time by
// kernel class, CPU time by phase, the sums), measured before, measured
// after and as the model left BEFORE's graph. Without --model, a plain diff
// of the two runs. --report writes the page of BEFORE (as `replay`, or as
// `run` with the model) with the comparison on it.
//
//===----------------------------------------------------------------------===//

#include "whatif/Compare.h"
#include "driver/Commands.h"
#include "driver/Console.h"
#include "driver/Format.h"
#include "driver/Models.h"
#include "driver/Outputs.h"
#include "driver/Predict.h"
#include "driver/Session.h"
#include "driver/Sweep.h"

#include <fmt/format.h>

#include <cstdio>

using namespace dd;
using namespace dd::driver;

namespace {

/// \p Path read whole, replayed at \p Iteration ("": its steady state).
std::optional<Replayed> load(const TraceOptions &T, const std::string &Path,
                             const std::string &Iteration) {
  TraceOptions O = T;
  O.TracePath = Path;
  O.TracePaths = {Path};
  O.Iteration = Iteration;
  return loadReplayed(O);
}

} // namespace

int dd::driver::runCompare(const CompareOptions &C, const TraceOptions &T) {
  std::optional<compiler::CompiledModel> Model;
  SourceManager SM;
  std::string ModelPath;
  std::vector<vm::Setting> Settings;
  std::vector<SettingAxis> SetAxes; // --set, for the page's parameters
  if (!C.Model.empty()) {
    Model = loadModel(C.Model, SM, &ModelPath);
    if (!Model)
      return ExitBadInput;
    std::string Error;
    auto Axes = parseSettingAxes(C.Settings, Error);
    if (!Axes) {
      reportError("ddscript", Error);
      return ExitBadInput;
    }
    if (combinationCount(*Axes) > 1) {
      reportError("ddscript", "compare runs one model: give each parameter "
                              "one value");
      return ExitBadInput;
    }
    Settings = combination(*Axes, 0);
    SetAxes = *Axes;
    if (auto Bad = vm::checkSettings(Model->Program, Settings)) {
      if (Bad->Range.valid())
        reportDiagnostic(SM, *Bad);
      else
        reportError(ModelPath, Bad->Message);
      return ExitBadInput;
    }
  } else if (!C.Settings.empty()) {
    reportError("ddscript", "--set takes a --model");
    return ExitBadInput;
  }
  if (!oneIteration(T, "compare"))
    return ExitBadInput;
  auto BeforeR = load(T, C.Before, T.Iteration);
  if (!BeforeR)
    return ExitBadInput;
  // The after trace's own steady state: its iterations need not be
  // numbered as before's.
  auto AfterR = load(T, C.After, "");
  if (!AfterR)
    return ExitBadInput;
  // What the page takes of BEFORE's unchanged graph, before the model
  // changes it: the memory model ties blocks to its tasks, and the replay's
  // critical paths walk its edges.
  report::RunData D;
  std::optional<memory::MemoryModel> Mem;
  if (!T.ReportPath.empty()) {
    Mem = memoryForOutputs(BeforeR->In.Trace, BeforeR->G);
    D.Replayed = simulatedSchedule("replayed", BeforeR->G, BeforeR->Base,
                                   {BeforeR->Chosen.front()});
  }
  RunMemory PeakMem;
  if (Model)
    (void)PeakMem.takeSettings(Settings, Model->Program);
  whatif::Comparison Cmp = whatif::compare(*BeforeR, C.Before, *AfterR, C.After,
                                           Model ? &Model->Program : nullptr,
                                           Settings, std::move(PeakMem));
  const whatif::ComparedRun *Before = &Cmp.Before, *After = &Cmp.After;
  const std::optional<Prediction> &Run = Cmp.Run;
  const std::optional<Outcome> &Pred = Cmp.Predicted;
  std::string Printed = Run ? Run->R.Output : std::string();
  if (Run && !Run->R.Ok) {
    writeErr(Printed);
    reportDiagnostic(SM, Run->R.Error);
    return ExitBadInput;
  }
  if (Run && !Run->SimError.empty()) {
    reportError(ModelPath, Run->SimError);
    return ExitBadInput;
  }
  const graph::Iteration &BI = BeforeR->G.Iterations[Before->It];
  const graph::Iteration &AI = AfterR->G.Iterations[After->It];
  double Change = Cmp.Change;
  using whatif::relative;
  // The page: BEFORE measured and replayed (with a model: replayed and
  // predicted), and the comparison as the text groups it.
  auto WritePage = [&] {
    if (T.ReportPath.empty())
      return int(ExitOk);
    report::Comparison Page;
    Page.Before = {Before->Path, BI.Label, Before->Measured};
    Page.After = {After->Path, AI.Label, After->Measured};
    Page.AfterMinNs = After->Min;
    Page.AfterMedianNs = After->Median;
    Page.AfterMaxNs = After->Max;
    if (Pred) {
      Page.ModelPath = ModelPath;
      Page.PredictedNs = Pred->Predicted;
    }
    for (const whatif::ComparisonRow &R : Cmp.Rows) {
      using Kind = report::Comparison::RowKind;
      Kind K = R.K == whatif::ComparisonRow::Kind::Heading ? Kind::Heading
               : R.K == whatif::ComparisonRow::Kind::Sum   ? Kind::Sum
                                                           : Kind::Part;
      Page.Rows.push_back({K, R.Label.substr(R.Label.find_first_not_of(' ')),
                           R.Before, R.After, R.Predicted});
    }
    const graph::Graph &G = BeforeR->G;
    std::vector<size_t> Reported = {Before->It};
    D.G = &G;
    D.Command = "compare";
    std::vector<int64_t> MStart, MEnd;
    measuredTimes(G, MStart, MEnd);
    D.Measured = measuredSchedule(G, MStart, MEnd);
    D.Memory = Mem ? &*Mem : nullptr;
    if (Run) {
      D.ModelPath = ModelPath;
      D.ModelDescription = Model->Description;
      for (const compiler::ParamSummary &Pm : Model->Params)
        D.Params.push_back({Pm.Name, shownValue(SetAxes, Pm, true)});
      D.Changes = describeChanges(Run->R.Stats);
      D.Predicted = simulatedSchedule("predicted", G, *Run->Pred, Reported);
      D.PredictedMemory = Run->Mem.model();
    }
    D.Compared = std::move(Page);
    TraceOptions O = T;
    O.TracePath = Before->Path;
    O.TracePaths = {Before->Path};
    return writeOutputs(O, BeforeR->In.Trace, Reported, D);
  };

  if (T.Format == OutputFormat::Json) {
    if (!Printed.empty())
      writeErr(Printed);
    writeJson([&](JsonWriter &W) {
      W.beginObject();
      W.key("before").beginObject();
      W.field("trace", Before->Path).field("iteration", BI.Number);
      W.field("label", BI.Label).field("measured_ns", Before->Measured);
      W.endObject();
      W.key("after").beginObject();
      W.field("trace", After->Path).field("iteration", AI.Number);
      W.field("label", AI.Label).field("measured_ns", After->Measured);
      W.key("spread_ns").beginArray();
      W.value(After->Min).value(After->Median).value(After->Max);
      W.endArray();
      W.field("iterations", After->Times.size());
      W.endObject();
      W.field("measured_change", Change);
      if (Pred) {
        W.field("model", ModelPath);
        W.field("predicted_ns", Pred->Predicted);
        W.field("error", relative(Pred->Predicted, After->Median));
        W.field("error_against_iteration",
                relative(Pred->Predicted, After->Measured));
        W.field("same_time_error", relative(Before->Measured, After->Median));
      }
      W.key("breakdown").beginArray();
      for (const whatif::ComparisonRow &R : Cmp.Rows) {
        if (R.K == whatif::ComparisonRow::Kind::Heading)
          continue; // a heading of the text
        W.beginObject();
        W.field("what", R.Label.substr(R.Label.find_first_not_of(' ')));
        W.field("before_ns", R.Before).field("after_ns", R.After);
        if (Pred)
          W.field("predicted_ns", R.Predicted);
        W.endObject();
      }
      W.endArray();
      W.endObject();
    });
    return WritePage();
  }
  std::string S = Printed;
  S += fmt::format("before     {}  {}  {} measured\n", Before->Path, BI.Label,
                   formatDuration(Before->Measured));
  S += fmt::format(
      "after      {}  {}  {} measured  ({}, {:.3f}x)\n", After->Path, AI.Label,
      formatDuration(After->Measured), formatPercent(Change, true),
      After->Measured ? double(Before->Measured) / double(After->Measured)
                      : 0.0);
  if (After->Times.size() > 1)
    S += fmt::format("           its {} iterations: min {}, median {}, max "
                     "{}\n",
                     After->Times.size(), formatDuration(After->Min),
                     formatDuration(After->Median), formatDuration(After->Max));
  if (Pred) {
    double Err = relative(Pred->Predicted, After->Median);
    S += fmt::format(
        "predicted  {} from before by {}: error {} against "
        "after's median (were nothing to change: {})\n",
        formatDuration(Pred->Predicted), ModelPath, formatPercent(Err, true),
        formatPercent(relative(Before->Measured, After->Median), true));
    // A prediction cannot be checked closer than the after run repeats.
    double Spread =
        After->Median ? double(After->Max - After->Min) / double(After->Median)
                      : 0.0;
    if (After->Times.size() > 1 && Spread > std::fabs(Err))
      reportWarning(
          After->Path,
          fmt::format("the after run's iterations range from {} to "
                      "{} ({} of its median), more than the "
                      "prediction's error ({}): the error is within "
                      "its noise",
                      formatDuration(After->Min), formatDuration(After->Max),
                      formatPercent(Spread, false), formatPercent(Err, true)));
  }
  S += "\nwhere the time went (task time in the iteration; GPU work by kernel "
       "class, CPU calls by phase)\n";
  Table Tb;
  std::vector<std::string> Head = {"", "before", "after", "change"};
  if (Pred) {
    Head.push_back("predicted");
    Head.push_back("vs after");
  }
  Tb.row(Head);
  for (size_t K = 1; K < Head.size(); ++K)
    Tb.alignRight(K);
  for (const whatif::ComparisonRow &R : Cmp.Rows) {
    if (R.K == whatif::ComparisonRow::Kind::Heading) {
      Tb.row({R.Label});
      continue;
    }
    int64_t B = R.Before, A = R.After;
    std::vector<std::string> Cells = {
        R.Label, formatDuration(B), formatDuration(A),
        (A >= B ? "+" : "-") + formatDuration(A >= B ? A - B : B - A)};
    if (Pred) {
      int64_t P = R.Predicted;
      Cells.push_back(formatDuration(P));
      Cells.push_back((P >= A ? "+" : "-") +
                      formatDuration(P >= A ? P - A : A - P));
    }
    Tb.row(Cells);
  }
  S += Tb.render();
  writeOut(S);
  return WritePage();
}

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

#include "driver/Commands.h"
#include "driver/Console.h"
#include "driver/Format.h"
#include "driver/Models.h"
#include "driver/Outputs.h"
#include "driver/Predict.h"
#include "driver/Session.h"
#include "driver/Sweep.h"
#include "graph/KernelClass.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

using namespace dd;
using namespace dd::driver;

namespace {

/// One side: its trace, graph, reported iteration and replay.
struct Side {
  std::string Path;
  Replayed R;
  size_t It = 0;
  int64_t Measured = 0;
  /// The measured time of each of its iterations that holds GPU work, and
  /// their minimum, median (the lower middle) and maximum.
  std::vector<int64_t> Times;
  int64_t Min = 0, Median = 0, Max = 0;
};

std::optional<Side> load(const TraceOptions &T, const std::string &Path,
                         const std::string &Iteration) {
  TraceOptions O = T;
  O.TracePath = Path;
  O.TracePaths = {Path};
  O.Iteration = Iteration;
  auto R = loadReplayed(O);
  if (!R)
    return std::nullopt;
  Side S{Path, std::move(*R), 0, 0, {}, 0, 0, 0};
  S.It = S.R.Chosen.front();
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(S.R.G, MStart, MEnd);
  const graph::Iteration &I = S.R.G.Iterations[S.It];
  S.Measured = measuredPointTime(S.R.G, I.End, MEnd) -
               measuredPointTime(S.R.G, I.Begin, MEnd);
  IterationLists L = iterationLists(S.R.G);
  for (size_t J = 0; J < L.Lengths.size(); ++J)
    if (L.Busy[J] && L.Lengths[J] > 0)
      S.Times.push_back(L.Lengths[J]);
  if (S.Times.empty())
    S.Times.push_back(S.Measured);
  std::vector<int64_t> Sorted = S.Times;
  std::sort(Sorted.begin(), Sorted.end());
  S.Min = Sorted.front();
  S.Max = Sorted.back();
  S.Median = Sorted[(Sorted.size() - 1) / 2];
  return S;
}

/// Where an iteration's time went: task time by row label. \p Current
/// reads the durations as they are (a model's prediction), else as traced.
/// Rows of the GPU time of one layer, the largest LayersShown of them.
constexpr std::string_view LayerPrefix = "  layer ";
constexpr size_t LayersShown = 8;

std::map<std::string, int64_t> breakdown(const graph::Graph &G, size_t It,
                                         bool Current) {
  std::map<std::string, int64_t> M;
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    if (G.IterationOf[T] != static_cast<int32_t>(It) || !G.isLeaf(T) ||
        G.isRemoved(T) || G.Res[T] == graph::NoResource)
      continue;
    int64_t D = Current                             ? G.Dur[T]
                : G.MeasuredDur[T] == graph::NoTime ? 0
                                                    : G.MeasuredDur[T];
    if (G.isGpu(T)) {
      M["GPU work (sum)"] += D;
      M[fmt::format("  {}",
                    graph::kernelClassName(graph::kernelClassOf(G, T)))] += D;
      // Layers match across the traces by name (their order of appearance
      // in the forward pass: conv2d#26 is the same layer in both).
      if (G.LayerOf[T] != graph::NoLayer)
        M[std::string(LayerPrefix) + G.Layers[G.LayerOf[T]].Name] += D;
    } else {
      M["CPU calls (sum)"] += D;
      M[fmt::format("  {} (CPU)", graph::phaseName(G.PhaseOf[T]))] += D;
    }
  }
  return M;
}

double relative(int64_t A, int64_t B) {
  return B ? double(A - B) / double(B) : 0.0;
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
  auto Before = load(T, C.Before, T.Iteration);
  if (!Before)
    return ExitBadInput;
  // The after trace's own steady state: its iterations need not be
  // numbered as before's.
  auto After = load(T, C.After, "");
  if (!After)
    return ExitBadInput;

  std::map<std::string, int64_t> BB = breakdown(Before->R.G, Before->It, false);
  std::map<std::string, int64_t> AB = breakdown(After->R.G, After->It, false);
  std::map<std::string, int64_t> PB;
  std::optional<Outcome> Pred;
  std::string Printed;
  // What the page takes of BEFORE's unchanged graph, before the model
  // changes it: the memory model ties blocks to its tasks, and the replay's
  // critical paths walk its edges.
  report::RunData D;
  std::optional<memory::MemoryModel> Mem;
  std::optional<Prediction> Run; // with a model, kept for the page
  if (!T.ReportPath.empty()) {
    Mem = memoryForOutputs(Before->R.In.Trace, Before->R.G);
    D.Replayed = simulatedSchedule("replayed", Before->R.G, Before->R.Base,
                                   {Before->It});
  }
  if (Model) {
    Baseline B;
    B.Tr = &Before->R.In.Trace;
    B.TracePath = Before->Path;
    B.G = &Before->R.G;
    B.Chosen = {Before->It};
    B.Base = &Before->R.Base;
    RunMemory PeakMem;
    (void)PeakMem.takeSettings(Settings, Model->Program);
    Run = predict(B, Before->R.G, Model->Program, Settings, std::move(PeakMem),
                  vm::DefaultMaxSteps);
    Printed = Run->R.Output;
    if (!Run->R.Ok) {
      writeErr(Printed);
      reportDiagnostic(SM, Run->R.Error);
      return ExitBadInput;
    }
    if (!Run->SimError.empty()) {
      reportError(ModelPath, Run->SimError);
      return ExitBadInput;
    }
    Pred = Run->Out.front();
    PB = breakdown(Before->R.G, Before->It, true);
  }

  auto Get = [](const std::map<std::string, int64_t> &M, const std::string &K) {
    auto It = M.find(K);
    return It == M.end() ? int64_t(0) : It->second;
  };
  std::vector<std::string> Rows, Layers;
  for (const auto *M : {&BB, &AB, &PB})
    for (const auto &[K, V] : *M) {
      std::vector<std::string> &To =
          K.rfind(LayerPrefix, 0) == 0 ? Layers : Rows;
      if (std::find(To.begin(), To.end(), K) == To.end())
        To.push_back(K);
    }
  // The layers with the most GPU time before or after, largest first.
  std::stable_sort(Layers.begin(), Layers.end(),
                   [&](const std::string &A, const std::string &B) {
                     return std::max(Get(BB, A), Get(AB, A)) >
                            std::max(Get(BB, B), Get(AB, B));
                   });
  if (Layers.size() > LayersShown)
    Layers.resize(LayersShown);
  // GPU rows, then CPU rows; in each the sum, then its parts by name.
  auto Key = [](const std::string &S) {
    bool Cpu = S.find("(CPU)") != std::string::npos || S.rfind("CPU", 0) == 0;
    bool Sum = S.find("(sum)") != std::string::npos;
    return std::make_tuple(Cpu, !Sum, S);
  };
  std::sort(Rows.begin(), Rows.end(),
            [&](const std::string &A, const std::string &B) {
              return Key(A) < Key(B);
            });
  if (!Layers.empty()) {
    Rows.push_back(
        fmt::format("GPU work by layer (the {} largest)", Layers.size()));
    Rows.insert(Rows.end(), Layers.begin(), Layers.end());
  }
  const graph::Iteration &BI = Before->R.G.Iterations[Before->It];
  const graph::Iteration &AI = After->R.G.Iterations[After->It];
  double Change = relative(After->Measured, Before->Measured);
  // The page: BEFORE measured and replayed (with a model: replayed and
  // predicted), and the comparison as the text groups it.
  auto Page = [&] {
    if (T.ReportPath.empty())
      return int(ExitOk);
    report::Comparison Cmp;
    Cmp.Before = {Before->Path, BI.Label, Before->Measured};
    Cmp.After = {After->Path, AI.Label, After->Measured};
    Cmp.AfterMinNs = After->Min;
    Cmp.AfterMedianNs = After->Median;
    Cmp.AfterMaxNs = After->Max;
    if (Pred) {
      Cmp.ModelPath = ModelPath;
      Cmp.PredictedNs = Pred->Predicted;
    }
    for (const std::string &R : Rows) {
      using Kind = report::Comparison::RowKind;
      Kind K = R.rfind("GPU work by layer", 0) == 0   ? Kind::Heading
               : R.find("(sum)") != std::string::npos ? Kind::Sum
                                                      : Kind::Part;
      Cmp.Rows.push_back({K, R.substr(R.find_first_not_of(' ')), Get(BB, R),
                          Get(AB, R), Get(PB, R)});
    }
    const graph::Graph &G = Before->R.G;
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
    D.Compared = std::move(Cmp);
    TraceOptions O = T;
    O.TracePath = Before->Path;
    O.TracePaths = {Before->Path};
    return writeOutputs(O, Before->R.In.Trace, Reported, D);
  };

  if (T.Format == OutputFormat::Json) {
    if (!Printed.empty())
      writeErr(Printed);
    std::string S;
    JsonWriter W(S);
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
    for (const std::string &R : Rows) {
      if (R.rfind("GPU work by layer", 0) == 0)
        continue; // a heading of the text
      W.beginObject();
      W.field("what", R.substr(R.find_first_not_of(' ')));
      W.field("before_ns", Get(BB, R)).field("after_ns", Get(AB, R));
      if (Pred)
        W.field("predicted_ns", Get(PB, R));
      W.endObject();
    }
    W.endArray();
    W.endObject();
    S += '\n';
    writeOut(S);
    return Page();
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
  for (const std::string &R : Rows) {
    if (R.rfind("GPU work by layer", 0) == 0) {
      Tb.row({R});
      continue;
    }
    int64_t B = Get(BB, R), A = Get(AB, R);
    std::vector<std::string> Cells = {
        R, formatDuration(B), formatDuration(A),
        (A >= B ? "+" : "-") + formatDuration(A >= B ? A - B : B - A)};
    if (Pred) {
      int64_t P = Get(PB, R);
      Cells.push_back(formatDuration(P));
      Cells.push_back((P >= A ? "+" : "-") +
                      formatDuration(P >= A ? P - A : A - P));
    }
    Tb.row(Cells);
  }
  S += Tb.render();
  writeOut(S);
  return Page();
}

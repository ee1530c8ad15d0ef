//===- Sweep.cpp - --set values, one or many ------------------------------===//

#include "driver/Sweep.h"

#include "driver/Session.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::driver;

namespace {

std::string peakText(int64_t B) {
  return fmt::format("{:.3f} GiB", double(B) / (1024.0 * 1024 * 1024));
}

} // namespace

std::string dd::driver::shownValue(const std::vector<SettingAxis> &Axes,
                                   const compiler::ParamSummary &P,
                                   bool Marked) {
  for (const SettingAxis &A : Axes) {
    if (A.Name != P.Name)
      continue;
    std::string S;
    for (const std::string &V : A.Values)
      S += (S.empty() ? "" : ", ") + V;
    if (Marked)
      S += A.Values.size() > 1 ? " (swept)" : " (--set)";
    return S;
  }
  return P.DefaultText;
}

std::string dd::driver::modelLines(const std::string &ModelPath,
                                   const compiler::CompiledModel &Model,
                                   const std::vector<SettingAxis> &Axes,
                                   const std::string &Trace) {
  std::string S = fmt::format(
      "model      {}{}\n", ModelPath,
      Model.Description.empty() ? "" : "  (" + Model.Description + ")");
  for (const compiler::ParamSummary &P : Model.Params)
    S += fmt::format("  {} = {}\n", P.Name, shownValue(Axes, P, true));
  S += fmt::format("trace      {}\n", Trace);
  return S;
}

std::string dd::driver::profilerLine(int64_t PerEventNs, uint64_t Events,
                                     int64_t Removed) {
  return fmt::format("profiler   {} per recorded CPU event, {} events: {} "
                     "of CPU work taken out (from the gap before each, then "
                     "at most half its call; --profiled keeps it)\n",
                     formatDuration(PerEventNs), formatCount(Events),
                     formatDuration(Removed));
}

void dd::driver::profilerJson(JsonWriter &W, int64_t ProfiledReplay,
                              int64_t PerEventNs, uint64_t Events,
                              int64_t Removed) {
  W.field("profiled_replay_ns", ProfiledReplay);
  W.key("profiler").beginObject();
  W.field("model", "per_event");
  W.field("per_event_ns", PerEventNs);
  W.field("events", Events);
  W.field("removed_ns", Removed);
  W.endObject();
}

std::string dd::driver::iterationLines(const graph::Graph &G,
                                       const Outcome &O) {
  std::string S =
      fmt::format("iteration  {} ({} of {}{})\n", G.Iterations[O.Index].Label,
                  G.iterationOrdinal(O.Index), G.traceIterationCount(),
                  O.Index == defaultIteration(G) ? ", steady state" : "");
  if (O.Profiled)
    S += fmt::format("measured   {} without the profiler (--unprofiled); "
                     "{} in the trace\n"
                     "profiler   CPU work scaled x{:.3f} before the model, to "
                     "take the profiler's overhead out\n",
                     formatDuration(O.Measured), formatDuration(O.Profiled),
                     O.CpuScale);
  else if (O.PerEventNs)
    S += fmt::format("measured   {} in the trace, with the profiler\n",
                     formatDuration(O.Measured));
  else
    S += fmt::format("measured   {}\n", formatDuration(O.Measured));
  if (O.PerEventNs) {
    S += fmt::format("replayed   {}   error {}\n",
                     formatDuration(O.ProfiledReplay),
                     formatPercent(O.replayError(), true));
    S += profilerLine(O.PerEventNs, O.ProfilerEvents, O.ProfilerRemoved);
    S += fmt::format("unprofiled {}   the replay without the profiler's "
                     "cost: {}\n",
                     formatDuration(O.Baseline),
                     O.BaselineSteady == O.Baseline
                         ? "what the speedup is against"
                         : "its span (the speedup compares steady states)");
    return S;
  }
  S += fmt::format("replayed   {}   error {}\n", formatDuration(O.Baseline),
                   formatPercent(O.replayError(), true));
  return S;
}

std::string dd::driver::sweepText(const SweepHeader &H,
                                  const std::vector<SweepRow> &Rows) {
  std::string S;
  // What each run printed, under its values.
  for (const SweepRow &R : Rows) {
    if (R.Output.empty())
      continue;
    std::string Label;
    for (const vm::Setting &Set : R.Settings)
      Label += (Label.empty() ? "" : " ") + Set.Name + "=" + Set.Text;
    S += Label + "\n";
    size_t Begin = 0;
    while (Begin < R.Output.size()) {
      size_t End = R.Output.find('\n', Begin);
      if (End == std::string::npos)
        End = R.Output.size();
      S += "  " + R.Output.substr(Begin, End - Begin) + "\n";
      Begin = End + 1;
    }
  }
  if (!S.empty())
    S += "\n";
  S += modelLines(H.ModelPath, *H.Model, H.Axes, H.TracePath);
  S += iterationLines(*H.G, H.Base);
  S += fmt::format("\nsweep      {} runs\n", formatCount(Rows.size()));
  bool Memory = !Rows.empty() && Rows.front().HasMemory;
  Table T;
  std::vector<std::string> Head;
  for (const vm::Setting &Set : Rows.front().Settings)
    Head.push_back(Set.Name);
  size_t First = Head.size();
  for (const char *C : {"predicted", "speedup", "change"})
    Head.push_back(C);
  if (Memory) {
    Head.push_back("peak memory");
    Head.push_back("fits");
  }
  T.row(Head);
  for (size_t C = First; C < First + (Memory ? 4 : 3); ++C)
    T.alignRight(C);
  for (const SweepRow &R : Rows) {
    std::vector<std::string> Cells;
    for (const vm::Setting &Set : R.Settings)
      Cells.push_back(Set.Text);
    Cells.push_back(formatDuration(R.Result.Predicted));
    Cells.push_back(R.Result.speedupText());
    Cells.push_back(formatPercent(R.Result.change(), true));
    if (Memory) {
      Cells.push_back(peakText(R.PeakBytes));
      Cells.push_back(R.DeviceMemory <= 0             ? "unknown"
                      : R.PeakBytes <= R.DeviceMemory ? "yes"
                                                      : "OUT OF MEMORY");
    }
    T.row(std::move(Cells));
  }
  S += T.render("  ");
  return S;
}

void dd::driver::writeSweepJson(JsonWriter &W, const SweepHeader &H,
                                const std::vector<SweepRow> &Rows) {
  W.beginObject();
  W.field("model", H.ModelPath);
  W.field("trace", H.TracePath);
  const graph::Iteration &It = H.G->Iterations[H.Base.Index];
  W.field("iteration", It.Number);
  W.field("label", It.Label);
  W.field("measured_ns", H.Base.Measured);
  if (H.Base.PerEventNs)
    profilerJson(W, H.Base.ProfiledReplay, H.Base.PerEventNs,
                 H.Base.ProfilerEvents, H.Base.ProfilerRemoved);
  W.field("baseline_ns", H.Base.Baseline);
  W.field("replay_error", H.Base.replayError());
  W.key("params").beginObject();
  for (const compiler::ParamSummary &P : H.Model->Params)
    W.field(P.Name, shownValue(H.Axes, P, false));
  W.endObject();
  W.key("sweep").beginObject();
  W.key("params").beginArray();
  for (const vm::Setting &Set : Rows.front().Settings)
    W.value(Set.Name);
  W.endArray();
  W.key("points").beginArray();
  for (const SweepRow &R : Rows) {
    W.beginObject();
    W.key("params").beginObject();
    for (const vm::Setting &Set : R.Settings)
      W.field(Set.Name, Set.Text);
    W.endObject();
    W.field("predicted_ns", R.Result.Predicted);
    R.Result.speedupJson(W);
    W.field("change", R.Result.change());
    W.key("changes");
    writeChanges(W, R.Stats);
    if (R.HasMemory) {
      W.field("peak_bytes_predicted", R.PeakBytes);
      if (R.DeviceMemory > 0) {
        W.field("device_memory_bytes", R.DeviceMemory);
        W.field("fits", R.PeakBytes <= R.DeviceMemory);
      } else {
        W.key("device_memory_bytes").null();
        W.key("fits").null();
      }
    }
    W.field("output", R.Output);
    W.field("steps", R.Steps);
    W.endObject();
  }
  W.endArray();
  W.endObject();
  W.endObject();
}

namespace {

/// "40Gbps" -> (40, "Gbps"), read as --set reads it (support/Units.h);
/// nullopt when the text is not a number.
std::optional<std::pair<double, std::string>> splitUnit(const std::string &T) {
  auto Q = readQuantity(T);
  if (!Q)
    return std::nullopt;
  size_t U = T.size(); // the unit: the letters the text ends with
  while (U > 0 && std::isalpha(static_cast<unsigned char>(T[U - 1])))
    --U;
  std::string Unit = T.substr(U);
  double Scale = Unit.empty() ? 1 : lookupUnit(Unit)->Scale;
  return std::make_pair(Q->Value / Scale, Unit);
}

/// The x values the plot uses for an axis: the numbers as written when all
/// values carry the same unit (10Gbps, 40Gbps -> 10, 40), else in base
/// units (ns, bytes, bytes/ns) when all are numbers, else none (the plot
/// then takes the values in the order given).
std::vector<std::optional<double>> plotNumbers(const SettingAxis &A) {
  std::vector<std::optional<double>> Out;
  std::optional<std::string> Unit;
  bool SameUnit = true;
  for (const std::string &V : A.Values) {
    auto Split = splitUnit(V);
    if (!Split || !vm::settingNumber(V)) {
      SameUnit = false;
      break;
    }
    if (Unit && *Unit != Split->second)
      SameUnit = false;
    Unit = Split->second;
  }
  for (const std::string &V : A.Values) {
    if (SameUnit)
      Out.push_back(splitUnit(V)->first);
    else
      Out.push_back(vm::settingNumber(V));
  }
  return Out;
}

} // namespace

report::Sweep dd::driver::sweepForReport(const SweepHeader &H,
                                         const std::vector<SweepRow> &Rows) {
  report::Sweep S;
  std::vector<const SettingAxis *> Swept = sweptAxes(H.Axes);
  std::vector<std::vector<std::optional<double>>> Numbers;
  for (const SettingAxis *A : Swept) {
    S.Params.push_back(A->Name);
    Numbers.push_back(plotNumbers(*A));
  }
  S.BaselineNs = H.Base.Baseline;
  for (const SweepRow &R : Rows) {
    report::SweepPoint P;
    for (size_t I = 0; I < R.Settings.size(); ++I) {
      const std::vector<std::string> &Values = Swept[I]->Values;
      size_t K = static_cast<size_t>(
          std::find(Values.begin(), Values.end(), R.Settings[I].Text) -
          Values.begin());
      P.Values.push_back({R.Settings[I].Text,
                          K < Values.size() ? Numbers[I][K] : std::nullopt});
    }
    P.PredictedNs = R.Result.Predicted;
    if (R.HasMemory) {
      P.PeakBytes = R.PeakBytes;
      P.DeviceMemory = R.DeviceMemory;
    }
    S.Points.push_back(std::move(P));
  }
  return S;
}

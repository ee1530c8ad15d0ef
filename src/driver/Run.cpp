//===- Run.cpp - ddscript run, check, disasm ------------------------------===//

#include "driver/Run.h"

#include "driver/Format.h"
#include "driver/JobRun.h"
#include "driver/Models.h"
#include "driver/Outputs.h"
#include "driver/Predict.h"
#include "driver/Session.h"
#include "driver/Sweep.h"
#include "sim/CriticalPath.h"
#include "support/Units.h"
#include "vm/VM.h"
#include "whatif/RunMemory.h"

#include <fmt/format.h>

#include <cstdio>

using namespace dd;
using namespace dd::driver;

namespace {

/// What piles up, before and after the model, when it does.
std::string backlogLines(const Outcome &O) {
  std::string S;
  auto Line = [&](const char *Which, const Backlog &B, int64_t Span) {
    S += fmt::format("           {}: work piles up ({}, against {} per "
                     "iteration over the {} around this one), so repeated "
                     "the run falls behind its CPU (the iteration's own "
                     "span: {}); a longer trace would show where it "
                     "settles\n",
                     Which, backlogText(B), formatDuration(B.IterationTime),
                     B.Window, formatDuration(Span));
  };
  if (O.BasePiling.piling())
    Line("replayed", O.BasePiling, O.Baseline);
  if (O.PredPiling.piling())
    Line("predicted", O.PredPiling, O.PredictedSpan);
  if (O.BasePiling.piling() || O.PredPiling.piling())
    S += fmt::format("           the speedup compares steady states: {} "
                     "replayed, {} predicted\n",
                     formatDuration(O.BaselineSteady),
                     formatDuration(O.Predicted));
  return S;
}

void printText(const std::string &ModelPath,
               const compiler::CompiledModel &Model, const std::string &Trace,
               const graph::Graph &G, const std::vector<Outcome> &Out,
               const vm::RunResult &R, const std::vector<SettingAxis> &Axes,
               const sim::CriticalPath &Path) {
  std::string S = modelLines(ModelPath, Model, Axes, Trace);
  if (Out.size() == 1) {
    const Outcome &O = Out[0];
    S += iterationLines(G, O);
    if (O.emptied())
      S += fmt::format("predicted  {}   (the model removed all of the "
                       "iteration's work: no speedup to give)\n",
                       formatDuration(O.Predicted));
    else
      S += fmt::format("predicted  {}   speedup {} ({})\n",
                       formatDuration(O.Predicted), O.speedupText(),
                       formatPercent(O.change(), true));
    S += backlogLines(O);
    if (!O.emptied())
      S += boundByLine(G, Path);
  } else {
    // As the lines of one iteration say them: with the profiler's cost
    // taken out per event, the replay (with it) and the unprofiled replay
    // the speedup is against.
    bool PerEvent = Out.front().PerEventNs > 0;
    Table T;
    if (PerEvent)
      T.row({"iteration", "measured", "replayed", "unprofiled", "predicted",
             "speedup"});
    else
      T.row({"iteration", "measured", "replayed", "predicted", "speedup"});
    for (size_t C = 1; C < (PerEvent ? 6u : 5u); ++C)
      T.alignRight(C);
    for (const Outcome &O : Out) {
      std::vector<std::string> Row{G.Iterations[O.Index].Label,
                                   formatDuration(O.Measured)};
      if (PerEvent)
        Row.push_back(formatDuration(O.ProfiledReplay));
      Row.push_back(formatDuration(O.Baseline));
      Row.push_back(formatDuration(O.Predicted));
      Row.push_back(O.speedupText());
      T.row(std::move(Row));
    }
    S += T.render("");
  }
  const vm::ChangeStats &C = R.Stats;
  S += fmt::format("\nchanges    selected {}, scaled {}, inserted {}, "
                   "removed {}, dependencies added {}, schedules {}\n",
                   formatCount(C.Selected), formatCount(C.Scaled),
                   formatCount(C.Inserted), formatCount(C.Removed),
                   formatCount(C.Dependencies), formatCount(C.Scheduled));
  std::string Moved;
  for (unsigned P = 0; P < graph::NumPhases; ++P)
    if (C.MovedByPhase[P])
      Moved += fmt::format("{}{} {}{}", Moved.empty() ? "" : ", ",
                           graph::phaseName(graph::Phase(P)),
                           C.MovedByPhase[P] > 0 ? "+" : "",
                           formatDuration(C.MovedByPhase[P]));
  if (!Moved.empty())
    S += "           task time by phase (all iterations): " + Moved + "\n";
  writeOut(S);
}

void printJson(const std::string &ModelPath, const std::string &Trace,
               const graph::Graph &G, const compiler::CompiledModel &Model,
               const std::vector<Outcome> &Out, const vm::RunResult &R,
               const std::vector<SettingAxis> &Axes, const RunMemory &Mem,
               const sim::CriticalPath &Path) {
  writeJson([&](JsonWriter &W) {
    W.beginObject();
    W.field("model", ModelPath);
    W.field("trace", Trace);
    const Outcome &O = Out.front();
    W.field("iteration", G.Iterations[O.Index].Number);
    W.field("label", G.Iterations[O.Index].Label);
    W.field("measured_ns", O.Measured);
    if (O.Profiled) {
      W.field("profiled_ns", O.Profiled);
      W.field("cpu_scale", O.CpuScale);
      W.key("cpu_scale_range").beginArray();
      W.value(O.CpuScaleLow);
      W.value(O.CpuScaleHigh);
      W.endArray();
    }
    if (O.PerEventNs)
      profilerJson(W, O.ProfiledReplay, O.PerEventNs, O.ProfilerEvents,
                   O.ProfilerRemoved);
    W.field("baseline_ns", O.Baseline);
    W.field("predicted_ns", O.Predicted);
    O.speedupJson(W);
    W.field("baseline_steady_ns", O.BaselineSteady);
    W.field("predicted_span_ns", O.PredictedSpan);
    writeBacklog(W, "baseline_backlog", O.BasePiling);
    writeBacklog(W, "backlog", O.PredPiling);
    // What bounds the predicted iteration, and the tasks on its critical path.
    W.key("bound_by").beginArray();
    for (const sim::PathShare &Sh : sim::sharesByBound(G, Path))
      W.beginObject().field("what", Sh.Label).field("ns", Sh.Time).endObject();
    W.endArray();
    writeLongestTasks(W, G, Path);
    W.field("replay_error", O.replayError());
    W.key("params").beginObject();
    for (const compiler::ParamSummary &P : Model.Params)
      W.field(P.Name, shownValue(Axes, P, false));
    W.endObject();
    W.key("changes");
    writeChanges(W, R.Stats);
    if (Out.size() > 1) {
      W.key("iterations").beginArray();
      for (const Outcome &X : Out) {
        W.beginObject()
            .field("iteration", G.Iterations[X.Index].Number)
            .field("label", G.Iterations[X.Index].Label)
            .field("measured_ns", X.Measured);
        if (X.PerEventNs) // the replay with the profiler's cost
          W.field("profiled_replay_ns", X.ProfiledReplay);
        W.field("baseline_ns", X.Baseline)
            .field("predicted_ns", X.Predicted)
            .field("baseline_steady_ns", X.BaselineSteady)
            .field("predicted_span_ns", X.PredictedSpan);
        X.speedupJson(W);
        writeBacklog(W, "backlog", X.PredPiling);
        W.endObject();
      }
      W.endArray();
    }
    Mem.json(W);
    W.field("output", R.Output);
    W.field("steps", R.Steps);
    W.endObject();
  });
}

} // namespace

namespace {

/// A sweep of \p Axes over the trace side \p B: the model runs once per
/// combination on a copy of the unchanged graph.
int runSweep(const ModelOptions &M, const TraceOptions &T,
             const std::string &Path, const compiler::CompiledModel &Model,
             SourceManager &SM, const std::vector<SettingAxis> &Axes,
             const Baseline &B, const trace::Trace &Tr) {
  whatif::SweepRun S = whatif::sweep(B, Model.Program, Axes, M.MaxSteps);
  if (S.Failed) {
    writeErr(S.Failed->R.Output);
    reportError(Path, "in the sweep's run with " + *S.FailedLabel + ":");
    if (!S.Failed->R.Ok)
      reportDiagnostic(SM, S.Failed->R.Error);
    else
      reportError(Path, S.Failed->SimError);
    return ExitBadInput;
  }
  const std::vector<SweepRow> &Rows = S.Rows;
  const graph::Graph &G = *B.G;
  SweepHeader H;
  H.ModelPath = Path;
  H.TracePath = T.TracePath;
  H.Model = &Model;
  H.Axes = Axes;
  H.G = &G;
  H.Base = Rows.front().Result;
  if (T.Format == OutputFormat::Json) {
    // What the runs printed goes to stderr, as for one run.
    for (const SweepRow &R : Rows)
      writeErr(R.Output);
    writeJson([&](JsonWriter &W) { writeSweepJson(W, H, Rows); });
  } else {
    writeOut(sweepText(H, Rows));
  }
  if (T.ReportPath.empty())
    return ExitOk;
  // The page: the replayed iteration, and the sweep's plot.
  report::RunData D;
  D.G = &G;
  D.Command = "run";
  D.ModelPath = Path;
  D.ModelDescription = Model.Description;
  for (const compiler::ParamSummary &P : Model.Params)
    D.Params.push_back({P.Name, shownValue(Axes, P, true)});
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(G, MStart, MEnd);
  D.Measured = measuredSchedule(G, MStart, MEnd);
  D.Unprofiled = B.Unprofiled.Applied ? B.Unprofiled.Target : 0;
  D.ProfiledReplays = profiledReplays(B.Unprofiled, B.Chosen.size());
  D.Replayed = simulatedSchedule("replayed", G, *B.Base, B.Chosen);
  std::optional<memory::MemoryModel> Mem = memoryForOutputs(Tr, G);
  D.Memory = Mem ? &*Mem : nullptr;
  D.SweepResults = sweepForReport(H, Rows);
  return writeOutputs(T, Tr, B.Chosen, D);
}

} // namespace

std::unique_ptr<PreparedModel> dd::driver::prepareModel(const ModelOptions &M) {
  auto P = std::make_unique<PreparedModel>();
  auto Model = loadModel(M.Model, P->SM, &P->Path);
  if (!Model)
    return nullptr;
  P->Model = std::move(*Model);
  std::string Error;
  auto Axes = parseSettingAxes(M.Settings, Error);
  if (!Axes) {
    reportError("ddscript", Error);
    return nullptr;
  }
  P->Axes = std::move(*Axes);
  return P;
}

bool dd::driver::checkRun(const PreparedModel &P, const TraceOptions &T) {
  size_t Points = combinationCount(P.Axes);
  if (Points > 1) {
    if (Points > MaxSweepPoints) {
      reportError("ddscript",
                  fmt::format("the sweep asks for {} runs, more than {}: "
                              "sweep fewer values at a time",
                              Points == SIZE_MAX ? std::string("too many")
                                                 : formatCount(Points),
                              formatCount(MaxSweepPoints)));
      return false;
    }
    if (!oneIteration(T, "a sweep"))
      return false;
    if (!T.TimelinePath.empty()) {
      reportError("ddscript",
                  "--timeline shows one prediction, and a sweep makes " +
                      formatCount(Points) +
                      ": run one combination for its timeline (--report "
                      "plots the sweep)");
      return false;
    }
  }
  for (size_t I = 0; I < Points; ++I) {
    std::vector<vm::Setting> Settings = combination(P.Axes, I);
    RunMemory Mem;
    if (auto Bad = Mem.takeSettings(Settings, P.Model.Program)) {
      reportError("ddscript", *Bad);
      return false;
    }
    if (auto Bad = vm::checkSettings(P.Model.Program, Settings)) {
      if (Bad->Range.valid())
        reportDiagnostic(P.SM, *Bad);
      else
        reportError(P.Path, Bad->Message);
      return false;
    }
  }
  return true;
}

int dd::driver::runModel(const ModelOptions &M, const TraceOptions &T) {
  auto P = prepareModel(M);
  if (!P || !checkOutputPaths(T, &P->SM))
    return ExitBadInput;
  ProfilerRequest Unprofiled;
  if (!parseUnprofiled(M.Unprofiled, T, Unprofiled))
    return ExitBadInput;
  if (T.Job)
    return runJobModel(M, T, P->Model, P->SM, P->Path, P->Axes, Unprofiled);
  // Every combination's values are checked before the trace is loaded.
  if (!checkRun(*P, T))
    return ExitBadInput;
  RunSetupResult Setup = setupRun(T, Unprofiled);
  if (!Setup.Setup)
    return Setup.Rc;
  return runPrepared(M, T, *P, *Setup.Setup, /*KeepGraph=*/false);
}

int dd::driver::runPrepared(const ModelOptions &M, const TraceOptions &T,
                            PreparedModel &PM, RunSetup &S, bool KeepGraph) {
  // runModel checked already; a caller that prepared the model itself (the
  // Python module) is checked here, before anything is written.
  if (!checkOutputPaths(T, &PM.SM))
    return ExitBadInput;
  const compiler::CompiledModel *Model = &PM.Model;
  const std::string &Path = PM.Path;
  const std::vector<SettingAxis> *Axes = &PM.Axes;
  const trace::Trace *Tr = &S.In.Trace;
  // The graph the model changes: the setup's own, or a copy of it.
  std::optional<graph::Graph> Copy;
  graph::Graph *G = &S.G;
  if (KeepGraph && combinationCount(*Axes) == 1) {
    Copy = S.G;
    G = &*Copy;
  }
  const std::vector<size_t> *Chosen = &S.Chosen;
  const sim::SimResult *Base = &S.Base;
  Baseline B = S.baseline();
  if (combinationCount(*Axes) > 1)
    return runSweep(M, T, Path, *Model, PM.SM, *Axes, B, *Tr);

  // What the outputs take of the unchanged graph, before the model changes
  // it: the memory model ties blocks to its tasks, and the replay's critical
  // paths walk its edges.
  std::optional<memory::MemoryModel> Mem;
  report::RunData D;
  if (wantsOutputs(T)) {
    Mem = memoryForOutputs(*Tr, *G);
    D.Replayed = simulatedSchedule("replayed", *G, *Base, *Chosen);
  }
  std::vector<vm::Setting> Settings = combination(*Axes, 0);
  RunMemory PeakMem;
  (void)PeakMem.takeSettings(Settings, Model->Program);
  Prediction P =
      predict(B, *G, Model->Program, Settings, std::move(PeakMem), M.MaxSteps);
  (T.Format == OutputFormat::Json ? writeErr : writeOut)(P.R.Output);
  if (!P.R.Ok) {
    reportDiagnostic(PM.SM, P.R.Error);
    return ExitBadInput;
  }
  if (!P.SimError.empty()) {
    reportError(Path, P.SimError);
    return ExitBadInput;
  }
  // The critical path of the first reported iteration, as predicted.
  const graph::Iteration &First = G->Iterations[P.Out.front().Index];
  sim::CriticalPath CP = sim::criticalPath(
      *G, *P.Pred, First.End, sim::iterationSpan(*G, *P.Pred, First).first);
  if (T.Format == OutputFormat::Json) {
    printJson(Path, T.TracePath, *G, *Model, P.Out, P.R, *Axes, P.Mem, CP);
  } else {
    printText(Path, *Model, T.TracePath, *G, P.Out, P.R, *Axes, CP);
    writeOut(P.Mem.text());
  }
  if (!wantsOutputs(T))
    return ExitOk;
  D.G = &*G;
  D.Command = "run";
  D.ModelPath = Path;
  D.ModelDescription = Model->Description;
  for (const compiler::ParamSummary &Pm : Model->Params)
    D.Params.push_back({Pm.Name, shownValue(*Axes, Pm, true)});
  D.Changes = describeChanges(P.R.Stats);
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(*G, MStart, MEnd);
  D.Measured = measuredSchedule(*G, MStart, MEnd);
  D.Unprofiled = B.Unprofiled.Applied ? B.Unprofiled.Target : 0;
  D.ProfiledReplays = profiledReplays(B.Unprofiled, Chosen->size());
  D.Predicted = simulatedSchedule("predicted", *G, *P.Pred, *Chosen);
  D.Memory = Mem ? &*Mem : nullptr;
  D.PredictedMemory = P.Mem.model();
  return writeOutputs(T, *Tr, *Chosen, D);
}

int dd::driver::runCheck(const std::vector<std::string> &Models,
                         OutputFormat Format) {
  int Rc = ExitOk;
  if (Format == OutputFormat::Text) {
    for (const std::string &Name : Models) {
      SourceManager SM;
      std::string Path;
      auto M = loadModel(Name, SM, &Path);
      if (!M) {
        Rc = ExitBadInput;
        continue;
      }
      writeOut(fmt::format("{}: ok ({} parameter{})\n", Path, M->Params.size(),
                           M->Params.size() == 1 ? "" : "s"));
    }
    return Rc;
  }
  // JSON, for editors: each model's diagnostics as values (file, line and
  // column from 1; 0 where a message names no place), nothing on stderr.
  writeJson([&](JsonWriter &W) {
    W.beginObject().key("models").beginArray();
    for (const std::string &Name : Models) {
      SourceManager SM;
      std::string Path;
      Captured C;
      std::optional<compiler::CompiledModel> M;
      {
        Capture Cap;
        M = loadModel(Name, SM, &Path);
        C = Cap.take();
      }
      if (!M)
        Rc = ExitBadInput;
      W.beginObject()
          .field("model", Name)
          .field("path", Path)
          .field("ok", bool(M));
      if (M)
        W.field("params", M->Params.size());
      W.key("diagnostics").beginArray();
      for (const Message &D : C.Messages)
        W.beginObject()
            .field("file", D.File)
            .field("line", D.Line)
            .field("column", D.Column)
            .field("severity", severityName(D.Level))
            .field("message", D.Text)
            .endObject();
      W.endArray().endObject();
    }
    W.endArray().endObject();
  });
  return Rc;
}

int dd::driver::runDisasm(const std::string &Model) {
  SourceManager SM;
  auto M = loadModel(Model, SM);
  if (!M)
    return ExitBadInput;
  writeOut(bc::disassemble(M->Program, &SM));
  return ExitOk;
}

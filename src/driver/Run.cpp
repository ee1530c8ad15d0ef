//===- Run.cpp - ddscript run, check, disasm
//-------------------------------===//

#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Models.h"
#include "driver/Outputs.h"
#include "driver/Progress.h"
#include "driver/RunMemory.h"
#include "driver/Session.h"
#include "vm/VM.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

using namespace dd;
using namespace dd::driver;

namespace {

struct Outcome {
  const graph::Iteration *It;
  int64_t Measured, Baseline, Predicted;
  double speedup() const {
    return Predicted > 0 ? double(Baseline) / double(Predicted) : 0.0;
  }
  double replayError() const {
    return Measured ? double(Baseline - Measured) / double(Measured) : 0.0;
  }
};

std::vector<vm::Setting> parseSettings(const std::vector<std::string> &In,
                                       std::string &Error) {
  std::vector<vm::Setting> Out;
  for (const std::string &S : In) {
    size_t Eq = S.find('=');
    if (Eq == std::string::npos || Eq == 0) {
      Error = "--set takes NAME=VALUE, got '" + S + "'";
      return {};
    }
    Out.push_back({S.substr(0, Eq), S.substr(Eq + 1)});
  }
  return Out;
}

/// What the model did, for the report: (what, how much).
std::vector<std::pair<std::string, std::string>>
describeChanges(const vm::ChangeStats &C) {
  std::vector<std::pair<std::string, std::string>> Out = {
      {"tasks selected", formatCount(C.Selected)},
      {"tasks scaled", formatCount(C.Scaled)},
      {"tasks inserted", formatCount(C.Inserted)},
      {"tasks removed", formatCount(C.Removed)},
      {"dependencies added", formatCount(C.Dependencies)},
      {"resources rescheduled", formatCount(C.Scheduled)}};
  for (unsigned P = 0; P < graph::NumPhases; ++P)
    if (C.MovedByPhase[P])
      Out.push_back({fmt::format("task time in {} (all iterations)",
                                 graph::phaseName(graph::Phase(P))),
                     (C.MovedByPhase[P] > 0 ? "+" : "") +
                         formatDuration(C.MovedByPhase[P])});
  return Out;
}

void printText(const std::string &ModelPath,
               const compiler::CompiledModel &Model, const std::string &Trace,
               const graph::Graph &G, const std::vector<Outcome> &Out,
               size_t Default, const vm::RunResult &R,
               const std::vector<vm::Setting> &Settings) {
  std::string S;
  S += fmt::format("model      {}{}\n", ModelPath,
                   Model.Description.empty() ? ""
                                             : "  (" + Model.Description + ")");
  for (const compiler::ParamSummary &P : Model.Params) {
    std::string Value = P.DefaultText;
    for (const vm::Setting &Set : Settings)
      if (Set.Name == P.Name)
        Value = Set.Text + " (--set)";
    S += fmt::format("  {} = {}\n", P.Name, Value);
  }
  S += fmt::format("trace      {}\n", Trace);
  if (Out.size() == 1) {
    const Outcome &O = Out[0];
    size_t Index = static_cast<size_t>(O.It - G.Iterations.data());
    S += fmt::format("iteration  {} ({} of {}{})\n", O.It->Label, Index + 1,
                     G.Iterations.size(),
                     Index == Default ? ", steady state" : "");
    S += fmt::format("measured   {}\n", formatDuration(O.Measured));
    S += fmt::format("replayed   {}   error {}\n", formatDuration(O.Baseline),
                     formatPercent(O.replayError(), true));
    S += fmt::format("predicted  {}   speedup {:.3f}x ({})\n",
                     formatDuration(O.Predicted), O.speedup(),
                     formatPercent(O.Baseline
                                       ? double(O.Predicted - O.Baseline) /
                                             double(O.Baseline)
                                       : 0.0,
                                   true));
  } else {
    Table T;
    T.row({"iteration", "measured", "replayed", "predicted", "speedup"});
    for (size_t C = 1; C < 5; ++C)
      T.alignRight(C);
    for (const Outcome &O : Out)
      T.row({O.It->Label, formatDuration(O.Measured),
             formatDuration(O.Baseline), formatDuration(O.Predicted),
             fmt::format("{:.3f}x", O.speedup())});
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
  std::fputs(S.c_str(), stdout);
}

void printJson(const std::string &ModelPath, const std::string &Trace,
               const compiler::CompiledModel &Model,
               const std::vector<Outcome> &Out, const vm::RunResult &R,
               const std::vector<vm::Setting> &Settings, const RunMemory &Mem) {
  std::string S;
  JsonWriter W(S);
  W.beginObject();
  W.field("model", ModelPath);
  W.field("trace", Trace);
  const Outcome &O = Out.front();
  W.field("iteration", O.It->Number);
  W.field("label", O.It->Label);
  W.field("measured_ns", O.Measured);
  W.field("baseline_ns", O.Baseline);
  W.field("predicted_ns", O.Predicted);
  W.field("speedup", O.speedup());
  W.field("replay_error", O.replayError());
  W.key("params").beginObject();
  for (const compiler::ParamSummary &P : Model.Params) {
    std::string Value = P.DefaultText;
    for (const vm::Setting &Set : Settings)
      if (Set.Name == P.Name)
        Value = Set.Text;
    W.field(P.Name, Value);
  }
  W.endObject();
  const vm::ChangeStats &C = R.Stats;
  W.key("changes").beginObject();
  W.field("selected", C.Selected);
  W.field("scaled", C.Scaled);
  W.field("inserted", C.Inserted);
  W.field("removed", C.Removed);
  W.field("dependencies", C.Dependencies);
  W.field("schedules", C.Scheduled);
  W.key("moved_ns_by_phase").beginObject();
  for (unsigned P = 0; P < graph::NumPhases; ++P)
    W.field(graph::phaseName(graph::Phase(P)), C.MovedByPhase[P]);
  W.endObject();
  W.endObject();
  if (Out.size() > 1) {
    W.key("iterations").beginArray();
    for (const Outcome &X : Out)
      W.beginObject()
          .field("iteration", X.It->Number)
          .field("label", X.It->Label)
          .field("measured_ns", X.Measured)
          .field("baseline_ns", X.Baseline)
          .field("predicted_ns", X.Predicted)
          .field("speedup", X.speedup())
          .endObject();
    W.endArray();
  }
  Mem.json(W);
  W.field("output", R.Output);
  W.field("steps", R.Steps);
  W.endObject();
  S += '\n';
  std::fputs(S.c_str(), stdout);
}

} // namespace

int dd::driver::runModel(const ModelOptions &M, const TraceOptions &T) {
  SourceManager SM;
  std::string Path;
  auto Model = loadModel(M.Model, SM, &Path);
  if (!Model)
    return ExitBadInput;
  std::string Error;
  std::vector<vm::Setting> Settings = parseSettings(M.Settings, Error);
  if (!Error.empty()) {
    reportError("ddscript", Error);
    return ExitBadInput;
  }
  RunMemory PeakMem;
  if (auto Bad = PeakMem.takeSettings(Settings, Model->Program)) {
    reportError("ddscript", *Bad);
    return ExitBadInput;
  }
  if (auto Bad = vm::checkSettings(Model->Program, Settings)) {
    reportError(Path, *Bad);
    return ExitBadInput;
  }

  auto Opts = buildOptionsFor(T);
  if (!Opts)
    return ExitBadInput;
  graph::BuildOptions BO = *Opts;
  auto Tr = loadTraceFor(T);
  if (!Tr)
    return ExitBadInput;
  PhaseTimer GraphTimer("graph");
  auto G = graph::buildGraph(*Tr, BO);
  GraphTimer.stop();
  if (!G) {
    reportError(T.TracePath, llvm::toString(G.takeError()));
    return ExitBadInput;
  }
  auto Chosen = chooseIterations(*G, T.Iteration);
  if (!Chosen) {
    reportError(T.TracePath, llvm::toString(Chosen.takeError()));
    return ExitBadInput;
  }
  PhaseTimer BaseTimer("baseline");
  auto Base = sim::simulate(*G);
  BaseTimer.stop();
  if (!Base) {
    reportError(T.TracePath, llvm::toString(Base.takeError()));
    return ExitInternal;
  }
  // What the outputs take of the unchanged graph, before the model changes
  // it: the memory model ties blocks to its tasks, and the replay's critical
  // paths walk its edges.
  std::optional<memory::MemoryModel> Mem;
  report::RunData D;
  if (wantsOutputs(T)) {
    Mem = memoryForOutputs(*Tr, *G);
    D.Replayed = simulatedSchedule("replayed", *G, *Base, *Chosen);
  }

  vm::RunEnv Env;
  Env.G = &*G;
  Env.TracePath = T.TracePath;
  if (!Tr->Devices.empty()) {
    Env.Device.Name = Tr->Devices.front().Name;
    Env.Device.Memory = Tr->Devices.front().TotalGlobalMem;
    Env.Device.Sms = Tr->Devices.front().NumSms;
  }
  Env.Device.MemBandwidth = vm::estimateMemBandwidth(*G);
  Env.Device.PcieBandwidth = vm::estimatePcieBandwidth(*G);
  if (Tr->Distributed.Present) {
    Env.WorldSize = Tr->Distributed.WorldSize;
    Env.Rank = Tr->Distributed.Rank;
  }
  Env.ReportIteration = Chosen->front();
  Env.BaselineNs =
      sim::iterationTime(*G, *Base, G->Iterations[Chosen->front()]);
  graph::Graph *GP = &*G;
  size_t Report = Chosen->front();
  Env.Simulate = [GP, Report](const sim::SchedulePolicy &Policy) -> int64_t {
    auto R = sim::simulate(*GP, &Policy);
    if (!R)
      return 0;
    return sim::iterationTime(*GP, *R, GP->Iterations[Report]);
  };
  PeakMem.prepare(*Tr, *G, *Base, *Chosen, Env);
  vm::RunOptions RO;
  RO.MaxSteps = M.MaxSteps;
  RO.Settings = Settings;
  PhaseTimer ModelTimer("model");
  vm::RunResult R = vm::run(Model->Program, Env, RO);
  ModelTimer.stop();
  std::fputs(R.Output.c_str(),
             T.Format == OutputFormat::Json ? stderr : stdout);
  if (!R.Ok) {
    std::fputs(renderDiagnostic(SM, R.Error).c_str(), stderr);
    return ExitBadInput;
  }
  PhaseTimer PredictTimer("predict");
  auto Pred = sim::simulate(*G, &R.Policy);
  PredictTimer.stop();
  if (!Pred) {
    reportError(Path, llvm::toString(Pred.takeError()));
    return ExitBadInput;
  }
  PeakMem.finish(*G, *Pred, R.Stats);
  // After the model: its inserted tasks have no measured time, but the
  // vectors must cover them.
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(*G, MStart, MEnd);
  std::vector<Outcome> Out;
  for (size_t I : *Chosen) {
    const graph::Iteration &It = G->Iterations[I];
    Outcome O{&It, 0, 0, 0};
    O.Measured = measuredPointTime(*G, It.End, MEnd) -
                 measuredPointTime(*G, It.Begin, MEnd);
    O.Baseline = sim::iterationTime(*G, *Base, It);
    O.Predicted = sim::iterationTime(*G, *Pred, It);
    Out.push_back(O);
  }
  if (T.Format == OutputFormat::Json) {
    printJson(Path, T.TracePath, *Model, Out, R, Settings, PeakMem);
  } else {
    printText(Path, *Model, T.TracePath, *G, Out, defaultIteration(*G), R,
              Settings);
    std::fputs(PeakMem.text().c_str(), stdout);
  }
  if (!wantsOutputs(T))
    return ExitOk;
  D.G = &*G;
  D.Command = "run";
  D.ModelPath = Path;
  D.ModelDescription = Model->Description;
  for (const compiler::ParamSummary &P : Model->Params) {
    std::string Value = P.DefaultText;
    for (const vm::Setting &Set : Settings)
      if (Set.Name == P.Name)
        Value = Set.Text + " (--set)";
    D.Params.push_back({P.Name, Value});
  }
  D.Changes = describeChanges(R.Stats);
  D.Measured = measuredSchedule(*G, MStart, MEnd);
  D.Predicted = simulatedSchedule("predicted", *G, *Pred, *Chosen);
  D.Memory = Mem ? &*Mem : nullptr;
  D.PredictedMemory = PeakMem.model();
  return writeOutputs(T, *Tr, *Chosen, D);
}

int dd::driver::runCheck(const std::vector<std::string> &Models) {
  int Rc = ExitOk;
  for (const std::string &Name : Models) {
    SourceManager SM;
    std::string Path;
    auto M = loadModel(Name, SM, &Path);
    if (!M) {
      Rc = ExitBadInput;
      continue;
    }
    std::printf("%s: ok (%zu parameter%s)\n", Path.c_str(), M->Params.size(),
                M->Params.size() == 1 ? "" : "s");
  }
  return Rc;
}

int dd::driver::runDisasm(const std::string &Model) {
  SourceManager SM;
  auto M = loadModel(Model, SM);
  if (!M)
    return ExitBadInput;
  std::fputs(bc::disassemble(M->Program, &SM).c_str(), stdout);
  return ExitOk;
}

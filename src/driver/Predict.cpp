//===- Predict.cpp - One run of a model against a trace's graph -----------===//

#include "driver/Predict.h"

#include "driver/Progress.h"
#include "driver/Session.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::driver;

Prediction dd::driver::predict(const Baseline &B, graph::Graph &G,
                               const bc::Program &P,
                               const std::vector<vm::Setting> &Settings,
                               RunMemory Mem, uint64_t MaxSteps) {
  Prediction Out;
  const trace::Trace &Tr = *B.Tr;
  vm::RunEnv Env;
  Env.G = &G;
  Env.TracePath = B.TracePath;
  if (!Tr.Devices.empty()) {
    Env.Device.Name = Tr.Devices.front().Name;
    Env.Device.Memory = Tr.Devices.front().TotalGlobalMem;
    Env.Device.Sms = Tr.Devices.front().NumSms;
  }
  Env.Device.MemBandwidth = vm::estimateMemBandwidth(G);
  Env.Device.PcieBandwidth = vm::estimatePcieBandwidth(G);
  if (Tr.Distributed.Present) {
    Env.WorldSize = Tr.Distributed.WorldSize;
    Env.Rank = Tr.Distributed.Rank;
  }
  size_t Report = B.Chosen.front();
  Env.ReportIteration = Report;
  Env.BaselineNs = sim::iterationTime(G, *B.Base, G.Iterations[Report]);
  graph::Graph *GP = &G;
  Env.Simulate =
      [GP,
       Report](const sim::SchedulePolicy &Policy) -> llvm::Expected<int64_t> {
    auto R = sim::simulate(*GP, &Policy);
    if (!R)
      return R.takeError();
    return sim::iterationTime(*GP, *R, GP->Iterations[Report]);
  };
  Mem.prepare(Tr, G, *B.Base, B.Chosen, Env);
  vm::RunOptions RO;
  RO.MaxSteps = MaxSteps;
  RO.Settings = Settings;
  {
    PhaseTimer ModelTimer("model");
    Out.R = vm::run(P, Env, RO);
  }
  if (!Out.R.Ok) {
    Out.Mem = std::move(Mem);
    return Out;
  }
  PhaseTimer PredictTimer("predict");
  auto Pred = sim::simulate(G, &Out.R.Policy);
  PredictTimer.stop();
  if (!Pred) {
    Out.SimError = llvm::toString(Pred.takeError());
    Out.Mem = std::move(Mem);
    return Out;
  }
  Mem.finish(G, *Pred, Out.R.Stats);
  Out.Mem = std::move(Mem);
  // After the model: its inserted tasks have no measured time, but the
  // vectors must cover them.
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(G, MStart, MEnd);
  for (size_t I : B.Chosen) {
    const graph::Iteration &It = G.Iterations[I];
    Outcome O;
    O.Index = I;
    O.Measured = measuredPointTime(G, It.End, MEnd) -
                 measuredPointTime(G, It.Begin, MEnd);
    O.Baseline = sim::iterationTime(G, *B.Base, It);
    O.Predicted = sim::iterationTime(G, *Pred, It);
    Out.Out.push_back(O);
  }
  Out.Pred = std::move(*Pred);
  return Out;
}

void dd::driver::writeChanges(JsonWriter &W, const vm::ChangeStats &C) {
  W.beginObject();
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
}

std::string Outcome::speedupText() const {
  return emptied() ? std::string("-") : fmt::format("{:.3f}x", speedup());
}

void Outcome::speedupJson(JsonWriter &W) const {
  W.key("speedup");
  if (emptied())
    W.null();
  else
    W.value(speedup());
}

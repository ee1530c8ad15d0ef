//===- Load.cpp - One trace read, its graph built and replayed ------------===//

#include "whatif/Load.h"

#include "support/Progress.h"
#include "whatif/Focus.h"
#include "whatif/Iterations.h"

using namespace dd;
using namespace dd::whatif;

llvm::Expected<Input> dd::whatif::readInput(const TraceRequest &R) {
  PhaseTimer Timer("load");
  Progress P("loading " + R.Path);
  auto Update = [&](double F) { P.update(F); };
  auto F = readTraceFor(R.Path, R.Focus && !R.Build.Window, R.Iteration,
                        R.Memory, Update);
  P.done();
  if (!F)
    return F.takeError();
  return Input{R.Build, std::move(F->Trace), F->Span};
}

llvm::Expected<graph::Graph> dd::whatif::buildGraph(const Input &In,
                                                    graph::BuildStats *Stats) {
  PhaseTimer Timer("graph");
  auto G = graph::buildGraph(In.Trace, In.Build, Stats);
  if (G)
    G->Span = In.Span;
  return G;
}

Result<Replayed> dd::whatif::loadReplayed(const TraceRequest &R) {
  Result<Replayed> Out;
  auto Fail = [&](llvm::Error E) {
    Out.Failed = Problem{R.Path, llvm::toString(std::move(E)), false};
    return std::move(Out);
  };
  TraceRequest Whole = R;
  Whole.Focus = false;
  auto In = readInput(Whole);
  if (!In)
    return Fail(In.takeError());
  for (const std::string &W : In->Trace.Warnings)
    Out.Warnings.push_back({R.Path, W, false});
  auto G = buildGraph(*In, nullptr);
  if (!G)
    return Fail(G.takeError());
  auto Chosen = chooseIterations(*G, R.Iteration);
  if (!Chosen)
    return Fail(Chosen.takeError());
  auto Base = sim::simulate(*G);
  if (!Base)
    return Fail(Base.takeError());
  Out.Value = Replayed{std::move(*In), std::move(*G), std::move(*Chosen),
                       std::move(*Base)};
  return Out;
}

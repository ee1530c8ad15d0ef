//===- Setup.cpp - A trace set up for models to run on --------------------===//

#include "whatif/Setup.h"

using namespace dd;
using namespace dd::whatif;

llvm::Expected<ProfilerFit>
dd::whatif::applyProfiler(Replayed &R, const ProfilerRequest &Req) {
  auto Fit = applyProfiler(R.G, R.Chosen, R.In.Trace, Req);
  if (!Fit)
    return Fit.takeError();
  if (Fit->changed()) {
    // The CPU work changed: the baseline is the replay with it.
    auto Base = sim::simulate(R.G);
    if (!Base)
      return Base.takeError();
    R.Base = std::move(*Base);
  }
  return Fit;
}

Baseline RunSetup::baseline() const {
  Baseline B;
  B.Tr = &In.Trace;
  B.TracePath = TracePath;
  B.G = &G;
  B.Chosen = Chosen;
  B.Base = &Base;
  B.BaseSteady = steadyStates(G, Base, Chosen);
  B.Unprofiled = Fit;
  return B;
}

llvm::Expected<std::unique_ptr<RunSetup>>
dd::whatif::makeSetup(std::string TracePath, Replayed &&R,
                      const ProfilerRequest &Req) {
  auto Fit = applyProfiler(R, Req);
  if (!Fit)
    return Fit.takeError();
  return std::make_unique<RunSetup>(
      RunSetup{std::move(TracePath), std::move(R.In), std::move(R.G),
               std::move(R.Chosen), std::move(R.Base), std::move(*Fit)});
}

Result<std::unique_ptr<RunSetup>>
dd::whatif::setupRun(const TraceRequest &R, const ProfilerRequest &Req) {
  Result<std::unique_ptr<RunSetup>> Out;
  Result<Replayed> L = loadReplayed(R);
  Out.Warnings = std::move(L.Warnings);
  if (!L.Value) {
    Out.Failed = std::move(L.Failed);
    return Out;
  }
  auto S = makeSetup(R.Path, std::move(*L.Value), Req);
  if (!S)
    Out.Failed = Problem{R.Path, llvm::toString(S.takeError()), true};
  else
    Out.Value = std::move(*S);
  return Out;
}

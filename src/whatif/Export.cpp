//===- Export.cpp - Each rank's iteration, as a model leaves it, as Chakra ===//

#include "whatif/Export.h"

#include "whatif/Iterations.h"

#include <fmt/format.h>

#include <map>

using namespace dd;
using namespace dd::whatif;

Result<std::string> dd::whatif::jobIteration(const LoadedRanks &L,
                                             job::Clock C) {
  Result<std::string> Out;
  auto J = job::joinRanks(L.Graphs, C);
  if (!J) {
    Out.Failed = Problem{"ddscript", llvm::toString(J.takeError())};
    return Out;
  }
  auto Chosen = chooseJobIterations(*J, L.Iteration, L.DefaultFrom);
  if (!Chosen) {
    Out.Failed = Problem{"ddscript", llvm::toString(Chosen.takeError())};
    return Out;
  }
  Out.Value = std::to_string(J->Iterations[Chosen->front()].Number);
  return Out;
}

Result<std::vector<std::unique_ptr<RunSetup>>>
dd::whatif::setupRanks(LoadedRanks &&L, const std::string &Iteration) {
  Result<std::vector<std::unique_ptr<RunSetup>>> Out;
  std::vector<std::unique_ptr<RunSetup>> Setups;
  for (job::RankGraph &RG : L.Graphs) {
    // What a model reads of the trace: its device and distributedInfo.
    Replayed R;
    const vm::DeviceFacts &Dev = L.Devices[RG.Rank];
    if (!Dev.Name.empty() || Dev.Memory || Dev.Sms) {
      trace::DeviceInfo D;
      D.Id = 0;
      D.Name = Dev.Name;
      D.TotalGlobalMem = Dev.Memory;
      D.NumSms = Dev.Sms;
      R.In.Trace.Devices.push_back(std::move(D));
    }
    if (L.RanksFromTraces) {
      R.In.Trace.Distributed.Present = true;
      R.In.Trace.Distributed.Rank = RG.Rank;
      R.In.Trace.Distributed.WorldSize = L.WorldSize;
    }
    R.G = std::move(RG.G);
    auto Chosen = chooseIterations(R.G, Iteration);
    if (!Chosen) {
      Out.Failed = Problem{RG.Path, llvm::toString(Chosen.takeError())};
      return Out;
    }
    R.Chosen = std::move(*Chosen);
    auto Base = sim::simulate(R.G);
    if (!Base) {
      Out.Failed = Problem{RG.Path, llvm::toString(Base.takeError()), true};
      return Out;
    }
    R.Base = std::move(*Base);
    auto S = makeSetup(RG.Path, std::move(R), ProfilerRequest());
    if (!S) {
      Out.Failed = Problem{RG.Path, llvm::toString(S.takeError()), true};
      return Out;
    }
    Setups.push_back(std::move(*S));
  }
  Out.Value = std::move(Setups);
  return Out;
}

ChakraExport
dd::whatif::exportChakra(std::vector<std::unique_ptr<RunSetup>> &Setups,
                         const std::vector<std::string> &Traces,
                         const std::vector<std::string> &Sources,
                         const ExportModel &M) {
  ChakraExport Out;
  std::map<int64_t, std::string> Ranks;
  for (size_t I = 0; I < Setups.size(); ++I) {
    RunSetup &S = *Setups[I];
    ExportedRank F;
    F.Trace = Traces[I];
    const trace::DistributedInfo &Dist = S.In.Trace.Distributed;
    F.Rank =
        Dist.Present && Dist.Rank >= 0 ? Dist.Rank : static_cast<int64_t>(I);
    if (F.Rank >= job::MaxRank) {
      Out.Failed = Problem{
          Traces[I], fmt::format("distributedInfo says rank {}: ranks above "
                                 "{} are not taken (no job has that many)",
                                 F.Rank, job::MaxRank)};
      return Out;
    }
    auto [Seen, New] = Ranks.emplace(F.Rank, Traces[I]);
    if (!New) {
      Out.Failed = Problem{Traces[I], fmt::format("rank {} again (also {})",
                                                  F.Rank, Seen->second)};
      return Out;
    }
    size_t It = S.Chosen.front();
    const std::vector<int64_t> *Start = &S.Base.Start;
    std::optional<Prediction> P;
    if (M.Program) {
      P.emplace(predict(S.baseline(), S.G, *M.Program, M.Settings, RunMemory(),
                        M.MaxSteps));
      Out.Printed += P->R.Output;
      if (!P->R.Ok) {
        Out.ModelError = true;
        Out.FailedRun = std::move(P->R);
        return Out;
      }
      if (!P->SimError.empty()) {
        Out.Failed = Problem{M.Path, P->SimError};
        return Out;
      }
      Start = &P->Pred->Start;
    }
    exporter::ChakraOptions O;
    O.Iteration = It;
    O.Rank = F.Rank;
    O.Source = Sources[I];
    O.Model = M.Program ? M.Path : "";
    F.Bytes = exporter::writeChakra(S.G, *Start, O, F.Stats);
    F.Iteration = S.G.Iterations[It].Label;
    Out.Ranks.push_back(std::move(F));
  }
  return Out;
}

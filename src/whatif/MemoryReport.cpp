//===- MemoryReport.cpp - Peak device memory of a replay ------------------===//

#include "whatif/MemoryReport.h"

#include "support/Format.h"
#include "support/Progress.h"
#include "whatif/Iterations.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

using namespace dd;
using namespace dd::whatif;
using memory::BlockId;
using memory::MemoryModel;
using memory::PoolId;

namespace {

/// An operator's name for a table: autograd nodes by their function.
std::string opName(const graph::Graph &G, graph::TaskId T, size_t Max) {
  std::string_view N = G.name(T);
  constexpr std::string_view Node = "autograd::engine::evaluate_function: ";
  if (N.substr(0, Node.size()) == Node)
    N.remove_prefix(Node.size());
  return shorten(N, Max);
}

/// "aten::conv2d > aten::empty": the outermost operator around the task
/// that made a record, and the task itself.
std::string opPath(const graph::Graph &G, graph::TaskId T) {
  if (T == graph::NoTask)
    return "(before the trace)";
  graph::TaskId Outer = T;
  for (graph::TaskId P = G.Parent[T]; P != graph::NoTask; P = G.Parent[P])
    if (G.Kind[P] == graph::TaskKind::CpuOp)
      Outer = P;
  std::string Inner = opName(G, T, 40), Top = opName(G, Outer, 50);
  if (Outer == T || Inner == Top)
    return opName(G, T, 70);
  return Top + " > " + Inner;
}

std::string layerName(const graph::Graph &G, graph::LayerId L) {
  return L == graph::NoLayer ? "-" : G.Layers[L].Name;
}

std::string iterationLabel(const graph::Graph &G, int32_t I) {
  return I < 0 ? "-" : G.Iterations[static_cast<size_t>(I)].Label;
}

Where describe(const graph::Graph &G, const MemoryModel &M,
               const memory::Curve &C, const memory::Peak &P) {
  Where W;
  W.Time = P.Time;
  W.Inside = P.Inside;
  if (!P.Inside)
    return W;
  // A level inside the span only rises with an allocation.
  BlockId B = C.Block[P.Event];
  graph::TaskId Owner = M.AllocOwner[B];
  W.Op =
      (M.Flags[B] & MemoryModel::BF_Added ? "(added) " : "") + opPath(G, Owner);
  W.Layer = layerName(G, M.AllocLayer[B]);
  W.Phase = graph::phaseName(M.AllocPhase[B]);
  W.Iteration = iterationLabel(G, M.AllocIteration[B]);
  return W;
}

std::vector<Pattern> patterns(const MemoryModel &M, const graph::Graph &G,
                              PoolId P, size_t Reference) {
  size_t N = G.Iterations.size();
  std::vector<std::vector<std::pair<int64_t, int64_t>>> Seq(N); // (key, size)
  for (BlockId B = 0; B < M.numBlocks(); ++B)
    if (M.PoolOf[B] == P && M.AllocRecord[B] != memory::NoRecord &&
        M.AllocIteration[B] >= 0 && M.AllocAt[B].K != memory::Placement::Before)
      Seq[static_cast<size_t>(M.AllocIteration[B])].push_back(
          {M.AllocKey[B], M.MeasuredSize[B]});
  std::vector<std::vector<int64_t>> Sizes(N);
  for (size_t I = 0; I < N; ++I) {
    std::sort(Seq[I].begin(), Seq[I].end());
    for (auto [K, S] : Seq[I])
      Sizes[I].push_back(S);
  }
  std::vector<int64_t> RefSorted = Sizes[Reference];
  std::sort(RefSorted.begin(), RefSorted.end());
  std::vector<Pattern> Out(N);
  for (size_t I = 0; I < N; ++I) {
    Pattern &Pt = Out[I];
    Pt.Allocs = Sizes[I].size();
    for (int64_t S : Sizes[I])
      Pt.Bytes += S;
    if (I == Reference) {
      Pt.Verdict = "reference";
      Pt.Same = true;
      continue;
    }
    if (Sizes[I] == Sizes[Reference]) {
      Pt.Verdict = "identical";
      Pt.Same = true;
      continue;
    }
    std::vector<int64_t> Sorted = Sizes[I];
    std::sort(Sorted.begin(), Sorted.end());
    if (Sorted == RefSorted) {
      Pt.Verdict = "same sizes, other order";
      Pt.Same = true;
      continue;
    }
    std::vector<int64_t> Common;
    std::set_intersection(Sorted.begin(), Sorted.end(), RefSorted.begin(),
                          RefSorted.end(), std::back_inserter(Common));
    Pt.Verdict = fmt::format(
        "differs: {} of {} sizes shared", formatCount(Common.size()),
        formatCount(std::max(Sorted.size(), RefSorted.size())));
  }
  return Out;
}

std::string describeTime(const MemoryModel &M, const memory::Profile &Pr,
                         const graph::Graph &G, BlockId B, bool Free) {
  int64_t T = Free ? Pr.FreeTime[B] : Pr.AllocTime[B];
  if (T == memory::BeforeWindow)
    return M.AllocRecord[B] == memory::NoRecord ? "before the trace"
                                                : "before the window";
  if (T == memory::AfterWindow)
    return M.FreeRecord[B] == memory::NoRecord ? "never (in the trace)"
                                               : "after the window";
  graph::TaskId Owner = Free ? M.FreeOwner[B] : M.AllocOwner[B];
  int32_t It = Free ? M.FreeIteration[B] : M.AllocIteration[B];
  graph::Phase Ph = Free ? M.FreePhase[B] : M.AllocPhase[B];
  return fmt::format("{} ({}, {})", opPath(G, Owner), graph::phaseName(Ph),
                     iterationLabel(G, It));
}

DeviceReport report(const trace::Trace &T, const graph::Graph &G,
                    const MemoryModel &M, const memory::Profile &Replay,
                    PoolId P, const Span &S, const std::vector<int64_t> &MEnd,
                    const sim::SimResult &R, size_t Reference, unsigned Top) {
  DeviceReport D;
  D.P = P;
  D.Pl = &M.Pools[P];
  for (const trace::DeviceInfo &Dev : T.Devices)
    if (Dev.Id == D.Pl->DeviceId) {
      D.Name = Dev.Name;
      D.Capacity = Dev.TotalGlobalMem;
    }
  const memory::Curve &MC = M.measured(P);
  const memory::Curve &RC = Replay.Curves[P];
  D.Measured = memory::peakIn(MC, S.MeasuredFrom, S.MeasuredTo);
  D.Replayed = memory::peakIn(RC, S.ReplayedFrom, S.ReplayedTo);
  D.At = describe(G, M, RC, D.Replayed);
  if (!S.Whole)
    D.At.Time -= S.ReplayedFrom;
  D.ByClass = M.bytesByClassAfter(Replay, P, D.Replayed.Event);
  std::vector<BlockId> Live = M.liveAfter(Replay, P, D.Replayed.Event);
  std::stable_sort(Live.begin(), Live.end(),
                   [&](BlockId A, BlockId B) { return M.Size[A] > M.Size[B]; });
  for (size_t I = 0; I < Live.size() && I < Top; ++I)
    D.Top.push_back({Live[I], describeTime(M, Replay, G, Live[I], false),
                     describeTime(M, Replay, G, Live[I], true)});

  std::vector<Pattern> Pats = patterns(M, G, P, Reference);
  size_t N = G.Iterations.size();
  for (size_t I = 0; I < N; ++I) {
    const graph::Iteration &It = G.Iterations[I];
    IterationRow Row{I, {}, {}, Pats[I]};
    Row.Measured = memory::peakIn(MC, measuredPointTime(G, It.Begin, MEnd),
                                  measuredPointTime(G, It.End, MEnd));
    Row.Replayed = memory::peakIn(RC, sim::pointTime(G, R, It.Begin),
                                  sim::pointTime(G, R, It.End));
    D.Iterations.push_back(Row);
  }
  // Steady state: leave out the first and the last iteration when there are
  // enough of them (warm-up; the profiler stops in the last).
  size_t From = N > 2 ? 1 : 0, To = N > 2 ? N - 1 : N;
  for (size_t I = From; I < To; ++I) {
    const IterationRow &Row = D.Iterations[I];
    if (I == From) {
      D.SteadyAllocsMin = D.SteadyAllocsMax = Row.Pat.Allocs;
      D.SteadyPeakMin = D.SteadyPeakMax = Row.Measured.Bytes;
    }
    D.SteadyAllocsMin = std::min(D.SteadyAllocsMin, Row.Pat.Allocs);
    D.SteadyAllocsMax = std::max(D.SteadyAllocsMax, Row.Pat.Allocs);
    D.SteadyPeakMin = std::min(D.SteadyPeakMin, Row.Measured.Bytes);
    D.SteadyPeakMax = std::max(D.SteadyPeakMax, Row.Measured.Bytes);
    D.Periodic &= Row.Pat.Same;
  }
  return D;
}

} // namespace

MemoryReport dd::whatif::reportMemory(const trace::Trace &T,
                                      const graph::Graph &G,
                                      const std::string &Path,
                                      const std::string &Iteration,
                                      unsigned Top) {
  MemoryReport Out;
  auto Fail = [&](std::string Message, bool Internal = false) {
    Out.Failed = Problem{Path, std::move(Message), Internal};
    return std::move(Out);
  };
  auto Built = MemoryModel::build(T, G);
  if (!Built)
    return Fail(llvm::toString(Built.takeError()));
  const MemoryModel *M = &Out.M.emplace(std::move(*Built));
  if (!M->hasDeviceRecords()) {
    uint64_t Host = 0;
    for (const memory::Pool &P : M->Pools)
      Host += P.RecordsInWindow;
    return Fail(fmt::format("no GPU memory records in the replayed iterations "
                            "(only {} host memory records); ddscript models "
                            "device memory",
                            Host));
  }
  Span &S = Out.S;
  size_t Reference = defaultIteration(G);
  if (Iteration == "all") {
    S.Label = fmt::format("the whole replayed window, {} iterations",
                          G.Iterations.size());
  } else {
    auto Chosen = chooseIterations(G, Iteration);
    if (!Chosen)
      return Fail(llvm::toString(Chosen.takeError()));
    S.Whole = false;
    S.Iteration = Reference = Chosen->front();
  }
  PhaseTimer SimTimer("simulate");
  auto R = sim::simulate(G);
  SimTimer.stop();
  if (!R)
    return Fail(llvm::toString(R.takeError()), true);
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(G, MStart, MEnd);
  if (!S.Whole) {
    const graph::Iteration &It = G.Iterations[S.Iteration];
    S.MeasuredFrom = measuredPointTime(G, It.Begin, MEnd);
    S.MeasuredTo = measuredPointTime(G, It.End, MEnd);
    S.ReplayedFrom = sim::pointTime(G, *R, It.Begin);
    S.ReplayedTo = sim::pointTime(G, *R, It.End);
    S.Label =
        fmt::format("iteration {} ({} of {}{})", It.Label,
                    G.iterationOrdinal(S.Iteration), G.traceIterationCount(),
                    S.Iteration == defaultIteration(G) ? ", steady state" : "");
  }
  memory::Profile Replay = M->profile({R->Start, R->End});
  for (PoolId P = 0; P < M->Pools.size(); ++P)
    if (M->Pools[P].isDevice() && M->Pools[P].RecordsInWindow)
      Out.Devices.push_back(
          report(T, G, *M, Replay, P, S, MEnd, *R, Reference, Top));
  return Out;
}

//===- JobReplay.cpp - A job replayed as traced ---------------------------===//

#include "whatif/JobReplay.h"

#include "support/Parallel.h"
#include "support/Progress.h"
#include "trace/TraceReader.h"

#include <algorithm>

using namespace dd;
using namespace dd::whatif;

namespace {

/// How many ranks get a simulated what-if each: the latest ones.
constexpr size_t MaxWhatIfs = 8;

/// The ranks later than the median rank at the collectives of \p It, the
/// latest first (at most MaxWhatIfs), each with the job's iteration were it
/// as fast as needed to be no later than the median rank.
std::vector<Straggler> stragglers(const job::Job &J, const sim::SimResult &Base,
                                  const job::JobIteration &It,
                                  const std::vector<int64_t> &Late) {
  std::vector<int64_t> Sorted = Late;
  std::sort(Sorted.begin(), Sorted.end());
  int64_t Median = Sorted.empty() ? 0 : Sorted[(Sorted.size() - 1) / 2];
  std::vector<size_t> Order;
  for (size_t I = 0; I < Late.size(); ++I)
    if (Late[I] > Median)
      Order.push_back(I);
  std::stable_sort(Order.begin(), Order.end(),
                   [&](size_t A, size_t B) { return Late[A] > Late[B]; });
  if (Order.size() > MaxWhatIfs)
    Order.resize(MaxWhatIfs);
  // The what-ifs share the graph and run on threads; each result has its
  // slot, so the order does not depend on which finishes first.
  std::vector<std::optional<job::StragglerWhatIf>> Found(Order.size());
  parallelFor(Order.size(), trace::defaultLoadThreads(), [&](size_t K) {
    auto W = job::asFastAsNeeded(J, Base, It, Order[K], Median);
    if (W)
      Found[K] = *W;
    else
      llvm::consumeError(W.takeError());
  });
  std::vector<Straggler> Out;
  for (size_t K = 0; K < Order.size(); ++K)
    if (Found[K])
      Out.push_back({J.Ranks[Order[K]].Rank, Late[Order[K]], Found[K]->JobTime,
                     Found[K]->Scale});
  std::stable_sort(Out.begin(), Out.end(),
                   [](const Straggler &A, const Straggler &B) {
                     return A.JobWithout < B.JobWithout;
                   });
  return Out;
}
} // namespace

llvm::Expected<JobReplay>
dd::whatif::replayJob(const job::Job &J, const std::vector<size_t> &Chosen) {
  PhaseTimer SimTimer("simulate");
  auto R = sim::simulate(J.G);
  if (!R)
    return R.takeError();
  JobReplay Out;
  std::vector<JobReport> &Reports = Out.Reports;
  for (size_t C : Chosen) {
    const job::JobIteration &It = J.Iterations[C];
    JobReport Rep{&It, C, 0, 0, {}, {}, {}};
    job::Span M = job::measuredSpan(J, It), S = job::simulatedSpan(J, *R, It);
    Rep.Measured = M.length();
    Rep.Replayed = S.length();
    std::vector<int64_t> Late = job::lateness(J, *R, It);
    for (size_t I = 0; I < J.Ranks.size(); ++I) {
      const graph::Iteration &RI = J.G.Iterations[It.PerRank[I]];
      auto [B, E] = sim::iterationSpan(J.G, *R, RI);
      Rep.Ranks.push_back({J.Ranks[I].Rank, RI.measured(), E - B, Late[I]});
    }
    Rep.Stragglers = stragglers(J, *R, It, Late);
    Rep.Path = job::criticalPath(J, *R, It);
    Reports.push_back(std::move(Rep));
  }
  SimTimer.stop();
  Out.R = std::move(*R);
  return Out;
}

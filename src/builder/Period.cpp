//===- Period.cpp - Steps found in a trace without step markers ----------===//
//
// Inference loops and micro-benchmarks record no ProfilerStep#N. Their steps
// repeat: the same kernels in the same order on the busiest stream. The
// smallest period of that sequence of kernel names (the prefix function's,
// in linear time; leading warm-up dropped where the whole trace is not
// periodic) is the step; a step begins at the kernel whose position in the
// period has the longest wait before it over the repeats (between its
// launch and the one before, and GPU idle time: the host's work between
// steps), and on the CPU where the outermost operator enclosing that
// kernel's launch begins.
//
//===----------------------------------------------------------------------===//

#include "builder/BuilderImpl.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace dd;
using namespace dd::graph;
using namespace dd::graph::detail;
using trace::EventKind;

namespace {

/// The smallest p with S[i] == S[i + p] for every i (the prefix function).
size_t smallestPeriod(const std::vector<uint32_t> &S) {
  if (S.empty())
    return 0;
  std::vector<uint32_t> Pi(S.size(), 0);
  for (size_t I = 1; I < S.size(); ++I) {
    uint32_t K = Pi[I - 1];
    while (K > 0 && S[I] != S[K])
      K = Pi[K - 1];
    if (S[I] == S[K])
      ++K;
    Pi[I] = K;
  }
  return S.size() - Pi.back();
}

} // namespace

bool detail::detectSteps(BuildContext &C) {
  const trace::Trace &T = C.T;
  using PK = Iteration::PointKind;
  // The busiest stream's GPU work, by start.
  std::vector<EventId> Work = eventsOnBusiestTrack(
      T, [&](EventId E) { return trace::isGpuWork(T.Kind[E]); });
  if (Work.size() < 4)
    return false;
  trace::TrackId Busiest = T.TrackOf[Work.front()];
  // The smallest period, after dropping warm-up where it helps: at least
  // two whole repeats.
  size_t From = 0, Period = 0;
  for (size_t Drop :
       {size_t(0), Work.size() / 8, Work.size() / 4, Work.size() / 2}) {
    std::vector<uint32_t> Names;
    Names.reserve(Work.size() - Drop);
    for (size_t I = Drop; I < Work.size(); ++I)
      Names.push_back(T.Name[Work[I]]);
    size_t P = smallestPeriod(Names);
    if (P > 0 && Names.size() >= 2 * P) {
      From = Drop;
      Period = P;
      break;
    }
  }
  if (!Period)
    return false;
  // Each GPU task's launch.
  llvm::DenseMap<int64_t, EventId> CallOf;
  for (EventId E = 0; E < T.numEvents(); ++E)
    if ((T.Kind[E] == EventKind::Runtime || T.Kind[E] == EventKind::Driver) &&
        T.Correlation[E] != trace::NoValue)
      CallOf.try_emplace(T.Correlation[E], E);
  auto LaunchOf = [&](EventId K) -> EventId {
    if (T.Correlation[K] == trace::NoValue)
      return trace::NoEvent;
    auto It = CallOf.find(T.Correlation[K]);
    return It == CallOf.end() ? trace::NoEvent : It->second;
  };
  // Where a step begins: the position in the period with the longest wait
  // before it, summed over the repeats: the time between its launch and
  // the previous one's (the host's work between steps: loading a batch,
  // waiting at a sync), plus the GPU's idle time before it.
  // In doubles: any trace's times, summed over any number of repeats.
  std::vector<double> Wait(Period, 0);
  for (size_t I = From + 1; I < Work.size(); ++I) {
    EventId A = LaunchOf(Work[I - 1]), B = LaunchOf(Work[I]);
    double Launch = A != trace::NoEvent && B != trace::NoEvent
                        ? std::max(0.0, double(T.Start[B]) - double(T.Start[A]))
                        : 0.0;
    Wait[(I - From) % Period] +=
        Launch +
        std::max(0.0, double(T.Start[Work[I]]) - double(T.end(Work[I - 1])));
  }
  size_t Phase = std::max_element(Wait.begin(), Wait.end()) - Wait.begin();
  // The outermost operator around each boundary's launch that began after
  // the launch before it.
  llvm::DenseMap<trace::TrackId, std::vector<EventId>> Ops;
  for (EventId E = 0; E < T.numEvents(); ++E)
    if (T.Kind[E] == EventKind::CpuOp)
      Ops[T.TrackOf[E]].push_back(E);
  for (auto &KV : Ops)
    std::sort(KV.second.begin(), KV.second.end(), [&](EventId A, EventId B) {
      return std::make_pair(T.Start[A], A) < std::make_pair(T.Start[B], B);
    });
  std::vector<EventId> Begins;
  for (size_t I = From + Phase; I < Work.size(); I += Period) {
    EventId Call = LaunchOf(Work[I]);
    if (Call == trace::NoEvent)
      return false;
    EventId Prev = I > 0 ? LaunchOf(Work[I - 1]) : trace::NoEvent;
    int64_t After = Prev == trace::NoEvent ? INT64_MIN : T.Start[Prev];
    EventId Begin = Call;
    auto OpsIt = Ops.find(T.TrackOf[Call]);
    if (OpsIt != Ops.end()) {
      const std::vector<EventId> &V = OpsIt->second;
      auto It = std::upper_bound(
          V.begin(), V.end(), T.Start[Call],
          [&](int64_t Ts, EventId E) { return Ts < T.Start[E]; });
      // Back over the operators that began since the previous launch.
      while (It != V.begin() && T.Start[*(It - 1)] > After) {
        --It;
        if (T.end(*It) >= T.end(Call))
          Begin = *It;
      }
    }
    Begins.push_back(Begin);
  }
  // Boundaries must follow one another in time (one launch for every
  // step, launches from several threads out of order: no steps).
  if (Begins.size() < 2)
    return false;
  for (size_t I = 1; I < Begins.size(); ++I)
    if (T.Start[Begins[I]] <= T.Start[Begins[I - 1]])
      return false;
  size_t Repeats = (Work.size() - From) / Period;
  for (size_t I = 0; I + 1 < Begins.size(); ++I)
    C.Windows.push_back({static_cast<int64_t>(I + 1), T.Start[Begins[I]],
                         T.Start[Begins[I + 1]], PK::TaskStart, PK::TaskStart,
                         Begins[I], Begins[I + 1],
                         "step " + std::to_string(I + 1) + " (detected)"});
  C.W0 = T.Start[Begins.front()];
  // The last boundary's operator is in the graph: it ends the last step.
  C.W1 = T.end(Begins.back()) + 1;
  C.Stats.IterationSource = "detected: a period of " + std::to_string(Period) +
                            " GPU tasks repeated " + std::to_string(Repeats) +
                            " times on stream " +
                            std::to_string(T.Tracks[Busiest].Stream);
  return true;
}

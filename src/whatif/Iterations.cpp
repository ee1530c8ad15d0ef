//===- Iterations.cpp - Which iterations a command reports ----------------===//

#include "whatif/Iterations.h"

#include "support/Error.h"
#include "trace/Numbers.h"

#include "llvm/ADT/DenseMap.h"

#include <fmt/format.h>

#include <algorithm>

using namespace dd;
using namespace dd::whatif;

llvm::Expected<std::pair<int64_t, int64_t>>
dd::whatif::parseWindow(std::string_view S) {
  size_t Colon = S.find(':');
  auto Bad = [&]() {
    return makeError("invalid --window '" + llvm::Twine(S) +
                     "': expected START:END in microseconds from the start "
                     "of the trace, e.g. 1200:85000");
  };
  if (Colon == std::string_view::npos)
    return Bad();
  auto A = trace::parseMicrosAsNanos(S.substr(0, Colon));
  auto B = trace::parseMicrosAsNanos(S.substr(Colon + 1));
  if (!A || !B)
    return Bad();
  if (*A < 0 || *B <= *A)
    return makeError("invalid --window '" + llvm::Twine(S) +
                     "': need 0 <= START < END");
  // Times add to the trace's start: a window ends within 2^62 ns of it.
  if (*B > graph::MaxTime)
    return makeError("invalid --window '" + llvm::Twine(S) +
                     "': END is more than 146 years after the trace's start");
  return std::make_pair(*A, *B);
}

size_t dd::whatif::defaultIteration(llvm::ArrayRef<int64_t> Lengths,
                                    llvm::ArrayRef<uint8_t> Busy) {
  // The iterations that hold GPU work, or all when none does.
  std::vector<size_t> Pool;
  for (size_t I = 0; I < Lengths.size(); ++I)
    if (Busy.empty() || Busy[I])
      Pool.push_back(I);
  if (Pool.empty())
    for (size_t I = 0; I < Lengths.size(); ++I)
      Pool.push_back(I);
  // Lengths.size() - 1 when there is none (as before: callers check).
  if (Pool.size() <= 2)
    return Pool.empty() ? Lengths.size() - 1 : Pool.back();
  // The first and the last are warm-up and tail.
  std::vector<size_t> Mid(Pool.begin() + 1, Pool.end() - 1);
  std::stable_sort(Mid.begin(), Mid.end(),
                   [&](size_t A, size_t B) { return Lengths[A] < Lengths[B]; });
  return Mid[(Mid.size() - 1) / 2];
}

std::vector<uint8_t>
dd::whatif::iterationsWithWork(llvm::ArrayRef<int64_t> Begin,
                               llvm::ArrayRef<int64_t> End,
                               std::vector<int64_t> WorkStarts) {
  std::sort(WorkStarts.begin(), WorkStarts.end());
  std::vector<uint8_t> Busy;
  for (size_t I = 0; I < Begin.size(); ++I) {
    auto First =
        std::lower_bound(WorkStarts.begin(), WorkStarts.end(), Begin[I]);
    Busy.push_back(First != WorkStarts.end() && *First < End[I]);
  }
  return Busy;
}

std::vector<std::string> dd::whatif::markerWarnings(
    llvm::ArrayRef<int64_t> Numbers, llvm::ArrayRef<int64_t> Begin,
    llvm::ArrayRef<int64_t> End, llvm::ArrayRef<uint8_t> Busy) {
  std::vector<std::string> Out;
  size_t N = Numbers.size();
  size_t Overlaps = 0, FirstOverlap = 0;
  for (size_t I = 1; I < N; ++I)
    if (Begin[I] < End[I - 1] && Overlaps++ == 0)
      FirstOverlap = I;
  if (Overlaps)
    Out.push_back(fmt::format(
        "{} iteration marker{} begin{} before the one before ends (nested or "
        "repeated markers; the first: ProfilerStep#{} inside ProfilerStep#{}): "
        "each is taken as an iteration, so iterations overlap",
        Overlaps, Overlaps == 1 ? "" : "s", Overlaps == 1 ? "s" : "",
        Numbers[FirstOverlap], Numbers[FirstOverlap - 1]));
  llvm::DenseMap<int64_t, size_t> Count;
  for (int64_t Number : Numbers)
    ++Count[Number];
  size_t Repeated = 0;
  int64_t FirstRepeated = 0;
  for (int64_t Number : Numbers)
    if (Count[Number] > 1 && Repeated++ == 0)
      FirstRepeated = Number;
  if (Repeated)
    Out.push_back(fmt::format(
        "{} iteration markers share a number with another (the first: "
        "ProfilerStep#{}, {} times): --iteration {} reports each of them",
        Repeated, FirstRepeated, Count[FirstRepeated], FirstRepeated));
  size_t Idle = 0, FirstIdle = 0;
  for (size_t I = 0; I < Busy.size(); ++I)
    if (!Busy[I] && Idle++ == 0)
      FirstIdle = I;
  if (Idle && Idle < Busy.size())
    Out.push_back(fmt::format(
        "{} of {} iteration markers {} no GPU work (the first: "
        "ProfilerStep#{}); the default iteration is one of those that do",
        Idle, Busy.size(), Idle == 1 ? "holds" : "hold", Numbers[FirstIdle]));
  return Out;
}

llvm::Expected<std::vector<size_t>> dd::whatif::chooseIterations(
    llvm::ArrayRef<int64_t> Numbers, llvm::ArrayRef<int64_t> Lengths,
    std::string_view Choice, llvm::ArrayRef<uint8_t> Busy) {
  std::vector<size_t> Out;
  if (Choice.empty()) {
    Out.push_back(defaultIteration(Lengths, Busy));
    return Out;
  }
  if (Choice == "all") {
    for (size_t I = 0; I < Numbers.size(); ++I)
      Out.push_back(I);
    return Out;
  }
  std::string Known;
  for (int64_t Number : Numbers)
    Known += (Known.empty() ? "" : ", ") + std::to_string(Number);
  // An iteration's number as the trace writes it (ProfilerStep#12): digits
  // alone, without a sign, an exponent or a leading zero, which 1e1, +11
  // and 011 would otherwise pass for 10 and 11.
  bool Plain = !Choice.empty() && Choice.size() <= 18 &&
               (Choice == "0" || Choice.front() != '0') &&
               std::all_of(Choice.begin(), Choice.end(),
                           [](char C) { return C >= '0' && C <= '9'; });
  auto N = Plain ? trace::parseScaledDecimal(Choice, 0) : std::nullopt;
  if (!N)
    return makeError("invalid --iteration '" + llvm::Twine(Choice) +
                     "': expected an iteration's number as the trace writes "
                     "it (digits, like 12) or 'all' (the trace has " +
                     Known + ")");
  for (size_t I = 0; I < Numbers.size(); ++I)
    if (Numbers[I] == *N)
      Out.push_back(I);
  if (Out.empty())
    return makeError("the trace has no iteration " + llvm::Twine(*N) +
                     " (it has " + Known + ")");
  return Out;
}

IterationLists dd::whatif::iterationLists(const graph::Graph &G) {
  IterationLists L;
  std::vector<int64_t> Begin, End, GpuStarts;
  for (graph::TaskId X = 0; X < G.numTasks(); ++X)
    if (G.isGpu(X))
      GpuStarts.push_back(G.MeasuredStart[X]);
  for (const graph::Iteration &It : G.Iterations) {
    L.Numbers.push_back(It.Number);
    L.Lengths.push_back(It.measured());
    Begin.push_back(It.MeasuredBegin);
    End.push_back(It.MeasuredEnd);
  }
  L.Busy = iterationsWithWork(Begin, End, std::move(GpuStarts));
  return L;
}

size_t dd::whatif::defaultIteration(const graph::Graph &G) {
  if (G.Span.TraceIterations) {
    int64_t S = G.Span.Steady;
    return S >= 0 && size_t(S) < G.Iterations.size() ? size_t(S)
                                                     : G.Iterations.size();
  }
  IterationLists L = iterationLists(G);
  return defaultIteration(L.Lengths, L.Busy);
}

llvm::Expected<std::vector<size_t>>
dd::whatif::chooseIterations(const graph::Graph &G, std::string_view Choice) {
  if (Choice.empty())
    return std::vector<size_t>{defaultIteration(G)};
  // A --window is one iteration, numbered 0: a number names none of the
  // trace's own iterations then.
  if (G.Iterations.size() == 1 && G.Iterations[0].Label == graph::WindowLabel &&
      Choice != "all" && Choice != "0")
    return makeError("--iteration " + llvm::Twine(Choice) +
                     " and --window: the window is the one iteration "
                     "reported (give one or the other)");
  IterationLists L = iterationLists(G);
  return chooseIterations(L.Numbers, L.Lengths, Choice, L.Busy);
}

int64_t dd::whatif::gpuBusy(const graph::Graph &G,
                            const std::vector<int64_t> &Start,
                            const std::vector<int64_t> &End, int64_t Begin,
                            int64_t End_) {
  std::vector<std::pair<int64_t, int64_t>> Iv;
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    if (!G.isGpu(T) || G.isRemoved(T) || Start[T] == graph::NoTime)
      continue;
    int64_t B = std::max(Start[T], Begin), E = std::min(End[T], End_);
    if (E > B)
      Iv.push_back({B, E});
  }
  std::sort(Iv.begin(), Iv.end());
  int64_t Busy = 0, CurB = INT64_MIN, CurE = INT64_MIN;
  for (auto [B, E] : Iv) {
    if (B > CurE) {
      if (CurE > CurB)
        Busy += CurE - CurB;
      CurB = B;
      CurE = E;
    } else {
      CurE = std::max(CurE, E);
    }
  }
  if (CurE > CurB)
    Busy += CurE - CurB;
  return Busy;
}

void dd::whatif::measuredTimes(const graph::Graph &G,
                               std::vector<int64_t> &Start,
                               std::vector<int64_t> &End) {
  Start.assign(G.numTasks(), graph::NoTime);
  End.assign(G.numTasks(), graph::NoTime);
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    if (G.MeasuredStart[T] == graph::NoTime)
      continue;
    Start[T] = G.MeasuredStart[T] - G.Origin;
    End[T] = Start[T] + G.MeasuredDur[T];
  }
}

int64_t dd::whatif::measuredPointTime(const graph::Graph &G,
                                      const graph::Iteration::Point &P,
                                      const std::vector<int64_t> &End) {
  using PK = graph::Iteration::PointKind;
  switch (P.Kind) {
  case PK::Origin:
    return 0;
  case PK::TaskStart:
    return G.MeasuredStart[P.Task] - G.Origin;
  case PK::TaskEnd:
    return End[P.Task];
  case PK::Makespan: {
    // As the simulator counts it: over the tasks it runs (leaves).
    int64_t M = 0;
    for (graph::TaskId T = 0; T < G.numTasks(); ++T)
      if (End[T] != graph::NoTime && G.isLeaf(T) && !G.isRemoved(T))
        M = std::max(M, End[T]);
    return M;
  }
  }
  return 0;
}

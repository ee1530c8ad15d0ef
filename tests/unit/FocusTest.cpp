// Reading only the iterations a command reports (whatif/Focus.h): the
// reported iteration replays as it does in the graph of the whole trace,
// and where the trace does not allow it the whole file is read.

#include "whatif/Focus.h"
#include "builder/GraphBuilder.h"
#include "driver/Session.h"
#include "sim/CriticalPath.h"
#include "sim/Simulator.h"
#include "support/FileIO.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace dd;
using namespace dd::driver;
using namespace dd::whatif;

namespace {

std::string path(const char *Rel) {
  return std::string(DD_TEST_DATA) + "/" + Rel;
}

/// What replay reports of one iteration.
struct Seen {
  int64_t Number = 0, Measured = 0, Replayed = 0, MeasuredBusy = 0,
          ReplayedBusy = 0, PathLength = 0;
  graph::BuildStats Stats;
  std::vector<std::pair<std::string, int64_t>> Path;
};

/// Replays \p T and reports the iteration numbered \p Number, or the
/// graph's steady-state one when \p Number is -1.
Seen replay(const trace::Trace &T, const graph::Graph::IterationSpan &Span,
            int64_t Number) {
  Seen S;
  auto G = graph::buildGraph(T, {}, &S.Stats);
  REQUIRE_MESSAGE(static_cast<bool>(G), llvm::toString(G.takeError()));
  G->Span = Span;
  auto R = sim::simulate(*G);
  REQUIRE(static_cast<bool>(R));
  size_t I = defaultIteration(*G);
  if (Number >= 0) {
    I = G->Iterations.size();
    for (size_t K = 0; K < G->Iterations.size(); ++K)
      if (G->Iterations[K].Number == Number)
        I = K;
  }
  REQUIRE(I < G->Iterations.size());
  const graph::Iteration &It = G->Iterations[I];
  std::vector<int64_t> MStart, MEnd;
  measuredTimes(*G, MStart, MEnd);
  int64_t MB = measuredPointTime(*G, It.Begin, MEnd);
  int64_t ME = measuredPointTime(*G, It.End, MEnd);
  int64_t SB = sim::pointTime(*G, *R, It.Begin);
  int64_t SE = sim::pointTime(*G, *R, It.End);
  S.Number = It.Number;
  S.Measured = ME - MB;
  S.Replayed = SE - SB;
  S.MeasuredBusy = gpuBusy(*G, MStart, MEnd, MB, ME);
  S.ReplayedBusy = gpuBusy(*G, R->Start, R->End, SB, SE);
  sim::CriticalPath P = sim::criticalPath(*G, *R, It.End, SB);
  S.PathLength = P.Length;
  for (const sim::PathShare &Sh : sim::sharesByActivity(*G, P))
    S.Path.push_back({Sh.Label, Sh.Time});
  return S;
}

/// Focused and whole readings of \p Rel agree on the iteration \p Choice
/// names; returns the focused reading's span.
graph::Graph::IterationSpan checkAgrees(const char *Rel,
                                        std::string_view Choice) {
  CAPTURE(Rel);
  CAPTURE(Choice);
  auto F = readFocusedTrace(path(Rel), Choice, false, nullptr);
  REQUIRE(F.has_value());
  auto Whole = trace::readTrace(path(Rel));
  REQUIRE(static_cast<bool>(Whole));
  int64_t Number = Choice.empty() ? -1 : std::stoll(std::string(Choice));
  Seen A = replay(F->Trace, F->Span, Number);
  Seen B = replay(*Whole, {}, A.Number);
  CHECK(A.Number == B.Number);
  CHECK(A.Measured == B.Measured);
  CHECK(A.Replayed == B.Replayed);
  CHECK(A.MeasuredBusy == B.MeasuredBusy);
  CHECK(A.ReplayedBusy == B.ReplayedBusy);
  CHECK(A.PathLength == B.PathLength);
  // The critical path's story rests on the launch-queue depth, which is
  // measured from the launches that blocked in the iterations read.
  if (A.Stats.QueueCapacity == B.Stats.QueueCapacity)
    CHECK(A.Path == B.Path);
  return F->Span;
}

} // namespace

TEST_CASE("focus: the reported iteration replays as in the whole trace") {
  // Traces of 5 or 6 ProfilerStep iterations: the steady-state one, the
  // first and the last (one neighbour only), an explicit middle one.
  struct Case {
    const char *Rel;
    const char *First, *Last, *Middle;
  };
  for (const Case &C :
       {Case{"kineto/resnet50_v100_workers0.pt.trace.json.gz", "5", "10", "7"},
        Case{"kineto/resnet50_2021-01_workers0.pt.trace.json.gz", "5", "10",
             "6"},
        Case{"hta/v100_ns_resolution_rank0.json.gz", "101", "105", "102"},
        Case{"hta/a100_16rank_rank0.json.gz", "550", "554", "553"},
        Case{"hta/ddp2_v100_df_index_resolver.json.gz", "2", "6", "3"}}) {
    graph::Graph::IterationSpan S = checkAgrees(C.Rel, "");
    CHECK(S.TraceIterations >= 5);
    CHECK(S.Steady >= 0);
    checkAgrees(C.Rel, C.Middle);
    graph::Graph::IterationSpan First = checkAgrees(C.Rel, C.First);
    CHECK(First.FirstTraceIteration == 0);
    CHECK(First.Steady > 1); // not in the graph of iterations 1 and 2
    graph::Graph::IterationSpan Last = checkAgrees(C.Rel, C.Last);
    CHECK(Last.FirstTraceIteration == Last.TraceIterations - 2);
  }
}

TEST_CASE("focus: a focused graph holds its iterations and no other") {
  auto F = readFocusedTrace(path("hta/v100_ns_resolution_rank0.json.gz"), "",
                            false, nullptr);
  REQUIRE(F.has_value());
  CHECK(F->Span.TraceIterations == 5);
  auto G = graph::buildGraph(F->Trace);
  REQUIRE(static_cast<bool>(G));
  REQUIRE(G->Iterations.size() == 3);
  // ProfilerStep#104 is the steady-state one (replay says "4 of 5").
  CHECK(G->Iterations[F->Span.Steady].Number == 104);
  CHECK(G->Iterations.front().Number == 103);
  CHECK(G->Iterations.back().Number == 105);
  G->Span = F->Span;
  CHECK(G->iterationOrdinal(1) == 4);
  CHECK(G->traceIterationCount() == 5);
  // Fewer events than the whole file.
  auto Whole = trace::readTrace(path("hta/v100_ns_resolution_rank0.json.gz"));
  REQUIRE(static_cast<bool>(Whole));
  CHECK(F->Trace.numEvents() < Whole->numEvents());
  CHECK(F->Trace.Devices.size() == Whole->Devices.size());
}

TEST_CASE("focus: traces it cannot cut are read whole, or left to the reader") {
  // --iteration all: the caller reads the file.
  CHECK_FALSE(readFocusedTrace(path("hta/v100_ns_resolution_rank0.json.gz"),
                               "all", false, nullptr)
                  .has_value());
  // Iterations from optimizer steps, and three iterations in all (the
  // reported one and its neighbours are every one): the whole file.
  for (const char *Rel : {"param/resnet_2080ti_no_steps.json.gz",
                          "hta/ddp2_a100_nccl_data.json.gz"}) {
    CAPTURE(Rel);
    auto F = readFocusedTrace(path(Rel), "", false, nullptr);
    REQUIRE(F.has_value());
    CHECK(F->Span.TraceIterations == 0);
    auto Whole = trace::readTrace(path(Rel));
    REQUIRE(static_cast<bool>(Whole));
    CHECK(F->Trace.numEvents() == Whole->numEvents());
  }
  // A number the trace does not have: the whole file, whose graph says so.
  auto F = readFocusedTrace(path("hta/v100_ns_resolution_rank0.json.gz"), "99",
                            false, nullptr);
  REQUIRE(F.has_value());
  CHECK(F->Span.TraceIterations == 0);
  // Damaged or missing files: the reader's own words, not the focus's.
  for (const char *Rel : {"malformed/truncated.json", "malformed/not_json.json",
                          "malformed/truncated.json.gz", "no/such/file.json"}) {
    CAPTURE(Rel);
    CHECK_FALSE(readFocusedTrace(path(Rel), "", false, nullptr).has_value());
  }
}

TEST_CASE("focus: markers of two threads") {
  // Which thread's markers make the iterations must not rest on track ids
  // (they depend on every event read before), nor may the window hold as
  // many markers of another thread as of the chosen one.
  auto Doc = [](int Steps1, int Steps2) {
    std::string D = R"({"traceEvents": [)";
    for (auto [Tid, Steps] : {std::pair{1, Steps1}, std::pair{2, Steps2}})
      for (int N = 0; N < Steps; ++N)
        D += R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)" +
             std::to_string(N) + R"(", "pid": 1, "tid": )" +
             std::to_string(Tid) + R"(, "ts": )" + std::to_string(N * 100) +
             R"(, "dur": 90},)";
    // GPU work in every step: the default iteration is among those that
    // hold some (whatif::defaultIteration).
    for (int N = 0; N < std::max(Steps1, Steps2); ++N)
      D += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, )"
           R"("tid": 7, "ts": )" +
           std::to_string(N * 100 + 10) + R"(, "dur": 5},)";
    D.pop_back();
    return D + "]}";
  };
  std::string File =
      (std::filesystem::temp_directory_path() / "ddscript_focus_two.json")
          .string();
  struct Case {
    int Steps1, Steps2;
    size_t Iterations; ///< 0: read whole
  };
  for (Case C : {Case{6, 6, 0}, // a tie
                 Case{6, 7, 0}, // thread 1 has as many in the window
                 Case{2, 7, 7}}) {
    CAPTURE(C.Steps1);
    CAPTURE(C.Steps2);
    std::ofstream(File, std::ios::binary) << Doc(C.Steps1, C.Steps2);
    auto F = readFocusedTrace(File, "", false, nullptr);
    REQUIRE(F.has_value());
    CHECK(F->Span.TraceIterations == C.Iterations);
  }
  std::filesystem::remove(File);
}

TEST_CASE("focus: memory records, all of them or none") {
  // The graph needs none; the memory model (replay's --report) starts from
  // everything allocated before the iterations, so needs every one.
  const char *Rel = "kineto/resnet50_v100_workers0.pt.trace.json.gz";
  auto Whole = trace::readTrace(path(Rel));
  REQUIRE(static_cast<bool>(Whole));
  REQUIRE(Whole->Memory.size() > 10000);
  auto With = readFocusedTrace(path(Rel), "", true, nullptr);
  auto Without = readFocusedTrace(path(Rel), "", false, nullptr);
  REQUIRE(With.has_value());
  REQUIRE(Without.has_value());
  CHECK(With->Span.TraceIterations == 6);
  CHECK(Without->Span.TraceIterations == 6);
  CHECK(Without->Trace.Memory.empty());
  REQUIRE(With->Trace.Memory.size() == Whole->Memory.size());
  for (size_t I = 0; I < Whole->Memory.size(); ++I) {
    CHECK(With->Trace.Memory[I].Ts == Whole->Memory[I].Ts);
    CHECK(With->Trace.Memory[I].Bytes == Whole->Memory[I].Bytes);
  }
  CHECK(With->Trace.numEvents() == Without->Trace.numEvents());
}

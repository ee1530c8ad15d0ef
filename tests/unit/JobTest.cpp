// A job's ranks replayed together (job/Job.h), loaded as `ddscript replay`
// loads them (driver::loadJobFor): exactness, and the properties a joint
// model must keep.

#include "job/Job.h"
#include "GraphFixture.h"
#include "driver/Session.h"
#include "graph/Edit.h"
#include "sim/Simulator.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

using namespace dd;

namespace {

std::vector<std::string> ranksOf(const char *Dir, const char *Pattern, int N) {
  std::vector<std::string> Out;
  for (int I = 0; I < N; ++I) {
    char Name[128];
    std::snprintf(Name, sizeof Name, Pattern, I);
    Out.push_back(std::string(DD_TEST_DATA) + "/" + Dir + "/" + Name);
  }
  return Out;
}

std::vector<std::string> dlrm() {
  return ranksOf("param/dlrm_8rank", "worker%d_step_12.pt.trace.json.gz", 8);
}
std::vector<std::string> megatron() {
  return ranksOf("astra_sim/megatron_tp8", "rank%d.json.gz", 8);
}

job::Job load(std::vector<std::string> Paths, std::string Clock = "collectives",
              std::string Calibration = "exact", std::string Iteration = "") {
  driver::TraceOptions O;
  O.Iteration = Iteration;
  O.TracePaths = std::move(Paths);
  O.TracePath = O.TracePaths.front();
  O.Clock = Clock;
  O.Calibration = Calibration;
  auto L = driver::loadJobFor(O);
  REQUIRE(L.has_value());
  return std::move(L->Job);
}

sim::SimResult simulate(const job::Job &J,
                        const sim::SchedulePolicy *P = nullptr) {
  auto R = sim::simulate(J.G, P);
  REQUIRE(static_cast<bool>(R));
  return std::move(*R);
}

double relErr(int64_t A, int64_t B) {
  return B ? std::abs(double(A - B)) / double(B) : 0.0;
}

/// Every rank's iteration and the job's replay what was measured.
void checkExact(const job::Job &J) {
  sim::SimResult R = simulate(J);
  REQUIRE(!J.Iterations.empty());
  for (const job::JobIteration &It : J.Iterations) {
    CHECK(relErr(job::simulatedSpan(J, R, It).length(),
                 job::measuredSpan(J, It).length()) <= 0.001);
    for (uint32_t RI : It.PerRank) {
      const graph::Iteration &I = J.G.Iterations[RI];
      CAPTURE(I.Rank);
      CHECK(relErr(sim::iterationTime(J.G, R, I), I.measured()) <= 0.001);
    }
  }
}

/// The collectives' members with no transfer time: a free network.
void freeNetwork(job::Job &J) {
  for (size_t C = 0; C < J.G.numCollectives(); ++C)
    for (graph::TaskId T : J.G.collectiveMembers(C))
      graph::setTaskDuration(J.G, T, 0);
  REQUIRE(J.G.finalize());
}

} // namespace

TEST_CASE("a job's ranks replay together, every rank and the job exactly") {
  SUBCASE("DLRM, 8 ranks") {
    job::Job J = load(dlrm());
    CHECK(J.Ranks.size() == 8);
    CHECK(J.G.numCollectives() == 8);
    checkExact(J);
  }
  SUBCASE("Megatron-LM tensor parallel, 8 ranks") {
    job::Job J = load(megatron());
    CHECK(J.G.numCollectives() == 84);
    checkExact(J);
  }
  SUBCASE("on the traces' own clocks") { checkExact(load(dlrm(), "trace")); }
}

TEST_CASE("the ranks of one host share a clock: offsets are microseconds") {
  for (const auto &Paths : {dlrm(), megatron()}) {
    job::Job J = load(Paths);
    for (const job::JobRank &R : J.Ranks)
      CHECK(std::abs(R.ClockOffset) <= 20'000);
  }
}

TEST_CASE("a free network never makes a job slower") {
  for (const auto &Paths : {dlrm(), megatron()}) {
    job::Job J = load(Paths);
    sim::SimResult Base = simulate(J);
    freeNetwork(J);
    sim::SimResult Free = simulate(J);
    for (const job::JobIteration &It : J.Iterations)
      CHECK(job::simulatedSpan(J, Free, It).length() <=
            job::simulatedSpan(J, Base, It).length());
  }
}

TEST_CASE("no rank replays faster in the job than on its own without "
          "communication") {
  // A rank alone, its communication free and nobody to wait for, is its
  // compute-only path: joined to the others it can only wait more.
  std::vector<std::string> Paths = dlrm();
  job::Job J = load(Paths);
  sim::SimResult R = simulate(J);
  for (size_t I = 0; I < Paths.size(); ++I) {
    job::Job Alone = load({Paths[I]});
    freeNetwork(Alone);
    sim::SimResult A = simulate(Alone);
    const job::JobIteration &It = J.Iterations.front();
    CAPTURE(Paths[I]);
    CHECK(sim::iterationTime(J.G, R, J.G.Iterations[It.PerRank[I]]) >=
          sim::iterationTime(Alone.G, A, Alone.G.Iterations.front()));
  }
}

TEST_CASE("a model on a job equals the model rank by rank where ranks do "
          "not interact") {
  // A trace without collectives or distributedInfo, twice: ranks 0 and 1
  // by the order given, which never wait for each other, so halving every
  // kernel on the job halves them on each rank.
  std::string Resnet = std::string(DD_TEST_DATA) +
                       "/kineto/resnet50_v100_workers0.pt.trace.json.gz";
  std::vector<std::string> Paths = {Resnet, Resnet};
  auto Halve = [](graph::Graph &G) {
    llvm::BitVector Set(G.numTasks());
    for (graph::TaskId T = 0; T < G.numTasks(); ++T)
      Set[T] = G.Kind[T] == graph::TaskKind::Kernel;
    graph::scaleTasks(G, Set, 2.0, /*Divide=*/true);
    REQUIRE(G.finalize());
  };
  // Every iteration of each, read whole (the default reads the others
  // focused on the first one's steady-state iteration).
  job::Job J = load(Paths, "collectives", "exact", "all");
  REQUIRE(J.G.numCollectives() == 0);
  Halve(J.G);
  sim::SimResult R = simulate(J);
  for (size_t I = 0; I < Paths.size(); ++I) {
    job::Job One = load({Paths[I]}, "collectives", "exact", "all");
    Halve(One.G);
    sim::SimResult A = simulate(One);
    for (size_t K = 0; K < J.Ranks[I].Iterations.size(); ++K)
      CHECK(sim::iterationTime(J.G, R,
                               J.G.Iterations[J.Ranks[I].Iterations[K]]) ==
            sim::iterationTime(One.G, A, One.G.Iterations[K]));
  }
}

TEST_CASE("the job without its top straggler's lateness is faster") {
  for (const auto &Paths : {dlrm(), megatron()}) {
    job::Job J = load(Paths);
    sim::SimResult R = simulate(J);
    const job::JobIteration &It = J.Iterations.front();
    std::vector<int64_t> Late = job::lateness(J, R, It);
    size_t Top = std::max_element(Late.begin(), Late.end()) - Late.begin();
    CHECK(Late[Top] > 0);
    std::vector<int64_t> Sorted = Late;
    std::sort(Sorted.begin(), Sorted.end());
    auto W =
        job::asFastAsNeeded(J, R, It, Top, Sorted[(Sorted.size() - 1) / 2]);
    REQUIRE(static_cast<bool>(W));
    CHECK(W->Scale < 1.0);
    CHECK(W->JobTime < job::measuredSpan(J, It).length());
    // The graph is as it was.
    sim::SimResult Again = simulate(J);
    CHECK(Again.End == R.End);
  }
}

TEST_CASE("a job simulated to just past an iteration times it as the whole "
          "simulation does") {
  // What the straggler what-ifs rely on: stopped once every rank is past
  // the iteration and every collective with an arrival in it has all its
  // members, the job's span and each rank's lateness are the whole one's.
  for (const auto &Paths : {dlrm(), megatron()}) {
    job::Job J = load(Paths);
    sim::SimResult R = simulate(J);
    for (const job::JobIteration &It : J.Iterations) {
      job::Span S = job::simulatedSpan(J, R, It);
      int64_t Until = S.End;
      for (size_t C = 0; C < J.G.numCollectives(); ++C) {
        auto Members = J.G.collectiveMembers(C);
        bool Before = false;
        for (graph::TaskId M : Members)
          Before |= R.Arrival[M] != graph::NoTime && R.Arrival[M] < S.End;
        if (Before)
          for (graph::TaskId M : Members)
            Until = std::max(Until, R.Arrival[M]);
      }
      auto Stopped = sim::simulate(J.G, nullptr, nullptr, Until);
      REQUIRE(static_cast<bool>(Stopped));
      CAPTURE(It.Label);
      CHECK(job::simulatedSpan(J, *Stopped, It).length() == S.length());
      CHECK(job::lateness(J, *Stopped, It) == job::lateness(J, R, It));
      if (&It != &J.Iterations.back())
        CHECK(Stopped->Stopped);
    }
  }
}

TEST_CASE("a straggler what-if's job and lateness are a whole simulation's "
          "at its factor") {
  // Its simulations stop once the job is past the iteration; what it
  // reports must still be what the whole simulation gives. DLRM's rank 7
  // takes a searched factor (x0.14); the others gain the job nothing.
  size_t Searched = 0;
  for (const auto &Paths : {dlrm(), megatron()}) {
    job::Job J = load(Paths);
    sim::SimResult R = simulate(J);
    const job::JobIteration &It = J.Iterations.front();
    std::vector<int64_t> Late = job::lateness(J, R, It);
    std::vector<int64_t> Sorted = Late;
    std::sort(Sorted.begin(), Sorted.end());
    int64_t Median = Sorted[(Sorted.size() - 1) / 2];
    size_t Checked = 0;
    for (size_t Rank = 0; Rank < J.Ranks.size(); ++Rank) {
      if (Late[Rank] <= Median)
        continue;
      CAPTURE(Rank);
      auto W = job::asFastAsNeeded(J, R, It, Rank, Median);
      REQUIRE(static_cast<bool>(W));
      // The rank's own work at the factor found, as asFastAsNeeded scales
      // it, simulated whole; where the job gains nothing at any factor (-1),
      // at zero, which must leave the job's iteration as replayed.
      double Scale = W->Scale >= 0 ? W->Scale : 0.0;
      const graph::Graph &G = J.G;
      std::vector<int64_t> Dur = G.Dur, Gap = G.Gap;
      for (graph::TaskId T = J.Ranks[Rank].FirstTask; T < J.Ranks[Rank].EndTask;
           ++T) {
        if (!G.isLeaf(T) || G.isRemoved(T) ||
            G.Kind[T] == graph::TaskKind::Comm)
          continue;
        Dur[T] = std::llround(double(G.Dur[T]) * Scale);
        if (G.Gap[T] > 0 && G.PrevOnRes[T] != graph::NoTask)
          Gap[T] = std::llround(double(G.Gap[T]) * Scale);
      }
      sim::TimeOverride Times{Dur, Gap};
      auto Whole = sim::simulate(G, nullptr, &Times);
      REQUIRE(static_cast<bool>(Whole));
      CHECK(W->JobTime == job::simulatedSpan(J, *Whole, It).length());
      CHECK(W->Late == job::lateness(J, *Whole, It)[Rank]);
      if (W->Scale < 0)
        CHECK(W->JobTime == job::simulatedSpan(J, R, It).length());
      Searched += W->Scale > 0;
      ++Checked;
    }
    CHECK(Checked > 0);
  }
  CHECK(Searched > 0);
}

TEST_CASE("a straggler what-if waits for a collective's members that arrive "
          "after the iteration") {
  // Rank 0's iteration is a 10 us call; its all-reduce arrives at 5 us.
  // Rank 1's iteration is as long, but its all-reduce queues behind a
  // 100 us kernel: it arrives after the job's iteration has ended, and its
  // lateness (95 us) counts all the same. The job's iteration (10 us) is
  // the same with rank 1's work at zero: it gains nothing at any factor,
  // and none is searched.
  ddtest::MiniGraph M;
  using graph::Anchor, graph::TaskKind;
  graph::ResourceId T0 = M.thread("rank 0"), S0 = M.stream("rank 0 s");
  graph::ResourceId T1 = M.thread("rank 1"), S1 = M.stream("rank 1 s");
  graph::TaskId A0 = M.task(T0, "step", 10000);
  graph::TaskId C0 = M.task(S0, "all-reduce", 1000, 0, TaskKind::Comm);
  M.edge(A0, C0, Anchor::StartToStart, 5000, graph::EdgeKind::Launch);
  graph::TaskId A1 = M.task(T1, "step", 10000);
  graph::TaskId K1 = M.task(S1, "kernel", 100000, 0, TaskKind::Kernel);
  graph::TaskId C1 = M.task(S1, "all-reduce", 1000, 0, TaskKind::Comm);
  M.edge(A1, K1, Anchor::StartToStart, 0, graph::EdgeKind::Launch);
  M.G.addCollective({C0, C1});
  job::Job J;
  for (graph::TaskId A : {A0, A1}) {
    graph::Iteration I;
    I.Number = 1;
    I.Label = "step 1";
    I.Begin = {graph::Iteration::PointKind::TaskStart, A};
    I.End = {graph::Iteration::PointKind::TaskEnd, A};
    I.Rank = A == A0 ? 0 : 1;
    M.G.Iterations.push_back(I);
  }
  REQUIRE(M.G.finalize());
  J.G = std::move(M.G);
  J.Ranks.resize(2);
  J.Ranks[0].Rank = 0, J.Ranks[0].FirstTask = A0, J.Ranks[0].EndTask = A1;
  J.Ranks[1].Rank = 1, J.Ranks[1].FirstTask = A1, J.Ranks[1].EndTask = C1 + 1;
  J.Ranks[0].Iterations = {0};
  J.Ranks[1].Iterations = {1};
  J.Iterations.push_back({1, "step 1", {0, 1}});
  sim::SimResult R = simulate(J);
  const job::JobIteration &It = J.Iterations.front();
  REQUIRE(job::simulatedSpan(J, R, It).End == 10000);
  REQUIRE(R.Arrival[C1] == 100000);
  REQUIRE(job::lateness(J, R, It) == std::vector<int64_t>{0, 95000});
  auto W = job::asFastAsNeeded(J, R, It, 1, 20000);
  REQUIRE(static_cast<bool>(W));
  CHECK(W->Scale == -1);
  CHECK(W->Late <= 20000); // at zero: on time
  CHECK(W->JobTime == 10000);
}

TEST_CASE("ranks whose collectives do not pair are refused") {
  // DLRM's rank 1 runs 8 collectives, Megatron-LM's rank 0 runs 84.
  driver::TraceOptions O;
  O.TracePaths = {megatron()[0], dlrm()[1]};
  O.TracePath = O.TracePaths.front();
  CHECK_FALSE(driver::loadJobFor(O).has_value());
  // Two rank-0 traces.
  O.TracePaths = {megatron()[0], dlrm()[0]};
  CHECK_FALSE(driver::loadJobFor(O).has_value());
  // World sizes 1 and 8.
  O.TracePaths = {std::string(DD_TEST_DATA) +
                      "/hta/v100_ns_resolution_rank0.json.gz",
                  dlrm()[1]};
  CHECK_FALSE(driver::loadJobFor(O).has_value());
}

TEST_CASE("a job replays the same at any thread count") {
  job::Job A = load(megatron());
  sim::SimResult RA = simulate(A);
  setenv("DDSCRIPT_THREADS", "1", 1);
  job::Job B = load(megatron());
  unsetenv("DDSCRIPT_THREADS");
  sim::SimResult RB = simulate(B);
  CHECK(RA.Start == RB.Start);
  CHECK(RA.End == RB.End);
}

TEST_CASE("by default every rank reads only the first trace's steady-state "
          "iteration and its neighbours") {
  std::string Resnet = std::string(DD_TEST_DATA) +
                       "/kineto/resnet50_v100_workers0.pt.trace.json.gz";
  driver::TraceOptions O;
  O.TracePaths = {Resnet, Resnet};
  O.TracePath = Resnet;
  auto L = driver::loadJobFor(O);
  REQUIRE(L.has_value());
  job::Job Whole = load({Resnet}, "collectives", "exact", "all");
  size_t Steady = driver::defaultIteration(Whole.G);
  REQUIRE(Whole.G.Iterations.size() > 3);
  CHECK(L->Iteration == std::to_string(Whole.G.Iterations[Steady].Number));
  CHECK(L->DefaultFrom == Resnet);
  for (const job::JobRank &R : L->Job.Ranks)
    CHECK(R.Iterations.size() == 3);
}

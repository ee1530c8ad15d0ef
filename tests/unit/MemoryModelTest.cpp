// The memory model on a small synthetic trace: pairing, starting level,
// placement on tasks, classes, curves from moved task times, what-ifs.

#include "memory/MemoryModel.h"
#include "builder/GraphBuilder.h"
#include "driver/Session.h"
#include "sim/Simulator.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>

using namespace dd;
using namespace dd::memory;

namespace {

struct Rec {
  double Ts; // us
  uint64_t Addr;
  int64_t Bytes;
  int Tid = 1;
};

/// A two-iteration training trace with memory records, as Kineto JSON.
/// Times in microseconds; iteration k spans [1000k, 1000k + 1000).
struct SyntheticTrace {
  std::string Events;
  std::vector<Rec> Records;
  int64_t Corr = 1;
  /// Bytes allocated before the trace starts (weights, and the block the
  /// trace frees without allocating it).
  int64_t Baseline = 1'000'000;

  void add(const std::string &E) {
    if (!Events.empty())
      Events += ",\n";
    Events += E;
  }
  void cpu(const char *Cat, std::string_view Name, double Ts, double Dur,
           const std::string &Args = "{}") {
    add(fmt::format(R"({{"ph":"X","cat":"{}","name":"{}","pid":1,"tid":1,)"
                    R"("ts":{},"dur":{},"args":{}}})",
                    Cat, Name, Ts, Dur, Args));
  }
  void launch(double Ts) {
    int64_t C = Corr++;
    cpu("cuda_runtime", "cudaLaunchKernel", Ts, 10,
        fmt::format(R"({{"correlation":{}}})", C));
    add(fmt::format(R"({{"ph":"X","cat":"kernel","name":"k","pid":0,)"
                    R"("tid":7,"ts":{},"dur":90,"args":{{"device":0,)"
                    R"("stream":7,"correlation":{}}}}})",
                    Ts + 10, C));
  }

  SyntheticTrace() {
    Records.push_back({500, 0x100, 100'000}); // before the window, kept
    for (int K = 1; K <= 2; ++K) {
      double B = 1000.0 * K;
      cpu("user_annotation", fmt::format("ProfilerStep#{}", K), B, 1000);
      cpu("cpu_op", "aten::linear", B + 100, 100);
      cpu("cpu_op", "aten::empty", B + 110, 10);
      Records.push_back({B + 115, 0xA00, 4096}); // activation
      cpu("cpu_op", "aten::relu", B + 250, 50);
      Records.push_back({B + 260, 0xB00, 1024}); // temporary
      Records.push_back({B + 290, 0xB00, -1024});
      Records.push_back({B + 320, 0xC00, 512}); // between two calls
      Records.push_back({B + 330, 0xC00, -512});
      launch(B + 400);
      cpu("cpu_op", "autograd::engine::evaluate_function: LinearBackward",
          B + 600, 100);
      cpu("cpu_op", "aten::mm", B + 610, 40);
      Records.push_back({B + 620, 0xD00, 2048});  // gradient
      Records.push_back({B + 680, 0xA00, -4096}); // in the container's trail
      cpu("user_annotation", "Optimizer.step#SGD.step", B + 800, 100);
      Records.push_back({B + 850, 0xD00, -2048});
    }
    // Across the iteration boundary.
    Records.push_back({1950, 0xE00, 64});
    Records.push_back({2050, 0xE00, -64});
    // Freed without an allocation in the trace.
    Records.push_back({2150, 0xF00, -300});
    // Two records at one time, which the file lists out of order.
    Records.push_back({2260, 0xB08, 16});
    // On a thread without tasks.
    Records.push_back({1500, 0x400, 8, 99});
    Records.push_back({1600, 0x400, -8, 99});
  }

  /// Writes the records, with Total Allocated and addresses when \p Full
  /// (else as the 2021 schema did: Bytes and device only).
  std::string json(bool Full) const {
    std::vector<size_t> Order(Records.size());
    for (size_t I = 0; I < Order.size(); ++I)
      Order[I] = I;
    std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
      return Records[A].Ts < Records[B].Ts;
    });
    std::vector<int64_t> Total(Records.size());
    int64_t Level = Baseline;
    for (size_t I : Order)
      Total[I] = Level += Records[I].Bytes;
    // File order: the tie at 2260 written the wrong way round.
    std::vector<size_t> File = Order;
    auto Late = std::find_if(File.begin(), File.end(), [&](size_t I) {
      return Records[I].Ts == 2260 && Records[I].Bytes == 16;
    });
    if (Late != File.end())
      std::iter_swap(Late, Late - 1);
    std::string Out = Events;
    for (size_t I : File) {
      const Rec &R = Records[I];
      std::string Args =
          Full ? fmt::format(R"("Addr":{},"Bytes":{},"Total Allocated":{},)"
                             R"("Total Reserved":{},"Device Type":1,)"
                             R"("Device Id":0)",
                             R.Addr, R.Bytes, Total[I], 4 << 20)
               : fmt::format(R"("Bytes":{},"Device Type":1,"Device Id":0)",
                             R.Bytes);
      Out += fmt::format(
          ",\n{{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,"
          "\"tid\":{},\"ts\":{},\"args\":{{{}}}}}",
          R.Tid, R.Ts, Args);
    }
    return "{\"traceEvents\":[\n" + Out + "]}";
  }
};

struct Loaded {
  trace::Trace T;
  graph::Graph G;
  MemoryModel M;
  sim::SimResult R;
  TaskTimes times() const { return {R.Start, R.End}; }
};

Loaded load(const SyntheticTrace &S, bool Full) {
  std::string Json = S.json(Full);
  auto T = trace::parseKinetoJson(Json, "synthetic.json");
  REQUIRE(static_cast<bool>(T));
  auto G = graph::buildGraph(*T);
  if (!G)
    FAIL(llvm::toString(G.takeError()));
  auto M = MemoryModel::build(*T, *G);
  if (!M)
    FAIL(llvm::toString(M.takeError()));
  auto R = sim::simulate(*G);
  REQUIRE(static_cast<bool>(R));
  return {std::move(*T), std::move(*G), std::move(*M), std::move(*R)};
}

graph::TaskId taskNamed(const graph::Graph &G, std::string_view Name,
                        int Iteration) {
  for (graph::TaskId X = 0; X < G.numTasks(); ++X)
    if (G.name(X) == Name && G.IterationOf[X] == Iteration)
      return X;
  FAIL("no task " << Name);
  return graph::NoTask;
}

/// The block whose allocation (or free) record is at \p TsUs.
BlockId blockAt(const Loaded &L, double TsUs, bool Free = false) {
  int64_t Ns = static_cast<int64_t>(TsUs * 1000);
  for (BlockId B = 0; B < L.M.numBlocks(); ++B)
    if ((Free ? L.M.FreeTs[B] : L.M.AllocTs[B]) == Ns)
      return B;
  FAIL("no block at " << TsUs);
  return NoBlock;
}

/// The level of curve \p C at time \p T (after all events at or before it).
int64_t levelAt(const Curve &C, int64_t T) {
  auto It = std::upper_bound(C.Time.begin(), C.Time.end(), T);
  return It == C.Time.begin() ? C.Start : C.Level[It - C.Time.begin() - 1];
}

} // namespace

TEST_CASE("memory: blocks are paired by address, last in first out") {
  SyntheticTrace S;
  Loaded L = load(S, true);
  REQUIRE(L.M.Pools.size() == 1);
  const Pool &P = L.M.Pools[0];
  CHECK(P.DeviceType == 1);
  CHECK(P.DeviceId == 0);
  CHECK(P.HasAddresses);
  CHECK(P.HasTotals);
  CHECK(P.Records == S.Records.size());
  CHECK(P.RecordsBefore == 1);
  CHECK(P.RecordsInWindow == S.Records.size() - 1);
  CHECK(P.UnmatchedFrees == 1);
  CHECK(P.NeverFreed == 2); // the weight, the tied record
  CHECK(P.SizeMismatches == 0);
  CHECK(P.Reordered == 1);
  CHECK(P.TotalMismatches == 0);
  CHECK(P.Unplaced == 2);
  CHECK(P.ReservedPeak == 4 << 20);
  // Address 0xA00 is reused each iteration: two activation blocks, each
  // freed by its own iteration's backward.
  BlockId A1 = blockAt(L, 1115), A2 = blockAt(L, 2115);
  CHECK(A1 != A2);
  CHECK(L.M.FreeTs[A1] == 1680'000);
  CHECK(L.M.FreeTs[A2] == 2680'000);
  CHECK(L.M.Addr[A1] == 0xA00);
}

TEST_CASE("memory: any 64-bit address pairs, the top two included") {
  // 2^64 - 1 and 2^64 - 2 are the keys a DenseMap reserves; blocks there
  // pair like any other.
  SyntheticTrace S;
  S.Records.push_back({1130, ~uint64_t(0), 256});
  S.Records.push_back({1140, ~uint64_t(0) - 1, 128});
  S.Records.push_back({1150, ~uint64_t(0), -256});
  S.Records.push_back({1160, ~uint64_t(0) - 1, -128});
  Loaded L = load(S, true);
  BlockId Top = blockAt(L, 1130), Next = blockAt(L, 1140);
  CHECK(L.M.Addr[Top] == ~uint64_t(0));
  CHECK(L.M.FreeTs[Top] == 1150'000);
  CHECK(L.M.Addr[Next] == ~uint64_t(0) - 1);
  CHECK(L.M.FreeTs[Next] == 1160'000);
  CHECK(L.M.Pools[0].UnmatchedFrees == 1); // 0xF00, as before
}

TEST_CASE("memory: the starting level and every byte are accounted for") {
  SyntheticTrace S;
  for (bool Full : {true, false}) {
    CAPTURE(Full);
    Loaded L = load(S, Full);
    const Pool &P = L.M.Pools[0];
    int64_t InWindow = 0, Before = 0;
    for (const Rec &R : S.Records)
      (R.Ts < 1000 ? Before : InWindow) += R.Bytes;
    // Freed without an allocation: it existed when the trace began.
    int64_t FreedUnallocated = 300;
    if (Full) {
      CHECK(P.StartAllocated == S.Baseline + Before);
      CHECK(P.Untracked == S.Baseline - FreedUnallocated);
    } else {
      // Without Total Allocated, the least level the records allow.
      CHECK(P.StartAllocated == FreedUnallocated + Before);
      CHECK(P.Untracked == 0);
      CHECK_FALSE(P.HasAddresses);
      CHECK_FALSE(P.HasTotals);
    }
    CHECK(P.EndAllocated - P.StartAllocated == InWindow);
    CHECK(P.AllocatedInWindow - P.FreedInWindow == InWindow);
  }
}

TEST_CASE("memory: records are placed on the tasks that made them") {
  SyntheticTrace S;
  Loaded L = load(S, true);
  const graph::Graph &G = L.G;
  BlockId Act = blockAt(L, 1115);
  CHECK(L.M.AllocAt[Act].K == Placement::InTask);
  CHECK(L.M.AllocOwner[Act] == taskNamed(G, "aten::empty", 0));
  CHECK(L.M.AllocAt[Act].Offset == 5000);
  // The free falls in the backward container after its child's end.
  CHECK(L.M.FreeAt[Act].K == Placement::AfterTask);
  CHECK(L.M.FreeAt[Act].Task == taskNamed(G, "aten::mm", 0));
  CHECK(L.M.FreeOwner[Act] ==
        taskNamed(G, "autograd::engine::evaluate_function: LinearBackward", 0));
  BlockId Gap = blockAt(L, 1320);
  CHECK(L.M.AllocAt[Gap].K == Placement::AfterTask);
  CHECK(L.M.AllocAt[Gap].Task == taskNamed(G, "aten::relu", 0));
  CHECK(L.M.AllocAt[Gap].Next == taskNamed(G, "cudaLaunchKernel", 0));
  BlockId Weight = blockAt(L, 500);
  CHECK(L.M.AllocAt[Weight].K == Placement::Before);
  CHECK(L.M.FreeAt[Weight].K == Placement::After);
  BlockId Other = blockAt(L, 1500);
  CHECK(L.M.AllocAt[Other].K == Placement::Fixed);
  CHECK(L.M.AllocOwner[Other] == graph::NoTask);
}

TEST_CASE("memory: classes follow iterations and phases") {
  SyntheticTrace S;
  Loaded L = load(S, true);
  auto ClassAt = [&](double Ts) { return L.M.Class[blockAt(L, Ts)]; };
  CHECK(ClassAt(1115) == BlockClass::Activation);
  CHECK(ClassAt(2115) == BlockClass::Activation);
  CHECK(ClassAt(1260) == BlockClass::Temporary);
  CHECK(ClassAt(1320) == BlockClass::Temporary);
  CHECK(ClassAt(1620) == BlockClass::CrossPhase); // backward -> optimizer
  CHECK(ClassAt(1950) == BlockClass::Persistent); // across the boundary
  CHECK(ClassAt(500) == BlockClass::Persistent);  // before the window
  BlockId Unallocated = blockAt(L, 2150, true);
  CHECK(L.M.AllocTs[Unallocated] == BeforeWindow);
  CHECK(L.M.Class[Unallocated] == BlockClass::Persistent);
  CHECK(L.M.AllocPhase[blockAt(L, 1115)] == graph::Phase::Forward);
  CHECK(L.M.FreePhase[blockAt(L, 1115)] == graph::Phase::Backward);
}

TEST_CASE("memory: placing the blocks by the measured times reproduces the "
          "records") {
  SyntheticTrace S;
  Loaded L = load(S, true);
  std::vector<int64_t> MStart, MEnd;
  driver::measuredTimes(L.G, MStart, MEnd);
  Profile Pr = L.M.profile({MStart, MEnd});
  const Curve &Replayed = Pr.Curves[0], &Measured = L.M.measured(0);
  CHECK(Replayed.Start == Measured.Start);
  CHECK(Replayed.Time == Measured.Time);
  CHECK(Replayed.Level == Measured.Level);
  CHECK(Replayed.Block == Measured.Block);
  // The measured curve is the records' own Total Allocated.
  int64_t Max = 0;
  std::string Json = S.json(true);
  auto T = trace::parseKinetoJson(Json, "synthetic.json");
  REQUIRE(static_cast<bool>(T));
  for (const trace::MemoryRecord &R : T->Memory)
    if (R.Ts >= 1'000'000)
      Max = std::max(Max, R.TotalAllocated);
  CHECK(peakOf(Measured).Bytes == Max);
  CHECK(peakOf(Replayed).Bytes == Max);
  // And so does the replay of the unchanged graph.
  CHECK(L.M.profile(L.times()).Curves[0].Level == Measured.Level);
}

TEST_CASE("memory: allocations and frees move with their tasks") {
  SyntheticTrace S;
  Loaded L = load(S, true);
  const graph::Graph &G = L.G;
  std::vector<int64_t> Start = L.R.Start, End = L.R.End;
  graph::TaskId Empty = taskNamed(G, "aten::empty", 0);
  graph::TaskId Relu = taskNamed(G, "aten::relu", 0);
  graph::TaskId Launch = taskNamed(G, "cudaLaunchKernel", 0);
  // The call shrinks to nothing: its allocation clamps to its start.
  End[Empty] = Start[Empty];
  // The next call starts right after relu: the gap record clamps to it.
  Start[Launch] = End[Relu] + 2000;
  // A later task runs 7 us late: its records follow it.
  graph::TaskId Mm = taskNamed(G, "aten::mm", 1);
  Start[Mm] += 7000;
  End[Mm] += 7000;
  Profile Pr = L.M.profile({Start, End});
  CHECK(Pr.AllocTime[blockAt(L, 1115)] == Start[Empty]);
  CHECK(Pr.AllocTime[blockAt(L, 1320)] == End[Relu] + 2000);
  CHECK(Pr.AllocTime[blockAt(L, 2620)] == L.R.Start[Mm] + 10'000 + 7000);
  // A free after a leaf stays after it.
  CHECK(Pr.FreeTime[blockAt(L, 2115)] == End[Mm] + 30'000);
  CHECK(Pr.Inverted == 0);
  CHECK(Pr.Dropped == 0);
}

TEST_CASE("memory: what-ifs change the curve, not the graph") {
  SyntheticTrace S;
  Loaded L = load(S, true);
  const graph::Graph &G = L.G;
  MemoryModel &M = L.M;
  size_t Tasks = G.numTasks();
  Profile Base = M.profile(L.times());
  const Curve &C0 = Base.Curves[0];

  SUBCASE("scaling activations") {
    std::vector<BlockId> Act = M.blocksOfClass(BlockClass::Activation);
    REQUIRE(Act.size() == 2);
    REQUIRE(!M.scaleBlocks(Act, 0.5));
    Profile Pr = M.profile(L.times());
    int64_t Mid = Base.AllocTime[Act[0]] + 1;
    CHECK(levelAt(Pr.Curves[0], Mid) == levelAt(C0, Mid) - 2048);
    CHECK(peakOf(Pr.Curves[0]).Bytes < peakOf(C0).Bytes);
  }
  SUBCASE("freeing an activation when its forward call ends") {
    BlockId A = blockAt(L, 1115);
    graph::TaskId Linear = taskNamed(G, "aten::linear", 0);
    REQUIRE(!M.moveFree(G, A, TaskPoint::end(Linear)));
    Profile Pr = M.profile(L.times());
    CHECK(Pr.FreeTime[A] == L.R.End[Linear]);
    int64_t Between = L.R.End[Linear] + 1000;
    CHECK(levelAt(Pr.Curves[0], Between) == levelAt(C0, Between) - 4096);
    CHECK(peakOf(Pr.Curves[0]).Bytes <= peakOf(C0).Bytes);
    // Freed before it is allocated: left out, and said so.
    REQUIRE(
        !M.moveFree(G, A, TaskPoint::start(taskNamed(G, "ProfilerStep#1", 0))));
    CHECK(M.profile(L.times()).Inverted == 1);
  }
  SUBCASE("offloading the weights between two calls") {
    BlockId W = blockAt(L, 500);
    graph::TaskId Out = taskNamed(G, "aten::relu", 0);
    graph::TaskId In = taskNamed(G, "aten::linear", 1);
    REQUIRE(!M.offload(G, W, TaskPoint::end(Out), TaskPoint::start(In)));
    Profile Pr = M.profile(L.times());
    const Curve &C = Pr.Curves[0];
    CHECK(C.Start == C0.Start);
    int64_t Off = L.R.End[Out] + 1, On = L.R.Start[In];
    CHECK(levelAt(C, Off) == levelAt(C0, Off) - M.Size[W]);
    CHECK(levelAt(C, On) == levelAt(C0, On));
    CHECK(levelAt(C, On - 1) == levelAt(C0, On - 1) - M.Size[W]);
    // An overlapping span merges; an inverted one changes nothing.
    REQUIRE(!M.offload(G, W, TaskPoint::start(Out), TaskPoint::end(Out)));
    REQUIRE(!M.offload(G, W, TaskPoint::start(In), TaskPoint::end(Out)));
    Profile Pr2 = M.profile(L.times());
    CHECK(levelAt(Pr2.Curves[0], L.R.Start[Out]) ==
          levelAt(C0, L.R.Start[Out]) - M.Size[W]);
    CHECK(levelAt(Pr2.Curves[0], On) == levelAt(C0, On));
  }
  SUBCASE("setting sizes") {
    BlockId A = blockAt(L, 1115);
    REQUIRE(!M.resizeBlocks({A}, 100));
    CHECK(M.Size[A] == 100);
    CHECK(M.MeasuredSize[A] == 4096);
    CHECK((M.Flags[A] & MemoryModel::BF_Scaled) != 0);
    int64_t Mid = Base.AllocTime[A] + 1;
    CHECK(levelAt(M.profile(L.times()).Curves[0], Mid) ==
          levelAt(C0, Mid) - 3996);
    CHECK(llvm::errorToBool(M.resizeBlocks({A}, -1)));
    CHECK(M.Size[A] == 100);
  }
  SUBCASE("an offload back after the free is clipped, and counted") {
    BlockId A = blockAt(L, 1115);
    graph::TaskId Linear = taskNamed(G, "aten::linear", 0);
    graph::TaskId Late = taskNamed(G, "Optimizer.step#SGD.step", 0);
    REQUIRE(!M.offload(G, A, TaskPoint::end(Linear), TaskPoint::start(Late)));
    Profile Pr = M.profile(L.times());
    CHECK(Pr.Clipped == 1);
    // Off the device from the call's end to its free, never back.
    int64_t Between = L.R.End[Linear] + 1000;
    CHECK(levelAt(Pr.Curves[0], Between) == levelAt(C0, Between) - 4096);
    CHECK(Base.Clipped == 0);
  }
  SUBCASE("a workspace added to a call") {
    graph::TaskId Relu = taskNamed(G, "aten::relu", 1);
    auto B =
        M.addBlock(G, 0, 777, TaskPoint::start(Relu), TaskPoint::end(Relu));
    REQUIRE(static_cast<bool>(B));
    CHECK(M.Class[*B] == BlockClass::Temporary);
    CHECK((M.Flags[*B] & MemoryModel::BF_Added) != 0);
    Profile Pr = M.profile(L.times());
    int64_t Inside = L.R.Start[Relu] + 1;
    CHECK(levelAt(Pr.Curves[0], Inside) == levelAt(C0, Inside) + 777);
    CHECK(levelAt(Pr.Curves[0], L.R.End[Relu]) == levelAt(C0, L.R.End[Relu]));
    auto Kept = M.addBlock(G, 0, 5, TaskPoint::start(Relu), std::nullopt);
    REQUIRE(static_cast<bool>(Kept));
    CHECK(M.Class[*Kept] == BlockClass::Persistent);
  }
  SUBCASE("bad arguments are errors") {
    CHECK(llvm::errorToBool(M.scaleBlocks({0}, -1.0)));
    CHECK(llvm::errorToBool(M.scaleBlocks({BlockId(M.numBlocks())}, 2.0)));
    CHECK(llvm::errorToBool(
        M.moveFree(G, 0, TaskPoint::end(graph::TaskId(Tasks)))));
    CHECK(llvm::errorToBool(
        M.addBlock(G, 5, 1, TaskPoint::start(0), std::nullopt).takeError()));
  }
  // Whatever was done, the graph is as it was and reset() undoes it.
  CHECK(G.numTasks() == Tasks);
  M.reset();
  Profile Again = M.profile(L.times());
  CHECK(Again.Curves[0].Level == C0.Level);
  CHECK(Again.Curves[0].Time == C0.Time);
  CHECK(M.Offloads.empty());
}

TEST_CASE("memory: a trace without memory records is refused") {
  SyntheticTrace S;
  S.Records.clear();
  std::string Json = S.json(true);
  auto T = trace::parseKinetoJson(Json, "synthetic.json");
  REQUIRE(static_cast<bool>(T));
  auto G = graph::buildGraph(*T);
  REQUIRE(static_cast<bool>(G));
  auto M = MemoryModel::build(*T, *G);
  REQUIRE_FALSE(static_cast<bool>(M));
  CHECK(llvm::toString(M.takeError()).find("no memory records") !=
        std::string::npos);
}

TEST_CASE("memory: host records form their own pool") {
  SyntheticTrace S;
  std::string Json = S.json(true);
  // The same records, as host allocations.
  size_t Pos = 0;
  while ((Pos = Json.find("\"Device Type\":1", Pos)) != std::string::npos)
    Json.replace(Pos, 15, "\"Device Type\":0");
  auto T = trace::parseKinetoJson(Json, "synthetic.json");
  REQUIRE(static_cast<bool>(T));
  auto G = graph::buildGraph(*T);
  REQUIRE(static_cast<bool>(G));
  auto M = MemoryModel::build(*T, *G);
  REQUIRE(static_cast<bool>(M));
  REQUIRE(M->Pools.size() == 1);
  CHECK_FALSE(M->Pools[0].isDevice());
  CHECK_FALSE(M->hasDeviceRecords());
  CHECK(M->Pools[0].label() == "CPU");
}

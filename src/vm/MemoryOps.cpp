//===- MemoryOps.cpp - resize, free, offload, alloc, peak() ---------------===//
//
// The memory statements change the run's block table (memory::MemoryModel's
// what-ifs) and, for offload, the graph: a copy to the host after a task and
// a copy back before another, inserted on copy streams with dependencies,
// so the simulator shows what the copies cost. Each statement works on a
// whole block set in one native loop; task points given as functions of a
// block are computed for every block before anything changes.
//
// What a statement can check before any simulation, it checks against the
// trace's own times (a free before the allocation, an offload after the
// free, a prefetch before the offload) and reports as a runtime error.
//
//===----------------------------------------------------------------------===//

#include "ops/Gpus.h"
#include "vm/VMImpl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::vm;
using graph::NoTask;
using graph::NoTime;
using graph::TaskId;
using memory::BlockId;
using memory::MemoryModel;
using memory::TaskPoint;

namespace {

/// The trace time of a point of a traced task; NoTime for an inserted one
/// (its time is known only once simulated).
int64_t tracedTime(const graph::Graph &G, TaskPoint P) {
  if (G.MeasuredStart[P.Task] == NoTime ||
      (G.Flags[P.Task] & graph::TF_Inserted))
    return NoTime;
  return G.MeasuredStart[P.Task] + (P.AtEnd ? G.MeasuredDur[P.Task] : 0);
}

/// The trace time of a what-if placement (a task point), else NoTime.
int64_t tracedTime(const graph::Graph &G, const memory::Placement &P) {
  if (P.K != memory::Placement::TaskStart && P.K != memory::Placement::TaskEnd)
    return NoTime;
  return tracedTime(G, {P.Task, P.K == memory::Placement::TaskEnd});
}

/// When \p B is allocated, in trace time: its record, or the traced task
/// an added block is allocated at; NoTime when unknown or before the window.
int64_t allocTime(const graph::Graph &G, const MemoryModel &M, BlockId B) {
  if (M.Flags[B] & MemoryModel::BF_Added)
    return tracedTime(G, M.AllocAt[B]);
  if (M.AllocAt[B].K == memory::Placement::Before)
    return NoTime;
  return M.AllocTs[B];
}

/// When \p B is freed, in trace time, as things stand; NoTime if never or
/// unknown.
int64_t freeTime(const graph::Graph &G, const MemoryModel &M, BlockId B) {
  if (M.Flags[B] & (MemoryModel::BF_FreeMoved | MemoryModel::BF_Added))
    return tracedTime(G, M.FreeAt[B]);
  if (M.FreeAt[B].K == memory::Placement::After)
    return NoTime;
  return M.FreeTs[B];
}

std::string pointText(const graph::Graph &G, TaskPoint P) {
  return fmt::format("{} task #{} \"{}\"",
                     P.AtEnd ? "the end of" : "the start of", P.Task,
                     G.name(P.Task));
}

} // namespace

/// One task point per block: \p V is a task, a one-task set, or a function
/// that gives one for a block (called for every block before any change).
/// With \p Optional, none is allowed and gives NoTask.
static std::vector<TaskPoint>
pointsFor(Interpreter &I, const std::vector<BlockId> &Blocks, const Value &V,
          bool AtEnd, const char *Clause, bool Optional = false) {
  const graph::Graph &G = I.graph();
  auto Check = [&](const Value &X, BlockId B) -> TaskId {
    if (X.is(VKind::None)) {
      if (Optional)
        return NoTask;
      fail(fmt::format("'{}' gave none for block #{} (it needs a task)", Clause,
                       B));
    }
    TaskId T = I.toTask(X, Clause);
    if (T >= G.numTasks())
      fail(fmt::format("'{}': no task #{}", Clause, T));
    if (G.isRemoved(T))
      fail(fmt::format("'{}': task #{} \"{}\" was removed", Clause, T,
                       G.name(T)));
    return T;
  };
  std::vector<TaskPoint> Out;
  Out.reserve(Blocks.size());
  if (V.is(VKind::Function) || V.is(VKind::Bound)) {
    for (BlockId B : Blocks)
      Out.push_back({Check(I.call(V, {Value::id(VKind::Block, B)}), B), AtEnd});
    return Out;
  }
  if (Blocks.empty())
    return Out;
  TaskId T = Check(V, Blocks.front());
  Out.assign(Blocks.size(), TaskPoint{T, AtEnd});
  return Out;
}

void Interpreter::resize(const Value &Target, const Value &Amount, bool To) {
  std::vector<BlockId> Blocks = blocksInOrder(toBlocks(Target, "resize"));
  if (Blocks.empty())
    return;
  MemoryModel &M = mem("resize");
  // One amount per block, computed before any change.
  std::vector<Value> Amounts;
  bool PerBlock = Amount.is(VKind::Function) || Amount.is(VKind::Bound);
  for (BlockId B : Blocks)
    Amounts.push_back(PerBlock ? call(Amount, {Value::id(VKind::Block, B)})
                               : Amount);
  for (size_t I = 0; I < Blocks.size(); ++I) {
    BlockId B = Blocks[I];
    if (To) {
      int64_t Bytes = toAmount(Amounts[I], Dim::bytes(), "a block's size");
      if (auto E = M.resizeBlocks({B}, Bytes))
        fail(llvm::toString(std::move(E)));
    } else {
      double F = toNumber(Amounts[I], {}, "the factor");
      if (!(F >= 0) || !std::isfinite(F))
        fail(fmt::format("a size factor must be 0 or more (got {} for block "
                         "#{})",
                         show(Amounts[I]), B));
      if (auto E = M.scaleBlocks({B}, F))
        fail(llvm::toString(std::move(E)));
    }
  }
  Result.Stats.Resized += Blocks.size();
}

void Interpreter::freeBlocks(const Value &Target, const Value &At, bool AtEnd,
                             const Value *Until) {
  std::vector<BlockId> Blocks = blocksInOrder(toBlocks(Target, "free"));
  if (Blocks.empty())
    return;
  MemoryModel &M = mem("free");
  const graph::Graph &G = graph();
  ensureFinalized();
  const char *Clause = AtEnd ? "after" : "before";
  std::vector<TaskPoint> Points = pointsFor(*this, Blocks, At, AtEnd, Clause);
  std::vector<TaskPoint> Again;
  if (Until)
    Again = pointsFor(*this, Blocks, *Until, false, "until");
  for (size_t I = 0; I < Blocks.size(); ++I) {
    BlockId B = Blocks[I];
    int64_t Alloc = allocTime(G, M, B), Free = tracedTime(G, Points[I]);
    if (Alloc != NoTime && Free != NoTime && Free <= Alloc)
      fail(fmt::format("free before alloc: {} is allocated {} after {}",
                       showBlock(B),
                       formatQuantity(double(Alloc - Free), Dim::duration()),
                       pointText(G, Points[I])));
    if (!Until) {
      if (auto E = M.moveFree(G, B, Points[I]))
        fail(llvm::toString(std::move(E)));
      continue;
    }
    int64_t Back = tracedTime(G, Again[I]);
    if (Free != NoTime && Back != NoTime && Back < Free)
      fail(fmt::format("'until' comes first: {} is {} before {} (block #{})",
                       pointText(G, Again[I]),
                       formatQuantity(double(Free - Back), Dim::duration()),
                       pointText(G, Points[I]), B));
    if (auto E = M.offload(G, B, Points[I], Again[I]))
      fail(llvm::toString(std::move(E)));
  }
  Result.Stats.Freed += Blocks.size();
}

/// The copy stream for one direction on \p Device: created on first use,
/// after the device's streams.
static graph::ResourceId copyStream(graph::Graph &G, int32_t Device,
                                    bool ToHost) {
  std::string Name = fmt::format("GPU {} {} copies", Device,
                                 ToHost ? "offload (DtoH)" : "prefetch (HtoD)");
  graph::ResourceId R = G.findResource(graph::ResourceKind::GpuStream, Name);
  if (R != graph::NoResource)
    return R;
  int64_t Id = 0;
  for (const graph::Resource &X : G.Resources)
    if (X.Kind == graph::ResourceKind::GpuStream)
      Id = std::max(Id, X.Id + 1);
  return G.addResource(graph::ResourceKind::GpuStream, Device, Id, Name);
}

void Interpreter::offload(const Value &Target, const OffloadArgs &A) {
  std::vector<BlockId> Blocks = blocksInOrder(toBlocks(Target, "offload"));
  if (Blocks.empty())
    return;
  MemoryModel &M = mem("offload");
  ensureFinalized();
  graph::Graph &G = mutableGraph(); // it inserts the copies
  double Bw = hostBandwidth(Env.Device.PcieBandwidth,
                            ops::gpuForDevice(Env.Device.Name));
  if (A.Bandwidth) {
    Bw = toNumber(*A.Bandwidth, Dim::bandwidth(), "'bandwidth'");
    if (!(Bw > 0) || !std::isfinite(Bw))
      fail("the copy bandwidth must be positive (got " + show(*A.Bandwidth) +
           ")");
  } else if (!(Bw > 0)) {
    fail("offload needs 'bandwidth BW': the trace has no host-device copies "
         "of 1 MiB or more to measure the PCIe bandwidth from, and its GPU "
         "is not in the catalogue");
  }
  auto StreamOf = [&](const Value *On) -> graph::ResourceId {
    if (!On)
      return graph::NoResource;
    if (!On->is(VKind::Resource) ||
        G.Resources[On->asId()].Kind != graph::ResourceKind::GpuStream)
      fail("'on' takes a GPU stream for the copies, got " +
           (On->is(VKind::Resource) ? G.Resources[On->asId()].Name
                                    : describeValue(*On)));
    return On->asId();
  };
  graph::ResourceId OutOn = StreamOf(A.On), InOn = StreamOf(A.PrefetchOn);
  bool Prefetch = A.PrefetchBefore != nullptr;

  std::vector<TaskPoint> Out =
      pointsFor(*this, Blocks, *A.After, true, "after");
  std::vector<TaskPoint> Ahead, Back;
  if (A.PrefetchAfter)
    Ahead = pointsFor(*this, Blocks, *A.PrefetchAfter, true, "prefetch after",
                      /*Optional=*/true);
  if (Prefetch)
    Back =
        pointsFor(*this, Blocks, *A.PrefetchBefore, false, "prefetch before");

  // Check every block before changing anything.
  for (size_t I = 0; I < Blocks.size(); ++I) {
    BlockId B = Blocks[I];
    const memory::Pool &P = M.Pools[M.PoolOf[B]];
    if (!P.isDevice())
      fail(fmt::format("{} is in host memory ({}); offload moves device "
                       "blocks to the host",
                       showBlock(B), P.label()));
    int64_t T = tracedTime(G, Out[I]), Alloc = allocTime(G, M, B),
            Free = freeTime(G, M, B);
    if (T != NoTime && Alloc != NoTime && T < Alloc)
      fail(fmt::format("offload before alloc: {} is allocated {} after {}",
                       showBlock(B),
                       formatQuantity(double(Alloc - T), Dim::duration()),
                       pointText(G, Out[I])));
    if (T != NoTime && Free != NoTime && Free <= T)
      fail(fmt::format("offload after free: {} is freed {} before {}",
                       showBlock(B),
                       formatQuantity(double(T - Free), Dim::duration()),
                       pointText(G, Out[I])));
    if (Prefetch) {
      int64_t In = tracedTime(G, Back[I]);
      if (T != NoTime && In != NoTime && In < T)
        fail(fmt::format("the prefetch comes first: {} is {} before {} "
                         "(block #{})",
                         pointText(G, Back[I]),
                         formatQuantity(double(T - In), Dim::duration()),
                         pointText(G, Out[I]), B));
    }
  }

  // The copies: to the host after the point, back before the prefetch
  // point (after the copy out, and after 'prefetch after' when given).
  auto AddCopy = [&](const char *Name, graph::ResourceId S, BlockId B,
                     TaskId From, int64_t Key) {
    int64_t Ns =
        static_cast<int64_t>(std::ceil(static_cast<double>(M.Size[B]) / Bw));
    TaskId X = G.addTask(graph::TaskKind::Memcpy, Name, S, Ns);
    G.Flags[X] |= graph::TF_Inserted;
    G.Bytes[X] = M.Size[B];
    G.OrderKey[X] = Key;
    G.IterationOf[X] = G.IterationOf[From];
    G.PhaseOf[X] = G.PhaseOf[From];
    G.LayerOf[X] = G.LayerOf[From];
    ++Result.Stats.Inserted;
    return X;
  };
  auto Edge = [&](TaskId From, TaskId To) {
    G.addEdge(From, To, graph::EdgeKind::Script, graph::Anchor::EndToStart, 0);
    ++Result.Stats.Dependencies;
  };
  auto KeyOf = [&](TaskPoint P) {
    int64_t T = tracedTime(G, P);
    return T != NoTime ? T : G.OrderKey[P.Task];
  };
  for (size_t I = 0; I < Blocks.size(); ++I) {
    BlockId B = Blocks[I];
    int32_t Dev = M.Pools[M.PoolOf[B]].DeviceId;
    graph::ResourceId S1 =
        OutOn != graph::NoResource ? OutOn : copyStream(G, Dev, true);
    int64_t OutKey = KeyOf(Out[I]);
    TaskId ToHost = AddCopy("offload DtoH", S1, B, Out[I].Task, OutKey);
    Edge(Out[I].Task, ToHost);
    if (!Prefetch) {
      if (auto E = M.moveFree(G, B, TaskPoint::end(ToHost)))
        fail(llvm::toString(std::move(E)));
      continue;
    }
    graph::ResourceId S2 =
        InOn != graph::NoResource ? InOn : copyStream(G, Dev, false);
    bool HasAhead = !Ahead.empty() && Ahead[I].Task != NoTask;
    int64_t InKey =
        HasAhead ? std::max(OutKey + 1, KeyOf(Ahead[I])) : OutKey + 1;
    TaskId ToDevice = AddCopy("prefetch HtoD", S2, B, Back[I].Task, InKey);
    Edge(ToHost, ToDevice);
    if (HasAhead)
      Edge(Ahead[I].Task, ToDevice);
    Edge(ToDevice, Back[I].Task);
    // The block counts again from when the CPU issues the copy back, as the
    // trace's allocator counts bytes: after it launched the 'prefetch
    // after' task, else when it launches the task that needs the block.
    TaskPoint Issued = TaskPoint::start(ToDevice);
    TaskPoint By = HasAhead ? Ahead[I] : Back[I];
    TaskId Cpu = G.isGpu(By.Task) ? G.Launcher[By.Task] : By.Task;
    if (Cpu != NoTask)
      Issued = {Cpu, HasAhead};
    if (auto E = M.offload(G, B, TaskPoint::end(ToHost), Issued))
      fail(llvm::toString(std::move(E)));
  }
  Result.Stats.Offloaded += Blocks.size();
  markStructural();
  EverSelected.resize(G.numTasks());
  // A cycle is reported here, where it was made.
  ensureFinalized();
}

Value Interpreter::alloc(const Value &Size, const Value &At, unsigned Bits,
                         const Value *Until, const Value *On) {
  MemoryModel &M = mem("alloc");
  const graph::Graph &G = graph();
  ensureFinalized();
  int64_t Bytes = toAmount(Size, Dim::bytes(), "a block's size");
  TaskPoint P{toTask(At, (Bits & bc::AtEnd) ? "after" : "before"),
              static_cast<bool>(Bits & bc::AtEnd)};
  std::optional<TaskPoint> F;
  if (Until)
    F = TaskPoint{toTask(*Until, (Bits & bc::UntilAtEnd) ? "through" : "until"),
                  static_cast<bool>(Bits & bc::UntilAtEnd)};
  memory::PoolId Pool = Env.MemPool;
  if (On) {
    double D = toNumber(*On, {}, "'on'");
    Pool = ~0u;
    for (memory::PoolId X = 0; X < M.Pools.size(); ++X)
      if (M.Pools[X].isDevice() && M.Pools[X].DeviceId == D)
        Pool = X;
    if (Pool == ~0u) {
      std::string Known;
      for (const memory::Pool &X : M.Pools)
        if (X.isDevice())
          Known += (Known.empty() ? "" : ", ") + std::to_string(X.DeviceId);
      fail(fmt::format("the trace has no memory records of device {} (it has "
                       "device {})",
                       show(*On), Known));
    }
  } else if (P.Task < G.numTasks() && G.isGpu(P.Task) &&
             G.Res[P.Task] != graph::NoResource) {
    for (memory::PoolId X = 0; X < M.Pools.size(); ++X)
      if (M.Pools[X].isDevice() &&
          M.Pools[X].DeviceId == G.Resources[G.Res[P.Task]].Device)
        Pool = X;
  }
  if (F) {
    int64_t A = tracedTime(G, P), E = tracedTime(G, *F);
    if (A != NoTime && E != NoTime && E <= A)
      fail(fmt::format(
          "free before alloc: {} is {} before {}", pointText(G, *F),
          formatQuantity(double(A - E), Dim::duration()), pointText(G, P)));
  }
  auto B = M.addBlock(G, Pool, Bytes, P, F);
  if (!B)
    fail(llvm::toString(B.takeError()));
  ++Result.Stats.Allocated;
  return Value::id(VKind::Block, *B);
}

Value Interpreter::peak(bool Baseline) {
  const char *Name = Baseline ? "baseline_peak()" : "peak()";
  MemoryModel &M = mem(Name);
  if (Baseline) {
    if (Env.BaselinePeak < 0)
      fail(std::string(Name) + " is not known in this run");
    return Value::number(static_cast<double>(Env.BaselinePeak), Dim::bytes());
  }
  const graph::Graph &G = graph();
  if (Env.ReportIteration >= G.Iterations.size())
    fail(std::string(Name) + " needs an iteration to report");
  ensureFinalized();
  finishSchedules();
  auto R = sim::simulate(G, &Result.Policy);
  if (!R)
    fail("cannot simulate: " + llvm::toString(R.takeError()));
  return Value::number(
      static_cast<double>(iterationPeak(M, Env.MemPool, G, *R,
                                        G.Iterations[Env.ReportIteration])),
      Dim::bytes());
}

// --- Instructions -----------------------------------------------------------

void Interpreter::opResize(const Cursor &C) {
  Value Amount = pop(), Target = pop();
  resize(Target, Amount, C.operand(0) == 1);
}
void Interpreter::opFree(const Cursor &C) {
  unsigned Bits = static_cast<unsigned>(C.operand(0));
  Value Until;
  if (Bits & bc::HasUntil)
    Until = pop();
  Value At = pop(), Target = pop();
  freeBlocks(Target, At, Bits & bc::AtEnd,
             (Bits & bc::HasUntil) ? &Until : nullptr);
}
void Interpreter::opOffload(const Cursor &C) {
  unsigned Bits = static_cast<unsigned>(C.operand(0));
  // Popped in reverse of the MemOperand order they were pushed in.
  Value V[5];
  const unsigned Order[5] = {bc::HasOn, bc::HasBandwidth, bc::HasPrefetchAfter,
                             bc::HasPrefetchBefore, bc::HasPrefetchOn};
  for (int I = 4; I >= 0; --I)
    if (Bits & Order[I])
      V[I] = pop();
  Value After = pop(), Target = pop();
  auto Given = [&](int I) { return (Bits & Order[I]) ? &V[I] : nullptr; };
  offload(Target, {&After, Given(0), Given(1), Given(2), Given(3), Given(4)});
}
void Interpreter::opAlloc(const Cursor &C) {
  unsigned Bits = static_cast<unsigned>(C.operand(0));
  Value On, Until;
  if (Bits & bc::HasOn)
    On = pop();
  if (Bits & bc::HasUntil)
    Until = pop();
  Value At = pop(), Size = pop();
  push(alloc(Size, At, Bits, (Bits & bc::HasUntil) ? &Until : nullptr,
             (Bits & bc::HasOn) ? &On : nullptr));
}
uint32_t vm::reportedPool(const MemoryModel &M) {
  uint32_t Best = 0;
  uint64_t Most = 0;
  for (uint32_t P = 0; P < M.Pools.size(); ++P)
    if (M.Pools[P].isDevice() && M.Pools[P].RecordsInWindow > Most) {
      Best = P;
      Most = M.Pools[P].RecordsInWindow;
    }
  return Best;
}

int64_t vm::iterationPeak(const MemoryModel &M, uint32_t Pool,
                          const graph::Graph &G, const sim::SimResult &R,
                          const graph::Iteration &It) {
  memory::Profile Pr = M.profile({R.Start, R.End}, G);
  auto [Begin, End] = sim::iterationSpan(G, R, It);
  return memory::peakIn(Pr.Curves[Pool], Begin, End).Bytes;
}

double vm::hostBandwidth(double Measured, const ops::GpuSpec *Spec) {
  if (Measured > 0)
    return Measured;
  return Spec ? Spec->HostGBs : 0; // GB/s = bytes/ns
}

double vm::estimatePcieBandwidth(const graph::Graph &G) {
  std::vector<double> Rates;
  for (TaskId T = 0; T < G.numTasks(); ++T) {
    if (G.Kind[T] != graph::TaskKind::Memcpy || G.isRemoved(T) ||
        G.MeasuredDur[T] == NoTime || G.MeasuredDur[T] < 10'000 ||
        G.Bytes[T] < (1 << 20))
      continue;
    std::string_view N = G.name(T);
    if (N.find("HtoD") == std::string_view::npos &&
        N.find("DtoH") == std::string_view::npos)
      continue;
    Rates.push_back(static_cast<double>(G.Bytes[T]) /
                    static_cast<double>(G.MeasuredDur[T]));
  }
  if (Rates.empty())
    return 0;
  std::nth_element(Rates.begin(), Rates.begin() + Rates.size() / 2,
                   Rates.end());
  return Rates[Rates.size() / 2];
}

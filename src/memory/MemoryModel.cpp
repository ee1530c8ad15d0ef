//===- MemoryModel.cpp - Blocks from memory records -----------------------===//
//
// Builds the block table: pools, the order of their records, pairing of
// allocations and frees, the starting level, the measured curve, placement of
// each record on a CPU leaf of its thread, and classes.
//
//===----------------------------------------------------------------------===//

#include "memory/MemoryModel.h"

#include "support/Error.h"

#include <fmt/format.h>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

using namespace dd;
using namespace dd::memory;
using graph::Graph;
using graph::NoTime;
using graph::ResourceId;

const char *memory::blockClassName(BlockClass C) {
  switch (C) {
  case BlockClass::Persistent:
    return "persistent";
  case BlockClass::Activation:
    return "activation";
  case BlockClass::Temporary:
    return "temporary";
  case BlockClass::CrossPhase:
    return "cross-phase";
  }
  return "?";
}

std::string Pool::label() const { return poolLabel(DeviceType, DeviceId); }

std::string memory::poolLabel(int32_t DeviceType, int32_t DeviceId) {
  if (DeviceType == 0)
    return "CPU";
  if (DeviceType == 1)
    return "GPU " + std::to_string(DeviceId);
  return "device type " + std::to_string(DeviceType) + " id " +
         std::to_string(DeviceId);
}

bool MemoryModel::hasDeviceRecords() const {
  for (const Pool &P : Pools)
    if (P.isDevice() && P.RecordsInWindow)
      return true;
  return false;
}

namespace {

using PoolKey = std::pair<int32_t, int32_t>;

/// Records of one pool in measured order, zero-sized ones left out.
struct PoolRecords {
  PoolKey Key;
  std::vector<uint32_t> Recs;
  uint64_t ZeroSized = 0;
};

/// Groups the records into pools, sorted by (device type, device id), each
/// in time order (ties in the order the reader saw them).
std::vector<PoolRecords> groupRecords(const trace::Trace &T) {
  std::map<PoolKey, PoolRecords> ByKey;
  for (uint32_t I = 0; I < T.Memory.size(); ++I) {
    const trace::MemoryRecord &M = T.Memory[I];
    PoolRecords &P = ByKey[{M.DeviceType, M.DeviceId}];
    P.Key = {M.DeviceType, M.DeviceId};
    if (M.Bytes == 0)
      ++P.ZeroSized;
    else
      P.Recs.push_back(I);
  }
  std::vector<PoolRecords> Out;
  for (auto &[K, P] : ByKey) {
    std::stable_sort(P.Recs.begin(), P.Recs.end(), [&](uint32_t A, uint32_t B) {
      return T.Memory[A].Ts < T.Memory[B].Ts;
    });
    Out.push_back(std::move(P));
  }
  return Out;
}

/// Records at the same time can come in any order (threads flush their
/// buffers separately). Where the records carry Total Allocated, put each
/// group of same-time records in the order whose running sum reproduces it.
uint64_t reorderTies(const trace::Trace &T, std::vector<uint32_t> &Recs) {
  uint64_t Moved = 0;
  auto Rec = [&](size_t I) -> const trace::MemoryRecord & {
    return T.Memory[Recs[I]];
  };
  for (size_t I = 0; I < Recs.size();) {
    size_t J = I + 1;
    while (J < Recs.size() && Rec(J).Ts == Rec(I).Ts)
      ++J;
    // Each record should continue the level its predecessor left.
    for (size_t P = std::max<size_t>(I, 1); J - I > 1 && P < J; ++P) {
      int64_t Level = Rec(P - 1).TotalAllocated;
      if (Rec(P).TotalAllocated == Level + Rec(P).Bytes)
        continue;
      for (size_t Q = P + 1; Q < J; ++Q)
        if (Rec(Q).TotalAllocated == Level + Rec(Q).Bytes) {
          std::rotate(Recs.begin() + static_cast<std::ptrdiff_t>(P),
                      Recs.begin() + static_cast<std::ptrdiff_t>(Q),
                      Recs.begin() + static_cast<std::ptrdiff_t>(Q + 1));
          ++Moved;
          break;
        }
    }
    I = J;
  }
  return Moved;
}

} // namespace

namespace dd::memory {

/// The builder's state; a friend of MemoryModel.
class ModelBuilder {
public:
  ModelBuilder(const trace::Trace &T, const Graph &G, MemoryModel &M)
      : T(T), G(G), M(M) {}
  llvm::Error run();

private:
  const trace::Trace &T;
  const Graph &G;
  MemoryModel &M;
  int64_t W0 = 0, W1 = 0;

  /// Per thread resource: its measured leaves by start.
  std::vector<std::vector<TaskId>> Leaves;
  llvm::DenseMap<trace::TrackId, ResourceId> ThreadOfTrack;

  int64_t mStart(TaskId X) const { return G.MeasuredStart[X]; }
  int64_t mEnd(TaskId X) const { return G.MeasuredStart[X] + G.MeasuredDur[X]; }

  void indexThreads();
  void buildPool(PoolRecords &PR);
  /// Places record \p R and finds the task that made it.
  void place(uint32_t R, Placement &At, TaskId &Owner, Phase &Ph,
             LayerId &Layer);
  TaskId innermostContaining(TaskId From, int64_t Ts) const;
};

} // namespace dd::memory

void ModelBuilder::indexThreads() {
  Leaves.assign(G.Resources.size(), {});
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.isGpu(X) || G.isContainer(X) || G.isRemoved(X) ||
        G.MeasuredStart[X] == NoTime || G.Res[X] == graph::NoResource ||
        G.Event[X] == ~0u)
      continue;
    Leaves[G.Res[X]].push_back(X);
    ThreadOfTrack.try_emplace(T.TrackOf[G.Event[X]], G.Res[X]);
  }
  for (auto &L : Leaves)
    std::stable_sort(L.begin(), L.end(),
                     [&](TaskId A, TaskId B) { return mStart(A) < mStart(B); });
}

TaskId ModelBuilder::innermostContaining(TaskId From, int64_t Ts) const {
  for (TaskId X = From; X != NoTask; X = G.Parent[X])
    if (G.MeasuredStart[X] != NoTime && mStart(X) <= Ts && Ts <= mEnd(X))
      return X;
  return NoTask;
}

void ModelBuilder::place(uint32_t R, Placement &At, TaskId &Owner, Phase &Ph,
                         LayerId &Layer) {
  const trace::MemoryRecord &Rec = T.Memory[R];
  int64_t Ts = Rec.Ts;
  At = Placement();
  Owner = NoTask;
  Ph = Phase::Unknown;
  Layer = graph::NoLayer;
  auto Thread = ThreadOfTrack.find(Rec.Track);
  if (Thread == ThreadOfTrack.end() || Leaves[Thread->second].empty()) {
    At.K = Placement::Fixed;
    At.Offset = Ts - W0;
    return;
  }
  const std::vector<TaskId> &L = Leaves[Thread->second];
  auto It = std::partition_point(L.begin(), L.end(),
                                 [&](TaskId X) { return mStart(X) <= Ts; });
  TaskId Anchor;
  if (It == L.begin()) {
    // Before the thread's first leaf.
    Anchor = L.front();
    At.K = Placement::BeforeTask;
    At.Task = Anchor;
    At.Offset = mStart(Anchor) - Ts;
    Owner = innermostContaining(G.Parent[Anchor], Ts);
  } else {
    Anchor = *(It - 1);
    if (Ts <= mEnd(Anchor)) {
      At.K = Placement::InTask;
      At.Task = Anchor;
      At.Offset = Ts - mStart(Anchor);
      Owner = Anchor;
    } else {
      // In the gap after a leaf: in the framework's own work between calls,
      // or in the part of a container before or after its children.
      TaskId Next = It == L.end() ? NoTask : *It;
      At.K = Placement::AfterTask;
      At.Task = Anchor;
      At.Next = Next;
      At.Offset = Ts - mEnd(Anchor);
      TaskId A = innermostContaining(G.Parent[Anchor], Ts);
      TaskId B =
          Next == NoTask ? NoTask : innermostContaining(G.Parent[Next], Ts);
      // Both hold the record, so one holds the other: take the inner one.
      if (A == NoTask || (B != NoTask && G.MeasuredDur[B] < G.MeasuredDur[A]))
        A = B;
      Owner = A;
    }
  }
  if (Owner == NoTask)
    Owner = Anchor;
  Ph = G.PhaseOf[Owner];
  if (Ph == Phase::Unknown)
    Ph = G.PhaseOf[Anchor];
  Layer = G.LayerOf[Owner];
}

void ModelBuilder::buildPool(PoolRecords &PR) {
  PoolId PId = static_cast<PoolId>(M.Pools.size());
  M.Pools.emplace_back();
  Pool &P = M.Pools.back();
  P.DeviceType = PR.Key.first;
  P.DeviceId = PR.Key.second;
  P.ZeroSized = PR.ZeroSized;
  std::vector<uint32_t> &Recs = PR.Recs;
  P.Records = Recs.size();
  for (uint32_t R : Recs) {
    P.HasAddresses &= T.Memory[R].Addr != 0;
    P.HasTotals &= T.Memory[R].TotalAllocated != trace::NoValue;
  }
  if (P.HasTotals)
    P.Reordered = reorderTies(T, Recs);

  // --- Pairing: the most recent live allocation at the free's address (or
  // of its size), last in, first out. ---
  struct Proto {
    uint32_t Alloc = NoRecord, Free = NoRecord;
  };
  std::vector<Proto> Protos;
  std::vector<uint32_t> ProtoOfRec(Recs.size());
  // Keyed by whatever address the trace gives, all 2^64 of them (a DenseMap
  // reserves two).
  std::unordered_map<uint64_t, llvm::SmallVector<uint32_t, 1>> Live;
  for (uint32_t I = 0; I < Recs.size(); ++I) {
    const trace::MemoryRecord &Rec = T.Memory[Recs[I]];
    uint64_t Key =
        P.HasAddresses
            ? Rec.Addr
            : static_cast<uint64_t>(Rec.Bytes < 0 ? -Rec.Bytes : Rec.Bytes);
    if (Rec.Bytes > 0) {
      ProtoOfRec[I] = static_cast<uint32_t>(Protos.size());
      Live[Key].push_back(static_cast<uint32_t>(Protos.size()));
      Protos.push_back({I, NoRecord});
      continue;
    }
    auto It = Live.find(Key);
    bool Paired = false;
    if (It != Live.end() && !It->second.empty()) {
      uint32_t Pr = It->second.back();
      if (T.Memory[Recs[Protos[Pr].Alloc]].Bytes == -Rec.Bytes) {
        It->second.pop_back();
        Protos[Pr].Free = I;
        ProtoOfRec[I] = Pr;
        Paired = true;
      } else {
        ++P.SizeMismatches;
      }
    }
    if (!Paired) {
      ++P.UnmatchedFrees;
      ProtoOfRec[I] = static_cast<uint32_t>(Protos.size());
      Protos.push_back({NoRecord, I});
    }
  }
  for (const Proto &Pr : Protos)
    if (Pr.Alloc != NoRecord && Pr.Free == NoRecord)
      ++P.NeverFreed;

  auto TsOf = [&](uint32_t I) { return T.Memory[Recs[I]].Ts; };
  auto InWindow = [&](uint32_t I) { return TsOf(I) >= W0 && TsOf(I) < W1; };
  for (uint32_t I = 0; I < Recs.size(); ++I)
    (TsOf(I) < W0   ? P.RecordsBefore
     : TsOf(I) < W1 ? P.RecordsInWindow
                    : P.RecordsAfter)++;

  // --- Starting level. ---
  size_t FirstIn = 0;
  while (FirstIn < Recs.size() && TsOf(FirstIn) < W0)
    ++FirstIn;
  if (P.HasTotals) {
    if (FirstIn > 0)
      P.StartAllocated = T.Memory[Recs[FirstIn - 1]].TotalAllocated;
    else if (!Recs.empty())
      P.StartAllocated =
          T.Memory[Recs[0]].TotalAllocated - T.Memory[Recs[0]].Bytes;
  } else {
    // Unknown; the least the records allow: every block freed without an
    // allocation in the trace existed when it started.
    int64_t Level = 0;
    for (const Proto &Pr : Protos)
      if (Pr.Alloc == NoRecord)
        Level += -T.Memory[Recs[Pr.Free]].Bytes;
    for (size_t I = 0; I < FirstIn; ++I)
      Level += T.Memory[Recs[I]].Bytes;
    P.StartAllocated = Level;
  }

  // --- Blocks: those live at some point of the window. ---
  std::vector<BlockId> BlockOfProto(Protos.size(), NoBlock);
  int64_t KnownAtStart = 0;
  for (uint32_t PrI = 0; PrI < Protos.size(); ++PrI) {
    const Proto &Pr = Protos[PrI];
    int64_t A = Pr.Alloc == NoRecord ? BeforeWindow : TsOf(Pr.Alloc);
    int64_t F = Pr.Free == NoRecord ? AfterWindow : TsOf(Pr.Free);
    if (A >= W1 || F < W0)
      continue;
    BlockId B = M.appendBlock();
    BlockOfProto[PrI] = B;
    const trace::MemoryRecord &Any =
        T.Memory[Recs[Pr.Alloc != NoRecord ? Pr.Alloc : Pr.Free]];
    M.PoolOf[B] = PId;
    M.Addr[B] = Any.Addr;
    M.Stream[B] = Any.Stream;
    M.Size[B] = M.MeasuredSize[B] = Any.Bytes < 0 ? -Any.Bytes : Any.Bytes;
    M.AllocTs[B] = A;
    M.FreeTs[B] = F;
    M.AllocRecord[B] = Pr.Alloc == NoRecord ? NoRecord : Recs[Pr.Alloc];
    M.FreeRecord[B] = Pr.Free == NoRecord ? NoRecord : Recs[Pr.Free];
    M.AllocKey[B] = Pr.Alloc == NoRecord ? -1 : int64_t(Pr.Alloc);
    M.FreeKey[B] = Pr.Free == NoRecord ? -1 : int64_t(Pr.Free);
    if (Pr.Alloc != NoRecord && InWindow(Pr.Alloc)) {
      place(Recs[Pr.Alloc], M.AllocAt[B], M.AllocOwner[B], M.AllocPhase[B],
            M.AllocLayer[B]);
      P.AllocatedInWindow += M.Size[B];
    } else {
      // Allocated before the window (or the trace): part of the starting
      // level, made by no task of the graph.
      M.AllocAt[B].K = Placement::Before;
      KnownAtStart += M.Size[B];
    }
    if (Pr.Free != NoRecord && InWindow(Pr.Free)) {
      LayerId Unused;
      place(Recs[Pr.Free], M.FreeAt[B], M.FreeOwner[B], M.FreePhase[B], Unused);
      P.FreedInWindow += M.Size[B];
    } else {
      M.FreeAt[B].K = Placement::After;
    }
    if (M.AllocAt[B].K == Placement::Fixed)
      ++P.Unplaced;
    if (M.FreeAt[B].K == Placement::Fixed)
      ++P.Unplaced;
    M.AllocIteration[B] = M.iterationAt(A);
    M.FreeIteration[B] = M.iterationAt(F);
    M.classify(B);
  }
  P.Untracked = P.StartAllocated - KnownAtStart;

  // --- The measured curve, from the records alone. ---
  Curve &C = M.Measured[PId];
  C.Start = P.StartAllocated;
  int64_t Level = P.StartAllocated;
  for (uint32_t I = static_cast<uint32_t>(FirstIn);
       I < Recs.size() && TsOf(I) < W1; ++I) {
    const trace::MemoryRecord &Rec = T.Memory[Recs[I]];
    Level += Rec.Bytes;
    if (P.HasTotals) {
      if (Rec.TotalAllocated != Level)
        ++P.TotalMismatches;
      Level = Rec.TotalAllocated; // the records' own word
    }
    if (Rec.TotalReserved != trace::NoValue)
      P.ReservedPeak = std::max(P.ReservedPeak, Rec.TotalReserved);
    C.Time.push_back(Rec.Ts - W0);
    C.Level.push_back(Level);
    C.Block.push_back(BlockOfProto[ProtoOfRec[I]]);
    C.IsFree.push_back(Rec.Bytes < 0);
  }
  P.EndAllocated = Level;
}

llvm::Error ModelBuilder::run() {
  if (!G.finalized())
    return makeError("internal error: the graph is not finalized");
  if (G.Iterations.empty())
    return makeError("internal error: the graph has no iteration");
  if (T.Memory.empty())
    return makeError("no memory records: " + T.noMemoryRecordsReason());
  W0 = G.Origin;
  W1 = W0;
  for (const graph::Iteration &It : G.Iterations) {
    W1 = std::max(W1, It.MeasuredEnd);
    M.IterationSpans.push_back({It.MeasuredBegin, It.MeasuredEnd});
  }
  std::sort(M.IterationSpans.begin(), M.IterationSpans.end());
  M.Origin = W0;
  M.WindowEnd = W1;
  indexThreads();
  std::vector<PoolRecords> Groups = groupRecords(T);
  M.Measured.resize(Groups.size());
  uint64_t InWindow = 0;
  for (PoolRecords &PR : Groups) {
    buildPool(PR);
    InWindow += M.Pools.back().RecordsInWindow;
  }
  if (InWindow == 0)
    return makeError("none of the trace's " + llvm::Twine(T.Memory.size()) +
                     " memory records lies inside the replayed iterations");
  M.TracedBlocks = M.numBlocks();
  M.TracedFreeAt = M.FreeAt;
  M.TracedFreeKey = M.FreeKey;
  return llvm::Error::success();
}

llvm::Expected<MemoryModel> MemoryModel::build(const trace::Trace &T,
                                               const Graph &G) {
  MemoryModel M;
  ModelBuilder B(T, G, M);
  if (auto E = B.run())
    return E;
  double Total = 0;
  for (int64_t S : M.Size)
    Total += double(S);
  for (const Pool &P : M.Pools)
    Total += std::fabs(double(P.Untracked));
  if (auto E = M.addToTotal(Total, "the trace's memory records"))
    return E;
  M.TracedTotalBytes = M.TotalBytes;
  return M;
}

llvm::Error MemoryModel::addToTotal(double Delta, const llvm::Twine &What) {
  if (!(TotalBytes + Delta <= MaxTotalBytes))
    return makeError(What + " would make the memory blocks add up to " +
                     llvm::Twine(fmt::format("{:.4g}", TotalBytes + Delta)) +
                     " bytes, more than ddscript represents (2^62 bytes)");
  TotalBytes += Delta;
  return llvm::Error::success();
}

BlockId MemoryModel::appendBlock() {
  BlockId B = static_cast<BlockId>(Size.size());
  PoolOf.push_back(0);
  Addr.push_back(0);
  Stream.push_back(trace::NoValue);
  Size.push_back(0);
  MeasuredSize.push_back(0);
  AllocTs.push_back(BeforeWindow);
  FreeTs.push_back(AfterWindow);
  AllocRecord.push_back(NoRecord);
  FreeRecord.push_back(NoRecord);
  AllocAt.emplace_back();
  FreeAt.emplace_back();
  FreeAt.back().K = Placement::After;
  AllocOwner.push_back(NoTask);
  FreeOwner.push_back(NoTask);
  AllocIteration.push_back(-1);
  FreeIteration.push_back(-1);
  AllocPhase.push_back(Phase::Unknown);
  FreePhase.push_back(Phase::Unknown);
  AllocLayer.push_back(graph::NoLayer);
  Class.push_back(BlockClass::Persistent);
  AllocKey.push_back(0);
  FreeKey.push_back(0);
  Flags.push_back(0);
  return B;
}

int32_t MemoryModel::iterationAt(int64_t Ts) const {
  auto It = std::partition_point(
      IterationSpans.begin(), IterationSpans.end(),
      [&](const std::pair<int64_t, int64_t> &S) { return S.first <= Ts; });
  if (It == IterationSpans.begin())
    return -1;
  --It;
  return Ts < It->second ? static_cast<int32_t>(It - IterationSpans.begin())
                         : -1;
}

BlockClass memory::classifyLifetime(bool Crosses, Phase A, Phase F) {
  if (Crosses)
    return BlockClass::Persistent;
  if (A == Phase::Forward && F == Phase::Backward)
    return BlockClass::Activation;
  if (A == F)
    return BlockClass::Temporary;
  return BlockClass::CrossPhase;
}

void MemoryModel::classify(BlockId B) {
  // Alive across an iteration boundary (the begin or end of any iteration
  // strictly inside its lifetime)?
  bool Crosses = false;
  for (const auto &[Begin, End] : IterationSpans)
    for (int64_t Bound : {Begin, End})
      Crosses |= AllocTs[B] < Bound && Bound < FreeTs[B];
  Class[B] = classifyLifetime(Crosses, AllocPhase[B], FreePhase[B]);
}

std::vector<RecordSummary> memory::summarizeRecords(const trace::Trace &T) {
  std::vector<RecordSummary> Out;
  for (PoolRecords &PR : groupRecords(T)) {
    RecordSummary S;
    S.DeviceType = PR.Key.first;
    S.DeviceId = PR.Key.second;
    S.Records = PR.Recs.size();
    S.HasTotals = true;
    for (uint32_t R : PR.Recs)
      S.HasTotals &= T.Memory[R].TotalAllocated != trace::NoValue;
    int64_t Level = 0;
    for (uint32_t R : PR.Recs) {
      const trace::MemoryRecord &M = T.Memory[R];
      Level = S.HasTotals ? M.TotalAllocated : Level + M.Bytes;
      S.PeakAllocated = std::max(S.PeakAllocated, Level);
      if (M.TotalReserved != trace::NoValue)
        S.PeakReserved = std::max(S.PeakReserved, M.TotalReserved);
    }
    Out.push_back(S);
  }
  return Out;
}

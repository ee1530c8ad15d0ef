//===- WhatIf.cpp - Changing blocks: sizes, frees, offloads, new blocks ---===//
//
// The memory side of an optimization model. These change the block table
// only; the graph (and so the time a change takes, e.g. the copies of an
// offload) is the caller's to change. profile() then recomputes the curves.
//
//===----------------------------------------------------------------------===//

#include "memory/MemoryModel.h"

#include "support/Error.h"

#include <cmath>

using namespace dd;
using namespace dd::memory;

namespace {

llvm::Error checkTask(const graph::Graph &G, TaskId T) {
  if (T >= G.numTasks())
    return makeError("no task " + llvm::Twine(T) + " (the graph has " +
                     llvm::Twine(G.numTasks()) + ")");
  if (G.isRemoved(T))
    return makeError("task " + llvm::Twine(T) + " (" + G.name(T) +
                     ") was removed");
  return llvm::Error::success();
}

Placement at(TaskPoint P) {
  Placement At;
  At.K = P.AtEnd ? Placement::TaskEnd : Placement::TaskStart;
  At.Task = P.Task;
  return At;
}

} // namespace

static llvm::Error checkBlock(const MemoryModel &M, BlockId B) {
  if (B >= M.numBlocks())
    return makeError("no block " + llvm::Twine(B) + " (the model has " +
                     llvm::Twine(M.numBlocks()) + ")");
  return llvm::Error::success();
}

llvm::Error MemoryModel::scaleBlocks(llvm::ArrayRef<BlockId> Blocks,
                                     double Factor) {
  if (!std::isfinite(Factor) || Factor < 0)
    return makeError("a block size factor must be finite and at least 0");
  for (BlockId B : Blocks)
    if (auto E = checkBlock(*this, B))
      return E;
  for (BlockId B : Blocks)
    if (!(double(Size[B]) * Factor < double(graph::MaxTime)))
      return makeError("a block of " + llvm::Twine(Size[B]) +
                       " bytes scaled by " + std::to_string(Factor) +
                       " is larger than ddscript represents (2^62 bytes)");
  double Delta = 0;
  for (BlockId B : Blocks)
    Delta += double(Size[B]) * (Factor - 1);
  if (auto E = addToTotal(Delta, "scaling blocks"))
    return E;
  for (BlockId B : Blocks) {
    Size[B] = static_cast<int64_t>(std::llround(double(Size[B]) * Factor));
    Flags[B] |= BF_Scaled;
  }
  return llvm::Error::success();
}

llvm::Error MemoryModel::resizeBlocks(llvm::ArrayRef<BlockId> Blocks,
                                      int64_t Bytes) {
  if (Bytes < 0)
    return makeError("a block cannot have a negative size");
  for (BlockId B : Blocks)
    if (auto E = checkBlock(*this, B))
      return E;
  double Delta = 0;
  for (BlockId B : Blocks)
    Delta += double(Bytes) - double(Size[B]);
  if (auto E = addToTotal(Delta, "resizing blocks"))
    return E;
  for (BlockId B : Blocks) {
    Size[B] = Bytes;
    Flags[B] |= BF_Scaled;
  }
  return llvm::Error::success();
}

llvm::Error MemoryModel::moveFree(const graph::Graph &G, BlockId B,
                                  TaskPoint At) {
  if (auto E = checkBlock(*this, B))
    return E;
  if (auto E = checkTask(G, At.Task))
    return E;
  FreeAt[B] = at(At);
  FreeKey[B] = WhatIfFreeKey;
  Flags[B] |= BF_FreeMoved;
  return llvm::Error::success();
}

llvm::Error MemoryModel::offload(const graph::Graph &G, BlockId B,
                                 TaskPoint Out, TaskPoint In) {
  if (auto E = checkBlock(*this, B))
    return E;
  if (auto E = checkTask(G, Out.Task))
    return E;
  if (auto E = checkTask(G, In.Task))
    return E;
  Offloads.push_back({B, at(Out), at(In)});
  Flags[B] |= BF_Offloaded;
  return llvm::Error::success();
}

llvm::Expected<BlockId> MemoryModel::addBlock(const graph::Graph &G, PoolId P,
                                              int64_t Bytes, TaskPoint Alloc,
                                              std::optional<TaskPoint> Free) {
  if (P >= Pools.size())
    return makeError("no memory pool " + llvm::Twine(P));
  if (Bytes < 0)
    return makeError("a block cannot have a negative size");
  if (auto E = checkTask(G, Alloc.Task))
    return E;
  if (Free)
    if (auto E = checkTask(G, Free->Task))
      return E;
  if (auto E = addToTotal(double(Bytes),
                          "a block of " + llvm::Twine(Bytes) + " bytes"))
    return E;
  BlockId B = appendBlock();
  PoolOf[B] = P;
  Size[B] = Bytes;
  AllocAt[B] = at(Alloc);
  AllocKey[B] = WhatIfAllocKey;
  AllocOwner[B] = Alloc.Task;
  AllocPhase[B] = G.PhaseOf[Alloc.Task];
  AllocLayer[B] = G.LayerOf[Alloc.Task];
  AllocIteration[B] = G.IterationOf[Alloc.Task];
  if (Free) {
    FreeAt[B] = at(*Free);
    FreeKey[B] = WhatIfFreeKey;
    FreeOwner[B] = Free->Task;
    FreePhase[B] = G.PhaseOf[Free->Task];
    FreeIteration[B] = G.IterationOf[Free->Task];
  }
  Class[B] = classifyLifetime(!Free || AllocIteration[B] != FreeIteration[B],
                              AllocPhase[B], FreePhase[B]);
  Flags[B] |= BF_Added;
  return B;
}

void MemoryModel::reset() {
  size_t N = TracedBlocks;
  for (auto *V : {&Size, &MeasuredSize, &AllocTs, &FreeTs, &AllocKey, &FreeKey})
    V->resize(N);
  PoolOf.resize(N);
  Addr.resize(N);
  Stream.resize(N);
  AllocRecord.resize(N);
  FreeRecord.resize(N);
  AllocAt.resize(N);
  AllocOwner.resize(N);
  FreeOwner.resize(N);
  AllocIteration.resize(N);
  FreeIteration.resize(N);
  AllocPhase.resize(N);
  FreePhase.resize(N);
  AllocLayer.resize(N);
  Class.resize(N);
  Flags.assign(N, 0);
  Size = MeasuredSize;
  TotalBytes = TracedTotalBytes;
  FreeAt = TracedFreeAt;
  FreeKey = TracedFreeKey;
  Offloads.clear();
}

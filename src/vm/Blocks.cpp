//===- Blocks.cpp - Memory blocks as .dd values ---------------------------===//
//
// A block is an id into the run's memory model (memory::MemoryModel), a
// block set a bit vector over those ids. This file gives them their members
// (block.size, set.bytes, t.allocs, ...), their methods, their printed form
// and the columns "select block where ..." tests.
//
//===----------------------------------------------------------------------===//

#include "vm/FilterColumns.h"
#include "vm/MemberCases.h"
#include "vm/VMImpl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::vm;
using bc::MemberId;
using graph::NoTask;
using graph::TaskId;
using memory::BlockId;
using memory::MemoryModel;

memory::MemoryModel &Interpreter::mem(const char *What) {
  if (!Env.Mem)
    fail(std::string(What) +
         " needs the trace's memory records: " + Env.NoMemoryReason);
  return *Env.Mem;
}

size_t Interpreter::numBlocks() const {
  return Env.Mem ? Env.Mem->numBlocks() : 0;
}

llvm::BitVector Interpreter::toBlocks(const Value &V, const char *Role) {
  llvm::BitVector B = noBlocks();
  switch (V.kind()) {
  case VKind::BlockSet: {
    llvm::BitVector S = V.as<BlockSetObj>()->Bits;
    S.resize(numBlocks());
    return S;
  }
  case VKind::Block:
    if (V.asId() >= numBlocks())
      fail("a block was added inside a try block that has ended: it is gone");
    B.set(V.asId());
    return B;
  case VKind::None:
    return B;
  case VKind::List:
    for (const Value *X : leaves(V))
      B |= toBlocks(*X, Role);
    return B;
  default:
    fail(std::string(Role) + " takes memory blocks, not " + describeValue(V) +
         (V.is(VKind::Set) || V.is(VKind::Task)
              ? " (the blocks a task allocates are t.allocs)"
              : ""));
  }
}

namespace {

/// Where a block's traced allocation lies, for ordering: blocks allocated
/// before the trace first, added blocks last.
int64_t orderKey(const MemoryModel &M, BlockId B) {
  if (M.Flags[B] & MemoryModel::BF_Added)
    return INT64_MAX;
  return M.AllocTs[B];
}

/// A trace time as a duration from the graph's origin; none outside the
/// window (allocated before it, freed after it).
Value timeValue(const graph::Graph &G, int64_t Ts) {
  if (Ts == memory::BeforeWindow || Ts == memory::AfterWindow)
    return Value::none();
  return Value::number(static_cast<double>(Ts - G.Origin), Dim::duration());
}

int32_t deviceOf(const MemoryModel &M, BlockId B) {
  const memory::Pool &P = M.Pools[M.PoolOf[B]];
  return P.isDevice() ? P.DeviceId : -1;
}

} // namespace

std::vector<BlockId> Interpreter::blocksInOrder(const llvm::BitVector &Bits) {
  std::vector<BlockId> Out;
  if (!Env.Mem)
    return Out;
  const MemoryModel &M = *Env.Mem;
  for (int B = Bits.find_first(); B >= 0; B = Bits.find_next(B))
    if (static_cast<size_t>(B) < M.numBlocks())
      Out.push_back(static_cast<BlockId>(B));
  std::stable_sort(Out.begin(), Out.end(), [&](BlockId A, BlockId B) {
    return orderKey(M, A) < orderKey(M, B);
  });
  return Out;
}

std::string Interpreter::showBlock(BlockId B) {
  const MemoryModel &M = mem("a block");
  const graph::Graph &G = graph();
  std::string Where;
  if (M.AllocOwner[B] != NoTask)
    Where = fmt::format(", {} {}", graph::phaseName(M.AllocPhase[B]),
                        G.name(M.AllocOwner[B]));
  else if (M.Flags[B] & MemoryModel::BF_Added)
    Where = ", added";
  else
    Where = ", before the trace";
  return fmt::format(
      "block #{} {} {}{}", B,
      formatQuantity(static_cast<double>(M.Size[B]), Dim::bytes()),
      memory::blockClassName(M.Class[B]), Where);
}

Value Interpreter::blockMember(const Value &Obj, MemberId Id) {
  const graph::Graph &G = graph();
  if (Obj.is(VKind::Block))
    toBlocks(Obj, "a block"); // one a try block added is gone
  auto Size = [](int64_t B) {
    return Value::number(static_cast<double>(B), Dim::bytes());
  };
  auto TaskOrNone = [](TaskId T) {
    return T == NoTask ? Value::none() : Value::id(VKind::Task, T);
  };
  // Navigation from tasks: the blocks they (or the calls they contain)
  // allocated or freed, as the trace recorded it.
  if (Id == MemberId::Task_allocs || Id == MemberId::Task_frees ||
      Id == MemberId::Set_allocs || Id == MemberId::Set_frees) {
    llvm::BitVector Out = noBlocks();
    if (!Env.Mem)
      return blockSet(std::move(Out));
    const MemoryModel &M = *Env.Mem;
    TaskSet Tasks = toSet(Obj, bc::memberInfo(Id).Name);
    bool Allocs = Id == MemberId::Task_allocs || Id == MemberId::Set_allocs;
    const std::vector<TaskId> &Owner = Allocs ? M.AllocOwner : M.FreeOwner;
    step(M.numBlocks() / 4096);
    for (BlockId B = 0; B < M.numBlocks(); ++B)
      for (TaskId X = Owner[B]; X != NoTask && X < G.numTasks();
           X = G.Parent[X])
        if (Tasks.test(X)) {
          Out.set(B);
          break;
        }
    return blockSet(std::move(Out));
  }

  // Block sets: a trace without memory records has only empty ones.
  if (bc::memberInfo(Id).Owner == bc::TypeKind::BlockSet) {
    std::vector<BlockId> L = blocksInOrder(toBlocks(Obj, "a block set"));
    static const MemoryModel None;
    const MemoryModel &M = Env.Mem ? *Env.Mem : None;
    {
      switch (Id) {
      case MemberId::BlockSet_count:
        return Value::number(static_cast<double>(L.size()));
      case MemberId::BlockSet_first:
      case MemberId::BlockSet_last:
        if (L.empty())
          return Value::none();
        return Value::id(VKind::Block,
                         Id == MemberId::BlockSet_first ? L.front() : L.back());
      case MemberId::BlockSet_bytes: {
        int64_t Sum = 0;
        for (BlockId B : L)
          Sum += M.Size[B];
        return Size(Sum);
      }
      case MemberId::BlockSet_blocks: {
        std::vector<Value> Items;
        for (BlockId B : L)
          Items.push_back(Value::id(VKind::Block, B));
        return Value::list(std::move(Items));
      }
      case MemberId::BlockSet_layers: {
        std::vector<Value> Items;
        llvm::BitVector Seen(G.Layers.size());
        for (BlockId B : L)
          if (M.AllocLayer[B] != graph::NoLayer &&
              !Seen.test(M.AllocLayer[B])) {
            Seen.set(M.AllocLayer[B]);
            Items.push_back(Value::id(VKind::Layer, M.AllocLayer[B]));
          }
        return Value::list(std::move(Items));
      }
      case MemberId::BlockSet_alloc_tasks:
      case MemberId::BlockSet_free_tasks: {
        std::vector<TaskId> Out;
        for (BlockId B : L) {
          TaskId T = Id == MemberId::BlockSet_alloc_tasks ? M.AllocOwner[B]
                                                          : M.FreeOwner[B];
          if (T != NoTask && T < G.numTasks() && !G.isRemoved(T))
            Out.push_back(T);
        }
        return taskSet(TaskSet::fromIds(std::move(Out)));
      }
      // Methods are bound before blockMember; other owners' members are
      // not a block set's.
      case MemberId::BlockSet_filter:
      case MemberId::BlockSet_sort_by:
      case MemberId::BlockSet_in_iteration:
#define DD_MEMBER(Owner, Name, Result, Flags)                                  \
  DD_NOT_BLOCKSET_##Owner(Owner##_##Name)
#include "bytecode/Members.def"
      case MemberId::NumMembers:
        break;
      }
    }
  }

  const MemoryModel &M = mem("a block's members");
  BlockId B = Obj.asId();
  switch (Id) {
  case MemberId::Block_size:
    return Size(M.Size[B]);
  case MemberId::Block_measured_size:
    return Size(M.MeasuredSize[B]);
  case MemberId::Block_class:
    return Value::string(memory::blockClassName(M.Class[B]));
  case MemberId::Block_phase:
    return Value::string(graph::phaseName(M.AllocPhase[B]));
  case MemberId::Block_free_phase:
    return Value::string(graph::phaseName(M.FreePhase[B]));
  case MemberId::Block_layer:
    return M.AllocLayer[B] == graph::NoLayer
               ? Value::none()
               : Value::id(VKind::Layer, M.AllocLayer[B]);
  case MemberId::Block_iteration: {
    int32_t It = M.AllocIteration[B];
    return It < 0 ? Value::none()
                  : Value::number(static_cast<double>(G.Iterations[It].Number));
  }
  case MemberId::Block_device:
    return Value::number(deviceOf(M, B));
  case MemberId::Block_pool:
    return Value::string(M.Pools[M.PoolOf[B]].label());
  case MemberId::Block_alloc_time:
    return (M.Flags[B] & MemoryModel::BF_Added) ? Value::none()
                                                : timeValue(G, M.AllocTs[B]);
  case MemberId::Block_free_time:
    return (M.Flags[B] & MemoryModel::BF_Added) ? Value::none()
                                                : timeValue(G, M.FreeTs[B]);
  case MemberId::Block_lifetime: {
    Value A = blockMember(Obj, MemberId::Block_alloc_time);
    Value F = blockMember(Obj, MemberId::Block_free_time);
    if (A.is(VKind::None) || F.is(VKind::None))
      return Value::none();
    return Value::number(F.asNumber() - A.asNumber(), Dim::duration());
  }
  case MemberId::Block_alloc_task:
    return TaskOrNone(M.AllocOwner[B]);
  case MemberId::Block_free_task:
    return TaskOrNone(M.FreeOwner[B]);
  case MemberId::Block_added:
    return Value::boolean(M.Flags[B] & MemoryModel::BF_Added);
  case MemberId::Block_id:
    return Value::number(B);
  case MemberId::Block_address:
    return M.Addr[B] ? Value::number(static_cast<double>(M.Addr[B]))
                     : Value::none();
  case MemberId::Block_stream:
    return M.Stream[B] == trace::NoValue
               ? Value::none()
               : Value::number(static_cast<double>(M.Stream[B]));
    // The other owners' members: the blocks tasks allocate and free and the
    // block sets' are answered above; the rest are not a block's.
#define DD_MEMBER(Owner, Name, Result, Flags)                                  \
  DD_NOT_BLOCK_##Owner(Owner##_##Name)
#include "bytecode/Members.def"
  case MemberId::NumMembers:
    break;
  }
  // Every row of Members.def has its case above, without a default: a new
  // block member without one does not build (-Wswitch).
  fail(std::string("internal error: block member '") + bc::memberInfo(Id).Name +
       "' reached the block's switch");
}

Value Interpreter::blockMethod(const BoundObj &Bo, std::vector<Value> &Args) {
  const graph::Graph &G = graph();
  auto Want = [&](size_t N, const char *Usage) {
    if (Args.size() != N)
      fail(std::string("usage: ") + Usage);
  };
  std::vector<BlockId> L = blocksInOrder(toBlocks(Bo.Self, "a block set"));
  switch (Bo.Method) {
  case MemberId::BlockSet_filter: {
    Want(1, "B.filter(b -> condition)");
    llvm::BitVector Out = noBlocks();
    for (BlockId B : L)
      if (truthy(call(Args[0], {Value::id(VKind::Block, B)})))
        Out.set(B);
    return blockSet(std::move(Out));
  }
  case MemberId::BlockSet_sort_by: {
    Want(1, "B.sort_by(b -> key)");
    std::vector<std::pair<Value, BlockId>> Keyed;
    for (BlockId B : L)
      Keyed.push_back({call(Args[0], {Value::id(VKind::Block, B)}), B});
    std::stable_sort(Keyed.begin(), Keyed.end(),
                     [&](const auto &X, const auto &Y) {
                       return less(X.first, Y.first, "sort_by");
                     });
    std::vector<Value> Out;
    for (auto &[K, B] : Keyed)
      Out.push_back(Value::id(VKind::Block, B));
    return Value::list(std::move(Out));
  }
  case MemberId::BlockSet_in_iteration: {
    Want(1, "B.in_iteration(N)");
    double N = toNumber(Args[0], {}, "the iteration");
    const MemoryModel &M = *Env.Mem;
    llvm::BitVector Out = noBlocks();
    for (BlockId B : L) {
      int32_t It = M.AllocIteration[B];
      if (It >= 0 && static_cast<double>(G.Iterations[It].Number) == N)
        Out.set(B);
    }
    return blockSet(std::move(Out));
  }
  // A block set's other members are not methods, and only a block set's
  // methods are bound here; a new method row does not build until it has
  // its case above (-Wswitch).
  case MemberId::BlockSet_count:
  case MemberId::BlockSet_first:
  case MemberId::BlockSet_last:
  case MemberId::BlockSet_bytes:
  case MemberId::BlockSet_blocks:
  case MemberId::BlockSet_layers:
  case MemberId::BlockSet_alloc_tasks:
  case MemberId::BlockSet_free_tasks:
#define DD_MEMBER(Owner, Name, Result, Flags)                                  \
  DD_NOT_BLOCKSET_##Owner(Owner##_##Name)
#include "bytecode/Members.def"
  case MemberId::NumMembers:
    break;
  }
  fail(std::string("'") + bc::memberInfo(Bo.Method).Name + "' is not a method");
}

filter::Node filter::blockColumn(Interpreter &I, MemberId Id) {
  using filter::Col;
  const MemoryModel &M = I.mem("select block");
  const graph::Graph &G = I.graph();
  size_t N = M.numBlocks();
  Node C;
  const double NaN = std::nan("");
  auto Nums = [&](Dim D, auto Get) {
    C.Type = Col::Num;
    C.Unit = D;
    C.Num.resize(N);
    for (BlockId B = 0; B < N; ++B)
      C.Num[B] = Get(B);
  };
  auto IdsOf = [&](Col Ty, auto Get) {
    C.Type = Ty;
    C.Ids.resize(N);
    for (BlockId B = 0; B < N; ++B)
      C.Ids[B] = Get(B);
  };
  auto Time = [&](int64_t Ts, BlockId B) {
    if (Ts == memory::BeforeWindow || Ts == memory::AfterWindow ||
        (M.Flags[B] & MemoryModel::BF_Added))
      return NaN;
    return static_cast<double>(Ts - G.Origin);
  };
  auto Task = [&](TaskId T) { return T == NoTask ? NoId : T; };
  switch (Id) {
  case MemberId::Block_size:
    Nums(Dim::bytes(), [&](BlockId B) { return double(M.Size[B]); });
    return C;
  case MemberId::Block_measured_size:
    Nums(Dim::bytes(), [&](BlockId B) { return double(M.MeasuredSize[B]); });
    return C;
  case MemberId::Block_class: {
    uint32_t Names[memory::NumBlockClasses];
    for (unsigned K = 0; K < memory::NumBlockClasses; ++K)
      Names[K] = I.strings().intern(
          memory::blockClassName(static_cast<memory::BlockClass>(K)));
    IdsOf(Col::Str,
          [&](BlockId B) { return Names[static_cast<unsigned>(M.Class[B])]; });
    return C;
  }
  case MemberId::Block_phase:
  case MemberId::Block_free_phase: {
    const auto &Ph = Id == MemberId::Block_phase ? M.AllocPhase : M.FreePhase;
    IdsOf(Col::Phase, [&](BlockId B) { return static_cast<uint32_t>(Ph[B]); });
    return C;
  }
  case MemberId::Block_layer:
    IdsOf(Col::Layer, [&](BlockId B) { return M.AllocLayer[B]; });
    return C;
  case MemberId::Block_iteration:
    Nums({}, [&](BlockId B) {
      int32_t It = M.AllocIteration[B];
      return It < 0 ? NaN : static_cast<double>(G.Iterations[It].Number);
    });
    return C;
  case MemberId::Block_device:
    Nums({}, [&](BlockId B) { return double(deviceOf(M, B)); });
    return C;
  case MemberId::Block_pool: {
    std::vector<uint32_t> Names;
    for (const memory::Pool &P : M.Pools)
      Names.push_back(I.strings().intern(P.label()));
    IdsOf(Col::Str, [&](BlockId B) { return Names[M.PoolOf[B]]; });
    return C;
  }
  case MemberId::Block_alloc_time:
    Nums(Dim::duration(), [&](BlockId B) { return Time(M.AllocTs[B], B); });
    return C;
  case MemberId::Block_free_time:
    Nums(Dim::duration(), [&](BlockId B) { return Time(M.FreeTs[B], B); });
    return C;
  case MemberId::Block_lifetime:
    Nums(Dim::duration(), [&](BlockId B) {
      return Time(M.FreeTs[B], B) - Time(M.AllocTs[B], B);
    });
    return C;
  case MemberId::Block_alloc_task:
    IdsOf(Col::Task, [&](BlockId B) { return Task(M.AllocOwner[B]); });
    return C;
  case MemberId::Block_free_task:
    IdsOf(Col::Task, [&](BlockId B) { return Task(M.FreeOwner[B]); });
    return C;
  case MemberId::Block_added:
    IdsOf(Col::Bool, [&](BlockId B) {
      return (M.Flags[B] & MemoryModel::BF_Added) ? 1u : 0u;
    });
    return C;
  case MemberId::Block_id:
    Nums({}, [&](BlockId B) { return double(B); });
    return C;
  case MemberId::Block_address:
    Nums({}, [&](BlockId B) { return M.Addr[B] ? double(M.Addr[B]) : NaN; });
    return C;
  case MemberId::Block_stream:
    Nums({}, [&](BlockId B) {
      return M.Stream[B] == trace::NoValue ? NaN : double(M.Stream[B]);
    });
    return C;
    // Only a block's properties are columns (sema allows no other in a block
    // predicate); every other row is listed, so a new block property does
    // not build until it has its column above (-Wswitch).
#define DD_MEMBER(Owner, Name, Result, Flags)                                  \
  DD_NOT_BLOCK_##Owner(Owner##_##Name)
#include "bytecode/Members.def"
  case MemberId::NumMembers:
    break;
  }
  fail("internal error: block property not usable in a predicate");
}

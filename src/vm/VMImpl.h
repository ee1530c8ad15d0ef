//===- VMImpl.h - The interpreter's state (private) -------------*- C++ -*-===//
#ifndef DD_VM_VMIMPL_H
#define DD_VM_VMIMPL_H

#include "vm/VM.h"
#include "vm/Value.h"

#include "graph/ModelBlocks.h"
#include "memory/MemoryModel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dd::vm {

/// A run-time error; the interpreter adds the location and the stack.
struct VMError {
  std::string Message;
  /// Where the error was made, when that is not the running instruction
  /// (a cycle that an insert made, found when the graph is next used).
  std::optional<Diagnostic> At;
};

[[noreturn]] inline void fail(std::string Msg) {
  throw VMError{std::move(Msg), std::nullopt};
}

class Interpreter {
public:
  Interpreter(const bc::Program &P, RunEnv &Env, const RunOptions &O,
              RunResult &R);
  void runAll();

  // Used by the operation files. graph() reads; a change goes through
  // mutableGraph(), or durationsGraph() for one that changes only tasks'
  // durations, gaps and flags, so that a try block keeps what it must put
  // back (see TrySnapshot).
  const graph::Graph &graph() const { return *Env.G; }
  graph::Graph &mutableGraph();
  graph::Graph &durationsGraph();
  /// The graph's string pool, to intern names in: interning adds a string
  /// and changes nothing the graph means, so no try keeps a copy for it.
  StringPool &strings() { return Env.G->Strings; }
  const RunEnv &env() const { return Env; }
  void ensureFinalized();
  Value call(const Value &Callee, std::vector<Value> Args);
  void step(uint64_t N = 1);
  std::string show(const Value &V);
  /// show for anything but a list.
  std::string showScalar(const Value &V);

  // Conversions with clear errors.
  TaskSet toSet(const Value &V, const char *Role);
  /// What a list holds, lists inside it flattened, in order.
  std::vector<const Value *> leaves(const Value &List);
  graph::TaskId toTask(const Value &V, const char *Role);
  double toNumber(const Value &V, Dim Unit, const char *Role);
  /// Lists and strings a model makes count against the step budget (N
  /// items made or copied, N/8 steps; N bytes, N/64) and have a size
  /// limit, so that neither a quadratic loop nor a doubling one runs away.
  /// \p Items (\p Bytes) is the size of the result, \p Made what was
  /// written to make it: all of it for a copy, the tail for an append.
  static constexpr size_t MaxListItems = 10'000'000;
  static constexpr size_t MaxStringBytes = size_t(64) << 20;
  /// A range's ends (`a..b`, range(a, b)) are integers a number holds
  /// exactly, so that its size fits in 64 bits and counting never stalls.
  static constexpr double MaxRangeEnd = 9007199254740992.0; // 2^53
  void chargeList(size_t Items) { chargeList(Items, Items); }
  void chargeList(size_t Items, size_t Made);
  void chargeString(size_t Bytes) { chargeString(Bytes, Bytes); }
  void chargeString(size_t Bytes, size_t Made);
  /// A duration or size to store in the graph or the block table: a
  /// number of \p Unit, 0 <= V < graph::MaxTime, rounded; fails otherwise.
  int64_t toAmount(const Value &V, Dim Unit, const char *Role);
  std::string toStr(const Value &V, const char *Role);
  bool truthy(const Value &V);

  // Values (Ops.cpp).
  /// A op B. A caller that hands over the only reference to a string or
  /// list A (std::move) lets + append to it in place (see opAdd).
  Value arith(bc::Opcode Op, Value A, const Value &B);
  bool equal(const Value &A, const Value &B);
  /// equal for a pair that is not two lists.
  bool equalScalar(const Value &A, const Value &B);
  bool less(const Value &A, const Value &B, const char *Op);
  bool matches(const Value &S, const Value &Pattern);
  bool contains(const Value &Coll, const Value &X);
  Value index(const Value &Coll, const Value &Key);
  Value slice(const Value &Coll, const Value &Lo, const Value &Hi);
  const std::regex &regexOf(const Value &Pattern);

  // Members and builtins (Members.cpp, Builtins.cpp).
  /// Member \p NameId (bc::memberNameId) of \p Obj.
  Value member(const Value &Obj, uint16_t NameId);
  /// A member of a device value: \p Id 0 the traced GPU, else entry Id - 1
  /// of the GPU catalogue.
  Value deviceMember(uint32_t Id, bc::MemberId M);
  /// The model's repeated blocks of \p MinLayers layers or more, found at
  /// their first use in the run (graph::findModelBlocks), as a list of
  /// model block values; a value's id is the search's slot << 16 and the
  /// block's index.
  Value modelBlocks(double MinLayers);
  /// A member of the model block value whose id is \p Id.
  Value modelBlockMember(uint32_t Id, bc::MemberId M);
  std::vector<graph::ModelBlocks> BlockSearches;
  std::map<unsigned, uint32_t> BlockSearchOf;
  Value callMethod(const BoundObj &B, std::vector<Value> &Args);
  Value builtin(bc::BuiltinId Id, std::vector<Value> &Args);
  Value taskSet(TaskSet S) { return Value::set(std::move(S)); }
  Value taskSet(llvm::BitVector Bits) {
    return taskSet(TaskSet(std::move(Bits)));
  }
  /// The live tasks of \p S by order key (traced start; ties by id).
  std::vector<graph::TaskId> inOrder(const TaskSet &S);

  // Graph primitives (Filter.cpp, GraphOps.cpp).
  Value select(const bc::FilterProgram &F, const Value *Captures);
  void scale(const Value &Target, const Value &Amount, unsigned Mode);
  void remove(const Value &Target);
  Value insert(const bc::InsertDesc &D, Value *Clauses);
  void depend(const Value &Waiter, const Value &On);
  void schedule(const Value &Res, const Value *Priority, unsigned Mode);
  Value channel(const std::string &Name);
  Value workerThread(const std::string &Name);
  void finishSchedules();

  // Memory blocks (Blocks.cpp: values; MemoryOps.cpp: statements).
  bool hasMemory() const { return Env.Mem != nullptr; }
  /// The memory model; fails, naming \p What, when the trace has none.
  memory::MemoryModel &mem(const char *What);
  const memory::MemoryModel *memOrNull() const { return Env.Mem; }
  size_t numBlocks() const;
  llvm::BitVector noBlocks() const { return llvm::BitVector(numBlocks()); }
  Value blockSet(llvm::BitVector Bits) {
    return Value::object(new BlockSetObj(std::move(Bits)));
  }
  llvm::BitVector toBlocks(const Value &V, const char *Role);
  /// Blocks of \p Bits by traced allocation time (added blocks last).
  std::vector<memory::BlockId> blocksInOrder(const llvm::BitVector &Bits);
  Value blockMember(const Value &Obj, bc::MemberId Id);
  Value blockMethod(const BoundObj &B, std::vector<Value> &Args);
  std::string showBlock(memory::BlockId B);
  Value selectBlocks(const bc::FilterProgram &F, const Value *Captures);
  void resize(const Value &Target, const Value &Amount, bool To);
  void freeBlocks(const Value &Target, const Value &At, bool AtEnd,
                  const Value *Until);
  /// Clauses of offload in MemOperand order; null where not given.
  struct OffloadArgs {
    const Value *After, *On, *Bandwidth, *PrefetchAfter, *PrefetchBefore,
        *PrefetchOn;
  };
  void offload(const Value &Target, const OffloadArgs &A);
  Value alloc(const Value &Size, const Value &At, unsigned Bits,
              const Value *Until, const Value *On);
  Value peak(bool Baseline);

private:
  const bc::Program &P;
  RunEnv &Env;
  const RunOptions &Opts;
  RunResult &Result;

  struct Frame {
    uint32_t Fn;
    uint32_t Pc;
    uint32_t Base; ///< stack index of local 0
    ClosureObj *Closure;
  };
  std::vector<Value> Stack;
  std::vector<Frame> Frames;
  std::vector<Value> Globals;
  std::vector<std::vector<Value>> Constants; ///< per function, decoded
  std::vector<Value> ParamOverrides;         ///< per param; None if unset
  llvm::BitVector EverSelected;
  std::vector<int64_t> StartDur; ///< durations before the model ran
  struct PendingSchedule {
    graph::ResourceId Res;
    Value Priority;
    Diagnostic At; ///< the statement, for errors of its priorities
  };
  std::vector<PendingSchedule> Schedules;
  /// The last statement that changed the graph's structure since it was
  /// last finalized, with its calling frames: a cycle it made is found
  /// later, and reported there.
  Diagnostic LastStructural;
  bool StructuralPending = false;
  void markStructural();
  /// The depends since the last finalize whose new edges were not checked
  /// for a cycle when made (they go against the last finalize's order, or
  /// reach tasks added since), each with the graph's edge count after it:
  /// the next finalize checks them all at once, and a cycle it finds is
  /// reported at the first of them that closes one (cycleCulprit).
  struct DeferredDepend {
    size_t EdgeEnd;
    Diagnostic At;
  };
  std::vector<DeferredDepend> Deferred;
  std::optional<Diagnostic> cycleCulprit() const;

  /// The replay of the graph as the model has left it so far (no
  /// schedules), for containers' durations: simulated on first use after
  /// each change (GraphVersion counts them).
  uint64_t GraphVersion = 0;
  uint64_t ReplayVersion = ~uint64_t(0);
  std::optional<sim::SimResult> Replay;

  /// What each open try block will put back when it ends: a copy of the
  /// memory blocks and what the model's schedules and counts were, and of
  /// the graph what the block changes: nothing until it changes something;
  /// its durations, gaps and flags before the first change that touches
  /// only those (shrink, scale: a search's usual try); the whole graph
  /// before the first other change (remove, insert, depend, a channel).
  /// Only the innermost open block keeps anything: it puts the graph back
  /// as it found it before an outer one ends.
  struct TrySnapshot {
    std::optional<graph::Graph> G;
    std::vector<int64_t> Dur, Gap;
    std::vector<uint8_t> Flags;
    bool Times = false; ///< Dur, Gap and Flags kept, before any copy of G
    std::optional<memory::MemoryModel> Mem;
    ChangeStats Stats;
    sim::SchedulePolicy Policy;
    std::vector<PendingSchedule> Schedules;
    llvm::BitVector EverSelected;
    Diagnostic LastStructural;
    bool StructuralPending;
    std::vector<DeferredDepend> Deferred;
  };
  std::vector<TrySnapshot> Tries;

  /// Tasks by iteration (index into Graph::Iterations), layer and resource,
  /// ascending ids: built on first use and extended with the tasks added
  /// since (an insert sets a task's iteration, layer and resource when it
  /// adds it, and none changes later); dropped when a try puts the graph
  /// back, after which an id may name another task.
  struct TaskIndex {
    size_t Indexed = 0;
    std::vector<std::vector<graph::TaskId>> ByIteration, ByLayer, ByResource;
    /// Key (iteration index << 32) | layer.
    llvm::DenseMap<uint64_t, std::vector<graph::TaskId>> ByIterationLayer;
    /// An iteration's index by its number (ProfilerStep#N's N).
    std::map<double, uint32_t> IterationByNumber;
  };
  TaskIndex Index;
  /// CPU threads and channels by name (the first of a name, as
  /// Graph::findResource finds it), and how many worker threads and channels
  /// there are: worker_thread("w" + str(i)) in a loop was quadratic.
  /// Extended as resources are added; dropped when a try ends.
  struct ResourceNames {
    size_t Indexed = 0;
    llvm::StringMap<graph::ResourceId> Threads, Channels;
    int64_t Workers = 0, ChannelCount = 0;
  };
  ResourceNames Names;
  ResourceNames &resourceNames();

  /// Counts structural changes only (insert, remove, depend, a try's end):
  /// what FLOPs and bytes moved per task depend on; a shrink does not.
  uint64_t StructureVersion = 0;
  uint64_t FlopsVersion = ~uint64_t(0), MovedVersion = ~uint64_t(0);
  std::vector<double> Flops, Moved;

public:
  void graphChanged() { ++GraphVersion; }
  /// The index above, up to date (TaskIndex.cpp).
  const TaskIndex &taskIndex();
  /// Per task: an operator's FLOPs from its recorded shapes (Graph::Flops),
  /// and a GEMM kernel's share of its operator's (by measured time among
  /// the operator's GEMM kernels); NaN when unknown.
  const std::vector<double> &flopsColumn();
  /// Per task: bytes moved (graph::taskMovedBytes); NaN when unknown.
  const std::vector<double> &movedColumn();
  const sim::SimResult &currentReplay();
  /// A container's duration: its span in currentReplay() (its measured
  /// time on an unchanged graph); 0 when nothing of it is left.
  int64_t containerDuration(graph::TaskId T);

private:
  void decodeConstants();
  void applySettings();
  Value execute(size_t StopDepth);

public:
  // One handler per opcode, generated from Opcodes.def; the dispatch table
  // in Interpreter.cpp is generated from the same list.
  struct Cursor {
    const bc::Function &F;
    uint32_t Pc; ///< the instruction's first byte
    unsigned u16(unsigned Operand) const {
      return static_cast<unsigned>(bc::readOperand(F, Pc, Operand));
    }
    int64_t operand(unsigned Operand) const {
      return bc::readOperand(F, Pc, Operand);
    }
  };
#define DD_OPCODE(Name, Operands, Effect) void op##Name(const Cursor &C);
#include "bytecode/Opcodes.def"

private:
  /// See opAdd.
  Value *storeTargetHolding(const Cursor &C, const Obj *O);
  /// Set by Return when the frame that execute() waits for has returned.
  bool Returned = false;
  size_t ReturnDepth = 0;
  Value pop() {
    Value V = std::move(Stack.back());
    Stack.pop_back();
    return V;
  }
  void push(Value V) { Stack.push_back(std::move(V)); }
  void jumpBy(const Cursor &C, int64_t Offset);
  void pushFrame(uint32_t Fn, uint32_t Argc, ClosureObj *C);
  void finishStats();
  Diagnostic errorAt(const std::string &Msg);
};

} // namespace dd::vm

#endif

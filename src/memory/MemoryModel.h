//===- MemoryModel.h - Memory blocks on the replayed timeline ---*- C++ -*-===//
//
// The allocations of a profiled run as a table of blocks, tied to the graph's
// tasks so that the allocated-bytes curve and its peak can be recomputed from
// any simulation of the graph, and changed by what-ifs (smaller blocks, an
// earlier free, a block offloaded to the host, a new block) without touching
// the graph. See docs/memory.md for the model.
//
// Input is the trace's MemoryRecord table (Kineto [memory] events of either
// schema, or CUPTI memory records): Bytes > 0 allocates, Bytes < 0 frees.
// Records are grouped into pools, one per (device type, device id). Within a
// pool they are ordered by time (ties that contradict the records' own
// Total Allocated are reordered to follow it), and each free is paired with
// the most recent live allocation at its address (LIFO), or of its size when
// the records carry no address.
//
// Blocks are struct-of-arrays addressed by 32-bit BlockId. Each allocation
// and free inside the replayed window is placed relative to a CPU leaf of its
// thread (Placement); everything before the window is the starting level.
//
//===----------------------------------------------------------------------===//
#ifndef DD_MEMORY_MEMORYMODEL_H
#define DD_MEMORY_MEMORYMODEL_H

#include "graph/Graph.h"
#include "trace/Trace.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dd::memory {

using graph::LayerId;
using graph::NoTask;
using graph::Phase;
using graph::TaskId;

using BlockId = uint32_t;
using PoolId = uint32_t;
constexpr BlockId NoBlock = ~0u;
constexpr uint32_t NoRecord = ~0u;
constexpr uint32_t NoEvent = ~0u;
/// Times of blocks live before the window opens / still live when it ends
/// (distinct from graph::NoTime, INT64_MIN, which marks a removed task).
constexpr int64_t BeforeWindow = INT64_MIN + 1;
static_assert(BeforeWindow != graph::NoTime);
constexpr int64_t AfterWindow = INT64_MAX;
/// Order keys of what-if events among events at the same time: frees go
/// before traced events, allocations after them.
constexpr int64_t WhatIfFreeKey = -1;
constexpr int64_t WhatIfAllocKey = INT64_MAX;

/// How long a block lives, relative to the iterations and their phases.
enum class BlockClass : uint8_t {
  Persistent, ///< alive across an iteration boundary: weights, gradients,
              ///< optimizer state, anything allocated before the trace
  Activation, ///< allocated in forward, freed in backward of one iteration
  Temporary,  ///< freed in the phase that allocated it: workspaces, temps
  CrossPhase, ///< other lifetimes inside one iteration (e.g. backward to
              ///< optimizer, data loading to forward)
};
constexpr unsigned NumBlockClasses = 4;
const char *blockClassName(BlockClass C);
/// The class of a lifetime: Persistent if it crosses an iteration boundary,
/// else by the phases that allocated and freed it.
BlockClass classifyLifetime(bool CrossesIteration, graph::Phase Alloc,
                            graph::Phase Free);

/// Where an allocation or free happens on the replayed timeline, as a
/// function of the tasks' simulated times.
struct Placement {
  enum Kind : uint8_t {
    Before,     ///< before the window: part of the starting level
    After,      ///< after the window: the block outlives it
    InTask,     ///< Task's start + Offset, clamped to its duration
    AfterTask,  ///< Task's end + Offset, clamped to the start of Next
    BeforeTask, ///< Task's start - Offset (no earlier leaf on the thread)
    Fixed,      ///< Offset ns from the origin (no leaf on its thread)
    TaskStart,  ///< a what-if: the start of Task
    TaskEnd,    ///< a what-if: the end of Task
  };
  Kind K = Before;
  TaskId Task = NoTask;
  TaskId Next = NoTask; ///< AfterTask: the next leaf on the thread
  int64_t Offset = 0;
};

/// The simulated (or measured) start and end of every task, in ns from the
/// graph's origin; NoTime for removed tasks. A SimResult's Start and End, or
/// the measured times on the same axis.
struct TaskTimes {
  llvm::ArrayRef<int64_t> Start, End;
};

/// A point of a task, for what-ifs.
struct TaskPoint {
  TaskId Task = NoTask;
  bool AtEnd = false;
  static TaskPoint start(TaskId T) { return {T, false}; }
  static TaskPoint end(TaskId T) { return {T, true}; }
};

/// "GPU 1", "CPU": a pool's name for reports.
std::string poolLabel(int32_t DeviceType, int32_t DeviceId);

/// One device's (or the host's) memory: what the records say and how they
/// were paired.
struct Pool {
  int32_t DeviceType = 1; ///< 0 CPU, 1 CUDA (PyTorch's c10::DeviceType)
  int32_t DeviceId = -1;
  bool HasAddresses = true; ///< paired by address; else by size
  bool HasTotals = true;    ///< records carry Total Allocated
  /// Allocated bytes when the window opens and when it ends, as the records'
  /// Total Allocated says (without it: the running sum of the records, from
  /// the bytes of the blocks freed before they were allocated).
  int64_t StartAllocated = 0, EndAllocated = 0;
  /// Bytes live at the window's start that no block accounts for (allocated
  /// before the trace and not freed in it: weights, optimizer state).
  int64_t Untracked = 0;
  /// Bytes of the blocks allocated and freed inside the window.
  int64_t AllocatedInWindow = 0, FreedInWindow = 0;
  /// The largest Total Reserved seen in the window, or NoValue.
  int64_t ReservedPeak = trace::NoValue;

  uint64_t Records = 0; ///< with a non-zero size
  uint64_t RecordsBefore = 0, RecordsInWindow = 0, RecordsAfter = 0;
  uint64_t ZeroSized = 0;       ///< records of 0 bytes, ignored
  uint64_t UnmatchedFrees = 0;  ///< frees of blocks allocated before the trace
  uint64_t NeverFreed = 0;      ///< allocations the trace never frees
  uint64_t SizeMismatches = 0;  ///< frees whose size differs from the block
  uint64_t Reordered = 0;       ///< same-time records put in Total order
  uint64_t TotalMismatches = 0; ///< records whose Total Allocated the
                                ///< running sum does not reproduce
  uint64_t Unplaced = 0;        ///< in-window records on threads without tasks,
                                ///< kept at their measured time
  bool isDevice() const { return DeviceType != 0; }
  std::string label() const;
};

/// The allocated-bytes curve of one pool: the level after each event.
struct Curve {
  int64_t Start = 0;          ///< allocated when the window opens
  std::vector<int64_t> Time;  ///< ns from the graph's origin, ascending
  std::vector<int64_t> Level; ///< allocated bytes after the event
  std::vector<BlockId> Block; ///< whose allocation or free
  std::vector<uint8_t> IsFree;
  size_t size() const { return Time.size(); }
};

/// The highest level of a curve in a span.
struct Peak {
  int64_t Bytes = 0;
  int64_t Time = 0; ///< when it is reached (ns from the origin)
  /// The last event applied at the peak: the one reaching it when Inside,
  /// else the last before the span (NoEvent: none, the curve's start).
  uint32_t Event = NoEvent;
  bool Inside = false; ///< reached by an event inside the span, not the
                       ///< level the span opens with
};

/// Every block and curve placed on one timeline.
struct Profile {
  std::vector<int64_t> AllocTime, FreeTime; ///< per block; Before/AfterWindow
  std::vector<Curve> Curves;                ///< per pool
  uint64_t Inverted = 0; ///< blocks freed before their allocation (what-ifs),
                         ///< left out
  uint64_t Dropped = 0;  ///< blocks whose allocating task was removed
  /// Offload spans cut short by the block's lifetime: off the device before
  /// its allocation, or back after its free.
  uint64_t Clipped = 0;
};

/// What the memory records of a trace say, without a graph (for inspect).
struct RecordSummary {
  int32_t DeviceType = 0, DeviceId = -1;
  uint64_t Records = 0;
  bool HasTotals = false; ///< else PeakAllocated is relative to the start
  int64_t PeakAllocated = 0;
  int64_t PeakReserved = trace::NoValue;
};
std::vector<RecordSummary> summarizeRecords(const trace::Trace &T);

class MemoryModel {
public:
  // --- Blocks (struct-of-arrays, BlockId) ------------------------------
  std::vector<PoolId> PoolOf;
  std::vector<uint64_t> Addr;        ///< 0 when the records carry none
  std::vector<int64_t> Stream;       ///< trace::NoValue when unknown
  std::vector<int64_t> Size;         ///< bytes, as what-ifs left it
  std::vector<int64_t> MeasuredSize; ///< bytes, as traced (0 if added)
  /// Trace times of the allocation and the free; BeforeWindow for a block
  /// allocated before the trace, AfterWindow for one it never frees.
  std::vector<int64_t> AllocTs, FreeTs;
  std::vector<uint32_t> AllocRecord, FreeRecord; ///< Trace::Memory, NoRecord
  std::vector<Placement> AllocAt, FreeAt;
  /// The CPU task that made the record: the innermost task (leaf or
  /// container) of its thread whose measured interval holds it, else the
  /// leaf it is placed after. NoTask outside the window.
  std::vector<TaskId> AllocOwner, FreeOwner;
  std::vector<int32_t> AllocIteration, FreeIteration; ///< -1: none
  std::vector<Phase> AllocPhase, FreePhase;
  std::vector<LayerId> AllocLayer;
  std::vector<BlockClass> Class;
  /// Order among events at the same time: the measured order for traced
  /// events; what-if frees go first, what-if allocations last. Class is the
  /// traced lifetime: moving a free does not change it.
  std::vector<int64_t> AllocKey, FreeKey;
  std::vector<uint8_t> Flags;

  enum BlockFlag : uint8_t {
    BF_Added = 1 << 0,     ///< addBlock
    BF_Scaled = 1 << 1,    ///< scaleBlocks
    BF_FreeMoved = 1 << 2, ///< moveFree
    BF_Offloaded = 1 << 3, ///< offload
  };

  /// A span during which a block is off the device (offload what-if).
  struct Offload {
    BlockId Block;
    Placement Out, In;
  };
  std::vector<Offload> Offloads;

  std::vector<Pool> Pools;
  int64_t Origin = 0;    ///< trace time of the graph's time 0
  int64_t WindowEnd = 0; ///< trace time the last iteration ends

  size_t numBlocks() const { return Size.size(); }
  bool hasDeviceRecords() const;

  /// Builds the block table of \p T's memory records and ties it to \p G
  /// (finalized, built from \p T, unchanged). Fails when \p T has no memory
  /// record inside the replayed window.
  static llvm::Expected<MemoryModel> build(const trace::Trace &T,
                                           const graph::Graph &G);

  // --- Timelines ----------------------------------------------------------
  /// Places every allocation and free by \p Times and computes the curves.
  Profile profile(const TaskTimes &Times) const;
  /// The same for times simulated on \p G (finalized) after a model
  /// removed tasks: a removed task's allocations and frees happen where the
  /// work that takes its place runs (the start of the next live leaf on its
  /// resource; the end of the last one when none follows), so that a block
  /// freed inside a removed call still frees.
  Profile profile(const TaskTimes &Times, const graph::Graph &G) const;
  /// The measured curve of pool \p P, from the records alone.
  const Curve &measured(PoolId P) const { return Measured[P]; }

  // --- What-ifs: they change blocks, never the graph ----------------------
  /// Multiplies the sizes of \p Blocks by \p Factor (>= 0), rounding.
  llvm::Error scaleBlocks(llvm::ArrayRef<BlockId> Blocks, double Factor);
  /// Sets the sizes of \p Blocks to \p Bytes (>= 0).
  llvm::Error resizeBlocks(llvm::ArrayRef<BlockId> Blocks, int64_t Bytes);
  /// Frees \p B at \p At of a task of \p G instead of where the trace
  /// frees it. A free placed before the allocation leaves the block out of
  /// the curve (Profile::Inverted counts it).
  llvm::Error moveFree(const graph::Graph &G, BlockId B, TaskPoint At);
  /// Takes \p B off the device from \p Out (the end of its copy to the host)
  /// to \p In (the start of its copy back). Spans are clipped to the block's
  /// lifetime and merged; an empty span changes nothing.
  llvm::Error offload(const graph::Graph &G, BlockId B, TaskPoint Out,
                      TaskPoint In);
  /// A new block of \p Bytes in pool \p P, allocated at \p Alloc and freed at
  /// \p Free (never, if none). Its class follows the tasks' iterations and
  /// phases in \p G.
  llvm::Expected<BlockId> addBlock(const graph::Graph &G, PoolId P,
                                   int64_t Bytes, TaskPoint Alloc,
                                   std::optional<TaskPoint> Free);
  /// Undoes every what-if.
  void reset();

  // --- Selections -----------------------------------------------------------
  std::vector<BlockId> blocksOfClass(BlockClass C) const;
  /// Blocks allocated by \p T or by a task it contains.
  std::vector<BlockId> blocksAllocatedBy(const graph::Graph &G, TaskId T) const;
  /// Blocks of pool \p P live after event \p Event of \p Pr's curve (all
  /// events at or before it applied), by id. NoEvent: live at the start.
  std::vector<BlockId> liveAfter(const Profile &Pr, PoolId P,
                                 uint32_t Event) const;
  /// Bytes by class live after \p Event; Untracked is not included.
  std::vector<int64_t> bytesByClassAfter(const Profile &Pr, PoolId P,
                                         uint32_t Event) const;

  /// The most bytes the blocks and pools may add up to (2^62): every level
  /// and peak is a sum of them, which then cannot overflow.
  static constexpr double MaxTotalBytes = 4611686018427387904.0;

private:
  /// The blocks' sizes and the pools' untracked bytes, summed (a double:
  /// it is only compared with MaxTotalBytes).
  double TotalBytes = 0, TracedTotalBytes = 0;
  /// An error where adding \p Delta bytes would pass MaxTotalBytes.
  llvm::Error addToTotal(double Delta, const llvm::Twine &What);
  std::vector<Curve> Measured;
  /// Iterations' measured [begin, end), trace time, for classes.
  std::vector<std::pair<int64_t, int64_t>> IterationSpans;
  size_t TracedBlocks = 0;             ///< blocks before any addBlock
  std::vector<Placement> TracedFreeAt; ///< for reset()
  std::vector<int64_t> TracedFreeKey;

  BlockId appendBlock();
  void classify(BlockId B);
  int32_t iterationAt(int64_t Ts) const;
  friend class ModelBuilder;
};

/// The highest level of \p C in [From, To) (ns from the origin): the level
/// the span starts with, or an event inside it.
Peak peakIn(const Curve &C, int64_t From, int64_t To);
/// The highest level of \p C over the whole window.
Peak peakOf(const Curve &C);

} // namespace dd::memory

#endif

//===- Graph.h - The dependency graph of a profiled run ---------*- C++ -*-===//
//
// Daydream's dependency graph, stored as struct-of-arrays with 32-bit task
// ids. A task is a leaf CPU call (an operator without traced children, a
// CUDA API call) or a GPU operation (kernel, copy, set, collective), or an
// inserted task. CPU operators that contain other calls are "containers":
// they are tasks for selection and reporting, but the simulator schedules
// only their leaves and derives their times from them.
//
// Dependencies come in two forms:
//   * resource order, implicit: tasks on one resource (CPU thread, GPU
//     stream, communication channel) run one at a time in their order, and a
//     task may start Gap ns after its predecessor on the resource ended;
//   * explicit edges (launch, synchronisation, event waits, cross-thread
//     wake-ups, inserted dependencies), stored in a flat list and indexed as
//     CSR in both directions. Each edge ties a point of its source (start or
//     end) to a point of its destination (start or end) with a delay.
//
// Scripts change durations, insert and remove tasks and add edges; derived
// indexes (resource order, CSR, lowered edges) are rebuilt by finalize().
//
//===----------------------------------------------------------------------===//
#ifndef DD_GRAPH_GRAPH_H
#define DD_GRAPH_GRAPH_H

#include "support/StringPool.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dd::graph {

using TaskId = uint32_t;
using ResourceId = uint32_t;
using LayerId = uint32_t;
constexpr TaskId NoTask = ~0u;
constexpr ResourceId NoResource = ~0u;
constexpr LayerId NoLayer = ~0u;
constexpr int64_t NoTime = INT64_MIN;
/// The longest time ddscript represents (2^62 ns, about 146 years): no
/// duration, gap or delay exceeds it, and the simulator refuses a graph
/// whose times could add up past it, so that sums of times never overflow.
constexpr int64_t MaxTime = int64_t(1) << 62;

enum class TaskKind : uint8_t {
  CpuOp,      ///< a framework operator (aten::*, autograd nodes)
  Annotation, ///< a user annotation (record_function, ProfilerStep#N)
  Runtime,    ///< a CUDA runtime/driver API call
  Kernel,     ///< a GPU compute kernel
  Memcpy,     ///< a GPU memory copy
  Memset,     ///< a GPU memory set
  Comm,       ///< a communication operation (NCCL kernel, inserted collective)
};
constexpr unsigned NumTaskKinds = 7;
const char *taskKindName(TaskKind K);
inline bool isGpuKind(TaskKind K) { return K >= TaskKind::Kernel; }
/// Whether \p Name is a DataLoader's __next__ range, where the main thread
/// loads a batch (PyTorch names it
/// "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" and the
/// like).
inline bool isDataLoaderRange(std::string_view Name) {
  return Name.find("DataLoader") != std::string_view::npos &&
         Name.find("__next__") != std::string_view::npos;
}

enum class Phase : uint8_t { Unknown, Forward, Backward, Optimizer, Other };
constexpr unsigned NumPhases = 5;
const char *phaseName(Phase P);

enum class ResourceKind : uint8_t { CpuThread, GpuStream, Channel };
const char *resourceKindName(ResourceKind K);

/// How a resource picks among tasks that are ready at the same time.
enum class Ordering : uint8_t {
  Program,  ///< the recorded order (CPU threads, GPU streams)
  Fifo,     ///< first ready, first served; ties by sequence number
  Priority, ///< lowest priority value first; ties by readiness, then sequence
};

struct Resource {
  ResourceKind Kind;
  int32_t Device = -1;
  int64_t Id = 0; ///< thread id, stream id, or channel ordinal
  std::string Name;
  Ordering Order = Ordering::Program;
  /// The gap a task inserted on this resource gets after its predecessor
  /// (the typical one the trace shows).
  int64_t TypicalGap = 0;
};

enum class EdgeKind : uint8_t {
  Launch,    ///< CPU launch call -> the GPU work it enqueued
  Sync,      ///< GPU work -> the blocking CPU call that waited for it
  QueueFull, ///< GPU work -> a launch call blocked on a full launch queue
  EventWait, ///< GPU work -> GPU work on another stream (event record/wait)
  Wake,      ///< CPU task -> a task on another thread that it woke up
  FwdBwd,    ///< forward operator -> its backward operator
  Script,    ///< added by a .dd script
  Bridge,    ///< added when a task between two others was removed
};
constexpr unsigned NumEdgeKinds = 8;
const char *edgeKindName(EdgeKind K);

/// Which point of the source constrains which point of the destination.
enum class Anchor : uint8_t {
  EndToStart,   ///< dst may start Delay ns after src ended
  StartToStart, ///< dst may start Delay ns after src started
  EndToEnd,     ///< dst may end no earlier than Delay ns after src ended
  StartToEnd,   ///< dst may end no earlier than Delay ns after src started
};
inline bool fromStart(Anchor A) {
  return A == Anchor::StartToStart || A == Anchor::StartToEnd;
}
inline bool toEnd(Anchor A) {
  return A == Anchor::EndToEnd || A == Anchor::StartToEnd;
}
inline Anchor makeAnchor(bool FromStart, bool ToEnd) {
  return FromStart ? (ToEnd ? Anchor::StartToEnd : Anchor::StartToStart)
                   : (ToEnd ? Anchor::EndToEnd : Anchor::EndToStart);
}

struct Edge {
  TaskId Src, Dst;
  EdgeKind Kind;
  Anchor At;
  int64_t Delay;
};

/// Task flags.
enum TaskFlag : uint8_t {
  TF_Container = 1 << 0, ///< has traced children; not scheduled itself
  TF_Inserted = 1 << 1,  ///< created by a script
  TF_Removed = 1 << 2,   ///< deleted by a script
  TF_Blocking = 1 << 3,  ///< a CPU call whose end waits on GPU work
  TF_Changed = 1 << 4,   ///< duration changed by a script
};

struct Layer {
  std::string Name;
  uint32_t Index; ///< order of first appearance in the forward pass
  /// The layer whose nn.Module range encloses this one's where it first
  /// appears, or NoLayer (a top-level module, or layers made of operators).
  /// A parent always comes first: Parent < this layer's id.
  LayerId Parent = NoLayer;
};

/// One iteration of the training loop, and the points that bound it.
/// The label of the one iteration a --window makes (numbered 0).
inline constexpr std::string_view WindowLabel = "window";

struct Iteration {
  enum class PointKind : uint8_t { Origin, TaskStart, TaskEnd, Makespan };
  struct Point {
    PointKind Kind = PointKind::Origin;
    TaskId Task = NoTask;
  };
  int64_t Number = 0;        ///< as the trace numbers it (ProfilerStep#N)
  int64_t MeasuredBegin = 0; ///< trace time, ns
  int64_t MeasuredEnd = 0;
  Point Begin, End;
  std::string Label; ///< "ProfilerStep#12", "optimizer step 3", WindowLabel
  int32_t Rank = 0;  ///< the rank of a job whose iteration this is
  int64_t measured() const { return MeasuredEnd - MeasuredBegin; }
};

class Graph {
public:
  // --- Tasks (struct-of-arrays) ---------------------------------------
  std::vector<TaskKind> Kind;
  std::vector<StringId> Name;
  std::vector<ResourceId> Res;        ///< NoResource for containers
  std::vector<int64_t> Dur;           ///< current duration (ns)
  std::vector<int64_t> MeasuredDur;   ///< as traced (NoTime if inserted)
  std::vector<int64_t> MeasuredStart; ///< trace time (NoTime if inserted)
  std::vector<int64_t> Gap;           ///< delay after the resource predecessor
  std::vector<int64_t> OrderKey;      ///< position in its resource's order
  std::vector<TaskId> Parent;         ///< enclosing container, or NoTask
  std::vector<TaskId> Launcher;       ///< CPU call that launched a GPU task
  std::vector<LayerId> LayerOf;
  std::vector<Phase> PhaseOf;
  std::vector<int32_t> IterationOf; ///< index into Iterations, or -1
  std::vector<uint8_t> Flags;
  std::vector<int64_t> Bytes; ///< bytes moved, or -1
  /// An operator's floating-point operations as its recorded input shapes
  /// give them (ops::opWork: matrix multiplies, convolutions, attention,
  /// norms, softmaxes, embeddings, elementwise operators, reductions,
  /// tensor-list operators), or -1.
  std::vector<int64_t> Flops;
  /// An operator's bytes moved at least (inputs read, outputs written) as
  /// its recorded shapes give them (ops::movedBytes), or -1.
  std::vector<int64_t> Moved;
  /// A forward operator's tensors saved for backward (ops::savedTensors):
  /// their bytes, or -1, and how many.
  std::vector<int64_t> Saved;
  std::vector<int32_t> SavedCount;
  /// A matrix multiply's alignment (ops::OpWork::Align), or 0.
  std::vector<uint8_t> Align;
  /// An operator's floating-point inputs as recorded ("Input type"): an
  /// index into ops::Precisions (0: none recorded).
  std::vector<uint8_t> InputPrecision;
  std::vector<int64_t> Correlation; ///< CUPTI correlation id, or -1
  std::vector<uint32_t> Event;      ///< trace event, or ~0u
  /// Containers: the first and last leaf (in resource order) they enclose,
  /// and the measured time before the first and after the last.
  std::vector<TaskId> FirstLeaf, LastLeaf;
  std::vector<int64_t> Lead, Trail;

  std::vector<Resource> Resources;
  std::vector<Edge> Edges;
  std::vector<Layer> Layers;
  std::vector<Iteration> Iterations;
  /// A graph may hold only some of its trace's iterations (replay reads
  /// the ones it reports and their neighbours: whatif/Focus.cpp). Then the
  /// trace has TraceIterations of them, Iterations[0] is the trace's
  /// FirstTraceIteration-th (from 0), and Steady is the index in Iterations
  /// of the trace's steady-state one (outside [0, Iterations.size()) when
  /// the graph does not hold it). TraceIterations is 0 when the graph holds
  /// them all.
  struct IterationSpan {
    size_t TraceIterations = 0, FirstTraceIteration = 0;
    int64_t Steady = -1;
  } Span;
  StringPool Strings;
  int64_t Origin = 0; ///< trace time of simulated time 0

  /// Collectives of a job (job/Job.h): each is one communication task per
  /// participating rank. A member arrives when its resource and edges let
  /// it start; all members start when the last has arrived (the others
  /// wait), and each then runs its own Dur (the transfer). CSR: the members
  /// of collective C are CollectiveMembers[CollectiveBegin[C] ..
  /// CollectiveBegin[C + 1]).
  std::vector<uint32_t> CollectiveBegin{0};
  std::vector<TaskId> CollectiveMembers;
  size_t numCollectives() const { return CollectiveBegin.size() - 1; }
  llvm::ArrayRef<TaskId> collectiveMembers(size_t C) const {
    return {CollectiveMembers.data() + CollectiveBegin[C],
            CollectiveMembers.data() + CollectiveBegin[C + 1]};
  }
  void addCollective(llvm::ArrayRef<TaskId> Members) {
    CollectiveMembers.insert(CollectiveMembers.end(), Members.begin(),
                             Members.end());
    CollectiveBegin.push_back(static_cast<uint32_t>(CollectiveMembers.size()));
    Dirty = true;
  }
  /// Process groups that communication kernels name in their NCCL
  /// arguments ("Process Group Name", "Process Group Ranks": the group's
  /// global ranks); a job pairs collectives per group (job/Job.h).
  /// CommGroupOf maps a communication task to its group, an index into
  /// CommGroups; tasks without the arguments are absent.
  struct CommGroup {
    std::string Name;
    std::vector<int32_t> Ranks;
  };
  std::vector<CommGroup> CommGroups;
  llvm::DenseMap<TaskId, uint32_t> CommGroupOf;
  // --- Derived indexes, valid after finalize() --------------------------
  /// Leaves of each resource in order; PrevOnRes/NextOnRes per task.
  std::vector<std::vector<TaskId>> ResourceTasks;
  std::vector<TaskId> PrevOnRes, NextOnRes;
  std::vector<uint32_t> PosOnRes; ///< index into ResourceTasks[Res[T]]
  /// Edges lowered onto leaves (containers replaced by their first or last
  /// live leaf, removed tasks bridged) and indexed by destination and source.
  std::vector<Edge> Lowered;
  std::vector<uint32_t> InBegin, InEdges;   ///< CSR: lowered edges by Dst
  std::vector<uint32_t> OutBegin, OutEdges; ///< CSR: lowered edges by Src

  size_t numTasks() const { return Kind.size(); }
  /// Iterations[I]'s place among the trace's iterations, from 1, and how
  /// many the trace has: "iteration 24 of 45".
  size_t iterationOrdinal(size_t I) const {
    return Span.FirstTraceIteration + I + 1;
  }
  size_t traceIterationCount() const {
    return Span.TraceIterations ? Span.TraceIterations : Iterations.size();
  }
  std::string_view name(TaskId T) const { return Strings.str(Name[T]); }
  bool isContainer(TaskId T) const { return Flags[T] & TF_Container; }
  bool isRemoved(TaskId T) const { return Flags[T] & TF_Removed; }
  bool isLeaf(TaskId T) const { return !(Flags[T] & TF_Container); }
  bool isGpu(TaskId T) const { return isGpuKind(Kind[T]); }

  /// Makes room for \p N tasks in every task column (no reallocation and
  /// copying while a builder adds them), mapped at once with \p Prefault
  /// (Prefault.h); without, the room costs memory only as it fills (a
  /// job's join, which frees each rank's graph as it appends it).
  void reserveTasks(size_t N, bool Prefault = true);
  /// Appends a task with default attributes; returns its id.
  TaskId addTask(TaskKind K, std::string_view TaskName, ResourceId R,
                 int64_t Duration);
  /// The same, with a name already in Strings.
  TaskId addTask(TaskKind K, StringId TaskName, ResourceId R, int64_t Duration);
  ResourceId addResource(ResourceKind K, int32_t Device, int64_t Id,
                         std::string ResName);
  /// The resource named \p ResName of kind \p K, or NoResource.
  ResourceId findResource(ResourceKind K, std::string_view ResName) const;
  void addEdge(TaskId Src, TaskId Dst, EdgeKind K, Anchor A, int64_t Delay);

  /// Marks \p Set removed; the dependencies through them are bridged when
  /// the graph is next finalized. Removing a container removes its leaves,
  /// except tasks a model inserted: they move to the nearest container
  /// that stays.
  void removeTasks(const llvm::BitVector &Set);

  /// Rebuilds resource order, lowered edges and CSR indexes. Returns false
  /// (and sets \p Error) if the explicit edges form a cycle with the
  /// resource order.
  bool finalize(std::string *Error = nullptr);
  bool finalized() const { return !Dirty; }
  /// The sum of the live leaves' durations and gaps and the lowered edges'
  /// delays (absolute values), after finalize: no time the simulator
  /// computes exceeds it, so below MaxTime no sum overflows.
  double timeBound() const;
  void markDirty() { Dirty = true; }
  /// Whether resource order and container leaves (leavesOf) are as of the
  /// last finalize but for tasks and edges added since: no removal and no
  /// new resource. Lookups that tolerate missing new tasks need no finalize.
  bool lookupsCurrent() const { return !LookupsStale; }
  /// True when every new dependency Src -> Dst (end to start) follows the
  /// order of the last successful finalize, amended only by such
  /// dependencies: adding them cannot make a cycle. False when unsure.
  bool edgesKeepOrder(llvm::ArrayRef<TaskId> Srcs,
                      llvm::ArrayRef<TaskId> Dsts) const;
  /// addEdge for a dependency edgesKeepOrder vouched for.
  void addEdgeKeepingOrder(TaskId Src, TaskId Dst, EdgeKind K, Anchor A,
                           int64_t Delay);

  llvm::ArrayRef<uint32_t> inEdges(TaskId T) const {
    return {InEdges.data() + InBegin[T], InEdges.data() + InBegin[T + 1]};
  }
  llvm::ArrayRef<uint32_t> outEdges(TaskId T) const {
    return {OutEdges.data() + OutBegin[T], OutEdges.data() + OutBegin[T + 1]};
  }

  /// For each task of stream \p S in its order as of the last finalize:
  /// the order key of the call that launched it, or for GPU work that no
  /// call launched (a copy a model put after a kernel) the key of the work
  /// launched before it, never decreasing along the stream (stream order
  /// is launch order). Computed on first use after a finalize.
  const std::vector<int64_t> &launchKeys(ResourceId S) const;

  /// Appends to \p Out the GPU tasks call \p C launched (Launcher == C),
  /// removed ones included, in id order. Cost: what it appends. An inverse
  /// index built on first use and extended with the tasks added since (a
  /// task's launcher is set when it is added, before the next lookup).
  void launchedBy(TaskId C, std::vector<TaskId> &Out) const;
  /// The GPU work CPU thread \p Thread had enqueued when its leaf at
  /// position \p Pos (PosOnRes) ended: on each stream, the live task
  /// launched last from a live call of the thread at or before \p Pos (the
  /// highest order key among one call's). Appends in stream order. Needs the
  /// order of a finalize; tasks added since with a launcher from before it
  /// count. Cost: the thread's streams times a binary search.
  void launchFrontier(ResourceId Thread, uint32_t Pos,
                      std::vector<TaskId> &Out) const;
  /// Work the lookups above did since the graph was made (entries indexed
  /// and visited): a measure for complexity tests, which no machine blurs.
  uint64_t lookupWork() const { return LookupWork; }
  /// An entry of launchFrontier's index.
  struct FrontierEntry {
    uint32_t Pos;
    int64_t Key;
    TaskId Task;
  };

  /// Leaves enclosed by container \p T (or {T} for a leaf), live only.
  std::vector<TaskId> leavesOf(TaskId T) const;
  /// For a removed leaf, after finalize: the last live leaf before it on
  /// its resource, or NoTask.
  TaskId removedResPred(TaskId T) const { return RemovedResPred[T]; }

private:
  bool Dirty = true;
  bool LookupsStale = true;
  /// launchKeys' per-stream cache, cleared by finalize.
  mutable std::vector<std::vector<int64_t>> LaunchKeyCache;
  mutable std::vector<uint8_t> LaunchKeyCached;
  /// launchedBy's index: CSR over the first LaunchIndexed tasks, and the
  /// tasks added since, by launcher.
  mutable std::vector<uint32_t> LaunchedBegin;
  mutable std::vector<TaskId> Launched;
  mutable llvm::DenseMap<TaskId, std::vector<TaskId>> LaunchedLater;
  mutable size_t LaunchIndexed = 0;
  /// launchFrontier's index, rebuilt after each finalize: per thread, its
  /// streams, each with the GPU tasks the thread launched onto it sorted
  /// by (launcher position, order key); tasks added since are merged in
  /// as they are seen.
  mutable llvm::DenseMap<
      ResourceId,
      std::vector<std::pair<ResourceId, std::vector<FrontierEntry>>>>
      FrontierIndex;
  mutable bool FrontierBuilt = false;
  mutable size_t FrontierIndexed = 0;
  mutable uint64_t LookupWork = 0;
  /// Adds X's entry to launchFrontier's index: at the end of its list when
  /// \p Append (a bulk build sorts them after), else in its place.
  void addToFrontier(TaskId X, bool Append) const;
  bool RanksValid = false;
  /// Kahn order of the last acyclicity check: 2*T start, 2*T+1 end.
  std::vector<uint32_t> TopoRank;
  /// For removed leaves: the last live leaf before them on their resource.
  std::vector<TaskId> RemovedResPred;
  /// For removed leaves: the leaf just before them on their resource when
  /// it is removed too (a run of removed leaves), else NoTask.
  std::vector<TaskId> RemovedRunPrev;
  void lowerEdges();
  bool checkAcyclic(std::string *Error);
};

} // namespace dd::graph

#endif

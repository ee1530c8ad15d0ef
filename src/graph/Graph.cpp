#include "graph/Graph.h"

#include "support/Prefault.h"
#include "support/Work.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>

using namespace dd;
using namespace dd::graph;

const char *graph::taskKindName(TaskKind K) {
  switch (K) {
  case TaskKind::CpuOp:
    return "cpu_op";
  case TaskKind::Annotation:
    return "annotation";
  case TaskKind::Runtime:
    return "runtime";
  case TaskKind::Kernel:
    return "kernel";
  case TaskKind::Memcpy:
    return "memcpy";
  case TaskKind::Memset:
    return "memset";
  case TaskKind::Comm:
    return "comm";
  }
  return "?";
}

const char *graph::phaseName(Phase P) {
  switch (P) {
  case Phase::Unknown:
    return "unknown";
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::Optimizer:
    return "optimizer";
  case Phase::Other:
    return "other";
  }
  return "?";
}

const char *graph::resourceKindName(ResourceKind K) {
  switch (K) {
  case ResourceKind::CpuThread:
    return "thread";
  case ResourceKind::GpuStream:
    return "stream";
  case ResourceKind::Channel:
    return "channel";
  }
  return "?";
}

const char *graph::edgeKindName(EdgeKind K) {
  switch (K) {
  case EdgeKind::Launch:
    return "launch";
  case EdgeKind::Sync:
    return "sync";
  case EdgeKind::QueueFull:
    return "queue-full";
  case EdgeKind::EventWait:
    return "event-wait";
  case EdgeKind::Wake:
    return "wake";
  case EdgeKind::FwdBwd:
    return "fwd-bwd";
  case EdgeKind::Script:
    return "script";
  case EdgeKind::Bridge:
    return "bridge";
  }
  return "?";
}

void Graph::reserveTasks(size_t N, bool Prefault) {
  // A growth copies every task held: counted, so that a caller reserving
  // bit by bit (a job's ranks appended one at a time) shows as quadratic.
  if (N > Kind.capacity())
    work::add(work::Counter::GraphGrowth, numTasks());
  auto Room = [&](auto &Column) {
    Column.reserve(N);
    if (Prefault)
      prefaultCapacity(Column);
  };
#define GRAPH_COLUMN(Member, Encoding, Bound) Room(Member);
#include "graph/GraphColumns.def"
}

TaskId Graph::addTask(TaskKind K, std::string_view TaskName, ResourceId R,
                      int64_t Duration) {
  return addTask(K, Strings.intern(TaskName), R, Duration);
}

TaskId Graph::addTask(TaskKind K, StringId TaskName, ResourceId R,
                      int64_t Duration) {
  TaskId T = static_cast<TaskId>(Kind.size());
  Kind.push_back(K);
  Name.push_back(TaskName);
  Res.push_back(R);
  Dur.push_back(Duration);
  MeasuredDur.push_back(NoTime);
  MeasuredStart.push_back(NoTime);
  Gap.push_back(0);
  OrderKey.push_back(0);
  Parent.push_back(NoTask);
  Launcher.push_back(NoTask);
  LayerOf.push_back(NoLayer);
  PhaseOf.push_back(Phase::Unknown);
  IterationOf.push_back(-1);
  Flags.push_back(0);
  Bytes.push_back(-1);
  Flops.push_back(-1);
  Moved.push_back(-1);
  Saved.push_back(-1);
  SavedCount.push_back(0);
  Align.push_back(0);
  InputPrecision.push_back(0);
  Correlation.push_back(-1);
  Event.push_back(~0u);
  FirstLeaf.push_back(NoTask);
  LastLeaf.push_back(NoTask);
  Lead.push_back(0);
  Trail.push_back(0);
  Dirty = true;
  RanksValid = false;
  return T;
}

ResourceId Graph::addResource(ResourceKind K, int32_t Device, int64_t Id,
                              std::string ResName) {
  Resource R;
  R.Kind = K;
  R.Device = Device;
  R.Id = Id;
  R.Name = std::move(ResName);
  R.Order = K == ResourceKind::Channel ? Ordering::Fifo : Ordering::Program;
  Resources.push_back(std::move(R));
  Dirty = true;
  LookupsStale = true;
  RanksValid = false;
  return static_cast<ResourceId>(Resources.size() - 1);
}

ResourceId Graph::findResource(ResourceKind K, std::string_view ResName) const {
  for (ResourceId R = 0; R < Resources.size(); ++R)
    if (Resources[R].Kind == K && Resources[R].Name == ResName)
      return R;
  return NoResource;
}

void Graph::addEdge(TaskId Src, TaskId Dst, EdgeKind K, Anchor A,
                    int64_t Delay) {
  Edges.push_back({Src, Dst, K, A, Delay});
  Dirty = true;
  RanksValid = false;
}

bool Graph::edgesKeepOrder(llvm::ArrayRef<TaskId> Srcs,
                           llvm::ArrayRef<TaskId> Dsts) const {
  if (!RanksValid || LookupsStale)
    return false;
  auto Leaf = [&](TaskId T, bool Last) -> TaskId {
    if (T >= TopoRank.size() / 2 || isRemoved(T))
      return NoTask;
    if (!isContainer(T))
      return T;
    std::vector<TaskId> L = leavesOf(T);
    return L.empty() ? NoTask : Last ? L.back() : L.front();
  };
  uint32_t Latest = 0, Earliest = ~0u;
  for (TaskId S : Srcs) {
    TaskId L = Leaf(S, true);
    if (L == NoTask)
      return false;
    Latest = std::max(Latest, TopoRank[2 * L + 1]);
  }
  for (TaskId D : Dsts) {
    TaskId L = Leaf(D, false);
    if (L == NoTask)
      return false;
    Earliest = std::min(Earliest, TopoRank[2 * L]);
  }
  return Latest < Earliest;
}

void Graph::addEdgeKeepingOrder(TaskId Src, TaskId Dst, EdgeKind K, Anchor A,
                                int64_t Delay) {
  bool Ranks = RanksValid;
  addEdge(Src, Dst, K, A, Delay);
  RanksValid = Ranks;
}

std::vector<TaskId> Graph::leavesOf(TaskId T) const {
  assert(!LookupsStale && "leavesOf needs a finalized graph (additions since "
                          "are fine)");
  std::vector<TaskId> Out;
  if (isRemoved(T))
    return Out;
  if (isLeaf(T)) {
    Out.push_back(T);
    return Out;
  }
  TaskId First = FirstLeaf[T], Last = LastLeaf[T];
  if (First == NoTask || Res[First] == NoResource)
    return Out;
  // Leaves may have been removed since; scan the resource order between the
  // positions the first and last leaf had, checking ancestry.
  const auto &Seq = ResourceTasks[Res[First]];
  auto Before = [&](TaskId A, TaskId B) {
    return std::make_pair(OrderKey[A], A) < std::make_pair(OrderKey[B], B);
  };
  auto It = std::lower_bound(Seq.begin(), Seq.end(), First, Before);
  for (; It != Seq.end() && !Before(Last, *It); ++It) {
    for (TaskId P = Parent[*It]; P != NoTask; P = Parent[P])
      if (P == T) {
        Out.push_back(*It);
        break;
      }
  }
  return Out;
}

void Graph::removeTasks(const llvm::BitVector &Set) {
  if (Dirty)
    finalize();
  size_t N = numTasks();
  // Containers that are removed whole, but whose parent is not: the time
  // around their leaves outside them stays on the thread.
  std::vector<TaskId> Maximal;
  // Leaves removed without their container, in order.
  std::vector<TaskId> Loose;
  for (TaskId T = 0; T < N; ++T) {
    if (!Set.test(T) || isRemoved(T))
      continue;
    bool ParentRemoved =
        Parent[T] != NoTask && (Set.test(Parent[T]) || isRemoved(Parent[T]));
    if (isContainer(T) && !ParentRemoved)
      Maximal.push_back(T);
  }
  for (TaskId T = 0; T < N; ++T) {
    assert((Parent[T] == NoTask || Parent[T] < T) &&
           "containers precede their children");
    bool R = Set.test(T);
    if (!R && Parent[T] != NoTask && isRemoved(Parent[T])) {
      // A task a model inserted outlives the operator it was placed in: it
      // moves to the nearest enclosing container that stays.
      if (Flags[T] & TF_Inserted) {
        TaskId P = Parent[T];
        while (P != NoTask && isRemoved(P))
          P = Parent[P];
        Parent[T] = P;
      } else {
        R = true;
      }
    }
    if (R && !isRemoved(T)) {
      Flags[T] |= TF_Removed;
      // A CPU call removed on its own (its operator stays) takes only its
      // own time with it: the time before it on the thread (the
      // framework's work between calls) still passes, before the next
      // call. Removing a superset of calls then never removes less time.
      if (isLeaf(T) && Res[T] != NoResource &&
          Resources[Res[T]].Kind == ResourceKind::CpuThread &&
          (Parent[T] == NoTask || !isRemoved(Parent[T])) && Gap[T] > 0)
        Loose.push_back(T);
    }
  }
  for (TaskId T : Loose) {
    const auto &Seq = ResourceTasks[Res[T]];
    for (uint32_t P = PosOnRes[T] + 1; P < Seq.size(); ++P)
      if (!isRemoved(Seq[P])) {
        Gap[Seq[P]] += Gap[T];
        break;
      }
  }
  for (TaskId C : Maximal) {
    TaskId First = FirstLeaf[C], Last = LastLeaf[C];
    if (First == NoTask || Res[First] == NoResource)
      continue;
    int64_t Outside = std::max<int64_t>(0, Gap[First] - Lead[C]);
    const auto &Seq = ResourceTasks[Res[First]];
    for (uint32_t P = PosOnRes[Last] + 1; P < Seq.size(); ++P) {
      if (!isRemoved(Seq[P])) {
        Gap[Seq[P]] += Outside;
        break;
      }
    }
  }
  Dirty = true;
  LookupsStale = true;
  RanksValid = false;
}

namespace {
/// A source point reached through removed tasks, with the delay so far.
struct EffSource {
  TaskId Src;
  bool FromStart;
  int64_t Delay;
};
} // namespace

void Graph::lowerEdges() {
  size_t N = numTasks();
  Lowered.clear();
  // Map container endpoints onto their first/last live leaf.
  auto LiveLeafFrom = [&](TaskId C, bool Last) -> TaskId {
    std::vector<TaskId> Leaves = leavesOf(C);
    if (Leaves.empty())
      return NoTask;
    return Last ? Leaves.back() : Leaves.front();
  };
  llvm::DenseMap<TaskId, std::pair<TaskId, TaskId>> ContainerEnds;
  auto Ends = [&](TaskId C) {
    auto It = ContainerEnds.find(C);
    if (It != ContainerEnds.end())
      return It->second;
    // A removed container maps onto its (removed) leaves, so the edge is
    // bridged like any other edge through removed tasks.
    auto P = isRemoved(C) ? std::make_pair(FirstLeaf[C], LastLeaf[C])
                          : std::make_pair(LiveLeafFrom(C, false),
                                           LiveLeafFrom(C, true));
    ContainerEnds[C] = P;
    return P;
  };

  // Leaf-level edges, some touching removed leaves.
  std::vector<Edge> LeafEdges;
  LeafEdges.reserve(Edges.size());
  for (Edge E : Edges) {
    bool FS = fromStart(E.At), TE = toEnd(E.At);
    if (isContainer(E.Src)) {
      auto [F, L] = Ends(E.Src);
      if (F == NoTask)
        continue;
      if (FS) {
        E.Delay -= Lead[E.Src];
        E.Src = F;
      } else {
        E.Delay += Trail[E.Src];
        E.Src = L;
      }
    }
    if (isContainer(E.Dst)) {
      auto [F, L] = Ends(E.Dst);
      if (F == NoTask)
        continue;
      if (TE) {
        E.Delay -= Trail[E.Dst];
        E.Dst = L;
      } else {
        E.Delay += Lead[E.Dst];
        E.Dst = F;
      }
    }
    if (E.Src == E.Dst)
      continue;
    LeafEdges.push_back(E);
  }

  // Bridge dependencies through removed leaves.
  std::vector<std::vector<uint32_t>> InOfRemoved;
  llvm::DenseMap<TaskId, uint32_t> RemovedIndex;
  for (uint32_t I = 0; I < LeafEdges.size(); ++I) {
    const Edge &E = LeafEdges[I];
    if (isRemoved(E.Dst)) {
      auto [It, New] = RemovedIndex.try_emplace(
          E.Dst, static_cast<uint32_t>(InOfRemoved.size()));
      if (New)
        InOfRemoved.emplace_back();
      InOfRemoved[It->second].push_back(I);
    }
  }
  llvm::DenseMap<TaskId, std::vector<EffSource>> Memo;
  // Effective live sources of a removed leaf (iterative DFS would be nicer;
  // chains through explicit edges between removed tasks are short).
  std::function<const std::vector<EffSource> &(TaskId, unsigned)> Eff =
      [&](TaskId R, unsigned Depth) -> const std::vector<EffSource> & {
    auto It = Memo.find(R);
    if (It != Memo.end())
      return It->second;
    std::vector<EffSource> Out;
    // One source per resource and anchor: the later of two tasks on a
    // resource ends later, so it stands for both (with the larger delay).
    auto Add = [&](EffSource S) {
      for (EffSource &O : Out)
        if (O.FromStart == S.FromStart && Res[O.Src] == Res[S.Src]) {
          if (std::make_pair(OrderKey[S.Src], S.Src) >
              std::make_pair(OrderKey[O.Src], O.Src))
            O.Src = S.Src;
          O.Delay = std::max(O.Delay, S.Delay);
          return;
        }
      Out.push_back(S);
    };
    // What the removed leaf before it on its resource waited for, it waited
    // for too (resource order); at the start of a run, the live leaf before.
    if (TaskId P = RemovedRunPrev[R]; P != NoTask) {
      for (const EffSource &S : Eff(P, Depth))
        Add(S);
    } else if (TaskId P = RemovedResPred[R]; P != NoTask) {
      Add({P, false, 0});
    }
    auto RI = RemovedIndex.find(R);
    if (RI != RemovedIndex.end() && Depth < 64) {
      for (uint32_t EI : InOfRemoved[RI->second]) {
        const Edge &E = LeafEdges[EI];
        if (!isRemoved(E.Src)) {
          Add({E.Src, fromStart(E.At), E.Delay});
          continue;
        }
        for (const EffSource &S : Eff(E.Src, Depth + 1))
          Add({S.Src, S.FromStart, S.Delay + E.Delay});
      }
    }
    return Memo[R] = std::move(Out);
  };

  // Runs of removed leaves resolve front to back, so the recursion along a
  // run stays one level deep.
  std::vector<TaskId> RemovedLeaves;
  for (TaskId T = 0; T < N; ++T)
    if (isRemoved(T) && isLeaf(T) && Res[T] != NoResource)
      RemovedLeaves.push_back(T);
  std::sort(
      RemovedLeaves.begin(), RemovedLeaves.end(), [&](TaskId A, TaskId B) {
        return std::make_pair(OrderKey[A], A) < std::make_pair(OrderKey[B], B);
      });
  for (TaskId T : RemovedLeaves)
    Eff(T, 0);

  for (const Edge &E : LeafEdges) {
    if (isRemoved(E.Dst))
      continue;
    if (!isRemoved(E.Src)) {
      Lowered.push_back(E);
      continue;
    }
    for (const EffSource &S : Eff(E.Src, 0)) {
      if (S.Src == E.Dst)
        continue;
      Lowered.push_back({S.Src, E.Dst, EdgeKind::Bridge,
                         makeAnchor(S.FromStart, toEnd(E.At)),
                         S.Delay + E.Delay});
    }
  }
}

double Graph::timeBound() const {
  double Bound = 0;
  for (TaskId T = 0; T < numTasks(); ++T)
    if (isLeaf(T) && !isRemoved(T))
      Bound += std::fabs(double(Dur[T])) + std::fabs(double(Gap[T]));
  for (const Edge &E : Lowered)
    Bound += std::fabs(double(E.Delay));
  return Bound;
}

const std::vector<int64_t> &Graph::launchKeys(ResourceId S) const {
  assert(!LookupsStale && "launchKeys needs the order of a finalize");
  if (LaunchKeyCached.size() != Resources.size()) {
    LaunchKeyCache.assign(Resources.size(), {});
    LaunchKeyCached.assign(Resources.size(), 0);
  }
  std::vector<int64_t> &Keys = LaunchKeyCache[S];
  if (LaunchKeyCached[S])
    return Keys;
  const std::vector<TaskId> &Seq = ResourceTasks[S];
  Keys.resize(Seq.size());
  bool Any = false;
  int64_t Last = INT64_MIN;
  for (size_t I = 0; I < Seq.size(); ++I) {
    TaskId L = Launcher[Seq[I]];
    // Unlaunched work before any launched work keeps its own key, as a
    // stream of such work only does.
    int64_t K = L != NoTask ? OrderKey[L] : Any ? Last : OrderKey[Seq[I]];
    Any |= L != NoTask;
    Last = std::max(Last, K);
    Keys[I] = Last;
  }
  LaunchKeyCached[S] = 1;
  return Keys;
}

void Graph::launchedBy(TaskId C, std::vector<TaskId> &Out) const {
  size_t N = numTasks();
  uint64_t WorkBefore = LookupWork;
  if (LaunchIndexed > N || LaunchedBegin.empty()) {
    // First use: a counting sort by launcher.
    LaunchedBegin.assign(N + 1, 0);
    for (TaskId X = 0; X < N; ++X)
      if (Launcher[X] != NoTask)
        ++LaunchedBegin[Launcher[X] + 1];
    for (size_t I = 0; I < N; ++I)
      LaunchedBegin[I + 1] += LaunchedBegin[I];
    Launched.assign(LaunchedBegin[N], NoTask);
    std::vector<uint32_t> Fill(LaunchedBegin.begin(), LaunchedBegin.end() - 1);
    for (TaskId X = 0; X < N; ++X)
      if (Launcher[X] != NoTask)
        Launched[Fill[Launcher[X]]++] = X;
    LaunchedLater.clear();
    LaunchIndexed = N;
    LookupWork += N;
  }
  for (TaskId X = static_cast<TaskId>(LaunchIndexed); X < N; ++X)
    if (Launcher[X] != NoTask)
      LaunchedLater[Launcher[X]].push_back(X);
  LookupWork += N - LaunchIndexed;
  LaunchIndexed = N;
  if (C + 1 < LaunchedBegin.size()) {
    Out.insert(Out.end(), Launched.begin() + LaunchedBegin[C],
               Launched.begin() + LaunchedBegin[C + 1]);
    LookupWork += LaunchedBegin[C + 1] - LaunchedBegin[C];
  }
  if (!LaunchedLater.empty()) {
    auto It = LaunchedLater.find(C);
    if (It != LaunchedLater.end()) {
      Out.insert(Out.end(), It->second.begin(), It->second.end());
      LookupWork += It->second.size();
    }
  }
  // Once per call: callers look up one task at a time.
  work::add(work::Counter::GraphLookups, LookupWork - WorkBefore);
}

/// launchFrontier's order: by launcher position, then order key; among
/// equal keys the lowest id sorts last, so it is the one taken.
static bool frontierLess(const Graph::FrontierEntry &A,
                         const Graph::FrontierEntry &B) {
  if (A.Pos != B.Pos)
    return A.Pos < B.Pos;
  if (A.Key != B.Key)
    return A.Key < B.Key;
  return A.Task > B.Task;
}

void Graph::addToFrontier(TaskId X, bool Append) const {
  TaskId L = Launcher[X];
  // A call added since the last finalize has no position yet.
  if (!isGpu(X) || L == NoTask || L >= PosOnRes.size() || isRemoved(L) ||
      Res[L] == NoResource || Res[X] == NoResource ||
      Resources[Res[L]].Kind != ResourceKind::CpuThread)
    return;
  auto &Streams = FrontierIndex[Res[L]];
  auto S = std::find_if(Streams.begin(), Streams.end(),
                        [&](const auto &P) { return P.first == Res[X]; });
  if (S == Streams.end()) {
    Streams.push_back({Res[X], {}});
    S = Streams.end() - 1;
  }
  FrontierEntry E{PosOnRes[L], OrderKey[X], X};
  auto &V = S->second;
  if (Append || V.empty() || !frontierLess(E, V.back())) {
    V.push_back(E);
  } else {
    V.insert(std::upper_bound(V.begin(), V.end(), E, frontierLess), E);
    LookupWork += V.size();
  }
}

void Graph::launchFrontier(ResourceId Thread, uint32_t Pos,
                           std::vector<TaskId> &Out) const {
  assert(!LookupsStale && "launchFrontier needs the order of a finalize");
  size_t N = numTasks();
  uint64_t WorkBefore = LookupWork;
  if (!FrontierBuilt) {
    // In bulk: append every entry, then sort each list once.
    FrontierIndex.clear();
    FrontierBuilt = true;
    FrontierIndexed = N;
    for (TaskId X = 0; X < N; ++X)
      addToFrontier(X, /*Append=*/true);
    for (auto &KV : FrontierIndex)
      for (auto &S : KV.second)
        std::sort(S.second.begin(), S.second.end(), frontierLess);
    LookupWork += N;
  }
  for (TaskId X = static_cast<TaskId>(FrontierIndexed); X < N; ++X)
    addToFrontier(X, /*Append=*/false);
  LookupWork += N - FrontierIndexed;
  FrontierIndexed = N;
  auto It = FrontierIndex.find(Thread);
  if (It == FrontierIndex.end()) {
    work::add(work::Counter::GraphLookups, LookupWork - WorkBefore);
    return;
  }
  std::vector<std::pair<ResourceId, TaskId>> Found;
  for (const auto &[Stream, V] : It->second) {
    auto End = std::upper_bound(
        V.begin(), V.end(), Pos,
        [](uint32_t P, const FrontierEntry &E) { return P < E.Pos; });
    while (End != V.begin()) {
      --End;
      ++LookupWork;
      if (!isRemoved(End->Task) && !isRemoved(Launcher[End->Task])) {
        Found.push_back({Stream, End->Task});
        break;
      }
    }
  }
  std::sort(Found.begin(), Found.end());
  for (auto &F : Found)
    Out.push_back(F.second);
  work::add(work::Counter::GraphLookups, LookupWork - WorkBefore);
}

bool Graph::finalize(std::string *Error) {
  size_t N = numTasks();
  LaunchKeyCached.clear();
  FrontierBuilt = false;
  // Resource order over all leaves, removed ones included, so a removed
  // leaf knows the live leaf before it.
  ResourceTasks.assign(Resources.size(), {});
  for (TaskId T = 0; T < N; ++T)
    if (isLeaf(T) && Res[T] != NoResource)
      ResourceTasks[Res[T]].push_back(T);
  RemovedResPred.assign(N, NoTask);
  RemovedRunPrev.assign(N, NoTask);
  for (auto &Seq : ResourceTasks) {
    std::sort(Seq.begin(), Seq.end(), [&](TaskId A, TaskId B) {
      return std::make_pair(OrderKey[A], A) < std::make_pair(OrderKey[B], B);
    });
    TaskId LastLive = NoTask, Prev = NoTask;
    for (TaskId T : Seq) {
      if (isRemoved(T)) {
        RemovedResPred[T] = LastLive;
        if (Prev != NoTask && isRemoved(Prev))
          RemovedRunPrev[T] = Prev;
      } else {
        LastLive = T;
      }
      Prev = T;
    }
    Seq.erase(std::remove_if(Seq.begin(), Seq.end(),
                             [&](TaskId T) { return isRemoved(T); }),
              Seq.end());
  }
  PrevOnRes.assign(N, NoTask);
  NextOnRes.assign(N, NoTask);
  PosOnRes.assign(N, ~0u);
  for (ResourceId R = 0; R < Resources.size(); ++R) {
    const auto &Seq = ResourceTasks[R];
    for (uint32_t I = 0; I < Seq.size(); ++I) {
      PosOnRes[Seq[I]] = I;
      if (I > 0)
        PrevOnRes[Seq[I]] = Seq[I - 1];
      if (I + 1 < Seq.size())
        NextOnRes[Seq[I]] = Seq[I + 1];
    }
  }
  Dirty = false; // leavesOf() is usable from here on
  LookupsStale = false;
  lowerEdges();

  auto BuildCsr = [&](bool ByDst, std::vector<uint32_t> &Begin,
                      std::vector<uint32_t> &Items) {
    Begin.assign(N + 1, 0);
    for (const Edge &E : Lowered)
      ++Begin[(ByDst ? E.Dst : E.Src) + 1];
    for (size_t I = 0; I < N; ++I)
      Begin[I + 1] += Begin[I];
    Items.assign(Lowered.size(), 0);
    std::vector<uint32_t> Fill(Begin.begin(), Begin.end() - 1);
    for (uint32_t I = 0; I < Lowered.size(); ++I)
      Items[Fill[ByDst ? Lowered[I].Dst : Lowered[I].Src]++] = I;
  };
  BuildCsr(true, InBegin, InEdges);
  BuildCsr(false, OutBegin, OutEdges);
  // Each finalize orders every task and edge: a caller that finalizes
  // after each small edit is quadratic, and this count shows it.
  work::add(work::Counter::GraphFinalize, N + Edges.size());

  if (!checkAcyclic(Error)) {
    Dirty = true;
    RanksValid = false;
    return false;
  }
  RanksValid = true;
  return true;
}

bool Graph::checkAcyclic(std::string *Error) {
  // Kahn's algorithm over points: 2*T is the start of T, 2*T+1 its end.
  size_t N = numTasks();
  std::vector<uint32_t> Pending(2 * N, 0);
  size_t Live = 0;
  for (TaskId T = 0; T < N; ++T) {
    if (!isLeaf(T) || isRemoved(T))
      continue;
    ++Live;
    Pending[2 * T + 1] = 1; // its own start
    if (PrevOnRes[T] != NoTask && Resources[Res[T]].Order == Ordering::Program)
      ++Pending[2 * T];
    for (uint32_t EI : inEdges(T))
      ++Pending[2 * T + (toEnd(Lowered[EI].At) ? 1 : 0)];
  }
  std::vector<uint32_t> Work;
  for (TaskId T = 0; T < N; ++T)
    if (isLeaf(T) && !isRemoved(T) && Pending[2 * T] == 0)
      Work.push_back(2 * T);
  size_t Done = 0;
  TopoRank.assign(2 * N, ~0u);
  while (!Work.empty()) {
    uint32_t P = Work.back();
    Work.pop_back();
    TopoRank[P] = static_cast<uint32_t>(Done);
    ++Done;
    TaskId T = P / 2;
    bool IsEnd = P & 1;
    auto Release = [&](uint32_t Q) {
      if (--Pending[Q] == 0)
        Work.push_back(Q);
    };
    if (!IsEnd) {
      Release(2 * T + 1);
    } else if (NextOnRes[T] != NoTask &&
               Resources[Res[T]].Order == Ordering::Program) {
      Release(2 * NextOnRes[T]);
    }
    for (uint32_t EI : outEdges(T)) {
      const Edge &E = Lowered[EI];
      if (fromStart(E.At) == !IsEnd)
        Release(2 * E.Dst + (toEnd(E.At) ? 1 : 0));
    }
  }
  if (Done == 2 * Live)
    return true;
  if (Error) {
    // Walk back from a point that never became ready through predecessors
    // that did not either; the first point seen twice is on the cycle.
    uint32_t P = ~0u;
    for (TaskId T = 0; T < N && P == ~0u; ++T)
      if (isLeaf(T) && !isRemoved(T) && Pending[2 * T] != 0)
        P = 2 * T;
    std::vector<uint8_t> Seen(2 * N, 0);
    while (P != ~0u && !Seen[P]) {
      Seen[P] = 1;
      TaskId T = P / 2;
      uint32_t Next = ~0u;
      if (P & 1) {
        if (Pending[2 * T] != 0)
          Next = 2 * T;
      } else if (PrevOnRes[T] != NoTask &&
                 Resources[Res[T]].Order == Ordering::Program &&
                 Pending[2 * PrevOnRes[T] + 1] != 0) {
        Next = 2 * PrevOnRes[T] + 1;
      }
      for (uint32_t EI : inEdges(T)) {
        if (Next != ~0u)
          break;
        const Edge &E = Lowered[EI];
        if (toEnd(E.At) != static_cast<bool>(P & 1))
          continue;
        uint32_t Src = 2 * E.Src + (fromStart(E.At) ? 0 : 1);
        if (Pending[Src] != 0 || (Src & 1) == 0)
          Next = Src;
      }
      P = Next;
    }
    TaskId On = P == ~0u ? 0 : P / 2;
    *Error = "task '" + std::string(name(On)) +
             "' would wait for itself (a dependency cycle)";
  }
  return false;
}

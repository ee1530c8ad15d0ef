//===- GraphOps.cpp - scale, remove, insert, depend, schedule, channel ----===//

#include "graph/Edit.h"
#include "support/Work.h"
#include "vm/VMImpl.h"

#include "llvm/ADT/DenseSet.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::vm;
using graph::NoTask;
using graph::TaskId;

void Interpreter::scale(const Value &Target, const Value &Amount,
                        unsigned Mode) {
  TaskSet Set = toSet(Target, Mode == 1 ? "shrink" : "scale");
  ensureFinalized();
  graph::Graph &G = durationsGraph();
  auto Apply = [&](llvm::ArrayRef<TaskId> S, const Value &A) {
    if (Mode == 2) {
      int64_t D = toAmount(A, Dim::duration(), "the new duration");
      for (TaskId T : S)
        if (!G.isRemoved(T)) {
          graph::setTaskDuration(G, T, D);
          ++Result.Stats.Scaled;
        }
      return;
    }
    double Fac = toNumber(A, {}, "the factor");
    if (!(Fac > 0) || !std::isfinite(Fac))
      fail("the factor must be a positive number (got " + show(A) + ")");
    Result.Stats.Scaled += graph::scaleTasks(G, S, Fac, Mode == 1);
  };
  graphChanged();
  if (!Amount.is(VKind::Function) && !Amount.is(VKind::Bound)) {
    Apply(Set.ids(), Amount);
    return;
  }
  // One amount per task, computed before any change.
  std::vector<std::pair<TaskId, Value>> Amounts;
  for (TaskId T : inOrder(Set))
    Amounts.push_back({T, call(Amount, {Value::id(VKind::Task, T)})});
  for (auto &[T, A] : Amounts)
    Apply(llvm::ArrayRef<TaskId>(T), A);
}

void Interpreter::remove(const Value &Target) {
  graph::Graph &G = mutableGraph();
  TaskSet Set = toSet(Target, "remove");
  ensureFinalized();
  // The leaves it removes: those of the set and, through the containers it
  // holds, theirs (what Graph::removeTasks takes with a container), counted
  // from the set rather than from the whole graph before and after.
  llvm::DenseSet<TaskId> Leaves;
  Set.forEach([&](TaskId T) {
    if (G.isRemoved(T))
      return;
    if (G.isLeaf(T))
      Leaves.insert(T);
    else
      for (TaskId L : G.leavesOf(T))
        Leaves.insert(L);
  });
  llvm::BitVector Bits(G.numTasks());
  Set.addTo(Bits);
  G.removeTasks(Bits);
  size_t Removed = 0;
  for (TaskId L : Leaves)
    Removed += G.isRemoved(L);
  Result.Stats.Removed += Removed;
  markStructural();
}

namespace {
/// A leaf standing for \p T at its start or end.
/// The order key that puts new work on stream \p S after the work launched
/// by calls that started at or before CPU order key \p CallKey. Launches are
/// in stream order up to clock noise, which a binary search tolerates.
int64_t launchOrderKey(const graph::Graph &G, graph::ResourceId S,
                       int64_t CallKey) {
  const auto &Seq = G.ResourceTasks[S];
  // Launch keys never decrease along the stream: GPU work a model put
  // after a kernel (no call launched it) goes with the work before it, not
  // at its own key (a GPU time, which lags its launch), which would send
  // the search into the past.
  const std::vector<int64_t> &Keys = G.launchKeys(S);
  size_t N = std::upper_bound(Keys.begin(), Keys.end(), CallKey) - Keys.begin();
  if (N == 0)
    return Seq.empty() ? CallKey : G.OrderKey[Seq.front()] - 1;
  return G.OrderKey[Seq[N - 1]];
}

TaskId endLeaf(const graph::Graph &G, TaskId T, bool End) {
  if (G.isLeaf(T))
    return T;
  std::vector<TaskId> L = G.leavesOf(T);
  if (L.empty())
    return NoTask;
  return End ? L.back() : L.front();
}
} // namespace

Value Interpreter::insert(const bc::InsertDesc &D, Value *Clauses) {
  graph::Graph &G = mutableGraph();
  // Placement reads the resource order; tasks inserted since the last
  // finalize need not be in it, so a run of inserts finalizes once.
  if (!G.lookupsCurrent())
    ensureFinalized();
  Value On, Dur, Bytes, After, Before;
  unsigned I = 0;
  if (D.Clauses & bc::InsertDesc::On)
    On = Clauses[I++];
  if (D.Clauses & bc::InsertDesc::Duration)
    Dur = Clauses[I++];
  if (D.Clauses & bc::InsertDesc::Bytes)
    Bytes = Clauses[I++];
  if (D.Clauses & bc::InsertDesc::After)
    After = Clauses[I++];
  if (D.Clauses & bc::InsertDesc::Before)
    Before = Clauses[I++];

  graph::ResourceId Res = graph::NoResource;
  if (On.is(VKind::Resource)) {
    Res = On.asId();
  } else if (On.is(VKind::Task)) {
    TaskId L = endLeaf(G, On.asId(), false);
    if (L != NoTask)
      Res = G.Res[L];
  }
  if (Res == graph::NoResource)
    fail("'on' needs a resource (a stream, a thread or a channel) or a task "
         "on one, got " +
         describeValue(On));
  auto Kind = static_cast<graph::TaskKind>(D.TaskKind);
  bool GpuKind = graph::isGpuKind(Kind);
  graph::ResourceKind RK = G.Resources[Res].Kind;
  if (GpuKind && RK == graph::ResourceKind::CpuThread)
    fail(fmt::format("a {} runs on a GPU stream or a channel, not on {}",
                     graph::taskKindName(Kind), G.Resources[Res].Name));
  if (!GpuKind && RK != graph::ResourceKind::CpuThread)
    fail(fmt::format("a {} runs on a CPU thread, not on {}",
                     graph::taskKindName(Kind), G.Resources[Res].Name));

  int64_t Ns = 0;
  if (!Dur.is(VKind::None))
    Ns = toAmount(Dur, Dim::duration(), "'duration'");
  int64_t NewBytes = -1;
  if (!Bytes.is(VKind::None))
    NewBytes = toAmount(Bytes, Dim::bytes(), "'bytes'");
  std::vector<TaskId> AfterT = inOrder(toSet(After, "'after'"));
  std::vector<TaskId> BeforeT = inOrder(toSet(Before, "'before'"));

  TaskId X = G.addTask(Kind, D.Name, Res, Ns);
  G.Flags[X] |= graph::TF_Inserted;
  G.Gap[X] = G.Resources[Res].TypicalGap;
  G.Bytes[X] = NewBytes;

  // Where it goes in its resource's order: after the tasks it follows on
  // the same resource, else at the time the tasks it follows ended, and
  // before the tasks it precedes.
  int64_t Key = INT64_MIN;
  bool SameRes = false;
  TaskId Launch = NoTask;
  for (TaskId A : AfterT) {
    TaskId L = endLeaf(G, A, true);
    if (L == NoTask)
      continue;
    if (G.Res[L] == Res) {
      if (!SameRes)
        Key = INT64_MIN;
      SameRes = true;
      Key = std::max(Key, G.OrderKey[L]);
    } else if (!SameRes && GpuKind &&
               G.Resources[G.Res[L]].Kind == graph::ResourceKind::CpuThread) {
      // GPU work after a CPU call goes where that call would have launched
      // it: after the work launched before it (stream order is launch
      // order; the stream's own keys are GPU times, which lag).
      Key = std::max(Key, launchOrderKey(G, Res, G.OrderKey[L]));
      if (G.Kind[L] == graph::TaskKind::Runtime && Launch == NoTask)
        Launch = L;
    } else if (!SameRes) {
      int64_t End = G.MeasuredStart[L] != graph::NoTime
                        ? G.MeasuredStart[L] + G.MeasuredDur[L]
                        : G.OrderKey[L];
      Key = std::max(Key, End);
    }
  }
  TaskId Next = NoTask; // the task it goes right before, on its thread
  for (TaskId B : BeforeT) {
    TaskId L = endLeaf(G, B, false);
    if (L == NoTask || G.Res[L] != Res)
      continue;
    int64_t Limit = G.OrderKey[L] - 1;
    // Before a call itself, not an operator: an operator's lead time is in
    // its first call's gap and also on the dependency onto it.
    if ((Key == INT64_MIN || Limit <= Key) && B == L)
      Next = L;
    Key = Key == INT64_MIN ? Limit : std::min(Key, Limit);
  }
  // Right before a call on a thread, it takes that call's place: the time
  // the thread spent before the call (its framework work, or a wait folded
  // into the gap) now comes before the inserted task, and the call follows
  // it at the thread's typical gap. Otherwise a task that waits (a sync)
  // would count that time again after its wait.
  if (Next != NoTask && !GpuKind && Key == G.OrderKey[Next] - 1) {
    int64_t Before = G.Gap[Next];
    G.Gap[Next] = std::min(Before, G.Gap[X]);
    G.Gap[X] = Before;
  }
  if (Key == INT64_MIN) {
    // Nothing to go by: the end of its resource.
    Key = 0;
    for (TaskId T : G.ResourceTasks[Res])
      Key = std::max(Key, G.OrderKey[T] + 1);
  }
  G.OrderKey[X] = Key;
  if (GpuKind && !SameRes)
    G.Launcher[X] = Launch;
  // It belongs with the latest-starting task it follows (a gradient's
  // AccumulateGrad rather than a kernel its frontier holds from earlier).
  TaskId From = !AfterT.empty()    ? AfterT.back()
                : !BeforeT.empty() ? BeforeT.front()
                                   : NoTask;
  if (From != NoTask) {
    G.IterationOf[X] = G.IterationOf[From];
    G.PhaseOf[X] = G.PhaseOf[From];
    G.LayerOf[X] = G.LayerOf[From];
  }
  // A CPU task joins the operator (or range) enclosing the first task it
  // follows, or else precedes, on its thread: inserted after an iteration's
  // last call, it still ends that iteration.
  if (!GpuKind) {
    TaskId Encl = NoTask;
    bool Found = false;
    for (TaskId A : AfterT)
      if (TaskId L = endLeaf(G, A, true); L != NoTask && G.Res[L] == Res) {
        Encl = G.Parent[A];
        Found = true;
        break;
      }
    for (TaskId B : BeforeT) {
      if (Found)
        break;
      if (TaskId L = endLeaf(G, B, false); L != NoTask && G.Res[L] == Res) {
        Encl = G.Parent[B];
        Found = true;
      }
    }
    G.Parent[X] = Encl;
  }
  for (TaskId A : AfterT)
    G.addEdge(A, X, graph::EdgeKind::Script, graph::Anchor::EndToStart, 0);
  for (TaskId B : BeforeT)
    G.addEdge(X, B, graph::EdgeKind::Script, graph::Anchor::EndToStart, 0);
  Result.Stats.Dependencies += AfterT.size() + BeforeT.size();
  ++Result.Stats.Inserted;
  markStructural();
  EverSelected.resize(G.numTasks());
  return Value::id(VKind::Task, X);
}

void Interpreter::depend(const Value &Waiter, const Value &On) {
  graph::Graph &G = mutableGraph();
  std::vector<TaskId> A = inOrder(toSet(Waiter, "depend"));
  std::vector<TaskId> B = inOrder(toSet(On, "depend ... on"));
  if (A.size() * B.size() > 1'000'000)
    fail(fmt::format("depend would add {} dependencies ({} x {}); depend on "
                     "fewer tasks (the last of a set, say)",
                     A.size() * B.size(), A.size(), B.size()));
  step(A.size() * B.size() / 64);
  // Dependencies that follow the order of the last finalize cannot close a
  // cycle; others are checked here, where a cycle would be made.
  bool Ordered = G.edgesKeepOrder(B, A);
  for (TaskId X : A)
    for (TaskId Y : B) {
      if (X == Y)
        fail("a task cannot depend on itself");
      if (Ordered)
        G.addEdgeKeepingOrder(Y, X, graph::EdgeKind::Script,
                              graph::Anchor::EndToStart, 0);
      else
        G.addEdge(Y, X, graph::EdgeKind::Script, graph::Anchor::EndToStart, 0);
    }
  Result.Stats.Dependencies += A.size() * B.size();
  // Checked at the next finalize, not here: a model that makes a task wait
  // for one it just inserted, once per iteration, would otherwise rebuild
  // the graph's order every time. A cycle found then is reported here.
  if (!Ordered) {
    markStructural();
    Deferred.push_back({G.Edges.size(), LastStructural});
  }
}

void Interpreter::schedule(const Value &Res, const Value *Priority,
                           unsigned Mode) {
  const graph::Graph &G = graph();
  if (!Res.is(VKind::Resource))
    fail("schedule takes a resource (a stream, a thread or a channel), got " +
         describeValue(Res));
  auto &Order = Result.Policy.ResourceOrder;
  if (Order.size() < G.Resources.size())
    for (size_t R = Order.size(); R < G.Resources.size(); ++R)
      Order.push_back(G.Resources[R].Order);
  Order[Res.asId()] = Mode == 0   ? graph::Ordering::Priority
                      : Mode == 1 ? graph::Ordering::Fifo
                                  : graph::Ordering::Program;
  for (auto It = Schedules.begin(); It != Schedules.end(); ++It)
    if (It->Res == Res.asId()) {
      Schedules.erase(It);
      break;
    }
  if (Mode == 0) {
    if (!Priority->is(VKind::Function))
      fail("'schedule ... by' takes a function of a task, got " +
           describeValue(*Priority));
    Schedules.push_back({Res.asId(), *Priority, errorAt("")});
  }
  ++Result.Stats.Scheduled;
}

void Interpreter::finishSchedules() {
  const graph::Graph &G = graph();
  auto &Order = Result.Policy.ResourceOrder;
  if (!Order.empty())
    for (size_t R = Order.size(); R < G.Resources.size(); ++R)
      Order.push_back(G.Resources[R].Order);
  if (Schedules.empty())
    return;
  ensureFinalized();
  auto &Prio = Result.Policy.Priority;
  Prio.assign(G.numTasks(), 0);
  for (const PendingSchedule &S : Schedules)
    for (TaskId T : G.ResourceTasks[S.Res]) {
      Value V = call(S.Priority, {Value::id(VKind::Task, T)});
      if (!V.is(VKind::Number))
        throw VMError{"a schedule's priority must be a number, got " +
                          describeValue(V),
                      S.At};
      double X = V.asNumber();
      if (!(std::fabs(X) < static_cast<double>(graph::MaxTime)))
        throw VMError{"a schedule's priority must be a finite number below "
                      "2^62, got " +
                          show(V),
                      S.At};
      Prio[T] = static_cast<int64_t>(std::llround(X));
    }
}

Interpreter::ResourceNames &Interpreter::resourceNames() {
  const graph::Graph &G = graph();
  if (G.Resources.size() < Names.Indexed)
    Names = ResourceNames();
  for (size_t I = Names.Indexed; I < G.Resources.size(); ++I) {
    const graph::Resource &X = G.Resources[I];
    auto R = static_cast<graph::ResourceId>(I);
    if (X.Kind == graph::ResourceKind::CpuThread) {
      Names.Threads.try_emplace(X.Name, R);
      Names.Workers += X.Id < 0;
    } else if (X.Kind == graph::ResourceKind::Channel) {
      Names.Channels.try_emplace(X.Name, R);
      ++Names.ChannelCount;
    }
  }
  work::add(work::Counter::VmIndexed, G.Resources.size() - Names.Indexed);
  Names.Indexed = G.Resources.size();
  return Names;
}

Value Interpreter::workerThread(const std::string &Name) {
  const graph::Graph &G = graph();
  ResourceNames &N = resourceNames();
  auto Found = N.Threads.find(Name);
  graph::ResourceId R =
      Found == N.Threads.end() ? graph::NoResource : Found->second;
  // Traced threads are named "thread TID (NAME)" and have their TID.
  if (R != graph::NoResource && G.Resources[R].Id >= 0)
    fail("worker_thread(\"" + Name +
         "\"): the trace has a thread of that name; name the worker "
         "differently");
  if (R == graph::NoResource) {
    // Negative ids: no operating-system thread has one.
    R = mutableGraph().addResource(graph::ResourceKind::CpuThread, -1,
                                   -1 - N.Workers, Name);
    markStructural();
  }
  return Value::id(VKind::Resource, R);
}

Value Interpreter::channel(const std::string &Name) {
  ResourceNames &N = resourceNames();
  auto Found = N.Channels.find(Name);
  graph::ResourceId R =
      Found == N.Channels.end() ? graph::NoResource : Found->second;
  if (R == graph::NoResource) {
    R = mutableGraph().addResource(graph::ResourceKind::Channel, -1,
                                   N.ChannelCount, Name);
    markStructural();
  }
  return Value::id(VKind::Resource, R);
}

/// Bytes a kernel launched directly by operator \p Op reads and writes, for
/// the few operators whose traffic follows from their recorded inputs:
/// copy_(dst, src) reads one and writes the other, add_(a, b) reads both
/// and writes a. -1 otherwise.
static int64_t knownTraffic(const graph::Graph &G, TaskId Op) {
  if (Op == graph::NoTask || G.Bytes[Op] < 0)
    return -1;
  std::string_view N = G.name(Op);
  if (N == "aten::copy_")
    return G.Bytes[Op];
  if (N == "aten::add_")
    return G.Bytes[Op] * 3 / 2;
  return -1;
}

double vm::estimateMemBandwidth(const graph::Graph &G) {
  // Device-to-device copies read and write their bytes. Sets are left out:
  // drivers fill memory faster than any kernel moves it. Tasks shorter than
  // 10 us are left out too, their times being too coarse in microsecond
  // traces.
  std::vector<double> Rates;
  for (TaskId T = 0; T < G.numTasks(); ++T) {
    if (G.MeasuredDur[T] < 10'000 || G.isRemoved(T))
      continue;
    int64_t Bytes = -1;
    if (G.Kind[T] == graph::TaskKind::Memcpy && G.Bytes[T] >= 0 &&
        (G.name(T).find("DtoD") != std::string_view::npos ||
         G.name(T).find("Device -> Device") != std::string_view::npos))
      Bytes = 2 * G.Bytes[T];
    else if (G.Kind[T] == graph::TaskKind::Kernel &&
             G.Launcher[T] != graph::NoTask)
      Bytes = knownTraffic(G, G.Parent[G.Launcher[T]]);
    if (Bytes >= (1 << 20))
      Rates.push_back(static_cast<double>(Bytes) /
                      static_cast<double>(G.MeasuredDur[T]));
  }
  if (Rates.empty())
    return 0;
  std::nth_element(Rates.begin(), Rates.begin() + Rates.size() / 2,
                   Rates.end());
  return Rates[Rates.size() / 2];
}

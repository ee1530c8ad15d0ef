#include "sim/Simulator.h"

#include "support/Error.h"
#include "support/Work.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

using namespace dd;
using namespace dd::sim;
using namespace dd::graph;

namespace {

class Engine {
public:
  Engine(const Graph &G, const SchedulePolicy *P, const TimeOverride *Times,
         int64_t Until)
      : G(G), Policy(P), Dur(Times ? Times->Dur.data() : G.Dur.data()),
        Gap(Times ? Times->Gap.data() : G.Gap.data()), Until(Until) {}
  llvm::Expected<SimResult> run();

private:
  const Graph &G;
  const SchedulePolicy *Policy;
  const int64_t *Dur, *Gap; ///< by task: the graph's, or an override
  /// Points later than Limit are left out: Until plus the sum of every
  /// negative duration, gap and delay, the most a later point can lead to
  /// an earlier one (MaxTime: none left out).
  int64_t Until, Limit = MaxTime;
  SimResult R;
  std::vector<uint32_t> Pending; ///< per point: 2*T start, 2*T+1 end
  std::vector<int64_t> Ready;    ///< per point: candidate time
  std::vector<Ordering> Order;   ///< per resource
  bool Dynamic = false;

  // Time-ordered processing, used when a resource is dynamic.
  struct Event {
    int64_t Time;
    uint8_t Class; ///< 0: a point is ready, 1: a resource dispatches
    uint64_t Seq;
    uint32_t Item; ///< point, or resource
    bool operator>(const Event &O) const {
      return std::tie(Time, Class, Seq) > std::tie(O.Time, O.Class, O.Seq);
    }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> Heap;
  std::vector<uint32_t> Fifo; ///< fast path worklist
  size_t FifoHead = 0;
  uint64_t Seq = 0;
  size_t Processed = 0;
  uint64_t EdgeScans = 0; ///< work::SimEdges, added once per run

  // Dynamic resources: tasks ready to start, and whether the resource runs.
  struct Waiting {
    int64_t Priority, ReadyAt;
    TaskId Task;
    bool operator>(const Waiting &O) const {
      return std::tie(Priority, ReadyAt, Task) >
             std::tie(O.Priority, O.ReadyAt, O.Task);
    }
  };
  std::vector<
      std::priority_queue<Waiting, std::vector<Waiting>, std::greater<Waiting>>>
      Queues;
  std::vector<bool> Busy;

  // Collectives: how many live members of each have yet to arrive.
  std::vector<uint32_t> Missing;
  void arrive(TaskId T, int64_t Time);

  // Collectives on resources that choose (a model's channels): one order on
  // every rank, as a communicator's. The first member a resource dispatches
  // commits its collective; each resource then dispatches its members of
  // committed collectives in commit order, before anything else, waiting
  // for one that is not ready yet. Without it, each rank's channel could
  // pick its own collective among the ready ones and hold it while the
  // others hold theirs.
  /// Per resource, in commit order (empty: no collective on a resource
  /// that chooses, and no commit order to keep).
  std::vector<std::deque<TaskId>> Commits;
  std::vector<uint8_t> Queued; ///< per task: 1 queued, 2 dispatched
  bool isChosenMember(TaskId T) const {
    return !R.CollectiveOf.empty() && R.CollectiveOf[T] != ~0u && !isProgram(T);
  }
  void commit(uint32_t C, int64_t Now);
  void begin(TaskId T, int64_t Now);

  bool isProgram(TaskId T) const {
    return Order[G.Res[T]] == Ordering::Program;
  }
  void push(uint32_t Point) {
    if (Ready[Point] > Limit) {
      // Left out, and with it whatever waits for it.
      R.Stopped = true;
      return;
    }
    if (Dynamic)
      Heap.push({Ready[Point], 0, Seq++, Point});
    else
      Fifo.push_back(Point);
  }
  void relax(uint32_t Point, int64_t Time, uint32_t By) {
    uint32_t &BindSlot =
        (Point & 1) ? R.EndBy[Point / 2] : R.StartBy[Point / 2];
    if (Time > Ready[Point]) {
      Ready[Point] = Time;
      BindSlot = By;
    }
    if (--Pending[Point] == 0)
      push(Point);
  }
  void startTask(TaskId T, int64_t Time);
  void finishTask(TaskId T, int64_t Time);
  void process(uint32_t Point, int64_t Now);
  void dispatch(graph::ResourceId Res, int64_t Now);
};

void Engine::startTask(TaskId T, int64_t Time) {
  R.Start[T] = Time;
  relax(2 * T + 1, Time + Dur[T], BindOwn);
  EdgeScans += G.outEdges(T).size();
  for (uint32_t EI : G.outEdges(T)) {
    const Edge &E = G.Lowered[EI];
    if (fromStart(E.At))
      relax(2 * E.Dst + (toEnd(E.At) ? 1 : 0), Time + E.Delay, EI);
  }
}

void Engine::finishTask(TaskId T, int64_t Time) {
  R.End[T] = Time;
  R.Makespan = std::max(R.Makespan, Time);
  EdgeScans += G.outEdges(T).size();
  for (uint32_t EI : G.outEdges(T)) {
    const Edge &E = G.Lowered[EI];
    if (!fromStart(E.At))
      relax(2 * E.Dst + (toEnd(E.At) ? 1 : 0), Time + E.Delay, EI);
  }
  if (isProgram(T)) {
    TaskId Next = G.NextOnRes[T];
    if (Next != NoTask)
      relax(2 * Next, Time + Gap[Next], BindResource);
  } else {
    Busy[G.Res[T]] = false;
    Heap.push({Time, 1, Seq++, G.Res[T]});
  }
}

void Engine::process(uint32_t Point, int64_t Now) {
  ++Processed;
  TaskId T = Point / 2;
  if (Point & 1) {
    finishTask(T, Ready[Point]);
    return;
  }
  if (isProgram(T)) {
    if (!R.CollectiveOf.empty() && R.CollectiveOf[T] != ~0u)
      arrive(T, Ready[Point]);
    else
      startTask(T, Ready[Point]);
    return;
  }
  // Ready on a dynamic resource: wait for the resource to choose.
  int64_t Prio = Order[G.Res[T]] == Ordering::Priority && Policy &&
                         T < Policy->Priority.size()
                     ? Policy->Priority[T]
                     : 0;
  Queues[G.Res[T]].push({Prio, Ready[Point], T});
  if (!Queued.empty())
    Queued[T] = 1;
  Heap.push({Now, 1, Seq++, G.Res[T]});
}

/// A collective member is ready (on a dynamic resource: dispatched): it
/// waits until the last live member is, then they all start.
void Engine::arrive(TaskId T, int64_t Time) {
  uint32_t C = R.CollectiveOf[T];
  R.Arrival[T] = Time;
  TaskId &Last = R.LastArrived[C];
  if (Last == NoTask || Time > R.Arrival[Last])
    Last = T;
  if (--Missing[C] != 0)
    return;
  int64_t Begin = R.Arrival[Last];
  for (TaskId M : G.collectiveMembers(C)) {
    if (R.CollectiveOf[M] != C)
      continue;
    if (M != Last)
      R.StartBy[M] = BindCollective;
    startTask(M, Begin);
  }
}

void Engine::commit(uint32_t C, int64_t Now) {
  for (TaskId M : G.collectiveMembers(C))
    if (R.CollectiveOf[M] == C && !isProgram(M) && Queued[M] != 2) {
      Commits[G.Res[M]].push_back(M);
      Heap.push({Now, 1, Seq++, G.Res[M]});
    }
}

/// \p T leaves its resource's queue and runs there (a collective member:
/// arrives, holding the resource while it waits for the other members, as
/// a communication kernel holds its stream).
void Engine::begin(TaskId T, int64_t Now) {
  graph::ResourceId Res = G.Res[T];
  Busy[Res] = true;
  if (!Queued.empty())
    Queued[T] = 2;
  if (Now > Ready[2 * T])
    R.StartBy[T] = BindDispatch;
  if (!R.CollectiveOf.empty() && R.CollectiveOf[T] != ~0u)
    arrive(T, std::max(Now, Ready[2 * T]));
  else
    startTask(T, std::max(Now, Ready[2 * T]));
}

void Engine::dispatch(graph::ResourceId Res, int64_t Now) {
  if (Busy[Res])
    return;
  auto &Q = Queues[Res];
  // Members dispatched ahead of their turn (committed) are left in the
  // queue: dropped here.
  while (!Q.empty() && !Queued.empty() && Queued[Q.top().Task] == 2)
    Q.pop();
  if (!Commits.empty() && !Commits[Res].empty()) {
    TaskId Head = Commits[Res].front();
    if (Queued[Head] != 1)
      return; // the resource waits for it
    Commits[Res].pop_front();
    begin(Head, Now);
    return;
  }
  if (Q.empty())
    return;
  Waiting W = Q.top();
  Q.pop();
  // A member here is of a collective not committed yet: a committed one's
  // members wait in Commits until they run.
  if (!Commits.empty() && isChosenMember(W.Task)) {
    uint32_t C = R.CollectiveOf[W.Task];
    Queued[W.Task] = 2; // not committed again on its own resource
    commit(C, Now);
  }
  begin(W.Task, Now);
}

llvm::Expected<SimResult> Engine::run() {
  size_t N = G.numTasks();
  Order.resize(G.Resources.size());
  for (ResourceId Res = 0; Res < G.Resources.size(); ++Res) {
    Order[Res] = G.Resources[Res].Order;
    if (Policy && Res < Policy->ResourceOrder.size())
      Order[Res] = Policy->ResourceOrder[Res];
    Dynamic |= Order[Res] != Ordering::Program;
  }
  R.Start.assign(N, NoTime);
  R.End.assign(N, NoTime);
  R.StartBy.assign(N, BindOrigin);
  R.EndBy.assign(N, BindOwn);
  Pending.assign(2 * N, 0);
  Ready.assign(2 * N, INT64_MIN);
  Queues.resize(G.Resources.size());
  Busy.assign(G.Resources.size(), false);

  // Every time is a sum of durations, gaps and delays along a path: when
  // all of them together stay under MaxTime, no sum can overflow.
  double Bound = G.timeBound();
  if (!(Bound < double(MaxTime)))
    return makeError(fmt::format(
        "the graph's durations, gaps and delays add up to {:.3g} s, beyond "
        "the {:.0f} years ddscript can simulate: a model made times "
        "larger than any run could take",
        Bound / 1e9, double(MaxTime) / 1e9 / 86400 / 365.25));

  size_t Live = 0;
  // The negative durations, gaps and delays, summed for Limit.
  int64_t Negative = 0;
  for (TaskId T = 0; T < N; ++T) {
    if (!G.isLeaf(T) || G.isRemoved(T))
      continue;
    ++Live;
    Negative += std::min<int64_t>(0, Dur[T]) + std::min<int64_t>(0, Gap[T]);
    Pending[2 * T + 1] = 1;
    bool Program = isProgram(T);
    if (Program && G.PrevOnRes[T] != NoTask) {
      ++Pending[2 * T];
    } else {
      // First on its resource: released at the origin plus its gap.
      Ready[2 * T] = Program ? Gap[T] : 0;
    }
    EdgeScans += G.inEdges(T).size();
    for (uint32_t EI : G.inEdges(T)) {
      const Edge &E = G.Lowered[EI];
      ++Pending[2 * T + (toEnd(E.At) ? 1 : 0)];
      Negative += std::min<int64_t>(0, E.Delay);
    }
  }
  // Every time is the origin plus the constants along a path, so a point
  // after one later than Limit is later than Until. No overflow: the
  // negative ones are within the bound checked above.
  if (Until < MaxTime)
    Limit = Until - Negative;
  if (G.numCollectives() && Dynamic) {
    Commits.resize(G.Resources.size());
    Queued.assign(N, 0);
  }
  if (G.numCollectives()) {
    R.CollectiveOf.assign(N, ~0u);
    Missing.assign(G.numCollectives(), 0);
    R.Arrival.assign(N, NoTime);
    R.LastArrived.assign(G.numCollectives(), NoTask);
    for (uint32_t C = 0; C < G.numCollectives(); ++C)
      for (TaskId M : G.collectiveMembers(C))
        if (M < N && G.isLeaf(M) && !G.isRemoved(M) &&
            R.CollectiveOf[M] == ~0u) {
          R.CollectiveOf[M] = C;
          ++Missing[C];
        }
  }
  for (TaskId T = 0; T < N; ++T)
    if (G.isLeaf(T) && !G.isRemoved(T) && Pending[2 * T] == 0)
      push(2 * T);

  if (!Dynamic) {
    while (FifoHead < Fifo.size()) {
      uint32_t P = Fifo[FifoHead++];
      process(P, Ready[P]);
    }
  } else {
    while (!Heap.empty()) {
      Event E = Heap.top();
      // Time order: what is left is later than Limit, and so is what
      // would follow from it.
      if (E.Time > Limit) {
        R.Stopped = true;
        break;
      }
      Heap.pop();
      if (E.Class == 0)
        process(E.Item, E.Time);
      else
        dispatch(E.Item, E.Time);
    }
  }
  // Three passes over the tasks (set-up, release, containers below) and
  // the points scheduled: what the input decides, however it ran.
  work::add(work::Counter::SimTasks, 3 * N + Processed);
  work::add(work::Counter::SimEdges, EdgeScans);
  if (Processed != 2 * Live && !R.Stopped && !Missing.empty()) {
    size_t Stuck = 0;
    for (uint32_t M : Missing)
      Stuck += M != 0;
    if (Stuck)
      return makeError(
          "the simulation cannot finish: " + llvm::Twine(Stuck) +
          " collectives never started because some of their ranks never "
          "reached them (a model made a rank wait for a collective that "
          "waits for it)");
  }
  if (Processed != 2 * Live && !R.Stopped)
    return makeError(
        "the simulation cannot finish: " + llvm::Twine(Live - Processed / 2) +
        " of " + llvm::Twine(Live) +
        " tasks never became ready (a dependency cycle)");

  // Containers take their times from their first and last live leaf.
  std::vector<TaskId> First(N, NoTask), Last(N, NoTask);
  for (const auto &Seq : G.ResourceTasks)
    for (TaskId L : Seq)
      for (TaskId P = G.Parent[L]; P != NoTask; P = G.Parent[P]) {
        if (First[P] == NoTask)
          First[P] = L;
        Last[P] = L;
      }
  for (TaskId T = 0; T < N; ++T) {
    if (!G.isContainer(T) || G.isRemoved(T) || First[T] == NoTask)
      continue;
    // A simulation stopped early may have left either out.
    if (!R.Stopped || R.Start[First[T]] != NoTime)
      R.Start[T] = R.Start[First[T]] - G.Lead[T];
    if (!R.Stopped || R.End[Last[T]] != NoTime)
      R.End[T] = R.End[Last[T]] + G.Trail[T];
  }
  return std::move(R);
}

} // namespace

llvm::Expected<SimResult> sim::simulate(const Graph &G,
                                        const SchedulePolicy *Policy,
                                        const TimeOverride *Times,
                                        int64_t Until) {
  if (!G.finalized())
    return makeError("internal error: graph not finalized");
  if (Times &&
      (Times->Dur.size() != G.numTasks() || Times->Gap.size() != G.numTasks()))
    return makeError("internal error: time override of the wrong size");
  return Engine(G, Policy, Times, Until).run();
}

/// Where a boundary marker that a model removed (or emptied), and that the
/// simulation therefore did not time, would be: on
/// its thread, the start of the first live leaf from its first leaf's
/// position on, or the end of the last live leaf up to its last leaf's
/// position (work inserted right after it included). NoTime if none.
static int64_t stoodAt(const Graph &G, const SimResult &R, TaskId T, bool End) {
  TaskId First = G.isContainer(T) ? G.FirstLeaf[T] : T;
  TaskId Last = G.isContainer(T) ? G.LastLeaf[T] : T;
  if (First == NoTask || G.Res[First] == graph::NoResource)
    return graph::NoTime;
  const auto &Seq = G.ResourceTasks[G.Res[First]];
  // Counted: a scan per iteration would grow with their square.
  work::add(work::Counter::SimTasks, Seq.size());
  if (End) {
    int64_t Key = G.OrderKey[Last];
    for (size_t I = Seq.size(); I-- > 0;)
      if (G.OrderKey[Seq[I]] <= Key && R.End[Seq[I]] != graph::NoTime)
        return R.End[Seq[I]];
  } else {
    int64_t Key = G.OrderKey[First];
    for (TaskId L : Seq)
      if (G.OrderKey[L] >= Key && R.Start[L] != graph::NoTime)
        return R.Start[L];
  }
  return graph::NoTime;
}

int64_t sim::pointTime(const Graph &G, const SimResult &R,
                       const graph::Iteration::Point &P) {
  using PK = graph::Iteration::PointKind;
  int64_t T = 0;
  switch (P.Kind) {
  case PK::Origin:
    return 0;
  case PK::Makespan:
    return R.Makespan;
  case PK::TaskStart:
    T = R.Start[P.Task];
    break;
  case PK::TaskEnd:
    T = R.End[P.Task];
    break;
  }
  if (T != graph::NoTime)
    return T;
  bool End = P.Kind == PK::TaskEnd;
  T = stoodAt(G, R, P.Task, End);
  return T != graph::NoTime ? T : End ? R.Makespan : 0;
}

std::pair<int64_t, int64_t> sim::iterationSpan(const Graph &G,
                                               const SimResult &R,
                                               const graph::Iteration &I) {
  int64_t Begin = pointTime(G, R, I.Begin), End = pointTime(G, R, I.End);
  if (End >= Begin)
    return {Begin, End};
  // The boundaries crossed: what marked them is gone. Time what is left.
  int32_t Index = static_cast<int32_t>(&I - G.Iterations.data());
  work::add(work::Counter::SimTasks, G.numTasks());
  int64_t First = INT64_MAX, Last = INT64_MIN;
  for (TaskId T = 0; T < G.numTasks(); ++T)
    if (G.IterationOf[T] == Index && G.isLeaf(T) && !G.isRemoved(T) &&
        R.Start[T] != graph::NoTime) {
      First = std::min(First, R.Start[T]);
      Last = std::max(Last, R.End[T]);
    }
  if (Last < First)
    return {Begin, Begin};
  return {First, Last};
}

int64_t sim::iterationTime(const Graph &G, const SimResult &R,
                           const graph::Iteration &I) {
  auto [Begin, End] = iterationSpan(G, R, I);
  return End - Begin;
}

IterationLoad sim::iterationLoad(const Graph &G, const SimResult &R) {
  IterationLoad L;
  L.Work.assign(G.Iterations.size(),
                std::vector<int64_t>(G.Resources.size(), 0));
  L.Done.assign(G.Iterations.size(), INT64_MIN);
  work::add(work::Counter::SimTasks, G.numTasks());
  for (TaskId T = 0; T < G.numTasks(); ++T) {
    int32_t It = G.IterationOf[T];
    if (It < 0 || static_cast<size_t>(It) >= L.Work.size() || !G.isLeaf(T) ||
        G.isRemoved(T))
      continue;
    if (G.Res[T] != graph::NoResource)
      L.Work[It][G.Res[T]] += G.Dur[T];
    if (T < R.End.size() && R.End[T] != graph::NoTime)
      L.Done[It] = std::max(L.Done[It], R.End[T]);
  }
  return L;
}

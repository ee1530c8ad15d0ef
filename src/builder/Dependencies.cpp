//===- Dependencies.cpp - The dependencies a trace implies ----------------===//
//
// Daydream's dependency types, inferred from a trace:
//   launch      CPU launch call -> GPU work (by correlation id)
//   sync        GPU work -> a blocking call (device/stream/event sync,
//               synchronous copies, cudaFree)
//   queue-full  GPU work -> a launch call that blocked because the device's
//               launch queue was full (its depth is measured)
//   event-wait  GPU work -> GPU work on another stream (cudaEventRecord +
//               cudaStreamWaitEvent; exact with cuda_sync records)
//   wake        CPU task -> the task on another thread it woke up
//   fwd-bwd     forward operator -> its backward operator
// Edges are created with delay 0; calibrate() sets delays from the trace.
//
//===----------------------------------------------------------------------===//

#include "builder/BuilderImpl.h"
#include "support/Work.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>

using namespace dd;
using namespace dd::graph;
using namespace dd::graph::detail;
using trace::EventKind;

namespace {

enum class CallClass : uint8_t {
  Other,
  DeviceSync,
  StreamSync,
  EventSync,
  SyncCopy,
  EventRecord,
  StreamWait
};

CallClass classifyCall(std::string_view N) {
  auto Is = [&](std::initializer_list<std::string_view> Names) {
    for (std::string_view X : Names)
      if (N == X)
        return true;
    return false;
  };
  if (Is({"cudaDeviceSynchronize", "cuCtxSynchronize", "hipDeviceSynchronize",
          "cudaFree", "cuMemFree", "cuMemFree_v2", "hipFree", "cudaFreeHost",
          "hipHostFree"}))
    return CallClass::DeviceSync;
  if (Is({"cudaStreamSynchronize", "cuStreamSynchronize",
          "hipStreamSynchronize"}))
    return CallClass::StreamSync;
  if (Is({"cudaEventSynchronize", "cuEventSynchronize", "hipEventSynchronize"}))
    return CallClass::EventSync;
  if (Is({"cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyToSymbol",
          "cudaMemcpyFromSymbol", "cuMemcpyDtoH", "cuMemcpyDtoH_v2",
          "cuMemcpyHtoD", "cuMemcpyHtoD_v2", "cuMemcpy", "hipMemcpy",
          "hipMemcpyDtoH", "hipMemcpyHtoD"}))
    return CallClass::SyncCopy;
  if (Is({"cudaEventRecord", "cudaEventRecordWithFlags", "cuEventRecord",
          "cuEventRecordWithFlags", "hipEventRecord"}))
    return CallClass::EventRecord;
  if (Is({"cudaStreamWaitEvent", "cuStreamWaitEvent", "hipStreamWaitEvent"}))
    return CallClass::StreamWait;
  return CallClass::Other;
}

/// Exact synchronisation facts from cuda_sync records, keyed by the
/// correlation id of the API call they belong to.
struct SyncRecord {
  EventId Event;
  int32_t Device;
  int64_t Stream;       ///< the waiting / synchronised stream, or -1
  int64_t WaitOnStream; ///< stream of the awaited event record, or -1
  int64_t RecordCorr;   ///< correlation of the awaited cudaEventRecord, or -1
};

class GpuDeps {
public:
  explicit GpuDeps(BuildContext &C) : C(C), G(C.G), T(C.T) {}
  void run();

private:
  BuildContext &C;
  Graph &G;
  const trace::Trace &T;
  llvm::DenseMap<int64_t, SyncRecord> SyncByCorr;
  llvm::DenseMap<std::pair<int32_t, int64_t>, ResourceId> StreamByKey;
  std::vector<std::vector<TaskId>> RecordsByThread;
  /// Events, tasks and launches the passes visited (work::BuilderScans),
  /// added to the counter once, at the end of run().
  uint64_t Scans = 0;

  void readSyncRecords();
  ResourceId stream(int32_t Device, int64_t Id) const {
    auto It = StreamByKey.find({Device, Id});
    return It == StreamByKey.end() ? NoResource : It->second;
  }
  int32_t deviceOfThread(ResourceId Thread, int64_t Ts) const;
  void syncOn(TaskId Call, TaskId Op) {
    if (Op == NoTask)
      return;
    C.addEdge(Op, Call, EdgeKind::Sync, Anchor::EndToEnd);
    G.Flags[Call] |= TF_Blocking;
  }
  /// The stream whose last launched work an event record captured.
  ResourceId recordStream(TaskId Record, const SyncRecord *Exact) const;
  TaskId lastRecordBefore(ResourceId Thread, int64_t Ts) const;
  void addSyncs(TaskId Call, CallClass Class);
  void addDeviceSync(TaskId Call, int32_t Dev);
  /// The previous device-wide sync of a thread, per device it covered (-1:
  /// every device): what it waited for, a later one there waits for too.
  struct PrevSync {
    TaskId Call;
    int64_t At;
  };
  llvm::DenseMap<std::pair<ResourceId, int32_t>, PrevSync> PrevDeviceSync;
  std::vector<uint8_t> StreamSeen; ///< per resource, for addDeviceSync
  std::vector<ResourceId> SeenList;
  void addEventWait(TaskId Wait);
  void addQueueFull();
};

} // namespace

void GpuDeps::readSyncRecords() {
  for (EventId E = 0; E < T.numEvents(); ++E) {
    if (T.Kind[E] != EventKind::CudaSync || T.Correlation[E] == trace::NoValue)
      continue;
    const trace::Track &Tr = T.track(E);
    SyncRecord R;
    R.Event = E;
    R.Device = Tr.Device;
    // The record's row is the waiting or synchronised stream; context syncs
    // sit on a row with stream -1.
    R.Stream = Tr.Stream == trace::NoValue ? -1 : Tr.Stream;
    R.WaitOnStream = T.intArg(E, trace::ArgKey::WaitOnStream).value_or(-1);
    R.RecordCorr = T.intArg(E, trace::ArgKey::WaitOnEventCorr).value_or(-1);
    SyncByCorr[T.Correlation[E]] = R;
  }
  Scans += T.numEvents();
  C.Stats.HasCudaSyncEvents = !SyncByCorr.empty();
}

int32_t GpuDeps::deviceOfThread(ResourceId Thread, int64_t Ts) const {
  ResourceId S = C.streamLaunchedBefore(Thread, Ts);
  if (S == NoResource)
    S = C.streamLaunchedAfter(Thread, Ts);
  return S == NoResource ? -1 : G.Resources[S].Device;
}

TaskId GpuDeps::lastRecordBefore(ResourceId Thread, int64_t Ts) const {
  const auto &Recs = RecordsByThread[Thread];
  auto It = std::partition_point(Recs.begin(), Recs.end(),
                                 [&](TaskId R) { return C.mStart(R) < Ts; });
  return It == Recs.begin() ? NoTask : *(It - 1);
}

ResourceId GpuDeps::recordStream(TaskId Record, const SyncRecord *Exact) const {
  if (Exact && Exact->WaitOnStream >= 0) {
    ResourceId S = stream(Exact->Device, Exact->WaitOnStream);
    if (S != NoResource)
      return S;
  }
  // Without cuda_sync records: the stream the recording thread launched
  // onto last (as HTA infers it).
  return C.streamLaunchedBefore(G.Res[Record], C.mStart(Record));
}

void GpuDeps::addSyncs(TaskId Call, CallClass Class) {
  int64_t At = C.mStart(Call);
  const SyncRecord *Exact = nullptr;
  if (G.Correlation[Call] >= 0) {
    auto It = SyncByCorr.find(G.Correlation[Call]);
    if (It != SyncByCorr.end())
      Exact = &It->second;
  }
  switch (Class) {
  case CallClass::DeviceSync:
    addDeviceSync(Call, Exact && Exact->Device >= 0
                            ? Exact->Device
                            : deviceOfThread(G.Res[Call], At));
    return;
  case CallClass::StreamSync: {
    ResourceId S = NoResource;
    if (Exact && Exact->Stream >= 0)
      S = stream(Exact->Device, Exact->Stream);
    if (S == NoResource)
      S = C.streamLaunchedBefore(G.Res[Call], At);
    if (S != NoResource)
      syncOn(Call, C.lastLaunchedBefore(S, At));
    return;
  }
  case CallClass::EventSync: {
    TaskId Record = NoTask;
    if (Exact && Exact->RecordCorr >= 0) {
      auto It = C.CallByCorrelation.find(Exact->RecordCorr);
      if (It != C.CallByCorrelation.end())
        Record = It->second;
    }
    if (Record == NoTask)
      Record = lastRecordBefore(G.Res[Call], At);
    if (Record == NoTask)
      return;
    ResourceId S = recordStream(Record, Exact);
    if (S != NoResource)
      syncOn(Call, C.lastLaunchedBefore(S, C.mStart(Record)));
    return;
  }
  default:
    return;
  }
}

/// A device-wide sync waits for the last work launched onto every stream
/// of the device (of every device for -1). Its thread's previous sync there
/// already waited for the work launched before it, and the thread ran that
/// sync first: edges come only from the streams launched onto since, and
/// one edge from that sync, which keeps the order when a what-if removes it
/// (its waits are bridged on through that edge). So a trace of N streams
/// and M syncs gives the streams' work plus M edges, not N x M.
void GpuDeps::addDeviceSync(TaskId Call, int32_t Dev) {
  int64_t At = C.mStart(Call);
  ResourceId Thread = G.Res[Call];
  auto [It, First] = PrevDeviceSync.try_emplace({Thread, Dev});
  PrevSync Prev = It->second;
  It->second = {Call, At};
  if (First) {
    for (auto &[D, Streams] : C.DeviceStreams)
      if (Dev < 0 || D == Dev) {
        Scans += Streams.size();
        for (ResourceId S : Streams)
          syncOn(Call, C.lastLaunchedBefore(S, At));
      }
    return;
  }
  C.addEdge(Prev.Call, Call, EdgeKind::Sync, Anchor::EndToEnd);
  G.Flags[Call] |= TF_Blocking;
  StreamSeen.resize(G.Resources.size());
  for (auto &[D, Launches] : C.DeviceLaunches) {
    if (Dev >= 0 && D != Dev)
      continue;
    auto From = std::partition_point(
        Launches.begin(), Launches.end(),
        [&](const BuildContext::Launch &L) { return L.CallStart < Prev.At; });
    auto L = From;
    for (; L != Launches.end() && L->CallStart < At; ++L) {
      ResourceId S = G.Res[L->Op];
      if (!StreamSeen[S]) {
        StreamSeen[S] = 1;
        SeenList.push_back(S);
      }
    }
    Scans += static_cast<uint64_t>(L - From);
  }
  // Stream order: the same edges, in the same order, on every run.
  std::sort(SeenList.begin(), SeenList.end());
  for (ResourceId S : SeenList) {
    syncOn(Call, C.lastLaunchedBefore(S, At));
    StreamSeen[S] = 0;
  }
  SeenList.clear();
}

void GpuDeps::addEventWait(TaskId Wait) {
  int64_t At = C.mStart(Wait);
  const SyncRecord *Exact = nullptr;
  if (G.Correlation[Wait] >= 0) {
    auto It = SyncByCorr.find(G.Correlation[Wait]);
    if (It != SyncByCorr.end())
      Exact = &It->second;
  }
  TaskId Record = NoTask;
  if (Exact && Exact->RecordCorr >= 0) {
    auto It = C.CallByCorrelation.find(Exact->RecordCorr);
    if (It != C.CallByCorrelation.end())
      Record = It->second;
  }
  if (!Exact || Exact->RecordCorr < 0)
    Record = lastRecordBefore(G.Res[Wait], At);
  ResourceId To = NoResource;
  if (Exact && Exact->Stream >= 0)
    To = stream(Exact->Device, Exact->Stream);
  if (To == NoResource)
    To = C.streamLaunchedAfter(G.Res[Wait], At);
  ResourceId From = NoResource;
  int64_t RecordedAt = At;
  if (Record != NoTask) {
    From = recordStream(Record, Exact);
    RecordedAt = C.mStart(Record);
  } else {
    // Some traces drop cudaEventRecord calls: assume the event captured the
    // other stream this thread launched onto last.
    From = C.streamLaunchedBeforeExcept(G.Res[Wait], At, To);
  }
  if (From == NoResource || To == NoResource || From == To)
    return;
  TaskId Src = C.lastLaunchedBefore(From, RecordedAt);
  TaskId Dst = C.firstLaunchedAfter(To, At);
  if (Src == NoTask || Dst == NoTask)
    return;
  C.addEdge(Src, Dst, EdgeKind::EventWait, Anchor::EndToStart);
}

void GpuDeps::addQueueFull() {
  // CUDA accepts about a thousand launches per stream ahead of the device;
  // past that a launch call blocks until earlier work completes. For every
  // call, count the work launched before it on its stream that had not
  // finished when it returned (its queue depth). A call that visibly
  // blocked waited for the work just past that depth; any other call could
  // not have returned before the work that deep in the queue finished
  // either. Blocked depths vary a little (the queue holds bytes, not
  // launches): their median applies to calls that never blocked.
  struct CallDepth {
    ResourceId Stream;
    size_t Index; ///< into StreamOps[Stream]
    int64_t Depth;
    bool Blocked;
  };
  std::vector<CallDepth> Calls;
  std::vector<int64_t> BlockedDepths;
  std::vector<int64_t> CallDurs;
  for (const auto &Ops : C.StreamOps)
    for (TaskId X : Ops)
      if (G.Launcher[X] != NoTask)
        CallDurs.push_back(G.MeasuredDur[G.Launcher[X]]);
  // "Long" relative to an unblocked call: the fifth percentile, since in a
  // GPU-bound trace most launches may block.
  int64_t Quick = 5000;
  if (!CallDurs.empty()) {
    auto P =
        CallDurs.begin() + static_cast<std::ptrdiff_t>(CallDurs.size() / 20);
    std::nth_element(CallDurs.begin(), P, CallDurs.end());
    Quick = *P;
  }
  // (Clamped: a damaged trace's durations may be anything.)
  int64_t LongCall = std::max<int64_t>(
      50000, std::clamp<int64_t>(Quick, 0, MaxTime / 10) * 10);
  for (ResourceId S = 0; S < C.StreamOps.size(); ++S) {
    const auto &Ops = C.StreamOps[S];
    Scans += 2 * Ops.size();
    // Work on a stream finishes in order: a running maximum of ends is
    // sorted and counts what had finished by a given time.
    std::vector<int64_t> DoneBy;
    int64_t M = INT64_MIN;
    for (TaskId X : Ops) {
      M = std::max(M, C.mEnd(X));
      DoneBy.push_back(M);
    }
    for (size_t K = 0; K < Ops.size(); ++K) {
      TaskId Call = G.Launcher[Ops[K]];
      if (Call == NoTask || (K > 0 && G.Launcher[Ops[K - 1]] == Call))
        continue;
      int64_t Ret = C.mEnd(Call);
      int64_t Done = std::upper_bound(DoneBy.begin(), DoneBy.begin() + K, Ret) -
                     DoneBy.begin();
      int64_t Depth = static_cast<int64_t>(K) - Done;
      bool Blocked = G.MeasuredDur[Call] >= LongCall && Depth >= 64;
      Calls.push_back({S, K, Depth, Blocked});
      if (Blocked)
        BlockedDepths.push_back(Depth);
    }
  }
  C.Stats.QueueBlockedCalls = BlockedDepths.size();
  C.Stats.QueueCapacityMeasured = BlockedDepths.size() >= 3;
  int64_t Capacity = C.Opts.QueueCapacity > 0 ? C.Opts.QueueCapacity
                     : C.Stats.QueueCapacityMeasured
                         ? median(BlockedDepths, 1024)
                         : 1024;
  C.Stats.QueueCapacity = Capacity;
  for (const CallDepth &D : Calls) {
    int64_t Depth = D.Blocked && C.Opts.QueueCapacity <= 0
                        ? D.Depth
                        : std::max(Capacity, D.Depth);
    int64_t J = static_cast<int64_t>(D.Index) - 1 - Depth;
    if (J >= 0)
      C.addEdge(C.StreamOps[D.Stream][J],
                G.Launcher[C.StreamOps[D.Stream][D.Index]], EdgeKind::QueueFull,
                Anchor::EndToEnd);
  }
}

void GpuDeps::run() {
  readSyncRecords();
  for (ResourceId R = 0; R < G.Resources.size(); ++R)
    if (G.Resources[R].Kind == ResourceKind::GpuStream)
      StreamByKey[{G.Resources[R].Device, G.Resources[R].Id}] = R;

  // Launch edges: a call may launch many (cudaGraphLaunch).
  for (TaskId X = 0; X < G.numTasks(); ++X)
    if (G.isGpu(X) && G.Launcher[X] != NoTask)
      C.addEdge(G.Launcher[X], X, EdgeKind::Launch, Anchor::StartToStart);

  RecordsByThread.assign(G.Resources.size(), {});
  std::vector<std::pair<TaskId, CallClass>> Calls;
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.Kind[X] != TaskKind::Runtime || G.isContainer(X))
      continue;
    CallClass K = classifyCall(G.name(X));
    if (K == CallClass::EventRecord)
      RecordsByThread[G.Res[X]].push_back(X);
    if (K != CallClass::Other)
      Calls.push_back({X, K});
  }
  for (auto &Recs : RecordsByThread)
    std::sort(Recs.begin(), Recs.end(),
              [&](TaskId A, TaskId B) { return C.mStart(A) < C.mStart(B); });

  // Synchronous copies wait for their own work, and so does an
  // asynchronous copy into pageable host memory. A copy from pageable host
  // memory waits for the work queued before it on its stream, stages the
  // data and returns before the transfer ends (CUDA's API sync behaviour).
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (!G.isGpu(X) || G.Launcher[X] == NoTask)
      continue;
    TaskId Call = G.Launcher[X];
    CallClass K = classifyCall(G.name(Call));
    std::string_view N = G.name(X);
    bool IsCopy = G.Kind[X] == TaskKind::Memcpy;
    bool ToPageable = IsCopy && N.find("-> Pageable") != std::string_view::npos;
    bool FromPageable =
        IsCopy && N.find("Pageable ->") != std::string_view::npos;
    if (K == CallClass::SyncCopy || ToPageable) {
      syncOn(Call, X);
    } else if (FromPageable) {
      ResourceId S = G.Res[X];
      // A stream's work is in task id order (created in stream order).
      auto &Ops = C.StreamOps[S];
      auto It = std::lower_bound(Ops.begin(), Ops.end(), X);
      if (It != Ops.end() && *It != X)
        It = Ops.end();
      if (It != Ops.begin() && It != Ops.end())
        syncOn(Call, *(It - 1));
    }
  }
  // Device-wide syncs in each thread's time order (addDeviceSync).
  std::stable_sort(Calls.begin(), Calls.end(), [&](auto A, auto B) {
    bool DA = A.second == CallClass::DeviceSync,
         DB = B.second == CallClass::DeviceSync;
    if (DA != DB)
      return DB;
    return DA && C.mStart(A.first) < C.mStart(B.first);
  });
  for (auto [X, K] : Calls) {
    if (K == CallClass::StreamWait)
      addEventWait(X);
    else
      addSyncs(X, K);
  }
  addQueueFull();
  // The three passes over the tasks above, and the calls sorted.
  Scans += 3 * G.numTasks() + Calls.size();
  work::add(work::Counter::BuilderScans, Scans);
}

void detail::addGpuDependencies(BuildContext &C) { GpuDeps(C).run(); }

// --- CPU-side dependencies ------------------------------------------------

static void addWakeEdges(BuildContext &C) {
  // A thread that sat idle and resumed shortly after a task on another
  // thread ended was, most likely, woken by it (the autograd engine starting
  // backward, the main thread resuming after it).
  constexpr int64_t MinIdle = 50'000;       // ns of idleness worth explaining
  constexpr int64_t MaxLatency = 1'000'000; // ns from the waker's end
  Graph &G = C.G;
  std::vector<ResourceId> Threads;
  for (ResourceId R = 0; R < C.ThreadLeaves.size(); ++R)
    if (R < G.Resources.size() &&
        G.Resources[R].Kind == ResourceKind::CpuThread &&
        !C.ThreadLeaves[R].empty())
      Threads.push_back(R);
  if (Threads.size() < 2)
    return;
  // Leaves and threads visited (work::BuilderScans).
  uint64_t Scans = 0;
  // Running maximum of leaf ends per thread, for binary search.
  std::vector<std::vector<int64_t>> MaxEnd(G.Resources.size());
  for (ResourceId R : Threads) {
    Scans += 2 * C.ThreadLeaves[R].size(); // here and for the resumes
    int64_t M = INT64_MIN;
    for (TaskId L : C.ThreadLeaves[R]) {
      M = std::max(M, C.mEnd(L));
      MaxEnd[R].push_back(M);
    }
  }
  // The leaves that resumed a thread after an idle spell, in thread order.
  struct Resume {
    TaskId X;
    ResourceId A;
    int64_t Start, IdleFrom;
    TaskId Waker = NoTask;
  };
  std::vector<Resume> Resumes;
  for (ResourceId A : Threads) {
    const auto &Leaves = C.ThreadLeaves[A];
    for (size_t I = 0; I < Leaves.size(); ++I) {
      int64_t Start = C.mStart(Leaves[I]);
      int64_t IdleFrom = I ? C.mEnd(Leaves[I - 1]) : C.W0;
      if (Start - IdleFrom >= MinIdle)
        Resumes.push_back({Leaves[I], A, Start, IdleFrom});
    }
  }
  // Each is woken by the latest end, within MaxLatency before it, among the
  // other threads' last leaves to end by then (per thread, the last leaf
  // whose running maximum end is not after the start; the lower thread on
  // ties). The resumes are taken in time order, so each thread's last leaf
  // only moves forward; the threads' last leaves are kept ordered, the
  // latest end first, and a resume looks at the first two (one may be its
  // own thread's). Looking at every thread instead made a trace of many
  // threads that each resume many times quadratic.
  std::vector<uint32_t> ByStart(Resumes.size());
  for (uint32_t I = 0; I < ByStart.size(); ++I)
    ByStart[I] = I;
  std::stable_sort(ByStart.begin(), ByStart.end(), [&](uint32_t P, uint32_t Q) {
    return Resumes[P].Start < Resumes[Q].Start;
  });
  using Candidate = std::pair<int64_t, ResourceId>; // (end, thread)
  auto Later = [](const Candidate &P, const Candidate &Q) {
    return P.first != Q.first ? P.first > Q.first : P.second < Q.second;
  };
  std::set<Candidate, decltype(Later)> Last(Later);
  // Per thread, its leaves up to the last one (those whose running maximum
  // end is not after the resume's start); the threads by the running
  // maximum end of their next leaf, the soonest first.
  std::vector<size_t> Taken(G.Resources.size(), 0);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> Due;
  for (ResourceId R : Threads)
    Due.push({MaxEnd[R].front(), R});
  for (uint32_t RI : ByStart) {
    Resume &Q = Resumes[RI];
    while (!Due.empty() && Due.top().first <= Q.Start) {
      ResourceId B = Due.top().second;
      Due.pop();
      const auto &M = MaxEnd[B];
      const auto &Leaves = C.ThreadLeaves[B];
      size_t &K = Taken[B], From = K;
      if (K > 0)
        Last.erase({C.mEnd(Leaves[K - 1]), B});
      while (K < M.size() && M[K] <= Q.Start)
        ++K;
      Scans += K - From;
      Last.insert({C.mEnd(Leaves[K - 1]), B});
      if (K < M.size())
        Due.push({M[K], B});
    }
    Scans += 2; // the two latest
    auto Best = Last.begin();
    if (Best != Last.end() && Best->second == Q.A)
      ++Best;
    if (Best == Last.end())
      continue;
    // Not after the start (a leaf ends by its running maximum); the
    // other threads' last leaves end no later than this one.
    int64_t End = Best->first;
    if (End < Q.IdleFrom || Q.Start - End > MaxLatency)
      continue;
    Q.Waker = C.ThreadLeaves[Best->second][Taken[Best->second] - 1];
  }
  for (const Resume &Q : Resumes)
    if (Q.Waker != NoTask)
      C.addEdge(Q.Waker, Q.X, EdgeKind::Wake, Anchor::EndToStart);
  work::add(work::Counter::BuilderScans, Scans);
}

static void addFwdBwdEdges(BuildContext &C) {
  const trace::Trace &T = C.T;
  Graph &G = C.G;
  // Tasks by (thread track, start) where a fwdbwd flow point lies,
  // preferring ops that carry a sequence number (the forward op a flow
  // starts at), then the outermost.
  llvm::DenseMap<std::pair<trace::TrackId, int64_t>, TaskId> AtStart;
  for (const trace::FlowPoint &F : T.Flows)
    if (F.Kind == trace::FlowKind::FwdBwd)
      AtStart.try_emplace({F.Track, F.Ts}, NoTask);
  for (TaskId X = 0; X < G.numTasks() && !AtStart.empty(); ++X) {
    if (G.isGpu(X) || G.Event[X] == ~0u)
      continue;
    EventId E = G.Event[X];
    auto It = AtStart.find(std::make_pair(T.TrackOf[E], T.Start[E]));
    if (It == AtStart.end())
      continue;
    if (It->second == NoTask ||
        (T.SeqNumber[G.Event[It->second]] == trace::NoValue &&
         T.SeqNumber[E] != trace::NoValue))
      It->second = X;
  }
  auto EndLeaf = [&](TaskId X) { return G.isContainer(X) ? G.LastLeaf[X] : X; };
  auto StartLeaf = [&](TaskId X) {
    return G.isContainer(X) ? G.FirstLeaf[X] : X;
  };
  auto Link = [&](TaskId Fwd, TaskId Bwd) {
    TaskId Src = EndLeaf(Fwd), Dst = StartLeaf(Bwd);
    if (Src != NoTask && Dst != NoTask && Src != Dst &&
        C.mEnd(Src) <= C.mStart(Dst))
      C.addEdge(Src, Dst, EdgeKind::FwdBwd, Anchor::EndToStart);
  };

  llvm::DenseMap<uint64_t, TaskId> Starts;
  bool AnyFlow = false;
  for (const trace::FlowPoint &F : T.Flows) {
    if (F.Kind != trace::FlowKind::FwdBwd)
      continue;
    AnyFlow = true;
    auto It = AtStart.find({F.Track, F.Ts});
    if (It == AtStart.end() || It->second == NoTask)
      continue;
    if (F.Phase == 's')
      Starts[F.Id] = It->second;
  }
  if (AnyFlow) {
    for (const trace::FlowPoint &F : T.Flows) {
      if (F.Kind != trace::FlowKind::FwdBwd || F.Phase != 'f')
        continue;
      auto S = Starts.find(F.Id);
      auto D = AtStart.find({F.Track, F.Ts});
      if (S != Starts.end() && D != AtStart.end() && D->second != NoTask)
        Link(S->second, D->second);
    }
    // Three passes over the flows, one over the tasks.
    work::add(work::Counter::BuilderScans, 3 * T.Flows.size() + G.numTasks());
    return;
  }
  // No flows: pair by autograd sequence number (forward ops have
  // "Fwd thread id" 0, their backward nodes a positive one).
  llvm::DenseMap<int64_t, TaskId> Forward;
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.Event[X] == ~0u || G.isGpu(X))
      continue;
    EventId E = G.Event[X];
    if (T.SeqNumber[E] != trace::NoValue && T.FwdThread[E] <= 0)
      Forward.try_emplace(T.SeqNumber[E], X);
  }
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.Event[X] == ~0u || G.isGpu(X))
      continue;
    EventId E = G.Event[X];
    if (T.SeqNumber[E] == trace::NoValue || T.FwdThread[E] <= 0)
      continue;
    auto It = Forward.find(T.SeqNumber[E]);
    if (It != Forward.end())
      Link(It->second, X);
  }
  work::add(work::Counter::BuilderScans, 2 * T.Flows.size() + 3 * G.numTasks());
}

void detail::addCpuDependencies(BuildContext &C) {
  addWakeEdges(C);
  addFwdBwdEdges(C);
}

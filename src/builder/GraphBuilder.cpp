//===- GraphBuilder.cpp - Iterations and tasks from a trace ---------------===//

#include "builder/BuilderImpl.h"

#include "ops/Saved.h"
#include "ops/Sizes.h"
#include "support/Error.h"
#include "support/Format.h"
#include "trace/RecordedBytes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::graph;
using namespace dd::graph::detail;
using trace::EventKind;

static llvm::Error fail(const llvm::Twine &Msg) { return makeError(Msg); }

int64_t detail::median(std::vector<int64_t> &V, int64_t Default) {
  if (V.empty())
    return Default;
  auto Mid = V.begin() + static_cast<std::ptrdiff_t>(V.size() / 2);
  std::nth_element(V.begin(), Mid, V.end());
  return *Mid;
}

bool graph::hasGpuWork(const trace::Trace &T) {
  for (EventKind K : T.Kind)
    if (trace::isGpuWork(K))
      return true;
  return false;
}

std::string graph::noGpuWorkMessage(const trace::Trace &T) {
  return "no GPU work in the trace (a CPU-only profile: " +
         std::to_string(T.numEvents()) +
         " events, no kernels, copies or sets); ddscript replays GPU "
         "training iterations";
}

int64_t graph::traceBegin(const trace::Trace &T) {
  int64_t B = INT64_MAX;
  for (int64_t S : T.Start)
    B = std::min(B, S);
  return B == INT64_MAX ? 0 : B;
}

static bool isHostKind(EventKind K) {
  return K == EventKind::CpuOp || K == EventKind::UserAnnotation ||
         K == EventKind::PythonFunction || K == EventKind::Runtime ||
         K == EventKind::Driver || K == EventKind::Marker;
}

/// "ProfilerStep#12" -> 12.
static std::optional<int64_t> profilerStepNumber(std::string_view Name) {
  constexpr std::string_view Prefix = "ProfilerStep#";
  if (Name.substr(0, Prefix.size()) != Prefix || Name.size() == Prefix.size())
    return std::nullopt;
  int64_t N = 0;
  for (char Ch : Name.substr(Prefix.size())) {
    if (Ch < '0' || Ch > '9' || N > (INT64_MAX - 9) / 10)
      return std::nullopt;
    N = N * 10 + (Ch - '0');
  }
  return N;
}

/// Events named by \p Match on the track that has most of them, by start.
/// Annotations, operators (the 2021 schema) and NVTX ranges (run.cupti)
/// can name iterations.
template <typename Pred>
static std::vector<EventId>
markersOnBusiestTrack(const trace::Trace &T, Pred Match, bool *Tied = nullptr) {
  return detail::eventsOnBusiestTrack(
      T,
      [&](EventId E) {
        return (T.Kind[E] == EventKind::UserAnnotation ||
                T.Kind[E] == EventKind::CpuOp ||
                T.Kind[E] == EventKind::Marker) &&
               Match(T.name(E));
      },
      Tied);
}

std::vector<EventId> graph::profilerSteps(const trace::Trace &T, bool *Tied) {
  std::vector<EventId> Steps = markersOnBusiestTrack(
      T, [](std::string_view N) { return profilerStepNumber(N).has_value(); },
      Tied);
  // Zero-length steps carry no iteration.
  Steps.erase(std::remove_if(Steps.begin(), Steps.end(),
                             [&](EventId E) { return T.Dur[E] <= 0; }),
              Steps.end());
  return Steps;
}

int64_t graph::profilerStepNumberOf(const trace::Trace &T, EventId E) {
  return profilerStepNumber(T.name(E)).value_or(-1);
}

llvm::Error detail::findIterations(BuildContext &C) {
  const trace::Trace &T = C.T;
  using PK = Iteration::PointKind;
  if (C.Opts.Window) {
    auto [From, To] = *C.Opts.Window;
    if (From < 0 || To <= From)
      return fail("the window must satisfy 0 <= START < END");
    int64_t Base = traceBegin(T);
    if (Base > 0 && To > INT64_MAX - Base)
      return fail("the window ends beyond any time the trace can hold");
    C.W0 = Base + From;
    C.W1 = Base + To;
    // A window past the trace's last event holds nothing: said so, with
    // the trace's span, rather than as a window without GPU work.
    int64_t Last = INT64_MIN;
    for (EventId E = 0; E < T.numEvents(); ++E)
      Last = std::max(Last, T.end(E));
    if (T.numEvents() && C.W0 >= Last)
      return fail(fmt::format("the window starts {} after the trace's first "
                              "event, past its last: the trace spans {}",
                              formatDuration(From),
                              formatDuration(Last - Base)));
    C.Windows.push_back({0, C.W0, C.W1, PK::Origin, PK::Makespan,
                         trace::NoEvent, trace::NoEvent,
                         std::string(WindowLabel)});
    C.Stats.IterationSource = "window";
    return llvm::Error::success();
  }

  std::vector<EventId> Steps = profilerSteps(T);
  if (!Steps.empty()) {
    for (EventId E : Steps)
      C.Windows.push_back({*profilerStepNumber(T.name(E)), T.Start[E], T.end(E),
                           PK::TaskStart, PK::TaskEnd, E, E,
                           std::string(T.name(E))});
    C.W0 = T.Start[Steps.front()];
    C.W1 = T.end(Steps.back());
    C.Stats.IterationSource = "ProfilerStep#";
    return llvm::Error::success();
  }

  std::vector<EventId> Opt = markersOnBusiestTrack(T, [](std::string_view N) {
    return N.substr(0, 15) == "Optimizer.step#";
  });
  // A step cut off by the end of the trace has no length.
  Opt.erase(std::remove_if(Opt.begin(), Opt.end(),
                           [&](EventId E) { return T.Dur[E] <= 0; }),
            Opt.end());
  if (Opt.size() >= 2) {
    for (size_t I = 1; I < Opt.size(); ++I)
      C.Windows.push_back({static_cast<int64_t>(I), T.end(Opt[I - 1]),
                           T.end(Opt[I]), PK::TaskEnd, PK::TaskEnd, Opt[I - 1],
                           Opt[I],
                           "iteration " + std::to_string(I) + " (" +
                               std::string(T.name(Opt[I])) + ")"});
    C.W0 = T.Start[Opt.front()];
    C.W1 = T.end(Opt.back());
    C.Stats.IterationSource = "Optimizer.step";
    return llvm::Error::success();
  }
  if (detectSteps(C))
    return llvm::Error::success();
  return fail("no complete iteration: the trace has no ProfilerStep#N "
              "annotations, fewer than two Optimizer.step annotations, and "
              "its GPU work does not repeat (give one with --window "
              "START_US:END_US)");
}

static int kindRank(EventKind K) {
  switch (K) {
  case EventKind::UserAnnotation:
    return 0;
  case EventKind::PythonFunction:
    return 1;
  case EventKind::Marker:
    return 2;
  case EventKind::CpuOp:
    return 3;
  default:
    return 4;
  }
}

static TaskKind hostTaskKind(EventKind K) {
  switch (K) {
  case EventKind::CpuOp:
    return TaskKind::CpuOp;
  case EventKind::Runtime:
  case EventKind::Driver:
    return TaskKind::Runtime;
  default:
    return TaskKind::Annotation;
  }
}

static bool isCommKernel(std::string_view Name) {
  return Name.substr(0, 4) == "nccl" || Name.substr(0, 4) == "rccl";
}

/// Orders \p Events by \p Key, a tuple that ends with the event (so no two
/// keys tie): the keys packed side by side, not looked up in the trace's
/// columns at each comparison, and not sorted when already in order.
template <typename KeyFn>
static void sortEvents(std::vector<EventId> &Events, KeyFn Key) {
  using K = decltype(Key(EventId()));
  std::vector<K> Keys;
  Keys.reserve(Events.size());
  for (EventId E : Events)
    Keys.push_back(Key(E));
  if (!std::is_sorted(Keys.begin(), Keys.end()))
    std::sort(Keys.begin(), Keys.end());
  for (size_t I = 0; I < Keys.size(); ++I)
    Events[I] = std::get<std::tuple_size_v<K> - 1>(Keys[I]);
}

void detail::noteCommGroup(BuildContext &C, EventId E, TaskId X) {
  auto Name = C.T.strArg(E, trace::ArgKey::ProcessGroupName);
  auto Ranks = C.T.strArg(E, trace::ArgKey::ProcessGroupRanks);
  if (!Name || !Ranks)
    return;
  std::string Key = fmt::format("{} {}", *Name, *Ranks);
  auto [It, New] = C.CommGroupIndex.try_emplace(Key, ~0u);
  if (New) {
    if (auto List = ops::rankList(*Ranks)) {
      It->second = static_cast<uint32_t>(C.G.CommGroups.size());
      C.G.CommGroups.push_back({std::string(*Name), std::move(*List)});
    }
  }
  if (It->second != ~0u)
    C.G.CommGroupOf[X] = It->second;
}

llvm::Error detail::createTasks(BuildContext &C) {
  const trace::Trace &T = C.T;
  Graph &G = C.G;
  G.Origin = C.W0;
  C.TaskOfEvent.assign(T.numEvents(), NoTask);

  // --- CPU side: nest each thread's calls, leaves are the tasks the
  // simulator runs. ---
  std::vector<std::vector<EventId>> HostByTrack(T.Tracks.size());
  size_t GpuWork = 0, Host = 0;
  for (EventId E = 0; E < T.numEvents(); ++E) {
    GpuWork += trace::isGpuWork(T.Kind[E]);
    if (!isHostKind(T.Kind[E]) || T.Start[E] < C.W0 || T.Start[E] >= C.W1)
      continue;
    HostByTrack[T.TrackOf[E]].push_back(E);
    ++Host;
  }
  // At most this many tasks: their columns are mapped once, up front.
  G.reserveTasks(G.numTasks() + Host + GpuWork);
  trace::RecordedBytes Bytes(T);
  // An operator's work from its input shapes: the FLOPs of a matrix
  // multiply, a convolution (with its stride, padding and the like), an
  // attention (causal or not), a norm, a softmax, an elementwise operator,
  // a reduction or a foreach or fused optimizer operator (where its tensor
  // lists are recorded), and any operator's bytes moved; each distinct (name,
  // "Input Dims", "Concrete Inputs", "Input type") read once.
  struct Work {
    int64_t Flops = -1, Moved = -1, Saved = -1;
    int32_t SavedCount = 0;
    uint8_t Align = 0, Precision = 0;
  };
  llvm::DenseMap<std::tuple<uint32_t, int64_t, int64_t, int64_t>, Work> WorkOf;
  auto OpWork = [&](EventId E) -> Work {
    const trace::Arg *Dims = T.arg(E, trace::ArgKey::InputDims);
    if (!Dims || !Dims->IsString)
      return {};
    const trace::Arg *Concrete = T.arg(E, trace::ArgKey::ConcreteInputs);
    int64_t ConcreteId = Concrete && Concrete->IsString ? Concrete->Value : -1;
    const trace::Arg *Types = T.arg(E, trace::ArgKey::InputTypes);
    int64_t TypesId = Types && Types->IsString ? Types->Value : -1;
    auto [It, New] =
        WorkOf.try_emplace({T.Name[E], Dims->Value, ConcreteId, TypesId});
    if (!New)
      return It->second;
    It->second.Precision = ops::inputPrecision(
        TypesId >= 0 ? T.str(static_cast<StringId>(TypesId)) : "");
    auto Shapes = ops::inputShapes(T.str(static_cast<StringId>(Dims->Value)));
    if (!Shapes)
      return It->second; // the precision, as later lookups find it
    std::string_view DimsJson = T.str(static_cast<StringId>(Dims->Value));
    std::optional<std::vector<double>> Lists;
    if (ops::isPointwiseWorkOp(T.name(E)))
      Lists = ops::listElements(DimsJson);
    std::optional<ops::OpWork> W = ops::opWork(
        T.name(E), *Shapes,
        ConcreteId >= 0 ? T.str(static_cast<StringId>(ConcreteId)) : "",
        Lists ? *Lists : std::vector<double>());
    std::string_view TypesJson =
        TypesId >= 0 ? T.str(static_cast<StringId>(TypesId)) : "";
    auto In = ops::tensorInputBytes(DimsJson, TypesJson, W ? W->Unread : 0);
    if (W) {
      It->second.Flops = W->Flops;
      It->second.Align = static_cast<uint8_t>(W->Align);
    }
    if (In)
      It->second.Moved = ops::movedBytes(T.name(E), *Shapes, W, *In,
                                         ops::elementSize(TypesJson))
                             .value_or(-1);
    if (auto S = ops::savedTensors(
            T.name(E), DimsJson, TypesJson,
            ConcreteId >= 0 ? T.str(static_cast<StringId>(ConcreteId)) : "")) {
      It->second.Saved = S->Bytes;
      It->second.SavedCount = S->Count;
    }
    return It->second;
  };
  for (trace::TrackId Track = 0; Track < HostByTrack.size(); ++Track) {
    std::vector<EventId> &Evs = HostByTrack[Track];
    if (Evs.empty())
      continue;
    const trace::Track &Tr = T.Tracks[Track];
    ResourceId R = G.addResource(ResourceKind::CpuThread, -1,
                                 Tr.Tid == trace::NoValue ? 0 : Tr.Tid,
                                 T.trackLabel(Track));
    // By start, longest first (the enclosing call before what it holds),
    // then by kind. API calls hold nothing: among them and after the calls
    // that may hold them, shortest first, since of two calls on one thread
    // with one start the one that ended at it came first (a zero-length
    // cudaFuncSetAttribute before the cudaLaunchKernel it prepares).
    sortEvents(Evs, [&](EventId E) {
      bool Api = hostTaskKind(T.Kind[E]) == TaskKind::Runtime;
      return std::make_tuple(T.Start[E], Api, Api ? T.Dur[E] : -T.Dur[E],
                             kindRank(T.Kind[E]), E);
    });
    std::vector<TaskId> Stack;
    for (EventId E : Evs) {
      // API calls never contain other calls: with microsecond timestamps a
      // call and the next one can share a start, which is no nesting.
      while (!Stack.empty() && (T.Start[E] >= C.mEnd(Stack.back()) ||
                                G.Kind[Stack.back()] == TaskKind::Runtime))
        Stack.pop_back();
      // The 2021 schema records ProfilerStep#N as an operator.
      TaskKind K = profilerStepNumber(T.name(E)) ? TaskKind::Annotation
                                                 : hostTaskKind(T.Kind[E]);
      TaskId X = G.addTask(K, C.graphName(T.Name[E]), R, T.Dur[E]);
      C.TaskOfEvent[E] = X;
      G.MeasuredStart[X] = T.Start[E];
      G.MeasuredDur[X] = T.Dur[E];
      G.OrderKey[X] = T.Start[E];
      G.Correlation[X] =
          T.Correlation[E] == trace::NoValue ? -1 : T.Correlation[E];
      G.Event[X] = E;
      G.Bytes[X] = Bytes(E).value_or(-1);
      if (K == TaskKind::CpuOp) {
        Work W = OpWork(E);
        G.Flops[X] = W.Flops;
        G.Moved[X] = W.Moved;
        G.Saved[X] = W.Saved;
        G.SavedCount[X] = W.SavedCount;
        G.Align[X] = W.Align;
        G.InputPrecision[X] = W.Precision;
      }
      if (!Stack.empty()) {
        G.Parent[X] = Stack.back();
        G.Flags[Stack.back()] |= TF_Container;
      }
      Stack.push_back(X);
    }
  }
  C.ThreadLeaves.assign(G.Resources.size(), {});
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (G.isContainer(X)) {
      G.Res[X] = NoResource;
      ++C.Stats.Containers;
      continue;
    }
    C.ThreadLeaves[G.Res[X]].push_back(X);
    ++C.Stats.CpuLeaves;
  }
  for (auto &Leaves : C.ThreadLeaves) {
    // Tasks were created in (start, -dur) order per thread, so leaves are
    // already in time order, and the leaves under a container follow one
    // another. A container's first leaf is the first to reach it going
    // forward, its last the first to reach it going backward; the
    // containers above it were reached on the same walk.
    for (size_t I = 0; I < Leaves.size(); ++I) {
      TaskId L = Leaves[I];
      if (I > 0 && G.MeasuredStart[L] < C.mEnd(Leaves[I - 1]))
        ++C.Stats.OverlappingLeaves;
      for (TaskId P = G.Parent[L]; P != NoTask && G.FirstLeaf[P] == NoTask;
           P = G.Parent[P])
        G.FirstLeaf[P] = L;
    }
    for (size_t I = Leaves.size(); I-- > 0;) {
      TaskId L = Leaves[I];
      for (TaskId P = G.Parent[L]; P != NoTask && G.LastLeaf[P] == NoTask;
           P = G.Parent[P])
        G.LastLeaf[P] = L;
    }
  }
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (!G.isContainer(X))
      continue;
    G.Lead[X] = G.MeasuredStart[G.FirstLeaf[X]] - G.MeasuredStart[X];
    G.Trail[X] = C.mEnd(X) - C.mEnd(G.LastLeaf[X]);
  }
  size_t Calls = 0;
  for (TaskId X = 0; X < G.numTasks(); ++X)
    Calls += G.Kind[X] == TaskKind::Runtime;
  C.CallByCorrelation.reserve(static_cast<unsigned>(Calls));
  for (TaskId X = 0; X < G.numTasks(); ++X)
    if (G.Kind[X] == TaskKind::Runtime && G.isLeaf(X) && G.Correlation[X] >= 0)
      C.CallByCorrelation.try_emplace(G.Correlation[X], X);

  // --- GPU side. ---
  llvm::DenseSet<int64_t> TracedCalls;
  TracedCalls.reserve(static_cast<unsigned>(C.CallByCorrelation.size()));
  bool AnyGpu = false;
  int64_t FirstCorrelation = INT64_MAX;
  for (EventId E = 0; E < T.numEvents(); ++E) {
    if ((T.Kind[E] == EventKind::Runtime || T.Kind[E] == EventKind::Driver) &&
        T.Correlation[E] != trace::NoValue) {
      TracedCalls.insert(T.Correlation[E]);
      FirstCorrelation = std::min(FirstCorrelation, T.Correlation[E]);
    }
    AnyGpu |= trace::isGpuWork(T.Kind[E]);
  }
  if (!AnyGpu)
    return fail(noGpuWorkMessage(T));
  llvm::DenseMap<trace::TrackId, ResourceId> StreamRes;
  std::vector<EventId> GpuEvents;
  llvm::DenseMap<EventId, int64_t> QueuedAt; ///< see below
  for (EventId E = 0; E < T.numEvents(); ++E) {
    if (!trace::isGpuWork(T.Kind[E]))
      continue;
    int64_t Corr = T.Correlation[E];
    TaskId Call = NoTask;
    if (Corr != trace::NoValue) {
      auto It = C.CallByCorrelation.find(Corr);
      if (It != C.CallByCorrelation.end())
        Call = It->second;
      else if (TracedCalls.count(Corr))
        continue; // launched outside the replayed window
    }
    if (Call == NoTask && (T.Start[E] < C.W0 || T.Start[E] >= C.W1))
      continue;
    // Work recorded as starting before its own launch call (damaged or
    // skewed times) is read as queued when it was launched: it keeps its
    // place behind the work launched before it on its stream. Ordered by
    // its start, a copy at time 0 ran ahead of all its stream's work, and
    // the syncs of earlier iterations, which wait for that work, then
    // waited for the copy their own thread launches later: a cycle.
    if (Call != NoTask && T.Start[E] < C.mStart(Call))
      QueuedAt[E] = C.mStart(Call);
    GpuEvents.push_back(E);
  }
  auto OrderOf = [&](EventId E) {
    auto It = QueuedAt.find(E);
    return It == QueuedAt.end() ? T.Start[E] : It->second;
  };
  sortEvents(GpuEvents,
             [&](EventId E) { return std::make_tuple(OrderOf(E), E); });
  for (EventId E : GpuEvents) {
    trace::TrackId Track = T.TrackOf[E];
    auto [It, New] = StreamRes.try_emplace(Track, NoResource);
    if (New) {
      const trace::Track &Tr = T.Tracks[Track];
      It->second = G.addResource(ResourceKind::GpuStream, Tr.Device, Tr.Stream,
                                 T.trackLabel(Track));
      C.DeviceStreams[Tr.Device].push_back(It->second);
    }
    ResourceId R = It->second;
    TaskKind K = T.Kind[E] == EventKind::Memcpy   ? TaskKind::Memcpy
                 : T.Kind[E] == EventKind::Memset ? TaskKind::Memset
                 : isCommKernel(T.name(E))        ? TaskKind::Comm
                                                  : TaskKind::Kernel;
    TaskId X = G.addTask(K, C.graphName(T.Name[E]), R, T.Dur[E]);
    C.TaskOfEvent[E] = X;
    G.MeasuredStart[X] = T.Start[E];
    G.MeasuredDur[X] = T.Dur[E];
    G.OrderKey[X] = OrderOf(E);
    G.Bytes[X] =
        T.Bytes[E] != trace::NoValue ? T.Bytes[E] : Bytes(E).value_or(-1);
    if (K == TaskKind::Comm)
      noteCommGroup(C, E, X);
    G.Correlation[X] =
        T.Correlation[E] == trace::NoValue ? -1 : T.Correlation[E];
    G.Event[X] = E;
    if (T.Correlation[E] != trace::NoValue) {
      auto CI = C.CallByCorrelation.find(T.Correlation[E]);
      if (CI != C.CallByCorrelation.end())
        G.Launcher[X] = CI->second;
    }
    // A collective whose kernel records no size (no In msg nelems) moves
    // what the operator that launched it was given: PyTorch's
    // `nccl:all_reduce` (or `c10d::` op) records its input's shape.
    if (K == TaskKind::Comm && G.Bytes[X] < 0 && G.Launcher[X] != NoTask)
      for (TaskId P = G.Parent[G.Launcher[X]], Up = 0; P != NoTask && Up < 4;
           P = G.Parent[P], ++Up) {
        std::string_view N = G.name(P);
        if (G.Bytes[P] > 0 &&
            (N.substr(0, 5) == "nccl:" || N.substr(0, 6) == "c10d::" ||
             N == "record_param_comms")) {
          G.Bytes[X] = G.Bytes[P];
          break;
        }
      }
    if (G.Launcher[X] == NoTask) {
      ++C.Stats.GpuWithoutLauncher;
      if (G.Correlation[X] >= 0 && G.Correlation[X] < FirstCorrelation) {
        if (C.QueuedBefore.size() <= X)
          C.QueuedBefore.resize(std::max<size_t>(X + 1, G.numTasks()));
        C.QueuedBefore.set(X);
        ++C.Stats.GpuQueuedBefore;
      }
    }
    ++C.Stats.GpuTasks;
  }
  if (C.Stats.GpuTasks == 0)
    return fail("no GPU work launched in the replayed iterations");

  C.ThreadLeaves.resize(G.Resources.size());
  C.StreamOps.assign(G.Resources.size(), {});
  C.ThreadLaunches.assign(G.Resources.size(), {});
  for (TaskId X = 0; X < G.numTasks(); ++X) {
    if (!G.isGpu(X))
      continue;
    C.StreamOps[G.Res[X]].push_back(X); // created in stream order (OrderKey)
    TaskId Call = G.Launcher[X];
    int32_t Dev = G.Resources[G.Res[X]].Device;
    C.DeviceLaunches[Dev].push_back({C.launchTime(X), Call, X});
    if (Call != NoTask && G.Res[Call] != NoResource)
      C.ThreadLaunches[G.Res[Call]].push_back({C.mStart(Call), G.Res[X]});
  }
  for (auto &[Dev, L] : C.DeviceLaunches)
    std::stable_sort(
        L.begin(), L.end(),
        [](const BuildContext::Launch &A, const BuildContext::Launch &B) {
          return A.CallStart < B.CallStart;
        });
  for (auto &L : C.ThreadLaunches)
    std::stable_sort(L.begin(), L.end());

  // Iterations, now that their marker events are tasks.
  for (const IterationWindow &W : C.Windows) {
    Iteration It;
    It.Number = W.Number;
    It.MeasuredBegin = W.Begin;
    It.MeasuredEnd = W.End;
    It.Label = W.Label;
    auto Point = [&](Iteration::PointKind K, EventId E) {
      Iteration::Point P;
      P.Kind = K;
      if (E != trace::NoEvent)
        P.Task = C.TaskOfEvent[E];
      return P;
    };
    It.Begin = Point(W.BeginKind, W.BeginEvent);
    It.End = Point(W.EndKind, W.EndEvent);
    for (const Iteration::Point *P : {&It.Begin, &It.End})
      if ((P->Kind == Iteration::PointKind::TaskStart ||
           P->Kind == Iteration::PointKind::TaskEnd) &&
          P->Task == NoTask)
        return fail("internal error: the marker of " + W.Label +
                    " is outside the replayed window");
    G.Iterations.push_back(std::move(It));
  }
  return llvm::Error::success();
}

TaskId BuildContext::lastLaunchedBefore(ResourceId S, int64_t Ts) const {
  const auto &Ops = StreamOps[S];
  // Work on a stream is launched in stream order; launch times are
  // monotone up to clock noise, which a binary search tolerates.
  auto It = std::partition_point(Ops.begin(), Ops.end(),
                                 [&](TaskId X) { return launchTime(X) < Ts; });
  return It == Ops.begin() ? NoTask : *(It - 1);
}

TaskId BuildContext::firstLaunchedAfter(ResourceId S, int64_t Ts) const {
  const auto &Ops = StreamOps[S];
  auto It = std::partition_point(Ops.begin(), Ops.end(),
                                 [&](TaskId X) { return launchTime(X) < Ts; });
  return It == Ops.end() ? NoTask : *It;
}

ResourceId BuildContext::streamLaunchedBefore(ResourceId Thread,
                                              int64_t Ts) const {
  const auto &L = ThreadLaunches[Thread];
  auto It = std::partition_point(L.begin(), L.end(),
                                 [&](const auto &P) { return P.first < Ts; });
  return It == L.begin() ? NoResource : (It - 1)->second;
}

ResourceId BuildContext::streamLaunchedBeforeExcept(ResourceId Thread,
                                                    int64_t Ts,
                                                    ResourceId Not) const {
  const auto &L = ThreadLaunches[Thread];
  auto It = std::partition_point(L.begin(), L.end(),
                                 [&](const auto &P) { return P.first < Ts; });
  while (It != L.begin()) {
    --It;
    if (It->second != Not)
      return It->second;
  }
  return NoResource;
}

ResourceId BuildContext::streamLaunchedAfter(ResourceId Thread,
                                             int64_t Ts) const {
  const auto &L = ThreadLaunches[Thread];
  auto It = std::partition_point(L.begin(), L.end(),
                                 [&](const auto &P) { return P.first <= Ts; });
  return It == L.end() ? NoResource : It->second;
}

/// Why a graph's times cannot be simulated: the largest duration, gap or
/// delay, which a damaged timestamp usually explains.
static std::string tooLongMessage(const Graph &G) {
  double Top = -1;
  std::string What;
  auto Task = [&](TaskId T) {
    return fmt::format("{} '{}' on {}", taskKindName(G.Kind[T]), G.name(T),
                       G.Resources[G.Res[T]].Name);
  };
  for (TaskId T = 0; T < G.numTasks(); ++T) {
    if (!G.isLeaf(T) || G.isRemoved(T))
      continue;
    if (double D = std::fabs(double(G.Dur[T])); D > Top) {
      Top = D;
      What = fmt::format("{} lasts {:.3g} s", Task(T), D / 1e9);
    }
    if (double D = std::fabs(double(G.Gap[T])); D > Top) {
      Top = D;
      What = fmt::format("{} comes {:.3g} s after the task before it", Task(T),
                         D / 1e9);
    }
  }
  for (const Edge &E : G.Lowered)
    if (double D = std::fabs(double(E.Delay)); D > Top) {
      Top = D;
      What = fmt::format("{} waits {:.3g} s on a {} dependency", Task(E.Dst),
                         D / 1e9, edgeKindName(E.Kind));
    }
  return fmt::format("the trace's times add up to {:.3g} s, more than the "
                     "{:.0f} years ddscript can simulate (a damaged "
                     "timestamp?): {}",
                     G.timeBound() / 1e9,
                     double(MaxTime) / 1e9 / 86400 / 365.25, What);
}

llvm::Expected<Graph> graph::buildGraph(const trace::Trace &T,
                                        const BuildOptions &Opts,
                                        BuildStats *Stats) {
  BuildStats LocalStats;
  BuildContext C(T, Opts, Stats ? *Stats : LocalStats);
  if (auto E = findIterations(C))
    return E;
  if (auto E = createTasks(C))
    return E;
  addGpuDependencies(C);
  addCpuDependencies(C);
  calibrate(C);
  annotate(C);
  std::string Error;
  if (!C.G.finalize(&Error))
    return fail("internal error: the inferred dependencies are circular: " +
                Error);
  if (!(C.G.timeBound() < double(MaxTime)))
    return fail(tooLongMessage(C.G));
  return std::move(C.G);
}

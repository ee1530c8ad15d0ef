//===- GraphFile.cpp - A graph written to bytes and read back -------------===//

#include "graph/GraphFile.h"

#include "ops/Sizes.h"

#include <fmt/format.h>

#include <iterator>

using namespace dd;
using namespace dd::graph;

namespace {

constexpr size_t NumPrecisions = std::size(ops::Precisions);

template <typename E> void writeEnum(ByteWriter &W, const std::vector<E> &C) {
  for (E V : C)
    W.u8(static_cast<uint8_t>(V));
}
void writeByte(ByteWriter &W, const std::vector<uint8_t> &C) {
  for (uint8_t V : C)
    W.u8(V);
}
void writeValue(ByteWriter &W, const std::vector<int64_t> &C) {
  for (int64_t V : C)
    W.svar(V);
}
void writeDelta(ByteWriter &W, const std::vector<int64_t> &C) {
  uint64_t Prev = 0;
  for (int64_t V : C) {
    // Wrapping differences: any two values, NoTime among them, round-trip.
    W.svar(static_cast<int64_t>(static_cast<uint64_t>(V) - Prev));
    Prev = static_cast<uint64_t>(V);
  }
}
void writeRef(ByteWriter &W, const std::vector<uint32_t> &C) {
  for (uint32_t V : C)
    W.uvar(V);
}
void writeIndex(ByteWriter &W, const std::vector<uint32_t> &C) {
  for (uint32_t V : C)
    W.id(V);
}
void writeInt32(ByteWriter &W, const std::vector<int32_t> &C) {
  for (int32_t V : C)
    W.svar(V);
}

/// Reads a column of \p N tasks into \p C, each value checked against
/// \p Bound as its encoding says; false (the failure in \p R) when one is
/// out of bounds or the data ends.
template <typename E>
bool readEnum(ByteReader &R, size_t N, std::vector<E> &C, size_t Bound,
              const char *What) {
  C.resize(N);
  for (size_t I = 0; I < N && !R.failed(); ++I) {
    uint8_t V = R.u8();
    if (V >= Bound)
      R.fail(fmt::format("task {}'s {} is {}, not one of its {} values", I,
                         What, V, Bound));
    C[I] = static_cast<E>(V);
  }
  return !R.failed();
}
bool readByte(ByteReader &R, size_t N, std::vector<uint8_t> &C, size_t,
              const char *) {
  C.resize(N);
  for (size_t I = 0; I < N && !R.failed(); ++I)
    C[I] = R.u8();
  return !R.failed();
}
bool readValue(ByteReader &R, size_t N, std::vector<int64_t> &C, size_t,
               const char *) {
  C.resize(N);
  for (size_t I = 0; I < N && !R.failed(); ++I)
    C[I] = R.svar();
  return !R.failed();
}
bool readDelta(ByteReader &R, size_t N, std::vector<int64_t> &C, size_t,
               const char *) {
  C.resize(N);
  uint64_t Prev = 0;
  for (size_t I = 0; I < N && !R.failed(); ++I) {
    Prev += static_cast<uint64_t>(R.svar());
    C[I] = static_cast<int64_t>(Prev);
  }
  return !R.failed();
}
bool readRef(ByteReader &R, size_t N, std::vector<uint32_t> &C, size_t Bound,
             const char *What) {
  C.resize(N);
  for (size_t I = 0; I < N && !R.failed(); ++I) {
    uint64_t V = R.uvar();
    if (V >= Bound)
      R.fail(fmt::format("task {}'s {} is {} of {}", I, What, V, Bound));
    C[I] = static_cast<uint32_t>(V);
  }
  return !R.failed();
}
bool readIndex(ByteReader &R, size_t N, std::vector<uint32_t> &C, size_t Bound,
               const char *What) {
  C.resize(N);
  for (size_t I = 0; I < N && !R.failed(); ++I) {
    uint32_t V = R.id();
    if (V != ~0u && V >= Bound)
      R.fail(fmt::format("task {}'s {} is {} of {}", I, What, V, Bound));
    C[I] = V;
  }
  return !R.failed();
}
bool readInt32(ByteReader &R, size_t N, std::vector<int32_t> &C, size_t Bound,
               const char *What) {
  C.resize(N);
  for (size_t I = 0; I < N && !R.failed(); ++I) {
    int64_t V = R.svar();
    if (V < -1 || (V >= 0 && static_cast<uint64_t>(V) >= Bound))
      R.fail(fmt::format("task {}'s {} is {} of {}", I, What, V, Bound));
    C[I] = static_cast<int32_t>(V);
  }
  return !R.failed();
}

void writePoint(ByteWriter &W, const Iteration::Point &P) {
  W.u8(static_cast<uint8_t>(P.Kind));
  W.id(P.Task);
}
Iteration::Point readPoint(ByteReader &R, size_t N) {
  Iteration::Point P;
  uint8_t K = R.u8();
  if (K > static_cast<uint8_t>(Iteration::PointKind::Makespan))
    R.fail(fmt::format("an iteration point of kind {}", K));
  P.Kind = static_cast<Iteration::PointKind>(K);
  P.Task = R.id();
  if (P.Task != NoTask && P.Task >= N)
    R.fail(fmt::format("an iteration point at task {} of {}", P.Task, N));
  bool NeedsTask = P.Kind == Iteration::PointKind::TaskStart ||
                   P.Kind == Iteration::PointKind::TaskEnd;
  if (NeedsTask && P.Task == NoTask)
    R.fail("an iteration point at a task without its task");
  return P;
}

int32_t readInt32Value(ByteReader &R, const char *What) {
  int64_t V = R.svar();
  if (V < INT32_MIN || V > INT32_MAX)
    R.fail(fmt::format("{} {} beyond 32 bits", What, V));
  return static_cast<int32_t>(V);
}

} // namespace

void graph::writeGraph(const Graph &G, ByteWriter &W) {
  W.uvar(G.Strings.size() - 1);
  for (StringId S = 1; S < G.Strings.size(); ++S)
    W.str(G.Strings.str(S));
  W.uvar(G.numTasks());
  W.uvar(G.Resources.size());
  for (const Resource &Res : G.Resources) {
    W.u8(static_cast<uint8_t>(Res.Kind));
    W.svar(Res.Device);
    W.svar(Res.Id);
    W.str(Res.Name);
    W.u8(static_cast<uint8_t>(Res.Order));
    W.svar(Res.TypicalGap);
  }
  W.uvar(G.Layers.size());
  for (const Layer &L : G.Layers) {
    W.str(L.Name);
    W.uvar(L.Index);
    W.id(L.Parent);
  }
  W.uvar(G.Iterations.size());
  for (const Iteration &It : G.Iterations) {
    W.svar(It.Number);
    W.svar(It.MeasuredBegin);
    W.svar(It.MeasuredEnd);
    writePoint(W, It.Begin);
    writePoint(W, It.End);
    W.str(It.Label);
    W.svar(It.Rank);
  }
#define GRAPH_COLUMN(Member, Encoding, Bound) write##Encoding(W, G.Member);
#include "graph/GraphColumns.def"
  W.uvar(G.Edges.size());
  for (const Edge &E : G.Edges) {
    W.uvar(E.Src);
    W.uvar(E.Dst);
    W.u8(static_cast<uint8_t>(E.Kind));
    W.u8(static_cast<uint8_t>(E.At));
    W.svar(E.Delay);
  }
  W.uvar(G.Span.TraceIterations);
  W.uvar(G.Span.FirstTraceIteration);
  W.svar(G.Span.Steady);
  W.svar(G.Origin);
  W.uvar(G.numCollectives());
  for (size_t C = 0; C < G.numCollectives(); ++C) {
    llvm::ArrayRef<TaskId> M = G.collectiveMembers(C);
    W.uvar(M.size());
    for (TaskId T : M)
      W.uvar(T);
  }
  W.uvar(G.CommGroups.size());
  for (const Graph::CommGroup &CG : G.CommGroups) {
    W.str(CG.Name);
    W.uvar(CG.Ranks.size());
    for (int32_t Rank : CG.Ranks)
      W.svar(Rank);
  }
  std::vector<std::pair<TaskId, uint32_t>> Of(G.CommGroupOf.begin(),
                                              G.CommGroupOf.end());
  std::sort(Of.begin(), Of.end());
  W.uvar(Of.size());
  for (auto [T, Group] : Of) {
    W.uvar(T);
    W.uvar(Group);
  }
}

llvm::Expected<Graph> graph::readGraph(ByteReader &R) {
  auto Fail = [&]() {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s",
                                   R.error().c_str());
  };
  Graph G;
  size_t NumStrings = R.count();
  for (size_t I = 0; I < NumStrings && !R.failed(); ++I) {
    std::string_view S = R.str();
    if (!R.failed() && G.Strings.intern(S) != I + 1)
      R.fail(fmt::format("string {} ('{}') given twice", I + 1, S));
  }
  // A task takes one byte in each column at least.
  constexpr size_t MinTaskBytes = 0
#define GRAPH_COLUMN(Member, Encoding, Bound) +1
#include "graph/GraphColumns.def"
      ;
  size_t N = R.count(MinTaskBytes);
  size_t NumResources = R.count(6);
  for (size_t I = 0; I < NumResources && !R.failed(); ++I) {
    Resource Res;
    uint8_t Kind = R.u8();
    if (Kind > static_cast<uint8_t>(ResourceKind::Channel))
      R.fail(fmt::format("resource {} of kind {}", I, Kind));
    Res.Kind = static_cast<ResourceKind>(Kind);
    Res.Device = readInt32Value(R, "a device");
    Res.Id = R.svar();
    Res.Name = std::string(R.str());
    uint8_t Order = R.u8();
    if (Order > static_cast<uint8_t>(Ordering::Priority))
      R.fail(fmt::format("resource {} ordered by {}", I, Order));
    Res.Order = static_cast<Ordering>(Order);
    Res.TypicalGap = R.svar();
    G.Resources.push_back(std::move(Res));
  }
  size_t NumLayers = R.count(3);
  for (size_t I = 0; I < NumLayers && !R.failed(); ++I) {
    Layer L;
    L.Name = std::string(R.str());
    uint64_t Index = R.uvar();
    if (Index > UINT32_MAX)
      R.fail(fmt::format("layer {}'s index {} beyond 32 bits", I, Index));
    L.Index = static_cast<uint32_t>(Index);
    L.Parent = R.id();
    if (L.Parent != NoLayer && L.Parent >= I)
      R.fail(fmt::format("layer {}'s parent {} does not come before it", I,
                         L.Parent));
    G.Layers.push_back(std::move(L));
  }
  size_t NumIterations = R.count(9);
  for (size_t I = 0; I < NumIterations && !R.failed(); ++I) {
    Iteration It;
    It.Number = R.svar();
    It.MeasuredBegin = R.svar();
    It.MeasuredEnd = R.svar();
    It.Begin = readPoint(R, N);
    It.End = readPoint(R, N);
    It.Label = std::string(R.str());
    It.Rank = readInt32Value(R, "a rank");
    G.Iterations.push_back(std::move(It));
  }
  if (R.failed())
    return Fail();
#define GRAPH_COLUMN(Member, Encoding, Bound)                                  \
  if (!read##Encoding(R, N, G.Member, Bound, #Member))                         \
    return Fail();
#include "graph/GraphColumns.def"
  size_t NumEdges = R.count(5);
  G.Edges.reserve(NumEdges);
  for (size_t I = 0; I < NumEdges && !R.failed(); ++I) {
    Edge E;
    uint64_t Src = R.uvar(), Dst = R.uvar();
    uint8_t Kind = R.u8(), At = R.u8();
    E.Delay = R.svar();
    if (Src >= N || Dst >= N)
      R.fail(fmt::format("edge {} from task {} to {} of {}", I, Src, Dst, N));
    if (Kind >= NumEdgeKinds || At > static_cast<uint8_t>(Anchor::StartToEnd))
      R.fail(fmt::format("edge {} of kind {} anchored {}", I, Kind, At));
    E.Src = static_cast<TaskId>(Src);
    E.Dst = static_cast<TaskId>(Dst);
    E.Kind = static_cast<EdgeKind>(Kind);
    E.At = static_cast<Anchor>(At);
    G.Edges.push_back(E);
  }
  G.Span.TraceIterations = R.uvar();
  G.Span.FirstTraceIteration = R.uvar();
  G.Span.Steady = R.svar();
  G.Origin = R.svar();
  size_t NumCollectives = R.count();
  for (size_t C = 0; C < NumCollectives && !R.failed(); ++C) {
    std::vector<TaskId> Members(R.count());
    for (TaskId &T : Members) {
      uint64_t V = R.uvar();
      if (V >= N)
        R.fail(fmt::format("collective {}'s member {} of {} tasks", C, V, N));
      T = static_cast<TaskId>(V);
    }
    G.addCollective(Members);
  }
  size_t NumGroups = R.count(2);
  for (size_t I = 0; I < NumGroups && !R.failed(); ++I) {
    Graph::CommGroup CG;
    CG.Name = std::string(R.str());
    CG.Ranks.resize(R.count());
    for (int32_t &Rank : CG.Ranks)
      Rank = readInt32Value(R, "a group's rank");
    G.CommGroups.push_back(std::move(CG));
  }
  size_t NumOf = R.count(2);
  for (size_t I = 0; I < NumOf && !R.failed(); ++I) {
    uint64_t T = R.uvar(), Group = R.uvar();
    if (T >= N || Group >= G.CommGroups.size())
      R.fail(fmt::format("task {} of {} in process group {} of {}", T, N, Group,
                         G.CommGroups.size()));
    else if (!G.CommGroupOf
                  .try_emplace(static_cast<TaskId>(T),
                               static_cast<uint32_t>(Group))
                  .second)
      R.fail(fmt::format("task {} in two process groups", T));
  }
  if (R.failed())
    return Fail();
  // The enclosing containers form a forest: every walk up from a task ends
  // (a cycle would hold the simulator's walk for ever).
  std::vector<uint8_t> State(N, 0); // 0 not seen, 1 on this walk, 2 ends
  std::vector<TaskId> Walk;
  for (TaskId T = 0; T < N; ++T) {
    TaskId X = T;
    Walk.clear();
    while (X != NoTask && State[X] == 0) {
      State[X] = 1;
      Walk.push_back(X);
      X = G.Parent[X];
    }
    if (X != NoTask && State[X] == 1) {
      R.fail(
          fmt::format("task {} encloses itself (its parents make a cycle)", X));
      return Fail();
    }
    for (TaskId W : Walk)
      State[W] = 2;
  }
  for (TaskId T = 0; T < N; ++T) {
    bool Container = G.Flags[T] & TF_Container;
    if (!Container && G.Res[T] == NoResource) {
      R.fail(fmt::format("task {} runs on no resource", T));
      return Fail();
    }
    // A container's first and last leaf: both or neither, leaves of one
    // resource (leavesOf scans that resource between them).
    TaskId First = G.FirstLeaf[T], Last = G.LastLeaf[T];
    if (!Container || (First == NoTask && Last == NoTask))
      continue;
    if (First == NoTask || Last == NoTask || G.isContainer(First) ||
        G.isContainer(Last) || G.Res[First] != G.Res[Last]) {
      R.fail(fmt::format("container {}'s first and last leaves ({} and {}) "
                         "are not leaves of one resource",
                         T, First, Last));
      return Fail();
    }
  }
  std::string Error;
  if (!G.finalize(&Error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the graph read back: %s", Error.c_str());
  return G;
}

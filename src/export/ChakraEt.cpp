//===- ChakraEt.cpp - A graph's iteration as a Chakra execution trace -----===//

#include "export/ChakraEt.h"
#include "graph/KernelClass.h"
#include "support/ProtoWriter.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cmath>
#include <string_view>

using namespace dd;
using namespace dd::exporter;
using graph::Graph;
using graph::TaskId;

namespace {

// Field numbers and enum values of Chakra's et_def.proto.
enum : unsigned {
  AttrName = 1,
  AttrInt64Val = 9,
  AttrBoolVal = 27,
  AttrStringVal = 29,
  AttrStringList = 30,
  ListValues = 1,
  MetaVersion = 1,
  MetaAttr = 2,
  NodeId = 1,
  NodeName = 2,
  NodeTypeField = 3,
  NodeCtrlDeps = 4,
  NodeDataDeps = 5,
  NodeStart = 6,
  NodeDuration = 7,
  NodeAttr = 10,
};
enum : uint64_t { CompNode = 4, CommCollNode = 7 };
constexpr int64_t NoCollective = -1;

/// An AttributeProto named \p Name; \p Value sets its value field.
template <typename F> proto::Message attr(std::string_view Name, F Value) {
  proto::Message A;
  A.bytes(AttrName, Name);
  Value(A);
  return A;
}
proto::Message intAttr(std::string_view Name, int64_t V) {
  return attr(Name, [&](proto::Message &A) { A.i64(AttrInt64Val, V); });
}
proto::Message stringAttr(std::string_view Name, std::string_view V) {
  return attr(Name, [&](proto::Message &A) { A.bytes(AttrStringVal, V); });
}
proto::Message boolAttr(std::string_view Name, bool V) {
  return attr(Name, [&](proto::Message &A) { A.boolean(AttrBoolVal, V); });
}

bool contains(std::string_view Name, std::initializer_list<const char *> Any) {
  for (const char *W : Any)
    if (Name.find(W) != std::string_view::npos)
      return true;
  return false;
}

/// Chakra's CollectiveCommType for a communication task's name (NCCL's and
/// RCCL's kernels, ddscript's inserted collectives), or NoCollective.
int64_t collectiveType(std::string_view N) {
  if (contains(N, {"ReduceScatter", "reduce_scatter", "reduce-scatter"}))
    return 7;
  if (contains(N, {"AllReduce", "all_reduce", "allreduce", "all-reduce"}))
    return 0;
  if (contains(N, {"AllGather", "all_gather", "allgather", "all-gather",
                   "_allgather_base"}))
    return 2;
  if (contains(N, {"AllToAll", "all_to_all", "alltoall", "all-to-all"}))
    return 6;
  if (contains(N, {"Broadcast", "broadcast"}))
    return 5;
  if (contains(N, {"Reduce", "reduce"}))
    return 1;
  if (contains(N, {"Barrier", "barrier"}))
    return 9;
  return NoCollective;
}

} // namespace

std::string exporter::writeChakra(const Graph &G, llvm::ArrayRef<int64_t> Start,
                                  const ChakraOptions &O, ChakraStats &Stats) {
  Stats = ChakraStats();
  const int32_t It = static_cast<int32_t>(O.Iteration);
  auto Exported = [&](TaskId T) {
    return T != graph::NoTask && T < G.numTasks() &&
           !(G.Flags[T] & (graph::TF_Container | graph::TF_Removed)) &&
           G.IterationOf[T] == It;
  };
  // The iteration's tasks per resource, in resource order.
  llvm::DenseMap<graph::ResourceId, std::vector<TaskId>> ByRes;
  std::vector<TaskId> Tasks;
  int64_t Begin = INT64_MAX;
  for (TaskId T = 0; T < G.numTasks(); ++T)
    if (Exported(T)) {
      Tasks.push_back(T);
      ByRes[G.Res[T]].push_back(T);
      if (T < Start.size() && Start[T] != graph::NoTime)
        Begin = std::min(Begin, Start[T]);
    }
  llvm::DenseMap<TaskId, TaskId> Previous; // on the same resource
  for (auto &[R, Ts] : ByRes) {
    std::sort(Ts.begin(), Ts.end(), [&](TaskId A, TaskId B) {
      return G.OrderKey[A] != G.OrderKey[B] ? G.OrderKey[A] < G.OrderKey[B]
                                            : A < B;
    });
    for (size_t I = 1; I < Ts.size(); ++I)
      Previous[Ts[I]] = Ts[I - 1];
  }
  // Data dependencies: every edge the simulator follows (the finalized
  // graph's leaf edges, removed tasks bridged) between two exported tasks;
  // one per pair (the first edge's kind), none that repeats the control one.
  llvm::DenseMap<TaskId, std::vector<std::pair<TaskId, graph::EdgeKind>>> In;
  llvm::DenseSet<std::pair<TaskId, TaskId>> Seen;
  for (const graph::Edge &E : G.Lowered) {
    TaskId S = E.Src, D = E.Dst;
    if (!Exported(S) || !Exported(D) || S == D)
      continue;
    auto P = Previous.find(D);
    if ((P != Previous.end() && P->second == S) || !Seen.insert({S, D}).second)
      continue;
    In[D].push_back({S, E.Kind});
  }
  std::vector<double> Flops = graph::taskFlops(G);
  std::vector<double> Moved = graph::taskMovedBytes(G);

  std::string Out;
  proto::Message Meta;
  Meta.bytes(MetaVersion, "0.0.4");
  Meta.message(MetaAttr, stringAttr("producer", "ddscript export"));
  Meta.message(MetaAttr, stringAttr("source_trace", O.Source));
  if (!O.Model.empty())
    Meta.message(MetaAttr, stringAttr("model", O.Model));
  Meta.message(MetaAttr,
               stringAttr("iteration", G.Iterations[O.Iteration].Label));
  Meta.message(MetaAttr, intAttr("rank", O.Rank));
  proto::appendDelimited(Out, Meta);

  for (TaskId T : Tasks) {
    proto::Message N;
    N.u64(NodeId, T).bytes(NodeName, G.name(T));
    graph::TaskKind K = G.Kind[T];
    bool Cpu = !graph::isGpuKind(K);
    bool Comm = false;
    int64_t Coll = NoCollective;
    if (!Cpu && (K == graph::TaskKind::Comm ||
                 graph::kernelClassOf(G, T) == graph::KernelClass::comm)) {
      Coll = collectiveType(G.name(T));
      Comm = Coll != NoCollective;
      Stats.CommAsCompute += !Comm;
    }
    N.u64(NodeTypeField, Comm ? CommCollNode : CompNode);
    auto P = Previous.find(T);
    if (P != Previous.end()) {
      N.packed(NodeCtrlDeps, std::array<uint64_t, 1>{P->second});
      ++Stats.CtrlDeps;
    }
    std::vector<std::string> Kinds;
    if (auto D = In.find(T); D != In.end()) {
      std::vector<uint64_t> Ids;
      for (auto [S, Kind] : D->second) {
        Ids.push_back(S);
        Kinds.push_back(graph::edgeKindName(Kind));
        ++Stats.ByKind[static_cast<unsigned>(Kind)];
      }
      N.packed(NodeDataDeps, Ids);
      Stats.DataDeps += Ids.size();
    }
    int64_t S0 = T < Start.size() ? Start[T] : graph::NoTime;
    if (S0 != graph::NoTime && Begin != INT64_MAX)
      N.u64(NodeStart, static_cast<uint64_t>((S0 - Begin) / 1000));
    N.u64(NodeDuration, static_cast<uint64_t>((G.Dur[T] + 500) / 1000));
    N.message(NodeAttr, boolAttr("is_cpu_op", Cpu));
    N.message(NodeAttr, intAttr("duration_ns", G.Dur[T]));
    N.message(NodeAttr, stringAttr("task_kind", graph::taskKindName(K)));
    if (G.Res[T] != graph::NoResource)
      N.message(NodeAttr, stringAttr("resource", G.Resources[G.Res[T]].Name));
    if (!Cpu)
      N.message(NodeAttr,
                stringAttr("kernel_class",
                           graph::kernelClassName(graph::kernelClassOf(G, T))));
    if (Comm) {
      Stats.CommWithoutSize += G.Bytes[T] <= 0;
      N.message(NodeAttr, intAttr("comm_type", Coll));
      N.message(NodeAttr,
                intAttr("comm_size", std::max<int64_t>(G.Bytes[T], 0)));
    }
    if (!std::isnan(Flops[T]))
      N.message(NodeAttr, intAttr("num_ops", std::llround(Flops[T])));
    if (!std::isnan(Moved[T]))
      N.message(NodeAttr, intAttr("tensor_size", std::llround(Moved[T])));
    if (!Kinds.empty()) {
      proto::Message L;
      for (const std::string &Kd : Kinds)
        L.bytes(ListValues, Kd);
      N.message(NodeAttr, attr("dep_kinds", [&](proto::Message &A) {
                  A.message(AttrStringList, L);
                }));
    }
    proto::appendDelimited(Out, N);
    ++Stats.Nodes;
    Stats.CpuNodes += Cpu;
    Stats.CommNodes += Comm;
  }
  return Out;
}

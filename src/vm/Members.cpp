//===- Members.cpp - .member on tasks, sets, layers, resources ------------===//

#include "graph/Edit.h"
#include "graph/KernelClass.h"
#include "ops/Gpus.h"
#include "ops/Saved.h"
#include "support/Work.h"
#include "vm/MemberCases.h"
#include "vm/TaskProperties.h"
#include "vm/VMImpl.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::vm;
using bc::MemberId;
using bc::TypeKind;
using graph::NoTask;
using graph::TaskId;

static std::optional<TypeKind> ownerOf(VKind K) {
  switch (K) {
  case VKind::Task:
    return TypeKind::Task;
  case VKind::Set:
    return TypeKind::Set;
  case VKind::Layer:
    return TypeKind::Layer;
  case VKind::ModelBlock:
    return TypeKind::ModelBlock;
  case VKind::Resource:
    return TypeKind::Resource;
  case VKind::Block:
    return TypeKind::Block;
  case VKind::BlockSet:
    return TypeKind::BlockSet;
  case VKind::Device:
    return TypeKind::Device;
  case VKind::Trace:
    return TypeKind::TraceInfo;
  case VKind::List:
  case VKind::Range:
    return TypeKind::List;
  case VKind::String:
    return TypeKind::String;
  default:
    return std::nullopt;
  }
}

std::vector<TaskId> Interpreter::inOrder(const TaskSet &S) {
  const graph::Graph &G = graph();
  std::vector<TaskId> Out;
  Out.reserve(S.count());
  S.forEach([&](TaskId T) {
    if (!G.isRemoved(T))
      Out.push_back(T);
  });
  std::stable_sort(Out.begin(), Out.end(), [&](TaskId A, TaskId B) {
    return G.OrderKey[A] < G.OrderKey[B];
  });
  return Out;
}

namespace {

/// Members of one task; Self is the interpreter for graph access.
struct TaskMembers {
  Interpreter &I;
  const graph::Graph &G;
  TaskId T;

  graph::ResourceId resource() const {
    if (G.Res[T] != graph::NoResource)
      return G.Res[T];
    std::vector<TaskId> L = G.leavesOf(T);
    return L.empty() ? graph::NoResource : G.Res[L.front()];
  }
  /// The GPU work the task's calls launched: the launch index, not a scan
  /// of the graph (cost: the task's leaves and their kernels).
  void kernels(std::vector<TaskId> &Out) const {
    std::vector<TaskId> Launched;
    for (TaskId L : G.leavesOf(T))
      G.launchedBy(L, Launched);
    for (TaskId X : Launched)
      if (!G.isRemoved(X))
        Out.push_back(X);
  }
  /// The GPU work the task's thread had enqueued when the task ended: on
  /// each stream, the last task launched from the thread up to then (what a
  /// CUDA event recorded at that point would stand for).
  void gpuFrontier(std::vector<TaskId> &Out) const {
    std::vector<TaskId> Leaves = G.leavesOf(T);
    if (Leaves.empty())
      return;
    TaskId Last = Leaves.back();
    if (G.isGpu(Last)) {
      Out.push_back(Last);
      return;
    }
    // A call added since the last finalize gets its position from one.
    if (Last >= G.PosOnRes.size())
      I.ensureFinalized();
    if (Last >= G.PosOnRes.size() || G.Res[Last] == graph::NoResource)
      return;
    std::vector<TaskId> Frontier;
    G.launchFrontier(G.Res[Last], G.PosOnRes[Last], Frontier);
    Out.insert(Out.end(), Frontier.begin(), Frontier.end());
  }
  void neighbours(std::vector<TaskId> &Out, bool Preds) const {
    std::vector<TaskId> Leaves = G.leavesOf(T);
    if (Leaves.empty())
      return;
    TaskId L = Preds ? Leaves.front() : Leaves.back();
    if (Preds) {
      for (uint32_t E : G.inEdges(L))
        Out.push_back(G.Lowered[E].Src);
      if (G.PrevOnRes[L] != NoTask)
        Out.push_back(G.PrevOnRes[L]);
    } else {
      for (uint32_t E : G.outEdges(L))
        Out.push_back(G.Lowered[E].Dst);
      if (G.NextOnRes[L] != NoTask)
        Out.push_back(G.NextOnRes[L]);
    }
  }
};

/// A task property's value for task \p T (TaskProperties.h), as a member
/// gives it: none where the accessor has none.
template <typename AccessorT>
Value propertyValue(const graph::Graph &G, const AccessorT &A, TaskId T) {
  using props::Col;
  if constexpr (AccessorT::Type == Col::Num) {
    double V = A.Get(T);
    return std::isnan(V) ? Value::none() : Value::number(V, A.Unit);
  } else {
    uint32_t Id = A.Get(T);
    if constexpr (AccessorT::Type == Col::Bool)
      return Value::boolean(Id != 0);
    if (Id == props::NoId)
      return Value::none();
    if constexpr (AccessorT::Type == Col::Str)
      return Value::string(std::string(G.Strings.str(Id)));
    else if constexpr (AccessorT::Type == Col::Kind)
      return Value::string(graph::taskKindName(graph::TaskKind(Id)));
    else if constexpr (AccessorT::Type == Col::Phase)
      return Value::string(graph::phaseName(graph::Phase(Id)));
    else if constexpr (AccessorT::Type == Col::Layer)
      return Value::id(VKind::Layer, Id);
    else
      return Value::id(VKind::Resource, Id);
  }
}

} // namespace

Value Interpreter::member(const Value &Obj, uint16_t NameId) {
  work::add(work::Counter::VmMembers, 1);
  auto Owner = ownerOf(Obj.kind());
  std::optional<MemberId> Id;
  if (Owner)
    Id = bc::memberOf(*Owner, NameId);
  const char *Name = bc::memberNameText(NameId);
  if (!Id)
    fail(describeValue(Obj) + " has no member '" + Name + "'");
  const bc::MemberInfo &Info = bc::memberInfo(*Id);
  if (Info.Flags & bc::Method)
    return Value::object(new BoundObj(Obj, *Id));
  if (Info.Owner == TypeKind::Block || Info.Owner == TypeKind::BlockSet ||
      Info.Result == TypeKind::BlockSet)
    return blockMember(Obj, *Id);
  const graph::Graph &G = graph();
  if (Obj.is(VKind::Task))
    toTask(Obj, "a task"); // one a try block added is gone
  auto Plain = [](double V) { return Value::number(V); };
  auto TaskOrNone = [](TaskId T) {
    return T == NoTask ? Value::none() : Value::id(VKind::Task, T);
  };
  // Dependencies need the lowered edges; the other navigation needs the
  // resource order, which tasks inserted since the last finalize do not
  // invalidate (a run of inserts and lookups finalizes once).
  if (*Id == MemberId::Task_preds || *Id == MemberId::Task_succs ||
      *Id == MemberId::Set_preds || *Id == MemberId::Set_succs)
    ensureFinalized();
  else if (*Id >= MemberId::Task_launcher &&
           *Id <= MemberId::Set_in_iteration && !G.lookupsCurrent())
    ensureFinalized();

  if (props::isTaskProperty(*Id)) {
    // A task's own values: one accessor each (TaskProperties.h), which
    // select's predicates and .filter read too.
    TaskId T = Obj.asId();
    auto ResourceOf = [&](TaskId X) {
      if (!G.lookupsCurrent())
        ensureFinalized();
      return TaskMembers{*this, G, X}.resource();
    };
    props::Source S{*this, G, ResourceOf};
    return props::withTaskProperty(
        *Id, S, [&](const auto &A) { return propertyValue(G, A, T); });
  }

  switch (*Id) {
  // --- Tasks: their values are answered above ---
  case MemberId::Task_name:
  case MemberId::Task_kind:
  case MemberId::Task_precision:
  case MemberId::Task_class:
  case MemberId::Task_phase:
  case MemberId::Task_layer:
  case MemberId::Task_stream:
  case MemberId::Task_thread:
  case MemberId::Task_resource:
  case MemberId::Task_device:
  case MemberId::Task_duration:
  case MemberId::Task_measured:
  case MemberId::Task_bytes:
  case MemberId::Task_iteration:
  case MemberId::Task_start:
  case MemberId::Task_container:
  case MemberId::Task_inserted:
  case MemberId::Task_id:
  case MemberId::Task_flops:
  case MemberId::Task_bytes_moved:
  case MemberId::Task_saved_bytes:
  case MemberId::Task_saved_tensors:
  case MemberId::Task_grad_fn:
  case MemberId::Task_alignment:
  case MemberId::Task_intensity:
  case MemberId::Task_achieved_tflops:
  case MemberId::Task_achieved_bandwidth:
  case MemberId::Task_rank:
  case MemberId::Task_wait:
  case MemberId::Task_transfer:
    break;
  case MemberId::Task_launcher:
    return TaskOrNone(G.Launcher[Obj.asId()]);
  case MemberId::Task_kernels: {
    std::vector<TaskId> Out;
    TaskMembers{*this, G, Obj.asId()}.kernels(Out);
    return taskSet(TaskSet::fromIds(std::move(Out)));
  }
  case MemberId::Task_parent:
    return TaskOrNone(G.Parent[Obj.asId()]);
  case MemberId::Task_gpu_frontier: {
    std::vector<TaskId> Out;
    TaskMembers{*this, G, Obj.asId()}.gpuFrontier(Out);
    return taskSet(TaskSet::fromIds(std::move(Out)));
  }
  case MemberId::Task_preds:
  case MemberId::Task_succs: {
    std::vector<TaskId> Out;
    TaskMembers{*this, G, Obj.asId()}.neighbours(Out,
                                                 *Id == MemberId::Task_preds);
    return taskSet(TaskSet::fromIds(std::move(Out)));
  }

  // --- Task sets ---
  // Set-level members run as one native loop over the set (it may hold a
  // million tasks): no sorting, no per-task member dispatch.
  case MemberId::Set_count: {
    TaskSet B = toSet(Obj, "count");
    size_t N = 0;
    B.forEach([&](TaskId T) { N += !G.isRemoved(T); });
    return Plain(static_cast<double>(N));
  }
  case MemberId::Set_first:
  case MemberId::Set_last: {
    // As inOrder's stable sort by order key would put them: the first is
    // the lowest key (lowest id among equals), the last the highest key
    // (highest id among equals).
    TaskSet B = toSet(Obj, Name);
    bool First = *Id == MemberId::Set_first;
    TaskId Best = NoTask;
    B.forEach([&](TaskId T) {
      if (G.isRemoved(T))
        return;
      if (Best == NoTask || (First ? G.OrderKey[T] < G.OrderKey[Best]
                                   : G.OrderKey[T] >= G.OrderKey[Best]))
        Best = T;
    });
    return TaskOrNone(Best);
  }
  case MemberId::Set_duration:
  case MemberId::Set_measured:
  case MemberId::Set_bytes: {
    TaskSet B = toSet(Obj, Name);
    double Sum = 0;
    B.forEach([&](TaskId T) {
      if (G.isRemoved(T))
        return;
      if (*Id == MemberId::Set_measured) {
        Sum += G.MeasuredDur[T] == graph::NoTime ? 0 : G.MeasuredDur[T];
      } else if (*Id == MemberId::Set_bytes) {
        Sum += G.Bytes[T] < 0 ? 0 : G.Bytes[T];
      } else if (G.isLeaf(T)) {
        Sum += G.Dur[T];
      } else {
        Sum += containerDuration(T);
      }
    });
    return Value::number(Sum, Info.D);
  }
  case MemberId::Set_launchers:
  case MemberId::Set_kernels:
  case MemberId::Set_parents:
  case MemberId::Set_preds:
  case MemberId::Set_succs: {
    TaskSet In = toSet(Obj, Name);
    std::vector<TaskId> Out;
    In.forEach([&](TaskId T) {
      if (G.isRemoved(T))
        return;
      TaskMembers M{*this, G, T};
      switch (*Id) {
      case MemberId::Set_launchers:
        if (G.Launcher[T] != NoTask)
          Out.push_back(G.Launcher[T]);
        break;
      case MemberId::Set_kernels:
        M.kernels(Out);
        break;
      case MemberId::Set_parents:
        if (G.Parent[T] != NoTask)
          Out.push_back(G.Parent[T]);
        break;
      default:
        M.neighbours(Out, *Id == MemberId::Set_preds);
      }
    });
    return taskSet(TaskSet::fromIds(std::move(Out)));
  }
  case MemberId::Set_layers:
  case MemberId::Set_iterations:
  case MemberId::Set_tasks: {
    std::vector<Value> Items;
    llvm::BitVector Seen(*Id == MemberId::Set_layers ? G.Layers.size()
                                                     : G.Iterations.size());
    for (TaskId T : inOrder(toSet(Obj, Name))) {
      if (*Id == MemberId::Set_tasks) {
        Items.push_back(Value::id(VKind::Task, T));
      } else if (*Id == MemberId::Set_layers) {
        graph::LayerId L = G.LayerOf[T];
        if (L != graph::NoLayer && !Seen.test(L)) {
          Seen.set(L);
          Items.push_back(Value::id(VKind::Layer, L));
        }
      } else {
        int32_t It = G.IterationOf[T];
        if (It >= 0 && !Seen.test(static_cast<unsigned>(It))) {
          Seen.set(static_cast<unsigned>(It));
          Items.push_back(Plain(static_cast<double>(G.Iterations[It].Number)));
        }
      }
    }
    if (*Id == MemberId::Set_iterations)
      std::sort(Items.begin(), Items.end(), [](const Value &A, const Value &B) {
        return A.asNumber() < B.asNumber();
      });
    return Value::list(std::move(Items));
  }

  // --- Layers ---
  case MemberId::Layer_name:
    return Value::string(G.Layers[Obj.asId()].Name);
  case MemberId::Layer_index:
    return Plain(G.Layers[Obj.asId()].Index);
  case MemberId::Layer_parent: {
    graph::LayerId Up = G.Layers[Obj.asId()].Parent;
    return Up == graph::NoLayer ? Value::none() : Value::id(VKind::Layer, Up);
  }
  case MemberId::Layer_children: {
    std::vector<Value> Items;
    for (size_t L = Obj.asId() + 1; L < G.Layers.size(); ++L)
      if (G.Layers[L].Parent == Obj.asId())
        Items.push_back(Value::id(VKind::Layer, static_cast<uint32_t>(L)));
    chargeList(Items.size());
    return Value::list(std::move(Items));
  }
  case MemberId::Layer_depth: {
    size_t Depth = 0;
    for (graph::LayerId L = G.Layers[Obj.asId()].Parent; L != graph::NoLayer;
         L = G.Layers[L].Parent)
      ++Depth;
    return Plain(static_cast<double>(Depth));
  }
  case MemberId::Layer_tasks:
  case MemberId::Layer_kernels: {
    std::vector<TaskId> Out;
    for (TaskId T : taskIndex().ByLayer[Obj.asId()])
      if (!G.isRemoved(T) && (*Id == MemberId::Layer_tasks || G.isGpu(T)))
        Out.push_back(T);
    return taskSet(TaskSet::fromSorted(std::move(Out)));
  }

  // --- Resources ---
  case MemberId::Resource_name:
    return Value::string(G.Resources[Obj.asId()].Name);
  case MemberId::Resource_kind:
    return Value::string(graph::resourceKindName(G.Resources[Obj.asId()].Kind));
  case MemberId::Resource_id:
    return Plain(static_cast<double>(G.Resources[Obj.asId()].Id));
  case MemberId::Resource_device:
    return Plain(G.Resources[Obj.asId()].Device);
  case MemberId::Resource_tasks: {
    std::vector<TaskId> Out;
    for (TaskId T : taskIndex().ByResource[Obj.asId()])
      if (!G.isRemoved(T))
        Out.push_back(T);
    return taskSet(TaskSet::fromSorted(std::move(Out)));
  }

  // --- Device and trace ---
  case MemberId::Device_name:
  case MemberId::Device_memory:
  case MemberId::Device_sms:
  case MemberId::Device_mem_bandwidth:
  case MemberId::Device_pcie_bandwidth:
  case MemberId::Device_known:
  case MemberId::Device_catalogue:
  case MemberId::Device_spec_bandwidth:
  case MemberId::Device_fp32_tflops:
  case MemberId::Device_tf32_tflops:
  case MemberId::Device_half_tflops:
  case MemberId::Device_fp8_tflops:
  case MemberId::Device_l2:
    return deviceMember(Obj.asId(), *Id);
  case MemberId::TraceInfo_path:
    return Value::string(Env.TracePath);
  case MemberId::TraceInfo_iterations: {
    std::vector<Value> Items;
    for (const graph::Iteration &It : G.Iterations)
      Items.push_back(Plain(static_cast<double>(It.Number)));
    return Value::list(std::move(Items));
  }
  case MemberId::TraceInfo_layers: {
    std::vector<Value> Items;
    for (uint32_t L = 0; L < G.Layers.size(); ++L)
      Items.push_back(Value::id(VKind::Layer, L));
    return Value::list(std::move(Items));
  }
  case MemberId::TraceInfo_blocks:
    return modelBlocks(2);
  case MemberId::ModelBlock_index:
  case MemberId::ModelBlock_layers:
  case MemberId::ModelBlock_tasks:
  case MemberId::ModelBlock_kernels:
    return modelBlockMember(Obj.asId(), *Id);
  case MemberId::TraceInfo_world_size:
    return Env.WorldSize < 0 ? Value::none()
                             : Plain(static_cast<double>(Env.WorldSize));
  case MemberId::TraceInfo_rank:
    return Env.Rank < 0 ? Value::none() : Plain(static_cast<double>(Env.Rank));
  case MemberId::TraceInfo_ranks: {
    std::vector<Value> Items;
    if (!Env.JobRanks.empty())
      for (int64_t R : Env.JobRanks)
        Items.push_back(Plain(static_cast<double>(R)));
    else if (Env.Rank >= 0)
      Items.push_back(Plain(static_cast<double>(Env.Rank)));
    return Value::list(std::move(Items));
  }
  case MemberId::TraceInfo_has_memory:
    return Value::boolean(hasMemory());
  case MemberId::TraceInfo_iteration:
    if (Env.ReportIteration >= G.Iterations.size())
      return Value::none();
    return Plain(static_cast<double>(G.Iterations[Env.ReportIteration].Number));

  // --- Lists and strings ---
  case MemberId::List_count:
    return Plain(Obj.is(VKind::Range)
                     ? static_cast<double>(Obj.as<RangeObj>()->size())
                     : static_cast<double>(Obj.as<ListObj>()->Items.size()));
  case MemberId::List_first:
  case MemberId::List_last: {
    Value L = Obj;
    if (Obj.is(VKind::Range)) {
      auto *R = Obj.as<RangeObj>();
      if (R->size() == 0)
        return Value::none();
      return Plain(
          static_cast<double>(*Id == MemberId::List_first ? R->Lo : R->Hi));
    }
    auto &Items = Obj.as<ListObj>()->Items;
    if (Items.empty())
      return Value::none();
    return *Id == MemberId::List_first ? Items.front() : Items.back();
  }
  case MemberId::String_count:
    return Plain(static_cast<double>(Obj.as<StringObj>()->S.size()));

  // Answered before the switch: methods are bound; memory blocks' members
  // and the blocks tasks allocate and free are blockMember's.
  case MemberId::Set_filter:
  case MemberId::Set_sort_by:
  case MemberId::Set_in_iteration:
  case MemberId::Task_allocs:
  case MemberId::Task_frees:
  case MemberId::Set_allocs:
  case MemberId::Set_frees:
#define DD_MEMBER(Owner, Name, Result, Flags)                                  \
  DD_BLOCK_OWNED_##Owner(Owner##_##Name)
#include "bytecode/Members.def"
  case MemberId::NumMembers:
    break;
  }
  // Every row of Members.def has its case above, without a default: a new
  // row without one does not build (-Wswitch).
  fail(std::string("internal error: member '") + Name +
       "' reached the switch it is answered before");
}

Value Interpreter::callMethod(const BoundObj &B, std::vector<Value> &Args) {
  if (bc::memberInfo(B.Method).Owner == TypeKind::BlockSet)
    return blockMethod(B, Args);
  const graph::Graph &G = graph();
  auto Want = [&](size_t N, const char *Usage) {
    if (Args.size() != N)
      fail(std::string("usage: ") + Usage);
  };
  switch (B.Method) {
  case MemberId::Set_filter: {
    Want(1, "S.filter(t -> condition)");
    std::vector<TaskId> Out;
    for (TaskId T : inOrder(toSet(B.Self, "filter")))
      if (truthy(call(Args[0], {Value::id(VKind::Task, T)})))
        Out.push_back(T);
    return taskSet(TaskSet::fromIds(std::move(Out)));
  }
  case MemberId::Set_sort_by: {
    Want(1, "S.sort_by(t -> key)");
    std::vector<std::pair<Value, TaskId>> Keyed;
    for (TaskId T : inOrder(toSet(B.Self, "sort_by")))
      Keyed.push_back({call(Args[0], {Value::id(VKind::Task, T)}), T});
    std::stable_sort(Keyed.begin(), Keyed.end(),
                     [&](const auto &X, const auto &Y) {
                       return less(X.first, Y.first, "sort_by");
                     });
    std::vector<Value> Out;
    for (auto &[K, T] : Keyed)
      Out.push_back(Value::id(VKind::Task, T));
    return Value::list(std::move(Out));
  }
  case MemberId::Set_in_iteration: {
    Want(1, "S.in_iteration(N)");
    double N = toNumber(Args[0], {}, "the iteration");
    std::vector<TaskId> Out;
    toSet(B.Self, "in_iteration").forEach([&](TaskId T) {
      int32_t It = G.IterationOf[T];
      if (!G.isRemoved(T) && It >= 0 &&
          static_cast<double>(G.Iterations[It].Number) == N)
        Out.push_back(T);
    });
    return taskSet(TaskSet::fromSorted(std::move(Out)));
  }
  default:
    fail(std::string("'") + bc::memberInfo(B.Method).Name +
         "' is not a method");
  }
}

Value Interpreter::deviceMember(uint32_t Id, bc::MemberId M) {
  const ops::GpuSpec *Spec = Id == 0 ? ops::gpuForDevice(Env.Device.Name)
                                     : &ops::gpuCatalogue()[Id - 1];
  auto Tflops = [&](double V) {
    // None where the GPU has no such path, or the traced GPU is unknown.
    return Spec && V > 0 ? Value::number(V) : Value::none();
  };
  switch (M) {
  case MemberId::Device_name:
    return Value::string(Id == 0 ? Env.Device.Name : std::string(Spec->Key));
  case MemberId::Device_memory:
    if (Id == 0)
      return Value::number(static_cast<double>(Env.Device.Memory),
                           Dim::bytes());
    return Value::number(Spec->MemoryGB * 1e9, Dim::bytes());
  case MemberId::Device_sms:
    return Value::number(Id == 0 ? Env.Device.Sms : Spec->Units);
  case MemberId::Device_mem_bandwidth:
    // Achieved by the trace's memory-bound work: none for a catalogue GPU,
    // and where the trace shows none to measure it from.
    if (Id != 0 || Env.Device.MemBandwidth <= 0)
      return Value::none();
    return Value::number(Env.Device.MemBandwidth, Dim::bandwidth());
  case MemberId::Device_pcie_bandwidth: {
    // The trace's own large host-device copies, else the catalogue's host
    // link for its GPU.
    double Bw = hostBandwidth(Id == 0 ? Env.Device.PcieBandwidth : 0, Spec);
    return Bw > 0 ? Value::number(Bw, Dim::bandwidth()) : Value::none();
  }
  case MemberId::Device_known:
    return Value::boolean(Spec != nullptr);
  case MemberId::Device_catalogue:
    return Spec ? Value::string(Spec->Key) : Value::none();
  case MemberId::Device_spec_bandwidth:
    // GB/s -> bytes per ns.
    return Spec ? Value::number(Spec->BandwidthGBs, Dim::bandwidth())
                : Value::none();
  case MemberId::Device_fp32_tflops:
    return Tflops(Spec ? Spec->Fp32 : 0);
  case MemberId::Device_tf32_tflops:
    return Tflops(Spec ? Spec->Tf32 : 0);
  case MemberId::Device_half_tflops:
    return Tflops(Spec ? Spec->Half : 0);
  case MemberId::Device_fp8_tflops:
    return Tflops(Spec ? Spec->Fp8 : 0);
  case MemberId::Device_l2:
    if (!Spec || Spec->L2MB <= 0)
      return Value::none();
    return Value::number(Spec->L2MB * 1e6, Dim::bytes());
  default:
    fail("internal error: not a device member");
  }
}

Value Interpreter::modelBlocks(double MinLayers) {
  if (!(MinLayers >= 1 && MinLayers <= 1e6) ||
      MinLayers != std::floor(MinLayers))
    fail(fmt::format("model_blocks() takes the fewest layers in a block, a "
                     "whole number from 1, not {}",
                     MinLayers));
  unsigned Min = static_cast<unsigned>(MinLayers);
  auto [It, New] = BlockSearchOf.try_emplace(
      Min, static_cast<uint32_t>(BlockSearches.size()));
  if (New) {
    if (BlockSearches.size() >= (1u << 15))
      fail("model_blocks() asked with too many different sizes");
    BlockSearches.push_back(graph::findModelBlocks(graph(), Min));
    if (BlockSearches.back().Count >= (1u << 16))
      fail(fmt::format("{} repeated blocks: more than ddscript numbers",
                       BlockSearches.back().Count));
  }
  const graph::ModelBlocks &B = BlockSearches[It->second];
  std::vector<Value> Items;
  for (uint32_t I = 0; I < B.Count; ++I)
    Items.push_back(Value::id(VKind::ModelBlock, (It->second << 16) | I));
  chargeList(Items.size());
  return Value::list(std::move(Items));
}

Value Interpreter::modelBlockMember(uint32_t Id, MemberId M) {
  const graph::Graph &G = graph();
  const graph::ModelBlocks &B = BlockSearches[Id >> 16];
  uint32_t Index = Id & 0xffff;
  auto First = B.Layers.begin() + size_t(Index) * B.Period;
  std::vector<graph::LayerId> Own(First, First + B.Period);
  if (M == MemberId::ModelBlock_index)
    return Value::number(static_cast<double>(Index));
  if (M == MemberId::ModelBlock_layers) {
    std::vector<Value> Items;
    for (graph::LayerId L : Own)
      Items.push_back(Value::id(VKind::Layer, L));
    chargeList(Items.size());
    return Value::list(std::move(Items));
  }
  // tasks and kernels: its layers' and theirs below them (a parent comes
  // before its children, so one pass from the block's first layer finds
  // them).
  llvm::BitVector In(G.Layers.size());
  for (graph::LayerId L : Own)
    In.set(L);
  for (size_t L = Own.front() + 1; L < G.Layers.size(); ++L)
    if (G.Layers[L].Parent != graph::NoLayer && In.test(G.Layers[L].Parent))
      In.set(L);
  std::vector<TaskId> Out;
  for (unsigned L : In.set_bits())
    for (TaskId T : taskIndex().ByLayer[L])
      if (!G.isRemoved(T) && (M == MemberId::ModelBlock_tasks || G.isGpu(T)))
        Out.push_back(T);
  std::sort(Out.begin(), Out.end());
  chargeList(Out.size(), 0);
  return taskSet(TaskSet::fromSorted(std::move(Out)));
}

//===- TaskProperties.h - One accessor per task property --------*- C++ -*-===//
//
// The value of each task property of Members.def (a task's own values, not
// the tasks and sets it leads to) is written once, here: `t.duration`,
// `select task where duration > 1ms` and `s.filter(t -> t.duration > 1ms)`
// all read it through the same accessor, so they cannot disagree. The
// member reads one task (Members.cpp); a predicate a column of them
// (Filter.cpp). The switch names every task member and none of the others'
// without a `default:`: a task member added to Members.def without its
// accessor (or a navigation case) does not build.
//
//===----------------------------------------------------------------------===//
#ifndef DD_VM_TASKPROPERTIES_H
#define DD_VM_TASKPROPERTIES_H

#include "graph/KernelClass.h"
#include "ops/Saved.h"
#include "vm/FilterColumns.h"
#include "vm/VMImpl.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>

namespace dd::vm::props {

using filter::Col;
using filter::NoId;
using graph::TaskId;

/// An accessor: its column type, the dimension of its numbers, and Get(T):
/// a double for Col::Num (NaN: none), else an id of the type (NoId: none):
/// a string of the graph's pool (Str), a TaskKind (Kind), a Phase (Phase),
/// a layer (Layer), a resource (Res), 0 or 1 (Bool).
template <Col Ty, typename GetFn> struct Accessor {
  static constexpr Col Type = Ty;
  Dim Unit;
  GetFn Get;
};
template <typename GetFn> Accessor<Col::Num, GetFn> num(Dim U, GetFn G) {
  return {U, G};
}
template <Col Ty, typename GetFn> Accessor<Ty, GetFn> ids(GetFn G) {
  return {Dim(), G};
}

/// What the accessors read: the interpreter (its graph, replay, work
/// columns, strings and environment) and a task's resource (a container's
/// is its leaves'; a callable that outlives the Source: function_ref does
/// not keep a temporary alive).
struct Source {
  Interpreter &I;
  const graph::Graph &G;
  llvm::function_ref<graph::ResourceId(TaskId)> ResourceOf;
};

/// Whether \p M is a task property (an accessor below): a task's member
/// whose value is not another task or a set.
inline bool isTaskProperty(bc::MemberId M) {
  const bc::MemberInfo &Info = bc::memberInfo(M);
  return Info.Owner == bc::TypeKind::Task &&
         Info.Result != bc::TypeKind::Task &&
         Info.Result != bc::TypeKind::Set &&
         Info.Result != bc::TypeKind::BlockSet;
}

/// Calls \p F with the accessor of task property \p M (isTaskProperty).
template <typename Fn>
decltype(auto) withTaskProperty(bc::MemberId M, Source &S, Fn &&F) {
  using bc::MemberId;
  const graph::Graph &G = S.G;
  Interpreter &I = S.I;
  const double NaN = std::nan("");
  auto Resource = [&S](graph::ResourceKind Want, bool Any) {
    return [&S, Want, Any](TaskId T) -> uint32_t {
      graph::ResourceId X = S.ResourceOf(T);
      if (X == graph::NoResource || (!Any && S.G.Resources[X].Kind != Want))
        return NoId;
      return X;
    };
  };
  auto Name = [&I](std::string_view Text) {
    return Text.empty() ? NoId : I.strings().intern(Text);
  };
  switch (M) {
  case MemberId::Task_name:
    return F(ids<Col::Str>([&G](TaskId T) { return G.Name[T]; }));
  case MemberId::Task_kind:
    return F(ids<Col::Kind>(
        [&G](TaskId T) { return static_cast<uint32_t>(G.Kind[T]); }));
  case MemberId::Task_class:
    // Only GPU work has a class.
    return F(ids<Col::Str>([&G, Name](TaskId T) {
      return G.isGpu(T)
                 ? Name(graph::kernelClassName(graph::kernelClassOf(G, T)))
                 : NoId;
    }));
  case MemberId::Task_precision:
    return F(ids<Col::Str>(
        [&G, Name](TaskId T) { return Name(graph::taskPrecision(G, T)); }));
  case MemberId::Task_phase:
    return F(ids<Col::Phase>(
        [&G](TaskId T) { return static_cast<uint32_t>(G.PhaseOf[T]); }));
  case MemberId::Task_layer:
    return F(ids<Col::Layer>([&G](TaskId T) {
      return G.LayerOf[T] == graph::NoLayer ? NoId : G.LayerOf[T];
    }));
  case MemberId::Task_stream:
    return F(ids<Col::Res>(Resource(graph::ResourceKind::GpuStream, false)));
  case MemberId::Task_thread:
    return F(ids<Col::Res>(Resource(graph::ResourceKind::CpuThread, false)));
  case MemberId::Task_resource:
    return F(ids<Col::Res>(Resource(graph::ResourceKind::CpuThread, true)));
  case MemberId::Task_device:
    // -1 where the task has no resource.
    return F(num(Dim(), [&S](TaskId T) {
      graph::ResourceId X = S.ResourceOf(T);
      return X == graph::NoResource
                 ? -1.0
                 : static_cast<double>(S.G.Resources[X].Device);
    }));
  case MemberId::Task_duration: {
    // A leaf's own; a container's span in the replay of the graph as it
    // stands (0 where it has none).
    return F(num(Dim::duration(), [&G, &I](TaskId T) {
      if (G.isLeaf(T))
        return static_cast<double>(G.Dur[T]);
      return static_cast<double>(I.containerDuration(T));
    }));
  }
  case MemberId::Task_measured:
    // 0 for a task never measured (one a model inserted).
    return F(num(Dim::duration(), [&G](TaskId T) {
      return G.MeasuredDur[T] == graph::NoTime
                 ? 0.0
                 : static_cast<double>(G.MeasuredDur[T]);
    }));
  case MemberId::Task_bytes:
    // Unknown sizes are none, so that models can tell them from zero.
    return F(num(Dim::bytes(), [&G, NaN](TaskId T) {
      return G.Bytes[T] < 0 ? NaN : static_cast<double>(G.Bytes[T]);
    }));
  case MemberId::Task_flops: {
    const std::vector<double> &Fl = I.flopsColumn();
    return F(num(Dim(),
                 [&Fl, NaN](TaskId T) { return T < Fl.size() ? Fl[T] : NaN; }));
  }
  case MemberId::Task_bytes_moved: {
    const std::vector<double> &B = I.movedColumn();
    return F(num(Dim::bytes(),
                 [&B, NaN](TaskId T) { return T < B.size() ? B[T] : NaN; }));
  }
  case MemberId::Task_intensity: {
    // FLOPs per byte moved: where both are known and bytes are some.
    const std::vector<double> &Fl = I.flopsColumn();
    const std::vector<double> &B = I.movedColumn();
    return F(num(Dim(), [&Fl, &B, NaN](TaskId T) {
      return T < Fl.size() && T < B.size() && B[T] > 0 ? Fl[T] / B[T] : NaN;
    }));
  }
  case MemberId::Task_achieved_tflops:
  case MemberId::Task_achieved_bandwidth: {
    // What the task achieved in its measured time: FLOPs per ns / 1e3 is
    // TFLOP/s; bytes per ns is the bandwidth unit.
    bool Tf = M == MemberId::Task_achieved_tflops;
    const std::vector<double> &W = Tf ? I.flopsColumn() : I.movedColumn();
    return F(num(Tf ? Dim() : Dim::bandwidth(), [&G, &W, Tf, NaN](TaskId T) {
      double X = T < W.size() ? W[T] : NaN;
      int64_t Ms = G.MeasuredDur[T];
      if (std::isnan(X) || Ms == graph::NoTime || Ms <= 0)
        return NaN;
      return Tf ? X / double(Ms) / 1e3 : X / double(Ms);
    }));
  }
  case MemberId::Task_saved_bytes:
    return F(num(Dim::bytes(), [&G, NaN](TaskId T) {
      return G.Saved[T] < 0 ? NaN : static_cast<double>(G.Saved[T]);
    }));
  case MemberId::Task_saved_tensors:
    return F(num(Dim(), [&G, NaN](TaskId T) {
      return G.Saved[T] < 0 ? NaN : static_cast<double>(G.SavedCount[T]);
    }));
  case MemberId::Task_grad_fn:
    // The autograd node of a forward operator the saved-tensor table
    // knows; none for other tasks.
    return F(ids<Col::Str>([&G, Name](TaskId T) {
      return G.Kind[T] == graph::TaskKind::CpuOp
                 ? Name(ops::savedGradFn(G.name(T)))
                 : NoId;
    }));
  case MemberId::Task_alignment:
    return F(num(Dim(), [&G, NaN](TaskId T) {
      return G.Align[T] == 0 ? NaN : static_cast<double>(G.Align[T]);
    }));
  case MemberId::Task_iteration:
    return F(num(Dim(), [&G, NaN](TaskId T) {
      int32_t It = G.IterationOf[T];
      return It < 0 ? NaN : static_cast<double>(G.Iterations[It].Number);
    }));
  case MemberId::Task_start:
    // Measured, from the graph's origin; none for a task never measured.
    return F(num(Dim::duration(), [&G, NaN](TaskId T) {
      return G.MeasuredStart[T] == graph::NoTime
                 ? NaN
                 : static_cast<double>(G.MeasuredStart[T] - G.Origin);
    }));
  case MemberId::Task_container:
    return F(
        ids<Col::Bool>([&G](TaskId T) { return G.isContainer(T) ? 1u : 0u; }));
  case MemberId::Task_inserted:
    return F(ids<Col::Bool>([&G](TaskId T) {
      return (G.Flags[T] & graph::TF_Inserted) ? 1u : 0u;
    }));
  case MemberId::Task_id:
    return F(num(Dim(), [](TaskId T) { return static_cast<double>(T); }));
  case MemberId::Task_rank: {
    double R = I.env().Rank < 0 ? NaN : static_cast<double>(I.env().Rank);
    return F(num(Dim(), [R](TaskId) { return R; }));
  }
  case MemberId::Task_wait:
  case MemberId::Task_transfer: {
    // Only a job's collective members have the two parts.
    const auto *W = I.env().CommWait;
    bool Wait = M == MemberId::Task_wait;
    return F(num(Dim::duration(), [&G, W, Wait, NaN](TaskId T) {
      if (!W)
        return NaN;
      auto It = W->find(T);
      if (It == W->end())
        return NaN;
      return static_cast<double>(Wait ? It->second : G.Dur[T]);
    }));
  }
  // A task's navigation: other tasks and sets, not values.
  case MemberId::Task_launcher:
  case MemberId::Task_kernels:
  case MemberId::Task_parent:
  case MemberId::Task_preds:
  case MemberId::Task_succs:
  case MemberId::Task_gpu_frontier:
  case MemberId::Task_allocs:
  case MemberId::Task_frees:
#define DD_NOT_TASK_Task(X)
#define DD_NOT_TASK_Set(X) case MemberId::X:
#define DD_NOT_TASK_Layer(X) case MemberId::X:
#define DD_NOT_TASK_ModelBlock(X) case MemberId::X:
#define DD_NOT_TASK_Resource(X) case MemberId::X:
#define DD_NOT_TASK_Device(X) case MemberId::X:
#define DD_NOT_TASK_TraceInfo(X) case MemberId::X:
#define DD_NOT_TASK_List(X) case MemberId::X:
#define DD_NOT_TASK_String(X) case MemberId::X:
#define DD_NOT_TASK_Block(X) case MemberId::X:
#define DD_NOT_TASK_BlockSet(X) case MemberId::X:
#define DD_MEMBER(Owner, Member, Result, Flags)                                \
  DD_NOT_TASK_##Owner(Owner##_##Member)
#include "bytecode/Members.def"
#undef DD_MEMBER
  case MemberId::NumMembers:
    break;
  }
  llvm_unreachable("not a task property (isTaskProperty)");
}
#undef DD_NOT_TASK_Task
#undef DD_NOT_TASK_Set
#undef DD_NOT_TASK_Layer
#undef DD_NOT_TASK_ModelBlock
#undef DD_NOT_TASK_Resource
#undef DD_NOT_TASK_Device
#undef DD_NOT_TASK_TraceInfo
#undef DD_NOT_TASK_List
#undef DD_NOT_TASK_String
#undef DD_NOT_TASK_Block
#undef DD_NOT_TASK_BlockSet

} // namespace dd::vm::props

#endif

//===- KernelClass.cpp - What kind of work a GPU task does ----------------===//
//
// A kernel is classed by its own name: "void " and the template arguments
// and parameters left out ("at::native::vectorized_elementwise_kernel",
// "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"), so that a
// flash-attention kernel whose template arguments name a GEMM tile is not a
// GEMM. Generic wrappers (CUTLASS's "cutlass::Kernel", "kernel") are classed
// by their first template argument, which is the kernel. Where the name
// says nothing, the operator that launched it decides (aten::addmm launches
// GEMMs); in an optimizer step, pointwise work is the optimizer's. The
// patterns are tried in order: attention before GEMM (FMHA kernels are
// CUTLASS GEMMs), convolution before GEMM (implicit-GEMM convolutions).
//
//===----------------------------------------------------------------------===//

#include "graph/KernelClass.h"

#include "ops/Sizes.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>

using namespace dd;
using namespace dd::graph;

std::string_view graph::kernelClassName(KernelClass C) {
  switch (C) {
#define DD_KERNEL_CLASS(Name, Description)                                     \
  case KernelClass::Name:                                                      \
    return #Name;
#include "graph/KernelClasses.def"
  }
  return "other";
}

std::string_view graph::kernelClassDescription(KernelClass C) {
  switch (C) {
#define DD_KERNEL_CLASS(Name, Description)                                     \
  case KernelClass::Name:                                                      \
    return Description;
#include "graph/KernelClasses.def"
  }
  return "";
}

namespace {

std::string lower(std::string_view S) {
  std::string Out(S);
  for (char &C : Out)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  return Out;
}

/// The kernel's own name, lower case: without "void ", anonymous
/// namespaces, template arguments and parameters; a generic wrapper's first
/// template argument instead.
std::string ownName(std::string_view Name) {
  std::string S(Name);
  for (std::string_view Drop : {"(anonymous namespace)::", "void "})
    for (size_t P; (P = S.find(Drop)) != std::string::npos;)
      S.erase(P, Drop.size());
  // A return type written out ("std::enable_if<...>::type vllm::f<...>(...)"):
  // the name follows it.
  if (S.rfind("std::enable_if<", 0) == 0)
    if (size_t P = S.find(">::type "); P != std::string::npos)
      S.erase(0, P + 8);
  size_t Cut = S.find_first_of("<(");
  std::string Base = lower(S.substr(0, Cut));
  while (!Base.empty() && Base.back() == ' ')
    Base.pop_back();
  bool Generic = Base == "kernel" || Base == "cutlass::kernel" ||
                 Base == "cutlass::kernel2" || Base == "cutlass::device_kernel";
  if (Generic && Cut != std::string::npos && S[Cut] == '<') {
    std::string Arg = S.substr(Cut + 1);
    size_t End = Arg.find_first_of("<>,(");
    return lower(Arg.substr(0, End));
  }
  return Base;
}

bool hasAny(const std::string &S, std::initializer_list<std::string_view> P) {
  for (std::string_view X : P)
    if (S.find(X) != std::string::npos)
      return true;
  return false;
}

/// By the kernel's own name; other when it does not say.
KernelClass byName(const std::string &N) {
  if (hasAny(N, {"nccl", "rccl", "all_reduce", "allreduce", "all_gather",
                 "allgather", "reduce_scatter", "alltoall", "multimem"}))
    return KernelClass::comm;
  if (hasAny(N, {"flash_fwd", "flash_bwd", "flash::", "flash_attn", "fmha",
                 "attention", "attn_", "_attn", "sdpa", "mem_eff"}))
    return KernelClass::attention;
  if (hasAny(N, {"convolution", "convolve", "conv1d", "conv2d", "conv3d",
                 "depthwise_conv", "conv_depthwise", "naive_conv", "fprop",
                 "dgrad", "wgrad", "winograd", "scudnn", "miopen", "igemm"}))
    return KernelClass::conv;
  if (hasAny(N, {"softmax"}))
    return KernelClass::softmax;
  if (hasAny(N, {"layer_norm", "layernorm", "batch_norm", "batchnorm", "bn_fw",
                 "bn_bw", "rms_norm", "rmsnorm", "group_norm", "groupnorm",
                 "instance_norm", "welford"}))
    return KernelClass::norm;
  if (hasAny(N, {"rotary"}))
    return KernelClass::elementwise;
  if (hasAny(N, {"embedding"}))
    return KernelClass::embedding;
  if (hasAny(N, {"multi_tensor_apply", "fused_adam", "adam_", "_adam", "sgd_",
                 "lamb_", "fused_sgd"}))
    return KernelClass::optimizer;
  if (hasAny(N, {"gemm", "gemv", "nvjet", "xmma", "cijk_", "triton_tem", "bmm",
                 "matmul", "cutlass", "cublas", "hipblaslt", "tensile", "wmma",
                 "tensorop"}))
    return KernelClass::gemm;
  if (hasAny(N, {"reduce", "triton_red", "triton_per", "cub::", "scan",
                 "argmax", "argmin", "topk", "sort", "histogram", "routing",
                 "moe::dev::finalize"}))
    return KernelClass::reduction;
  if (hasAny(N, {"elementwise",
                 "triton_poi",
                 "catarraybatchedcopy",
                 "fill",
                 "copy",
                 "index",
                 "gather",
                 "scatter",
                 "where",
                 "clamp",
                 "threshold",
                 "dropout",
                 "bernoulli",
                 "masked",
                 "pointwise",
                 "activation",
                 "gelu",
                 "relu",
                 "silu",
                 "sigmoid",
                 "tanh",
                 "cast",
                 "upsample",
                 "pool",
                 "pad",
                 "transpose",
                 "permute",
                 "im2col",
                 "col2im",
                 "quant",
                 "reshape_and_cache",
                 "_copy_",
                 "convert"}))
    return KernelClass::elementwise;
  return KernelClass::other;
}

/// By the operator that launched it; other when it does not say.
KernelClass byOperator(const std::string &Op) {
  if (Op.empty())
    return KernelClass::other;
  if (hasAny(Op, {"attention", "sdpa", "flash"}))
    return KernelClass::attention;
  if (hasAny(Op, {"conv"}))
    return KernelClass::conv;
  if (hasAny(Op, {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
                  "aten::matmul", "aten::linear", "aten::addmv", "aten::mv",
                  "aten::_scaled_mm", "aten::einsum", "aten::dot"}))
    return KernelClass::gemm;
  if (hasAny(Op, {"softmax"}))
    return KernelClass::softmax;
  if (hasAny(Op, {"aten::norm", "vector_norm", "matrix_norm"}))
    return KernelClass::reduction;
  if (hasAny(Op, {"norm"}))
    return KernelClass::norm;
  if (hasAny(Op, {"embedding"}))
    return KernelClass::embedding;
  if (hasAny(Op, {"_foreach_", "optimizer", "adam", "sgd"}))
    return KernelClass::optimizer;
  if (hasAny(Op, {"aten::sum",    "aten::mean",    "aten::max",
                  "aten::min",    "aten::amax",    "aten::amin",
                  "aten::argmax", "aten::argmin",  "aten::var",
                  "aten::std",    "aten::prod",    "aten::any",
                  "aten::all",    "aten::cumsum",  "aten::sort",
                  "aten::topk",   "aten::nonzero", "aten::unique",
                  "nll_loss",     "cross_entropy"}))
    return KernelClass::reduction;
  if (Op.rfind("aten::", 0) == 0)
    return KernelClass::elementwise;
  return KernelClass::other;
}

/// The innermost framework operator around GPU task \p T's launch call, or
/// NoTask.
TaskId launchingOp(const Graph &G, TaskId T) {
  if (TaskId L = G.Launcher[T]; L != NoTask)
    for (TaskId P = G.Parent[L]; P != NoTask; P = G.Parent[P])
      if (G.Kind[P] == TaskKind::CpuOp)
        return P;
  return NoTask;
}

} // namespace

KernelClass graph::classifyKernel(std::string_view Kernel, TaskKind K,
                                  std::string_view Op, bool Optimizer) {
  switch (K) {
  case TaskKind::Memcpy:
    return KernelClass::copy;
  case TaskKind::Memset:
    return KernelClass::memset;
  case TaskKind::Comm:
    return KernelClass::comm;
  case TaskKind::Kernel:
    break;
  case TaskKind::CpuOp:
  case TaskKind::Annotation:
  case TaskKind::Runtime:
    return KernelClass::other;
  }
  KernelClass C = byName(ownName(Kernel));
  KernelClass ByOp = byOperator(lower(Op));
  // A pointwise kernel of an operator of a more specific kind is part of
  // that kind's work (index_select under aten::embedding, the pointwise
  // steps of a norm); a kernel whose name says nothing takes the operator's.
  if (C == KernelClass::other ||
      (C == KernelClass::elementwise && ByOp != KernelClass::elementwise &&
       ByOp != KernelClass::other && ByOp != KernelClass::reduction))
    C = ByOp;
  // The optimizer step's pointwise and reduction work is the optimizer's.
  if (Optimizer && (C == KernelClass::elementwise ||
                    C == KernelClass::reduction || C == KernelClass::other))
    C = KernelClass::optimizer;
  return C;
}

KernelClass graph::kernelClassOf(const Graph &G, TaskId T) {
  if (!G.isGpu(T))
    return KernelClass::other;
  // The operator: the innermost framework operator around the launch call.
  std::string_view Op;
  if (TaskId P = launchingOp(G, T); P != NoTask)
    Op = G.name(P);
  return classifyKernel(G.name(T), G.Kind[T], Op,
                        G.PhaseOf[T] == Phase::Optimizer);
}

namespace {

/// Whether kernels of class \p C are the work of the operator that launches
/// them and no other: an elementwise, reduction or optimizer kernel inside
/// aten::linear or an optimizer step is its aten::add_'s, not the GEMM's.
bool ownOperatorWork(KernelClass C) {
  switch (C) {
  case KernelClass::elementwise:
  case KernelClass::reduction:
  case KernelClass::optimizer:
    return true;
  case KernelClass::gemm:
  case KernelClass::conv:
  case KernelClass::attention:
  case KernelClass::norm:
  case KernelClass::softmax:
  case KernelClass::embedding:
  case KernelClass::comm:
  case KernelClass::copy:
  case KernelClass::memset:
  case KernelClass::other:
    return false;
  }
  return false;
}

/// Per task: an operator's \p Column value where it is known (>= 0), and
/// for each kernel its share of the operator \p OwnerOf gives it (NoTask:
/// none), by measured time among that operator's kernels; NaN elsewhere.
template <typename OwnerFn>
std::vector<double> spreadOverKernels(const Graph &G,
                                      const std::vector<int64_t> &Column,
                                      OwnerFn OwnerOf) {
  size_t N = G.numTasks();
  std::vector<double> Out(N, std::nan(""));
  llvm::DenseMap<TaskId, std::vector<TaskId>> ByOp;
  for (TaskId T = 0; T < N; ++T) {
    if (G.Kind[T] == TaskKind::CpuOp && Column[T] >= 0)
      Out[T] = static_cast<double>(Column[T]);
    if (!G.isGpu(T) || G.isRemoved(T) || G.Launcher[T] == NoTask)
      continue;
    if (TaskId P = OwnerOf(T); P != NoTask)
      ByOp[P].push_back(T);
  }
  for (auto &[Op, Kernels] : ByOp) {
    double Total = 0;
    for (TaskId K : Kernels)
      Total += static_cast<double>(std::max<int64_t>(0, G.MeasuredDur[K]));
    for (TaskId K : Kernels)
      Out[K] =
          static_cast<double>(Column[Op]) *
          (Total > 0
               ? static_cast<double>(std::max<int64_t>(0, G.MeasuredDur[K])) /
                     Total
               : 1.0 / static_cast<double>(Kernels.size()));
  }
  return Out;
}

/// The innermost operator around \p T's launch whose \p Column is known
/// and that \p Accepts, or NoTask.
template <typename AcceptFn>
TaskId innermostKnown(const Graph &G, const std::vector<int64_t> &Column,
                      TaskId T, AcceptFn Accepts) {
  for (TaskId P = G.Parent[G.Launcher[T]]; P != NoTask; P = G.Parent[P])
    if (G.Kind[P] == TaskKind::CpuOp && Column[P] >= 0 && Accepts(P))
      return P;
  return NoTask;
}

} // namespace

bool graph::carriesFlops(KernelClass C) {
  switch (C) {
  case KernelClass::gemm:
  case KernelClass::conv:
  case KernelClass::attention:
  case KernelClass::norm:
  case KernelClass::softmax:
  case KernelClass::embedding:
  case KernelClass::elementwise:
  case KernelClass::reduction:
  case KernelClass::optimizer:
    return true;
  case KernelClass::comm:
  case KernelClass::copy:
  case KernelClass::memset:
  case KernelClass::other:
    return false;
  }
  return false;
}

std::vector<double> graph::taskFlops(const Graph &G) {
  // Whether each operator is sized as elementwise, reduction or list work,
  // looked up once per operator.
  llvm::DenseMap<TaskId, bool> Pointwise;
  auto IsPointwise = [&](TaskId P) {
    auto [It, New] = Pointwise.try_emplace(P, false);
    if (New)
      It->second = ops::isPointwiseWorkOp(G.name(P));
    return It->second;
  };
  return spreadOverKernels(G, G.Flops, [&](TaskId T) -> TaskId {
    KernelClass C = kernelClassOf(G, T);
    if (!carriesFlops(C))
      return NoTask;
    // Elementwise, reduction and optimizer kernels: their own operator's
    // work, where it is sized as such (not the GEMM of an aten::addmm that
    // launched a copy).
    if (ownOperatorWork(C)) {
      TaskId P = launchingOp(G, T);
      return P != NoTask && G.Flops[P] >= 0 && IsPointwise(P) ? P : NoTask;
    }
    // The others: the innermost operator of the other families around
    // their launch (aten::addmm inside aten::linear).
    return innermostKnown(G, G.Flops, T,
                          [&](TaskId P) { return !IsPointwise(P); });
  });
}

std::vector<double> graph::taskMovedBytes(const Graph &G) {
  return spreadOverKernels(G, G.Moved, [&](TaskId T) -> TaskId {
    if (G.Kind[T] != TaskKind::Kernel)
      return NoTask;
    if (ownOperatorWork(kernelClassOf(G, T))) {
      TaskId P = launchingOp(G, T);
      return P != NoTask && G.Moved[P] >= 0 ? P : NoTask;
    }
    return innermostKnown(G, G.Moved, T, [](TaskId) { return true; });
  });
}

/// cuBLASLt's nvjet kernels name their types in the token after
/// `nvjet_` (and an `smNN_` target), in BLAS's letters (s fp32, h fp16, t bf16)
/// and q, r for fp8's e4m3 and e5m2: `nvjet_sm90_tst_...` is bf16,
/// `nvjet_sm90_qrtst_...` fp8 (e4m3 by e5m2), `nvjet_hsh_...` fp16. An fp32
/// pair says nothing of TF32, so it gives none. Letters read from traces of the
/// three precisions on an H100.
static std::string_view nvjetPrecision(std::string_view Kernel) {
  size_t At = Kernel.find("nvjet_");
  if (At == std::string_view::npos)
    return "";
  std::string_view Rest = Kernel.substr(At + 6);
  if (Rest.size() > 2 && Rest.substr(0, 2) == "sm" &&
      std::isdigit(static_cast<unsigned char>(Rest[2]))) {
    size_t Under = Rest.find('_');
    if (Under == std::string_view::npos)
      return "";
    Rest = Rest.substr(Under + 1);
  }
  std::string_view Types = Rest.substr(0, Rest.find('_'));
  if (Types.size() < 3 ||
      Types.find_first_not_of("sdhtqrbi") != std::string_view::npos)
    return "";
  auto Operand = [](char C) -> std::string_view {
    switch (C) {
    case 'q':
    case 'r':
      return "fp8";
    case 'h':
    case 't':
      return "half";
    default:
      return "";
    }
  };
  // Three letters: the inputs' type, the compute type, the output's
  // (`tst`); five: A, B, C, compute, D (`qrsss`).
  std::string_view A = Operand(Types[0]);
  std::string_view B = Types.size() >= 5 ? Operand(Types[1]) : A;
  return A == B ? A : (A == "fp8" || B == "fp8" ? "fp8" : "");
}

std::string_view graph::kernelPrecision(std::string_view Kernel) {
  if (std::string_view P = nvjetPrecision(Kernel); !P.empty())
    return P;
  auto Has = [&](std::initializer_list<std::string_view> Parts) {
    for (std::string_view P : Parts)
      if (Kernel.find(P) != std::string_view::npos)
        return true;
    return false;
  };
  if (Has({"fp8", "e4m3", "e5m2", "f8f8"}))
    return "fp8";
  if (Has({"tf32"}))
    return "tf32";
  if (Has({"bf16", "f16", "fp16", "half", "bfloat16", "BFloat16", "Half",
           "h884", "h1688", "h16816", "hmma", "_B_BS_", "_H_HS_"}))
    return "half";
  if (Has({"sgemm", "f32f32", "fp32", "_S_SS_", "float"}))
    return "fp32";
  return "";
}

std::string_view graph::taskPrecision(const Graph &G, TaskId T) {
  if (!G.isGpu(T))
    return ops::Precisions[G.InputPrecision[T]];
  if (std::string_view P = kernelPrecision(G.name(T)); !P.empty())
    return P;
  TaskId Op = launchingOp(G, T);
  return Op == NoTask ? "" : ops::Precisions[G.InputPrecision[Op]];
}

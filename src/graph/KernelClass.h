//===- KernelClass.h - What kind of work a GPU task does --------*- C++ -*-===//
//
// A GPU task's class (gemm, conv, attention, ...; KernelClasses.def) from
// the kernel's own name, its template arguments left out, together with
// the operator that launched it where the name does not say. See
// docs/language.md (`k.class`) for the table.
//
//===----------------------------------------------------------------------===//
#ifndef DD_GRAPH_KERNELCLASS_H
#define DD_GRAPH_KERNELCLASS_H

#include "graph/Graph.h"

#include <string_view>
#include <vector>

namespace dd::graph {

enum class KernelClass : uint8_t {
#define DD_KERNEL_CLASS(Name, Description) Name,
#include "graph/KernelClasses.def"
};
constexpr unsigned NumKernelClasses = 0
#define DD_KERNEL_CLASS(Name, Description) +1
#include "graph/KernelClasses.def"
    ;

std::string_view kernelClassName(KernelClass C);
std::string_view kernelClassDescription(KernelClass C);

/// The class of work named \p Kernel (a kernel's name as traced) of task
/// kind \p K, launched by operator \p Op ("" when unknown); \p Optimizer
/// when it ran in an optimizer step.
KernelClass classifyKernel(std::string_view Kernel, TaskKind K,
                           std::string_view Op, bool Optimizer);

/// The class of GPU task \p T of \p G (the operator: its launch call's
/// innermost enclosing one); other for CPU tasks.
KernelClass kernelClassOf(const Graph &G, TaskId T);

/// The arithmetic precision a GEMM-class kernel's name shows: "fp8",
/// "tf32", "half" (bf16 or fp16), "fp32", or "" when it shows none
/// (Triton's kernels; cuBLASLt's nvjet kernels with fp32 operands, which
/// may run as TF32). Read from the whole name, template arguments
/// included: that is where CUTLASS puts the types; nvjet kernels from the
/// operand letters after `nvjet_`.
std::string_view kernelPrecision(std::string_view Kernel);

/// Task \p T's precision (the `precision` member): a GPU task's name as
/// kernelPrecision reads it, else the recorded input types of the operator
/// that launched it; an operator's own recorded input types
/// (Graph::InputPrecision). "" where none says.
std::string_view taskPrecision(const Graph &G, TaskId T);

/// Whether kernels of class \p C carry the FLOPs of the operator that
/// launched them (GEMM, convolution, attention, norm, softmax and embedding
/// kernels do; a fill or a copy an attention operator launches does not).
bool carriesFlops(KernelClass C);

/// Per task: an operator's FLOPs from its recorded shapes (Graph::Flops),
/// and a kernel's share of the innermost sized operator around its launch
/// (by measured time among that operator's kernels of classes that carry
/// FLOPs); NaN when unknown.
std::vector<double> taskFlops(const Graph &G);
/// Per task: an operator's bytes moved from its recorded shapes
/// (Graph::Moved), and a compute kernel's share of the innermost sized
/// operator around its launch (by measured time among its kernels); NaN
/// when unknown.
std::vector<double> taskMovedBytes(const Graph &G);

} // namespace dd::graph

#endif

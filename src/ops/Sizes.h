//===- Sizes.h - The bytes an event's recorded arguments describe -*- C++ -*-=//
//
// PyTorch's profiler records operator input shapes ("Input Dims" with
// "Input type") when run with record_shapes=True, and collective sizes
// ("In msg nelems" with "dtype") for communication. These functions turn
// them into bytes: the size of an operator's tensor inputs (a gradient for
// AccumulateGrad), the payload of a collective.
//
//===----------------------------------------------------------------------===//
#ifndef DD_OPS_SIZES_H
#define DD_OPS_SIZES_H

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace dd::ops {

/// Bytes per element of a tensor type as "Input type" spells it ("float",
/// "c10::Half", "long int"). None for scalar arguments, which the profiler
/// spells as their IValue tags ("Int", "Double", "Scalar", "GenericList").
std::optional<int64_t> cppTypeSize(std::string_view Type);

/// Bytes per element of a ScalarType name, as a collective's "dtype" spells
/// it ("Float", "BFloat16", "Long").
std::optional<int64_t> scalarTypeSize(std::string_view Type);

/// The total bytes of the tensor inputs described by \p DimsJson ("Input
/// Dims", e.g. "[[1000, 2048], [], [3]]") and \p TypesJson ("Input type",
/// may be empty when the trace has no types: elements are then taken as 4
/// bytes). Inputs whose type is not a tensor type are skipped, and those
/// \p Skip names (bit I: input I, below 64); 0-d tensors count one
/// element. None if \p DimsJson cannot be read or describes no tensor.
std::optional<int64_t> tensorInputBytes(std::string_view DimsJson,
                                        std::string_view TypesJson,
                                        uint64_t Skip = 0);

/// The shape of each input "Input Dims" describes (\p DimsJson, e.g.
/// "[[1000, 2048], [], [3]]"): its dimensions, none for a scalar; a tensor
/// list's shapes are left empty. None if it cannot be read.
std::optional<std::vector<std::vector<int64_t>>>
inputShapes(std::string_view DimsJson);

/// The elements of each input's tensor list as "Input Dims" records it
/// (\p DimsJson: "[[[128, 128], [128]], [], [2]]" gives 16512, -1, -1):
/// summed over the list, -1 for an input that is not a recorded list. None
/// if it cannot be read.
std::optional<std::vector<double>> listElements(std::string_view DimsJson);

/// What an operator computes: its floating-point operations (2 per
/// multiply-add) and the elements it writes.
struct OpWork {
  int64_t Flops = 0;
  double OutElements = 0;
  /// The elements it reads where that is not all of its tensor inputs (an
  /// embedding reads the rows it looks up, not its whole table); -1 where
  /// it reads them all.
  double InElements = -1;
  /// The inputs it writes without reading them (bit I: input I; copy_'s
  /// and fill_'s destination), left out of the bytes it reads.
  uint64_t Unread = 0;
  /// A matrix multiply's alignment: the largest power of two, up to 16,
  /// that divides its M, N and K (the elements a vector load of its
  /// operands can take); 0 for other operators.
  int32_t Align = 0;
};
/// matmulFlops's and convFlops's work, with the elements written: a
/// product's Batch x M x N, a convolution's output, a convolution
/// backward's input and weight gradients (per output_mask).
std::optional<OpWork>
matmulWork(std::string_view Op,
           const std::vector<std::vector<int64_t>> &Shapes);
std::optional<OpWork> convWork(std::string_view Op,
                               const std::vector<std::vector<int64_t>> &Shapes,
                               std::string_view ConcreteJson);

/// Attention, normalisation and softmax operators (the table in
/// OpWork.def), from their shapes and "Concrete Inputs" (\p ConcreteJson:
/// is_causal). Attention: 2 * B * H * Lq * Lk * (D + Dv), a GEMM for the
/// scores and one for their product with the values (the softmax between
/// them not counted), halved where causal, 2.5 times that in backward (its
/// five GEMMs, the scores recomputed); it writes the output (B x H x Lq x
/// Dv), or in backward the gradients of query, key and value. Norms: 5
/// FLOPs per element for mean and variance (3 for RMS), 2 more with scale
/// and shift (1 with RMS's scale), twice that in backward; they write
/// their input's size, and in backward the weights' gradients too.
/// Softmax: 5 FLOPs per element forward, 4 in backward; writes its input's
/// size. None for other operators and shapes that do not fit.
std::optional<OpWork>
attentionWork(std::string_view Op,
              const std::vector<std::vector<int64_t>> &Shapes,
              std::string_view ConcreteJson);
std::optional<OpWork> normWork(std::string_view Op,
                               const std::vector<std::vector<int64_t>> &Shapes);
std::optional<OpWork>
softmaxWork(std::string_view Op,
            const std::vector<std::vector<int64_t>> &Shapes);
/// Embedding lookups: aten::embedding (weight, indices) reads the rows its
/// indices name and the indices (all in the weight's element size) and
/// writes those rows, with no FLOPs; embedding_dense_backward (grad_output,
/// indices, num_weights, ...) adds each gradient element into a weight
/// gradient of num_weights rows (in \p ConcreteJson), which it writes
/// whole.
std::optional<OpWork>
embeddingWork(std::string_view Op,
              const std::vector<std::vector<int64_t>> &Shapes,
              std::string_view ConcreteJson);

/// Elementwise operators (DD_POINTWISE_OP in OpWork.def): their FLOPs per
/// element written times the elements written, the broadcast of their
/// tensor inputs' shapes or their first input's (in place, and copy_ and
/// fill_, which do not read it). None where the shapes do not broadcast.
std::optional<OpWork>
pointwiseWork(std::string_view Op,
              const std::vector<std::vector<int64_t>> &Shapes);
/// Reductions (DD_REDUCTION_OP): FLOPs per element of the input; they
/// write one element per combination of the dimensions kept, the
/// dimensions reduced read from \p ConcreteJson where the operator records
/// them, all of them where it does not (an overload without dim, a trace
/// without "Concrete Inputs").
std::optional<OpWork>
reductionWork(std::string_view Op,
              const std::vector<std::vector<int64_t>> &Shapes,
              std::string_view ConcreteJson);
/// Tensor-list operators (DD_LIST_OP: foreach, fused optimizers, cat),
/// from the elements of each input's list (\p Lists, listElements): FLOPs
/// per element of the first list, the lists they write. None where the
/// first list's shapes are not recorded.
std::optional<OpWork> listWork(std::string_view Op,
                               const std::vector<double> &Lists);

/// Whether \p Op is sized as elementwise, reduction or tensor-list work
/// (the last three tables of OpWork.def): the work of the kernels it
/// launches itself, not of those of an operator inside it.
bool isPointwiseWorkOp(std::string_view Op);

/// The work of any operator sized from its shapes: a matrix multiply's, a
/// convolution's, an attention's, a norm's, a softmax's, an embedding's,
/// an elementwise operator's, a reduction's, or a tensor-list operator's
/// (from \p Lists, listElements; empty where not read); none otherwise.
std::optional<OpWork> opWork(std::string_view Op,
                             const std::vector<std::vector<int64_t>> &Shapes,
                             std::string_view ConcreteJson,
                             const std::vector<double> &Lists = {});

/// The strings of a JSON list of strings ("Input type", "Concrete Inputs":
/// '["float", "", "[2, 2]"]'); empty when it is not one.
std::vector<std::string> jsonStrings(std::string_view Json);

/// The integers of one "Concrete Inputs" entry: "[2, 2]", "3", "[0]";
/// "True" and "False" as 1 and 0. None for anything else ("" for a tensor).
std::optional<std::vector<int64_t>> concreteInts(std::string_view S);

/// A per-dimension argument (stride, padding, dilation) for \p Dims spatial
/// dimensions: one value for all, or one each; none for another count.
std::optional<std::vector<int64_t>> perDim(const std::vector<int64_t> &V,
                                           size_t Dims);

/// The element size of an operator's first typed input ("Input type",
/// \p TypesJson: "['float', 'c10::Half']"); 4 when none is typed.
int64_t elementSize(std::string_view TypesJson);

/// The bytes an operator moves at least: its tensor inputs read
/// (\p InputBytes, tensorInputBytes; \p Work's InElements instead where it
/// gives them) and its outputs written, each of
/// \p ElemSize bytes (its first input's): as \p Work gives them where
/// it is known, else a reduction's (max, argmax, var, ...) not counted and
/// any other operator's as large as its largest input.
/// None for a negative size or an overflow. Caches and re-reads are not
/// counted: a lower bound on the traffic.
std::optional<int64_t>
movedBytes(std::string_view Op, const std::vector<std::vector<int64_t>> &Shapes,
           std::optional<OpWork> Work, int64_t InputBytes, int64_t ElemSize);

/// The floating-point operations of a matrix-multiply operator \p Op
/// (aten::mm, addmm, bmm, baddbmm, matmul, linear), 2 per multiply-add,
/// from its input shapes; none for other operators or shapes that do not
/// multiply.
std::optional<int64_t>
matmulFlops(std::string_view Op,
            const std::vector<std::vector<int64_t>> &Shapes);

/// The floating-point operations of a convolution, 2 per multiply-add,
/// from its input shapes and its "Concrete Inputs" (\p ConcreteJson: the
/// scalar arguments as strings, "[2, 2]" for a stride): aten::convolution
/// (input, weight, bias, stride, padding, dilation, transposed,
/// output_padding, groups) computes the output's size from the input's;
/// aten::convolution_backward (grad_output, input, weight, bias_sizes,
/// stride, padding, dilation, transposed, output_padding, groups,
/// output_mask) counts the forward's work once for each of the input and
/// weight gradients it computes. None for other operators, transposed
/// convolutions, or arguments that do not fit.
std::optional<int64_t>
convFlops(std::string_view Op, const std::vector<std::vector<int64_t>> &Shapes,
          std::string_view ConcreteJson);

/// The global ranks of "Process Group Ranks" ("[0, 1, 2]"): integers in a
/// list, none for anything else.
std::optional<std::vector<int32_t>> rankList(std::string_view S);

/// Precisions as ddscript names them (Task `precision`): index 0 is none.
inline constexpr std::string_view Precisions[] = {"", "fp32", "half", "fp8"};
/// The precision of an operator's first floating-point tensor input, from
/// its "Input type" list (C++ spellings: "float", "c10::Half"): fp32 (float,
/// double), half (Half, BFloat16) or fp8; 0 when none is floating. The first
/// is the data an operator computes on (attention's statistics and a norm's
/// fp32 weights come later). An index into Precisions.
uint8_t inputPrecision(std::string_view TypesJson);

} // namespace dd::ops

#endif

//===- Saved.h - What autograd keeps for an operator's backward -*- C++ -*-=//
//
// The tensors autograd saves for backward when a forward operator runs in
// training, sized from the operator's recorded shapes and types (the table
// in SavedTensors.def): what torch.autograd.graph.save_on_cpu copies to the
// host and back, and what activation memory holds until backward.
//
//===----------------------------------------------------------------------===//
#ifndef DD_OPS_SAVED_H
#define DD_OPS_SAVED_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace dd::ops {

/// The tensors an operator saves for backward and their bytes.
struct SavedTensors {
  int64_t Bytes = 0;
  int32_t Count = 0;
};

/// What \p Op saves, from its "Input Dims" (\p DimsJson), "Input type"
/// (\p TypesJson; 4-byte elements where untyped) and "Concrete Inputs"
/// (\p ConcreteJson: max pooling's kernel, stride, padding and dilation).
/// None for an operator outside the table, and where its shapes are not
/// recorded or do not fit it.
std::optional<SavedTensors> savedTensors(std::string_view Op,
                                         std::string_view DimsJson,
                                         std::string_view TypesJson,
                                         std::string_view ConcreteJson);

/// The autograd node \p Op's backward runs as ("AddmmBackward0" for
/// "aten::addmm"); empty for an operator outside the table.
std::string_view savedGradFn(std::string_view Op);

} // namespace dd::ops

#endif // DD_OPS_SAVED_H

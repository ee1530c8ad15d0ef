//===- FilterColumns.h - Columns of select predicates (private) -*- C++ -*-===//
//
// The values a filter node produces over every subject of a select (tasks,
// or memory blocks): a column of numbers, of ids (names, kinds, phases,
// layers, resources, tasks, bools), a constant, or a bit mask.
//
//===----------------------------------------------------------------------===//
#ifndef DD_VM_FILTERCOLUMNS_H
#define DD_VM_FILTERCOLUMNS_H

#include "vm/Value.h"

#include <vector>

namespace dd::vm {
class Interpreter;
}

namespace dd::vm::filter {

/// Str ids are the graph's string pool; Task ids are task ids.
enum class Col : uint8_t {
  Num,
  Str,
  Kind,
  Phase,
  Layer,
  Res,
  Bool,
  Const,
  Task
};
constexpr uint32_t NoId = ~0u;

struct Node {
  bool IsMask = false;
  llvm::BitVector Mask;
  Col Type = Col::Const;
  Dim Unit;
  std::vector<double> Num;
  std::vector<uint32_t> Ids;
  Value Const;
};

/// The column of block property \p M over every block (Blocks.cpp).
Node blockColumn(Interpreter &I, bc::MemberId M);

} // namespace dd::vm::filter

#endif

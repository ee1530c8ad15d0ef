//===- Prefault.h - Touch a vector's room in one go -------------*- C++ -*-===//
//
// The first write to each page of a fresh allocation is a page fault, and
// on some machines (virtual machines especially) a fault costs several
// microseconds: building the graph of a 100 MB trace takes tens of thousands
// of them. Where the room a vector will fill is known, mapping it in one
// call (MADV_POPULATE_WRITE, Linux 5.14) saves that cost; elsewhere it does
// nothing.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_PREFAULT_H
#define DD_SUPPORT_PREFAULT_H

#include <cstddef>
#include <vector>

namespace dd {

/// Maps the pages of [Begin, Begin + Bytes) that lie wholly inside it.
void prefault(void *Begin, size_t Bytes);

/// Maps the room between \p V's size and its capacity.
template <typename T> void prefaultCapacity(std::vector<T> &V) {
  prefault(V.data() + V.size(), (V.capacity() - V.size()) * sizeof(T));
}

} // namespace dd

#endif

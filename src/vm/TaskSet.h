//===- TaskSet.h - A set of task ids, sparse or dense ------------*- C++
//-*-===//
//
// The value of `select`, `t.kernels`, `a & b`: a set of task ids. A model
// makes many small sets (one iteration's kernels, one operator's launches)
// on graphs of millions of tasks, and a few large ones (every kernel). A set
// holds sorted ids while it is small against the graph, a bit per task while
// it is large, so that an operation costs what its operands hold: a small
// set intersected with a large one costs the small one's size, never a pass
// over every task of the graph. Each operation adds what it touched (ids,
// or 64-bit words) to the VmSetWork counter (support/Work.h).
//
//===----------------------------------------------------------------------===//
#ifndef DD_VM_TASKSET_H
#define DD_VM_TASKSET_H

#include "llvm/ADT/BitVector.h"

#include <cstdint>
#include <vector>

namespace dd::vm {

class TaskSet {
public:
  /// The empty set.
  TaskSet() = default;
  /// The tasks whose bits are set in \p Bits.
  explicit TaskSet(llvm::BitVector Bits);
  /// The ids of \p Ids (any order, repeats allowed).
  static TaskSet fromIds(std::vector<uint32_t> Ids);
  /// \p Ids, sorted ascending without repeats.
  static TaskSet fromSorted(std::vector<uint32_t> Ids);
  static TaskSet one(uint32_t Id) { return fromSorted({Id}); }

  size_t count() const { return Dense ? Count : Ids.size(); }
  bool empty() const { return count() == 0; }
  bool test(uint32_t Id) const;
  /// The smallest id; -1 when empty.
  int64_t first() const;
  /// Calls \p F(id) for each id, ascending.
  template <typename Fn> void forEach(Fn F) const {
    if (!Dense) {
      for (uint32_t Id : Ids)
        F(Id);
      return;
    }
    for (int I = Bits.find_first(); I >= 0; I = Bits.find_next(I))
      F(static_cast<uint32_t>(I));
  }
  /// The ids, ascending.
  std::vector<uint32_t> ids() const;
  /// The next id from \p Cursor on (0 to start), advancing it; -1 at the
  /// end. A loop over the set, one id at a time.
  int64_t next(size_t &Cursor) const {
    if (!Dense)
      return Cursor < Ids.size() ? static_cast<int64_t>(Ids[Cursor++]) : -1;
    int N = Cursor == 0 ? Bits.find_first()
                        : Bits.find_next(static_cast<unsigned>(Cursor - 1));
    if (N < 0)
      return -1;
    Cursor = static_cast<size_t>(N) + 1;
    return N;
  }

  TaskSet unite(const TaskSet &O) const;
  TaskSet intersect(const TaskSet &O) const;
  TaskSet subtract(const TaskSet &O) const;
  bool operator==(const TaskSet &O) const;

  /// Sets this set's bits in \p Out (grown to hold them).
  void addTo(llvm::BitVector &Out) const;

private:
  /// Dense: Bits over ids 0..Bits.size(), Count of them set. Sparse: Ids.
  bool Dense = false;
  llvm::BitVector Bits;
  size_t Count = 0;
  std::vector<uint32_t> Ids;

  /// Dense with few ids set: sparse (the pass that counted them paid for
  /// it).
  void normalize();
  /// This set as bits over at least \p N ids.
  llvm::BitVector bits(size_t N) const;
  size_t universe() const { return Dense ? Bits.size() : 0; }
};

} // namespace dd::vm

#endif

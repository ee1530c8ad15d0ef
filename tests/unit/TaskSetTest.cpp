#include "vm/TaskSet.h"
#include "support/Work.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

using dd::vm::TaskSet;

namespace {

/// A set of \p N ids out of \p Universe, as a TaskSet and as bits.
std::pair<TaskSet, llvm::BitVector> randomSet(std::mt19937 &R, size_t Universe,
                                              size_t N, bool AsBits) {
  llvm::BitVector B(Universe);
  std::vector<uint32_t> Ids;
  for (size_t I = 0; I < N; ++I) {
    uint32_t Id = static_cast<uint32_t>(R() % Universe);
    B.set(Id);
    Ids.push_back(Id);
  }
  return {AsBits ? TaskSet(B) : TaskSet::fromIds(Ids), B};
}

llvm::BitVector bitsOf(const TaskSet &S, size_t Universe) {
  llvm::BitVector B(Universe);
  S.forEach([&](uint32_t Id) { B.set(Id); });
  return B;
}

} // namespace

TEST_CASE("task sets: sparse and dense operands agree with bit vectors") {
  std::mt19937 R(7);
  const size_t U = 5000;
  // Sizes on both sides of the sparse/dense threshold (one id in 32).
  for (size_t NA : {0, 3, 100, 4000})
    for (size_t NB : {0, 5, 150, 3000})
      for (bool BitsA : {false, true})
        for (bool BitsB : {false, true}) {
          auto [A, BA] = randomSet(R, U, NA, BitsA);
          auto [B, BB] = randomSet(R, U, NB, BitsB);
          llvm::BitVector Or = BA, And = BA, Minus = BA;
          Or |= BB;
          And &= BB;
          Minus.reset(BB);
          CHECK(bitsOf(A.unite(B), U) == Or);
          CHECK(bitsOf(A.intersect(B), U) == And);
          CHECK(bitsOf(A.subtract(B), U) == Minus);
          CHECK(A.unite(B).count() == Or.count());
          CHECK((A == B) == (BA == BB));
          CHECK(A.subtract(B).unite(A.intersect(B)) == A);
          for (uint32_t Id : {0u, 17u, 4999u})
            CHECK(A.test(Id) == BA.test(Id));
          CHECK(A.first() == (BA.any() ? BA.find_first() : -1));
          size_t Cursor = 0, Seen = 0;
          for (int64_t Id = A.next(Cursor); Id >= 0; Id = A.next(Cursor)) {
            CHECK(BA.test(static_cast<unsigned>(Id)));
            ++Seen;
          }
          CHECK(Seen == BA.count());
        }
}

TEST_CASE("task sets: a small set against a large one costs the small one") {
  // Counted work, not time: the intersection of 10 ids with a set of a
  // million tasks touches the 10, not the million's words.
  llvm::BitVector Big(1'000'000);
  Big.set(0, 600'000);
  TaskSet Large(Big);
  TaskSet Small =
      TaskSet::fromIds({5, 17, 700'000, 999'999, 42, 3, 9, 11, 13, 15});
  using dd::work::Counter;
  uint64_t Before = dd::work::get(Counter::VmSetWork);
  TaskSet Both = Small.intersect(Large);
  TaskSet Rest = Small.subtract(Large);
  CHECK(dd::work::get(Counter::VmSetWork) - Before <= 20);
  CHECK(Both.count() == 8);
  CHECK(Rest.count() == 2);
  CHECK(Both.unite(Rest) == Small);
}

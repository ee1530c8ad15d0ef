//===- TaskSet.cpp - A set of task ids, sparse or dense ------------------===//

#include "vm/TaskSet.h"

#include "support/Work.h"

#include <algorithm>
#include <iterator>

using namespace dd;
using namespace dd::vm;

namespace {

/// A dense set is worth its bits when more than one id in 32 is set (an
/// id costs 32 bits sparse, one dense).
constexpr size_t SparseRatio = 32;

void charge(size_t N) { work::add(work::Counter::VmSetWork, N); }

size_t words(size_t Bits) { return (Bits + 63) / 64; }

} // namespace

TaskSet::TaskSet(llvm::BitVector B) : Dense(true), Bits(std::move(B)) {
  Count = Bits.count();
  charge(words(Bits.size()));
  normalize();
}

TaskSet TaskSet::fromIds(std::vector<uint32_t> Ids) {
  std::sort(Ids.begin(), Ids.end());
  Ids.erase(std::unique(Ids.begin(), Ids.end()), Ids.end());
  return fromSorted(std::move(Ids));
}

TaskSet TaskSet::fromSorted(std::vector<uint32_t> Ids) {
  charge(Ids.size());
  TaskSet S;
  S.Ids = std::move(Ids);
  return S;
}

void TaskSet::normalize() {
  if (!Dense || Count * SparseRatio > Bits.size())
    return;
  Ids.reserve(Count);
  for (int I = Bits.find_first(); I >= 0; I = Bits.find_next(I))
    Ids.push_back(static_cast<uint32_t>(I));
  Bits = llvm::BitVector();
  Dense = false;
  Count = 0;
}

bool TaskSet::test(uint32_t Id) const {
  if (Dense)
    return Id < Bits.size() && Bits.test(Id);
  return std::binary_search(Ids.begin(), Ids.end(), Id);
}

int64_t TaskSet::first() const {
  if (Dense)
    return Bits.find_first();
  return Ids.empty() ? -1 : static_cast<int64_t>(Ids.front());
}

std::vector<uint32_t> TaskSet::ids() const {
  if (!Dense)
    return Ids;
  std::vector<uint32_t> Out;
  Out.reserve(Count);
  forEach([&](uint32_t Id) { Out.push_back(Id); });
  charge(words(Bits.size()));
  return Out;
}

llvm::BitVector TaskSet::bits(size_t N) const {
  llvm::BitVector B = Dense ? Bits : llvm::BitVector();
  size_t Need = std::max(N, Dense ? Bits.size()
                                  : (Ids.empty() ? 0 : size_t(Ids.back()) + 1));
  if (B.size() < Need)
    B.resize(Need);
  if (!Dense)
    for (uint32_t Id : Ids)
      B.set(Id);
  charge(words(Need) + (Dense ? 0 : Ids.size()));
  return B;
}

void TaskSet::addTo(llvm::BitVector &Out) const {
  if (Dense) {
    if (Out.size() < Bits.size())
      Out.resize(Bits.size());
    llvm::BitVector B = Bits;
    B.resize(Out.size());
    Out |= B;
    charge(words(Out.size()));
    return;
  }
  if (!Ids.empty() && Out.size() <= Ids.back())
    Out.resize(Ids.back() + 1);
  for (uint32_t Id : Ids)
    Out.set(Id);
  charge(Ids.size());
}

TaskSet TaskSet::unite(const TaskSet &O) const {
  if (!Dense && !O.Dense) {
    std::vector<uint32_t> Out;
    Out.reserve(Ids.size() + O.Ids.size());
    std::set_union(Ids.begin(), Ids.end(), O.Ids.begin(), O.Ids.end(),
                   std::back_inserter(Out));
    charge(Ids.size() + O.Ids.size());
    TaskSet S;
    S.Ids = std::move(Out);
    // Two small sets make a small set; a union never needs the bits of a
    // universe neither operand knows.
    return S;
  }
  // One of them is dense: the other's ids set in a copy of its bits.
  const TaskSet &D = Dense ? *this : O;
  const TaskSet &X = Dense ? O : *this;
  llvm::BitVector B = D.bits(X.Dense ? X.Bits.size() : 0);
  X.addTo(B);
  return TaskSet(std::move(B));
}

TaskSet TaskSet::intersect(const TaskSet &O) const {
  if (!Dense || !O.Dense) {
    // The sparse one's ids that the other holds: its size, no more.
    const TaskSet &S = !Dense ? *this : O;
    const TaskSet &X = !Dense ? O : *this;
    std::vector<uint32_t> Out;
    if (!X.Dense && X.Ids.size() < S.Ids.size() / 8) {
      for (uint32_t Id : X.Ids)
        if (S.test(Id))
          Out.push_back(Id);
      charge(X.Ids.size());
    } else {
      for (uint32_t Id : S.Ids)
        if (X.test(Id))
          Out.push_back(Id);
      charge(S.Ids.size());
    }
    TaskSet R;
    R.Ids = std::move(Out);
    return R;
  }
  size_t N = std::min(Bits.size(), O.Bits.size());
  llvm::BitVector B = Bits, C = O.Bits;
  B.resize(N);
  C.resize(N);
  B &= C;
  charge(words(N));
  return TaskSet(std::move(B));
}

TaskSet TaskSet::subtract(const TaskSet &O) const {
  if (!Dense) {
    std::vector<uint32_t> Out;
    for (uint32_t Id : Ids)
      if (!O.test(Id))
        Out.push_back(Id);
    charge(Ids.size());
    TaskSet R;
    R.Ids = std::move(Out);
    return R;
  }
  llvm::BitVector B = Bits;
  if (O.Dense) {
    llvm::BitVector C = O.Bits;
    C.resize(B.size());
    B.reset(C);
    charge(words(B.size()));
  } else {
    for (uint32_t Id : O.Ids)
      if (Id < B.size())
        B.reset(Id);
    charge(O.Ids.size());
  }
  return TaskSet(std::move(B));
}

bool TaskSet::operator==(const TaskSet &O) const {
  if (count() != O.count())
    return false;
  if (!Dense && !O.Dense) {
    charge(Ids.size());
    return Ids == O.Ids;
  }
  if (!Dense || !O.Dense) {
    const TaskSet &S = !Dense ? *this : O;
    const TaskSet &X = !Dense ? O : *this;
    charge(S.Ids.size());
    return std::all_of(S.Ids.begin(), S.Ids.end(),
                       [&](uint32_t Id) { return X.test(Id); });
  }
  size_t N = std::max(Bits.size(), O.Bits.size());
  llvm::BitVector B = Bits, C = O.Bits;
  B.resize(N);
  C.resize(N);
  charge(words(N));
  return B == C;
}

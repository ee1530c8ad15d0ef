//===- Lanes.cpp - Rows whose slices nest ---------------------------------===//
//
// Chrome-trace X events on one (pid, tid) must nest perfectly; Perfetto moves
// slices that do not onto an overflow track of its own. The trace's CPU
// calls sometimes overlap (coarse or skewed timestamps), and a prediction can
// shift a container against its neighbours, so each row's intervals are
// placed on lanes: lane 0 takes everything that nests, the rest go to the
// first further lane where they do, a nested item preferring its parent's.
//
//===----------------------------------------------------------------------===//

#include "report/ReportImpl.h"

#include <algorithm>
#include <tuple>

using namespace dd::report;
using namespace dd::report::detail;

std::vector<uint32_t> detail::nestingOrder(const std::vector<LaneItem> &Items) {
  std::vector<uint32_t> Order(Items.size());
  for (uint32_t I = 0; I < Order.size(); ++I)
    Order[I] = I;
  std::stable_sort(Order.begin(), Order.end(), [&](uint32_t A, uint32_t B) {
    const LaneItem &X = Items[A], &Y = Items[B];
    return std::make_tuple(X.Begin, -X.End, X.Depth) <
           std::make_tuple(Y.Begin, -Y.End, Y.Depth);
  });
  return Order;
}

std::vector<uint32_t> detail::assignLanes(const std::vector<LaneItem> &Items,
                                          uint32_t &NumLanes) {
  std::vector<uint32_t> Lane(Items.size(), 0);
  std::vector<std::vector<int64_t>> Open; // per lane: ends of open items
  auto Fits = [&](uint32_t L, const LaneItem &It) {
    std::vector<int64_t> &St = Open[L];
    while (!St.empty() && St.back() <= It.Begin)
      St.pop_back(); // ended: later items begin no earlier
    return St.empty() || It.End <= St.back();
  };
  for (uint32_t I : nestingOrder(Items)) {
    const LaneItem &It = Items[I];
    uint32_t Chosen = ~0u;
    if (It.Parent != ~0u && Fits(Lane[It.Parent], It))
      Chosen = Lane[It.Parent];
    for (uint32_t L = 0; Chosen == ~0u && L < Open.size(); ++L)
      if (Fits(L, It))
        Chosen = L;
    if (Chosen == ~0u) {
      Chosen = static_cast<uint32_t>(Open.size());
      Open.emplace_back();
    }
    Lane[I] = Chosen;
    Open[Chosen].push_back(It.End);
  }
  NumLanes = static_cast<uint32_t>(std::max<size_t>(Open.size(), 1));
  return Lane;
}

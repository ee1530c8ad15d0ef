//===- Checked.h - Sums that hold at the ends of their range ----*- C++ -*-===//
//
// Durations (ns) and sizes (bytes) are each bounded where they are read or
// made, but a sum of many of them need not be: a model may scale every task
// to the longest time ddscript takes. Such sums saturate at the int64 range's
// ends instead of wrapping to a wrong (negative) number.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_CHECKED_H
#define DD_SUPPORT_CHECKED_H

#include <cstdint>
#include <limits>

namespace dd {

/// A + B, or the int64 end it passed.
inline int64_t addSaturating(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_add_overflow(A, B, &R))
    return B > 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  return R;
}

/// A - B, or the int64 end it passed.
inline int64_t subSaturating(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_sub_overflow(A, B, &R))
    return B < 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  return R;
}

} // namespace dd

#endif

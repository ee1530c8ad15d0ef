//===- Numbers.h - Exact decimal parsing for trace timestamps ---*- C++ -*-===//
#ifndef DD_TRACE_NUMBERS_H
#define DD_TRACE_NUMBERS_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace dd::trace {

/// Parses the decimal number \p Text (JSON number syntax, optionally quoted)
/// and returns it multiplied by 10^Scale, rounded half away from zero, as an
/// exact int64. Kineto writes microseconds with up to three fractional digits
/// ("4458676522690.655"), so Scale = 3 gives nanoseconds with no float loss.
/// Returns nullopt for malformed text or a value outside int64.
std::optional<int64_t> parseScaledDecimal(std::string_view Text, int Scale);

inline std::optional<int64_t> parseMicrosAsNanos(std::string_view Text) {
  return parseScaledDecimal(Text, 3);
}

} // namespace dd::trace

#endif

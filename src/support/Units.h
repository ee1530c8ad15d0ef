//===- Units.h - Dimensions of .dd numbers ----------------------*- C++ -*-===//
//
// A .dd number carries a dimension: bytes^B * time^T. Durations are stored in
// nanoseconds, sizes in bytes, bandwidths in bytes per nanosecond:
//   3.2ms  -> 3.2e6   {B=0, T=1}
//   25MB   -> 25e6    {B=1, T=0}
//   40Gbps -> 5.0     {B=1, T=-1}   (40e9 bits/s = 5 bytes/ns)
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_UNITS_H
#define DD_SUPPORT_UNITS_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dd {

struct Dim {
  int8_t Bytes = 0, Time = 0;
  bool plain() const { return Bytes == 0 && Time == 0; }
  bool operator==(const Dim &O) const {
    return Bytes == O.Bytes && Time == O.Time;
  }
  bool operator!=(const Dim &O) const { return !(*this == O); }
  Dim operator*(const Dim &O) const {
    return {static_cast<int8_t>(Bytes + O.Bytes),
            static_cast<int8_t>(Time + O.Time)};
  }
  Dim operator/(const Dim &O) const {
    return {static_cast<int8_t>(Bytes - O.Bytes),
            static_cast<int8_t>(Time - O.Time)};
  }
  static Dim duration() { return {0, 1}; }
  static Dim bytes() { return {1, 0}; }
  static Dim bandwidth() { return {1, -1}; }
};

/// "duration", "size", "bandwidth", "number", or "bytes^2/time" and so on.
std::string dimName(Dim D);

/// The scale to base units and the dimension of a unit suffix ("ms",
/// "25MB"'s "MB", "Gbps"); nullopt for an unknown one.
struct UnitInfo {
  double Scale;
  Dim D;
};
std::optional<UnitInfo> lookupUnit(std::string_view Suffix);

/// A number with its dimension, in base units.
struct Quantity {
  double Value = 0;
  Dim D;
  bool HasUnit = false; ///< written with a unit ("0" has none)
};
/// The one reader of numbers with units, for .dd literals, --set values,
/// sweeps and the command line's options. The whole of \p Text must be
///   [+-]? DIGITS ('.' DIGITS)? ([eE] [+-]? DIGITS)? UNIT?
/// with DIGITS = [0-9] ('_'? [0-9])* (underscores between digits only) and
/// UNIT one of lookupUnit's; the value finite. No hexadecimal, no spaces.
/// A sign only with \p AllowSign (a .dd literal's minus is an operator).
/// nullopt otherwise, with the reason in \p Why when given.
std::optional<Quantity> readQuantity(std::string_view Text,
                                     std::string *Why = nullptr,
                                     bool AllowSign = true);
/// Whether \p Text starts like a number ([+-]? digit or .digit): a --set
/// value that does is read as one (and refused if it is not), else as text.
bool looksNumeric(std::string_view Text);

/// A non-negative quantity of dimension \p D as the command line gives it: a
/// number and a unit of that dimension ("35.5ms", "16GiB", "16_000MB"), or 0
/// without a unit, in base units (nanoseconds, bytes); nullopt for anything
/// else.
std::optional<double> parseQuantity(std::string_view Text, Dim D);
/// The unit suffixes the language accepts, for messages.
const char *knownUnits();

/// A value for people: "3.200 ms", "25.0 MiB", "5.00 GB/s", "2.5".
std::string formatQuantity(double Value, Dim D);

} // namespace dd

#endif

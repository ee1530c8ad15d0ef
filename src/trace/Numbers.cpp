#include "trace/Numbers.h"

#include <cstring>
#include <string>

using namespace dd::trace;

namespace {

constexpr uint64_t Pow10[] = {1u,
                              10u,
                              100u,
                              1000u,
                              10000u,
                              100000u,
                              1000000u,
                              10000000u,
                              100000000u,
                              1000000000u,
                              10000000000u,
                              100000000000u,
                              1000000000000u,
                              10000000000000u,
                              100000000000000u,
                              1000000000000000u,
                              10000000000000000u,
                              100000000000000000u,
                              1000000000000000000u,
                              10000000000000000000u};

/// Whether the 8 bytes \p W (little-endian) are all ASCII digits.
inline bool eightDigits(uint64_t W) {
  constexpr uint64_t High = 0xF0F0F0F0F0F0F0F0u, Zeros = 0x3030303030303030u,
                     Six = 0x0606060606060606u;
  return (W & High) == Zeros && ((W + Six) & High) == Zeros;
}

/// The value of 8 ASCII digits loaded little-endian (the first digit in
/// the lowest byte): three multiply-and-shift steps pair them up.
inline uint64_t eightDigitsValue(uint64_t W) {
  W -= 0x3030303030303030u;
  W = (W * 10 + (W >> 8)) & 0x00FF00FF00FF00FFu;
  W = (W * 100 + (W >> 16)) & 0x0000FFFF0000FFFFu;
  return (W * 10000 + (W >> 32)) & 0xFFFFFFFFu;
}

/// Appends the digits from \p P on to \p V, eight at a time while there
/// are eight and room for them within 19 digits, then one at a time;
/// returns where they end.
[[gnu::always_inline]] inline const char *digitRun(const char *P, const char *E,
                                                   uint64_t &V, int &Digits) {
  while (E - P >= 8 && Digits <= 11) {
    uint64_t W;
    std::memcpy(&W, P, 8);
    if (!eightDigits(W))
      break;
    V = V * 100000000u + eightDigitsValue(W);
    P += 8;
    Digits += 8;
  }
  for (; P < E && static_cast<unsigned char>(*P - '0') < 10; ++P, ++Digits)
    V = V * 10 + uint64_t(*P - '0');
  return P;
}

/// The common case, [-]DIGITS[.DIGITS] with at most 19 digits in all and
/// nothing around it, without building a digit string: every timestamp and
/// duration of a trace goes through here. 19 digits still fit in a uint64,
/// and absolute epoch microseconds with three decimals
/// ("1712195497714866.810") have exactly 19. False when the text is not of
/// that form (the general parser then decides).
bool parsePlainDecimal(std::string_view S, int Scale, int64_t &Out) {
  const char *P = S.data(), *E = P + S.size();
  bool Negative = false;
  if (P < E && *P == '-') {
    Negative = true;
    ++P;
  }
  uint64_t V = 0;
  int Digits = 0, Frac = 0;
  const char *IntStart = P;
  P = digitRun(P, E, V, Digits);
  bool SawInt = P > IntStart;
  if (P < E && *P == '.') {
    int Before = Digits;
    P = digitRun(P + 1, E, V, Digits);
    Frac = Digits - Before;
  }
  size_t I = static_cast<size_t>(P - S.data()), N = S.size();
  if (I != N || Digits == 0 || Digits > 19 || (!SawInt && Frac == 0) ||
      Scale < 0 || Scale > 18)
    return false;
  __int128 R;
  if (Frac <= Scale) {
    R = __int128(V) * Pow10[Scale - Frac];
  } else {
    uint64_t Div = Pow10[Frac - Scale];
    uint64_t Rest = V % Div;
    R = V / Div;
    // Round half up on the first dropped digit, as the general parser does.
    if (Rest / (Div / 10) >= 5)
      R += 1;
  }
  if (Negative)
    R = -R;
  if (R > INT64_MAX || R < INT64_MIN)
    return false;
  Out = static_cast<int64_t>(R);
  return true;
}

} // namespace

std::optional<int64_t> dd::trace::parseScaledDecimal(std::string_view S,
                                                     int Scale) {
  if (int64_t Fast; parsePlainDecimal(S, Scale, Fast))
    return Fast;
  // Trim blanks and one level of quotes ("ts": "12.5" appears in the wild).
  while (!S.empty() && (S.back() == ' ' || S.back() == '\n' ||
                        S.back() == '\r' || S.back() == '\t'))
    S.remove_suffix(1);
  while (!S.empty() && (S.front() == ' ' || S.front() == '\t'))
    S.remove_prefix(1);
  if (S.size() >= 2 && S.front() == '"' && S.back() == '"')
    S = S.substr(1, S.size() - 2);
  size_t I = 0;
  bool Negative = false;
  if (I < S.size() && (S[I] == '-' || S[I] == '+'))
    Negative = S[I++] == '-';

  // Significant digits, leading zeros dropped. Timestamps have about 20;
  // a fixed buffer keeps the common case free of allocation.
  struct DigitBuffer {
    char Small[48];
    std::string Large;
    size_t N = 0;
    bool empty() const { return N == 0; }
    size_t size() const { return N; }
    void push_back(char C) {
      if (N < sizeof(Small)) {
        Small[N++] = C;
        return;
      }
      if (Large.empty())
        Large.assign(Small, N);
      Large.push_back(C);
      ++N;
    }
    char operator[](size_t I) const {
      return N <= sizeof(Small) ? Small[I] : Large[I];
    }
    void resize(size_t K) {
      N = K;
      if (!Large.empty())
        Large.resize(K);
    }
    const char *begin() const {
      return N <= sizeof(Small) ? Small : Large.data();
    }
    const char *end() const { return begin() + N; }
  } Digits;
  int64_t Exp = 0; // value = Digits * 10^Exp
  bool SawDigit = false;
  for (; I < S.size() && S[I] >= '0' && S[I] <= '9'; ++I) {
    SawDigit = true;
    if (!(Digits.empty() && S[I] == '0'))
      Digits.push_back(S[I]);
  }
  if (I < S.size() && S[I] == '.') {
    ++I;
    for (; I < S.size() && S[I] >= '0' && S[I] <= '9'; ++I) {
      SawDigit = true;
      --Exp;
      if (!(Digits.empty() && S[I] == '0'))
        Digits.push_back(S[I]);
    }
  }
  if (!SawDigit)
    return std::nullopt;
  if (I < S.size() && (S[I] == 'e' || S[I] == 'E')) {
    ++I;
    bool ExpNeg = false;
    if (I < S.size() && (S[I] == '-' || S[I] == '+'))
      ExpNeg = S[I++] == '-';
    if (I == S.size())
      return std::nullopt;
    int64_t E = 0;
    for (; I < S.size() && S[I] >= '0' && S[I] <= '9'; ++I) {
      E = E * 10 + (S[I] - '0');
      if (E > 100000)
        return std::nullopt;
    }
    Exp += ExpNeg ? -E : E;
  }
  if (I != S.size())
    return std::nullopt;
  Exp += Scale;
  if (Digits.empty())
    return 0;

  // Drop digits below the unit, remembering the first for rounding.
  bool RoundUp = false;
  if (Exp < 0) {
    int64_t Drop = -Exp;
    if (Drop > static_cast<int64_t>(Digits.size())) {
      return 0;
    }
    size_t Keep = Digits.size() - static_cast<size_t>(Drop);
    RoundUp = Digits[Keep] >= '5';
    Digits.resize(Keep);
    Exp = 0;
  }
  if (Digits.size() + static_cast<size_t>(Exp) > 19)
    return std::nullopt;
  __int128 V = 0;
  for (char C : Digits)
    V = V * 10 + (C - '0');
  for (int64_t K = 0; K < Exp; ++K)
    V *= 10;
  if (RoundUp)
    V += 1;
  if (Negative)
    V = -V;
  if (V > INT64_MAX || V < INT64_MIN)
    return std::nullopt;
  return static_cast<int64_t>(V);
}

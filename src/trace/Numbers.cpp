#include "trace/Numbers.h"

#include <string>

using namespace dd::trace;

std::optional<int64_t> dd::trace::parseScaledDecimal(std::string_view S,
                                                     int Scale) {
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

  std::string Digits; // significant digits, leading zeros dropped
  int64_t Exp = 0;    // value = Digits * 10^Exp
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

#include "support/Units.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

using namespace dd;

std::string dd::dimName(Dim D) {
  if (D.plain())
    return "number";
  if (D == Dim::duration())
    return "duration";
  if (D == Dim::bytes())
    return "size";
  if (D == Dim::bandwidth())
    return "bandwidth";
  std::string S;
  auto Part = [&](const char *Name, int E) {
    if (E == 0)
      return;
    if (!S.empty())
      S += "*";
    S += Name;
    if (E != 1)
      S += "^" + std::to_string(E);
  };
  Part("bytes", D.Bytes);
  Part("time", D.Time);
  return S;
}

std::optional<UnitInfo> dd::lookupUnit(std::string_view U) {
  struct Entry {
    const char *Name;
    double Scale;
    Dim D;
  };
  static const Entry Table[] = {
      {"ns", 1, Dim::duration()},
      {"us", 1e3, Dim::duration()},
      {"ms", 1e6, Dim::duration()},
      {"s", 1e9, Dim::duration()},
      {"B", 1, Dim::bytes()},
      {"KB", 1e3, Dim::bytes()},
      {"MB", 1e6, Dim::bytes()},
      {"GB", 1e9, Dim::bytes()},
      {"TB", 1e12, Dim::bytes()},
      {"KiB", 1024.0, Dim::bytes()},
      {"MiB", 1024.0 * 1024, Dim::bytes()},
      {"GiB", 1024.0 * 1024 * 1024, Dim::bytes()},
      {"TiB", 1024.0 * 1024 * 1024 * 1024, Dim::bytes()},
      // Bits per second -> bytes per nanosecond.
      {"bps", 1.0 / 8e9, Dim::bandwidth()},
      {"Kbps", 1e3 / 8e9, Dim::bandwidth()},
      {"Mbps", 1e6 / 8e9, Dim::bandwidth()},
      {"Gbps", 1e9 / 8e9, Dim::bandwidth()},
      {"Tbps", 1e12 / 8e9, Dim::bandwidth()},
      // Bytes per second -> bytes per nanosecond.
      {"Bps", 1.0 / 1e9, Dim::bandwidth()},
      {"KBps", 1e3 / 1e9, Dim::bandwidth()},
      {"MBps", 1e6 / 1e9, Dim::bandwidth()},
      {"GBps", 1.0, Dim::bandwidth()},
      {"TBps", 1e3, Dim::bandwidth()},
  };
  for (const Entry &E : Table)
    if (U == E.Name)
      return UnitInfo{E.Scale, E.D};
  return std::nullopt;
}

const char *dd::knownUnits() {
  return "ns us ms s, B KB MB GB TB KiB MiB GiB TiB, bps Kbps Mbps Gbps Tbps, "
         "Bps KBps MBps GBps TBps";
}

std::string dd::formatQuantity(double V, Dim D) {
  if (D == Dim::duration()) {
    double A = std::fabs(V);
    if (A >= 1e9)
      return fmt::format("{:.3f} s", V / 1e9);
    if (A >= 1e6)
      return fmt::format("{:.3f} ms", V / 1e6);
    if (A >= 1e3)
      return fmt::format("{:.3f} us", V / 1e3);
    return fmt::format("{:.0f} ns", V);
  }
  if (D == Dim::bytes()) {
    double A = std::fabs(V);
    if (A >= 1024.0 * 1024 * 1024)
      return fmt::format("{:.2f} GiB", V / (1024.0 * 1024 * 1024));
    if (A >= 1024.0 * 1024)
      return fmt::format("{:.2f} MiB", V / (1024.0 * 1024));
    if (A >= 1024.0)
      return fmt::format("{:.2f} KiB", V / 1024.0);
    return fmt::format("{:.0f} B", V);
  }
  if (D == Dim::bandwidth())
    return fmt::format("{:.2f} GB/s", V); // bytes/ns == GB/s
  std::string S;
  if (V == std::floor(V) && std::fabs(V) < 1e15)
    S = fmt::format("{:.0f}", V);
  else
    S = fmt::format("{:.6g}", V);
  if (!D.plain())
    S += " " + dimName(D);
  return S;
}

bool dd::looksNumeric(std::string_view T) {
  size_t I = !T.empty() && (T[0] == '-' || T[0] == '+') ? 1 : 0;
  auto Digit = [&](size_t J) {
    return J < T.size() && std::isdigit(static_cast<unsigned char>(T[J]));
  };
  return Digit(I) || (I < T.size() && T[I] == '.' && Digit(I + 1));
}

std::optional<Quantity> dd::readQuantity(std::string_view T, std::string *Why,
                                         bool AllowSign) {
  auto Fail = [&](std::string Msg) -> std::optional<Quantity> {
    if (Why)
      *Why = std::move(Msg);
    return std::nullopt;
  };
  std::string Num;
  size_t I = 0;
  if (AllowSign && I < T.size() && (T[I] == '-' || T[I] == '+'))
    Num.push_back(T[I++]);
  auto IsDigit = [&](size_t J) {
    return J < T.size() && std::isdigit(static_cast<unsigned char>(T[J]));
  };
  // DIGITS: a digit, then digits each after at most one underscore.
  auto Digits = [&]() {
    if (!IsDigit(I))
      return false;
    Num.push_back(T[I++]);
    while (IsDigit(I) || (I + 1 < T.size() && T[I] == '_' && IsDigit(I + 1))) {
      if (T[I] == '_')
        ++I;
      Num.push_back(T[I++]);
    }
    return true;
  };
  if (!Digits())
    return Fail("not a number");
  if (I < T.size() && T[I] == '.') {
    Num.push_back(T[I++]);
    if (!Digits())
      return Fail("not a number: digits must follow the '.'");
  }
  if (I < T.size() && (T[I] == 'e' || T[I] == 'E')) {
    size_t J = I + 1;
    if (J < T.size() && (T[J] == '+' || T[J] == '-'))
      ++J;
    if (IsDigit(J)) { // else the 'e' begins a unit
      Num.append(T.substr(I, J - I));
      I = J;
      Digits();
    }
  }
  double V = std::strtod(Num.c_str(), nullptr);
  if (!std::isfinite(V))
    return Fail("number out of range");
  Quantity Q;
  Q.Value = V;
  std::string_view Unit = T.substr(I);
  if (!Unit.empty()) {
    for (char Ch : Unit)
      if (!std::isalpha(static_cast<unsigned char>(Ch)))
        return Fail("'" + std::string(Unit) +
                    "' after the number is not a unit (units: " + knownUnits() +
                    ")");
    auto U = lookupUnit(Unit);
    if (!U)
      return Fail("unknown unit '" + std::string(Unit) +
                  "' (units: " + knownUnits() + ")");
    Q.Value = V * U->Scale;
    Q.D = U->D;
    Q.HasUnit = true;
    if (!std::isfinite(Q.Value))
      return Fail("number out of range");
  }
  return Q;
}

std::optional<double> dd::parseQuantity(std::string_view Text, Dim D) {
  auto Q = readQuantity(Text);
  if (!Q || Q->Value < 0)
    return std::nullopt;
  // 0 needs no unit: it is 0 in any dimension.
  if (Q->D != D && !(Q->Value == 0 && !Q->HasUnit))
    return std::nullopt;
  return Q->Value;
}

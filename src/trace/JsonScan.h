//===- JsonScan.h - Byte scans for JSON windows -----------------*- C++ -*-===//
//
// The scans JsonWalker cuts windows with, shared by its one-thread and its
// threaded walk (JsonWalker.cpp, JsonWalkerThreads.cpp). Internal to
// src/trace.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_JSONSCAN_H
#define DD_TRACE_JSONSCAN_H

#include <cstddef>
#include <cstring>

namespace dd::trace::jsonscan {

inline constexpr size_t NoPos = ~size_t(0);

inline bool isSpace(char C) {
  return C == ' ' || C == '\n' || C == '\r' || C == '\t';
}

/// The length of the JSON value at the start of \p S (string-aware, nested
/// values balanced), or NoPos when it does not end within \p N bytes. A bare
/// scalar ends at the first delimiter.
inline size_t scanValue(const char *S, size_t N, bool AtEnd) {
  if (N == 0)
    return NoPos;
  char C = S[0];
  if (C == '"') {
    for (size_t I = 1; I < N; ++I) {
      if (S[I] == '\\')
        ++I;
      else if (S[I] == '"')
        return I + 1;
    }
    return NoPos;
  }
  if (C == '{' || C == '[') {
    size_t Depth = 0;
    bool InString = false;
    for (size_t I = 0; I < N; ++I) {
      char X = S[I];
      if (InString) {
        if (X == '\\')
          ++I;
        else if (X == '"')
          InString = false;
      } else if (X == '"') {
        InString = true;
      } else if (X == '{' || X == '[') {
        ++Depth;
      } else if ((X == '}' || X == ']') && --Depth == 0) {
        return I + 1;
      }
    }
    return NoPos;
  }
  for (size_t I = 0; I < N; ++I)
    if (S[I] == ',' || S[I] == '}' || S[I] == ']' || isSpace(S[I]))
      return I;
  return AtEnd ? N : NoPos;
}

/// The end (one past a '}') of the last element boundary "}" "," "{" in
/// [From, To), found from the back; NoPos if there is none. It may lie in
/// a string or a nested value: the caller checks.
inline size_t lastBoundary(const char *D, size_t From, size_t To) {
  size_t I = To;
  while (I > From + 1) {
    const void *P = memrchr(D + From + 1, '{', I - From - 1);
    if (!P)
      return NoPos;
    I = static_cast<const char *>(P) - D;
    size_t J = I;
    while (J > From && isSpace(D[J - 1]))
      --J;
    if (J == From || D[J - 1] != ',')
      continue;
    --J;
    while (J > From && isSpace(D[J - 1]))
      --J;
    if (J > From && D[J - 1] == '}')
      return J;
  }
  return NoPos;
}

/// The end of the last whole element in [From, To), scanning from an
/// element's start with strings and nesting followed exactly; the position
/// of the array's ']' if it closes first. NoPos if no element ends there.
inline size_t exactBoundary(const char *D, size_t From, size_t To) {
  size_t Depth = 0, Last = NoPos;
  bool InString = false;
  for (size_t I = From; I < To; ++I) {
    char X = D[I];
    if (InString) {
      if (X == '\\')
        ++I;
      else if (X == '"')
        InString = false;
    } else if (X == '"') {
      InString = true;
    } else if (X == '{' || X == '[') {
      ++Depth;
    } else if (X == '}' || X == ']') {
      if (Depth == 0)
        return I; // the array ends here
      if (--Depth == 0)
        Last = I + 1;
    }
  }
  return Last;
}

} // namespace dd::trace::jsonscan

#endif

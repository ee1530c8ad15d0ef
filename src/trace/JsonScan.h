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

/// Walks [From, To) following strings and nesting. At each '}' or ']'
/// outside a string, calls Close(position, depth before it); returns the
/// position where Close first returns true, NoPos if it never does.
template <typename CloseFn>
size_t walkNesting(const char *D, size_t From, size_t To, CloseFn Close) {
  size_t Depth = 0;
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
      if (Close(I, Depth))
        return I;
      if (Depth > 0)
        --Depth;
    }
  }
  return NoPos;
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
    size_t Close = walkNesting(S, 0, N, [](size_t, size_t Depth) {
      return Depth == 1; // the value's own closing bracket
    });
    return Close == NoPos ? NoPos : Close + 1;
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
  size_t Last = NoPos;
  size_t ArrayEnd = walkNesting(D, From, To, [&](size_t I, size_t Depth) {
    if (Depth == 1)
      Last = I + 1; // an element ends here
    return Depth == 0;
  });
  return ArrayEnd != NoPos ? ArrayEnd : Last;
}

} // namespace dd::trace::jsonscan

#endif

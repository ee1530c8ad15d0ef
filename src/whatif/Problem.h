//===- Problem.h - What stopped a library call, as a value ------*- C++ -*-===//
#ifndef DD_WHATIF_PROBLEM_H
#define DD_WHATIF_PROBLEM_H

#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

/// What stopped a library call, or a warning on the way, as a value: the
/// file it is about (a trace, a model, or "ddscript" for the run as a whole)
/// and one line of text. Internal: a graph that could not be simulated (the
/// command's exit 3). The command line prints it as `FILE: error: TEXT`; the
/// Python module raises it.
struct Problem {
  std::string File, Message;
  bool Internal = false;
};

/// A library call's answer: its value, or what stopped it; and the
/// warnings on the way, in order, either way.
template <typename T> struct Result {
  std::optional<T> Value;
  std::vector<Problem> Warnings;
  std::optional<Problem> Failed;
};

} // namespace dd::whatif

#endif

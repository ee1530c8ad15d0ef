//===- Problem.h - What stopped a library call, as a value ------*- C++ -*-===//
#ifndef DD_WHATIF_PROBLEM_H
#define DD_WHATIF_PROBLEM_H

#include <string>

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

} // namespace dd::whatif

#endif

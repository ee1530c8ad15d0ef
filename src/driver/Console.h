//===- Console.h - Where a command's output and messages go -----*- C++ -*-===//
//
// A command prints its results on stdout and its errors and warnings on
// stderr, each rendered once: "FILE: error: MESSAGE", or a .dd diagnostic
// "file:line:col: error: message" with its source line and caret. A caller
// that shows them otherwise (the Python module) opens a Capture on its
// thread: while it is open, what the commands would print on that thread is
// kept in it instead, the same text, each error and warning also as a
// value, with the line and column of a .dd diagnostic, and each JSON
// document a command writes (writeJson) as values, never as text.
//
//===----------------------------------------------------------------------===//
#ifndef DD_DRIVER_CONSOLE_H
#define DD_DRIVER_CONSOLE_H

#include "support/Diagnostics.h"
#include "support/Format.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <string_view>
#include <vector>

namespace dd::driver {

/// An error or a warning as printed, and its parts.
struct Message {
  Severity Level = Severity::Error;
  std::string File;
  uint32_t Line = 0, Column = 0; ///< 0 when it names no place in the file
  std::string Text;              ///< the message alone
  std::string Rendered;          ///< as printed, source lines included
};

/// What the commands printed on one thread while a Capture was open.
struct Captured {
  std::string Out; ///< stdout
  std::string Err; ///< stderr: messages, and what models print in JSON runs
  std::vector<Message> Messages;
  /// The JSON documents written (writeJson), in order, as values.
  std::vector<JsonValue> Values;
};

/// Keeps what the commands print on the calling thread from construction to
/// destruction (or take()). Captures nest: the inner one gets it all. Work
/// the commands hand to other threads prints as usual.
class Capture {
public:
  Capture();
  ~Capture();
  Capture(const Capture &) = delete;
  Capture &operator=(const Capture &) = delete;
  /// What was printed so far; the capture starts again empty.
  Captured take();

private:
  friend void writeOut(std::string_view);
  friend void writeErr(std::string_view);
  friend void writeJson(llvm::function_ref<void(JsonWriter &)>);
  friend void keepMessage(Message);
  Captured Data;
  Capture *Outer;
};

/// Prints \p S on stdout, or keeps it in the thread's capture.
void writeOut(std::string_view S);
/// Prints the JSON document \p Write writes on stdout, as one line; the
/// thread's capture keeps it as values instead (Captured::Values): what a
/// command answers with --format json, with no text written or read.
void writeJson(llvm::function_ref<void(JsonWriter &)> Write);
/// Prints \p S on stderr, or keeps it in the thread's capture.
void writeErr(std::string_view S);
/// writeErr of M.Rendered, and M itself kept in the thread's capture.
void keepMessage(Message M);

/// Prints "FILE: error: MESSAGE" on stderr (the one-line error format).
void reportError(std::string_view File, std::string_view Message);
/// Prints "FILE: warning: MESSAGE" on stderr.
void reportWarning(std::string_view File, std::string_view Message);
/// Prints a .dd diagnostic with its source line and caret on stderr.
void reportDiagnostic(const SourceManager &SM, const Diagnostic &D);
/// reportDiagnostic of each of \p E's diagnostics, in order.
void reportDiagnostics(const SourceManager &SM, const DiagEngine &E);

} // namespace dd::driver

#endif

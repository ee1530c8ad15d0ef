//===- Diagnostics.h - Errors and warnings as values ------------*- C++ -*-===//
//
// A Diagnostic is data: a severity, a source range, a message (lower case, no
// final period) and optional notes. Producers append them to a DiagEngine;
// the driver renders them once:
//
//   model.dd:3:14: error: unknown task property 'nmae'; did you mean 'name'?
//     let g = select kernel where nmae ~ /gemm/
//                                 ^~~~
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_DIAGNOSTICS_H
#define DD_SUPPORT_DIAGNOSTICS_H

#include "support/SourceManager.h"

#include <string>
#include <vector>

namespace dd {

enum class Severity : uint8_t { Error, Warning, Note };
/// "error", "warning" or "note", as diagnostics are rendered.
const char *severityName(Severity S);

struct Diagnostic {
  Severity Level = Severity::Error;
  SourceRange Range;
  std::string Message;
  std::vector<Diagnostic> Notes;
};

class DiagEngine {
public:
  void error(SourceRange R, std::string Msg) {
    Diags.push_back({Severity::Error, R, std::move(Msg), {}});
    ++Errors;
  }
  void warning(SourceRange R, std::string Msg) {
    Diags.push_back({Severity::Warning, R, std::move(Msg), {}});
  }
  /// Attaches a note to the last diagnostic.
  void note(SourceRange R, std::string Msg) {
    if (!Diags.empty())
      Diags.back().Notes.push_back({Severity::Note, R, std::move(Msg), {}});
  }
  bool hasErrors() const { return Errors != 0; }
  unsigned errorCount() const { return Errors; }
  const std::vector<Diagnostic> &diagnostics() const { return Diags; }
  void clear() {
    Diags.clear();
    Errors = 0;
  }
  /// Keeps the first \p N diagnostics only: those of a pass whose reports
  /// another pass replaces go.
  size_t size() const { return Diags.size(); }
  void truncate(size_t N) {
    for (size_t I = N; I < Diags.size(); ++I)
      Errors -= Diags[I].Level == Severity::Error;
    if (N < Diags.size())
      Diags.resize(N);
  }

private:
  std::vector<Diagnostic> Diags;
  unsigned Errors = 0;
};

/// "file:line:col: error: message", the source line and a caret line.
std::string renderDiagnostic(const SourceManager &SM, const Diagnostic &D);
/// Text output shows this many diagnostics of one pass at most, then a line
/// that counts the rest: 100,000 bad lines are not 200,000 lines of errors.
constexpr size_t MaxShownDiagnostics = 100;
/// The line after the first MaxShownDiagnostics of \p E; "" when all fit.
std::string moreDiagnostics(const DiagEngine &E);
/// The diagnostics of \p E in order, the first MaxShownDiagnostics and
/// moreDiagnostics' line.
std::string renderDiagnostics(const SourceManager &SM, const DiagEngine &E);

/// The closest of \p Candidates to \p Word (edit distance), or "" when none
/// is close enough to suggest.
std::string closestMatch(std::string_view Word,
                         const std::vector<std::string> &Candidates);

} // namespace dd

#endif

#include "support/Diagnostics.h"

#include <algorithm>

using namespace dd;

static const char *severityName(Severity S) {
  switch (S) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  }
  return "error";
}

static void renderOne(const SourceManager &SM, const Diagnostic &D,
                      std::string &Out) {
  if (!D.Range.valid()) {
    Out += severityName(D.Level);
    Out += ": " + D.Message + "\n";
    return;
  }
  LineColumn Begin = SM.lineColumn(D.Range.Buffer, D.Range.Begin);
  Out += SM.name(D.Range.Buffer) + ":" + std::to_string(Begin.Line) + ":" +
         std::to_string(Begin.Column) + ": " + severityName(D.Level) + ": " +
         D.Message + "\n";
  std::string_view Line = SM.lineText(D.Range.Buffer, Begin.Line);
  Out += "  ";
  Out += Line;
  Out += "\n  ";
  // Tabs in the line keep their width in the caret line.
  for (uint32_t C = 1; C < Begin.Column && C - 1 < Line.size(); ++C)
    Out += Line[C - 1] == '\t' ? '\t' : ' ';
  Out += '^';
  uint32_t Len = D.Range.End > D.Range.Begin ? D.Range.End - D.Range.Begin : 1;
  uint32_t Room = Line.size() >= Begin.Column
                      ? static_cast<uint32_t>(Line.size()) - Begin.Column + 1
                      : 1;
  Len = std::min(Len, Room);
  for (uint32_t I = 1; I < Len; ++I)
    Out += '~';
  Out += '\n';
}

std::string dd::renderDiagnostic(const SourceManager &SM, const Diagnostic &D) {
  std::string Out;
  renderOne(SM, D, Out);
  for (const Diagnostic &N : D.Notes)
    renderOne(SM, N, Out);
  return Out;
}

std::string dd::renderDiagnostics(const SourceManager &SM,
                                  const DiagEngine &E) {
  std::string Out;
  for (const Diagnostic &D : E.diagnostics())
    Out += renderDiagnostic(SM, D);
  return Out;
}

static size_t editDistance(std::string_view A, std::string_view B) {
  std::vector<size_t> Prev(B.size() + 1), Cur(B.size() + 1);
  for (size_t J = 0; J <= B.size(); ++J)
    Prev[J] = J;
  for (size_t I = 1; I <= A.size(); ++I) {
    Cur[0] = I;
    for (size_t J = 1; J <= B.size(); ++J)
      Cur[J] = std::min({Prev[J] + 1, Cur[J - 1] + 1,
                         Prev[J - 1] + (A[I - 1] == B[J - 1] ? 0 : 1)});
    std::swap(Prev, Cur);
  }
  return Prev[B.size()];
}

std::string dd::closestMatch(std::string_view Word,
                             const std::vector<std::string> &Candidates) {
  std::string Best;
  size_t BestD = ~size_t(0);
  for (const std::string &C : Candidates) {
    size_t D = editDistance(Word, C);
    if (D < BestD || (D == BestD && C < Best)) {
      BestD = D;
      Best = C;
    }
  }
  // Suggest only when at most a third of the word differs.
  if (Best.empty() || BestD == 0 || BestD * 3 > std::max<size_t>(Word.size(), 3))
    return "";
  return Best;
}

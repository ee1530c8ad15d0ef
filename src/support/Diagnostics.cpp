#include "support/Diagnostics.h"

#include <algorithm>

using namespace dd;

/// Source lines longer than this (in bytes) are shown in part, around the
/// caret.
static constexpr size_t MaxShownLine = 150;

const char *dd::severityName(Severity S) {
  switch (S) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
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
  size_t At = std::min<size_t>(Begin.Column - 1, Line.size());
  size_t Len = D.Range.End > D.Range.Begin ? D.Range.End - D.Range.Begin : 1;
  auto Continues = [&](size_t I) {
    return I < Line.size() &&
           (static_cast<unsigned char>(Line[I]) & 0xC0) == 0x80;
  };
  // A long line (generated code) is shown around the caret, not whole.
  std::string_view Before, After;
  if (Line.size() > MaxShownLine) {
    size_t From = At > MaxShownLine / 3 ? At - MaxShownLine / 3 : 0;
    size_t To = std::min(Line.size(), From + MaxShownLine);
    while (From > 0 && Continues(From))
      --From;
    while (To < Line.size() && Continues(To))
      ++To;
    if (From > 0)
      Before = "...";
    if (To < Line.size())
      After = "...";
    Line = Line.substr(From, To - From);
    At -= From;
  }
  Out += "  ";
  Out += Before;
  Out += Line;
  Out += After;
  Out += "\n  ";
  Out.append(Before.size(), ' ');
  // Columns count bytes; the caret line counts characters, so that it
  // stands under the right one after a multi-byte UTF-8 character (their
  // continuation bytes take no column). Tabs keep their width.
  for (size_t I = 0; I < At; ++I)
    if (!Continues(I))
      Out += Line[I] == '\t' ? '\t' : ' ';
  Out += '^';
  size_t Stop = std::min(At + Len, Line.size());
  for (size_t I = At + 1; I < Stop; ++I)
    if (!Continues(I))
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

std::string dd::moreDiagnostics(const DiagEngine &E) {
  const auto &All = E.diagnostics();
  if (All.size() <= MaxShownDiagnostics)
    return "";
  size_t Errors = 0, Warnings = 0;
  for (size_t I = MaxShownDiagnostics; I < All.size(); ++I)
    (All[I].Level == Severity::Error ? Errors : Warnings) += 1;
  auto Count = [](size_t N, const char *What) {
    return std::to_string(N) + " more " + What + (N == 1 ? "" : "s");
  };
  std::string Out = "ddscript: ";
  if (Errors)
    Out += Count(Errors, "error");
  if (Errors && Warnings)
    Out += " and ";
  if (Warnings)
    Out += Count(Warnings, "warning");
  return Out + " not shown (the first " + std::to_string(MaxShownDiagnostics) +
         " are above)\n";
}

std::string dd::renderDiagnostics(const SourceManager &SM,
                                  const DiagEngine &E) {
  std::string Out;
  const auto &All = E.diagnostics();
  for (size_t I = 0; I < All.size() && I < MaxShownDiagnostics; ++I)
    Out += renderDiagnostic(SM, All[I]);
  return Out + moreDiagnostics(E);
}

/// Edit distance counting a swap of neighbours as one edit ("nmae").
static size_t editDistance(std::string_view A, std::string_view B) {
  size_t W = B.size() + 1;
  std::vector<size_t> D((A.size() + 1) * W);
  for (size_t I = 0; I <= A.size(); ++I)
    D[I * W] = I;
  for (size_t J = 0; J <= B.size(); ++J)
    D[J] = J;
  for (size_t I = 1; I <= A.size(); ++I)
    for (size_t J = 1; J <= B.size(); ++J) {
      size_t Cost = A[I - 1] == B[J - 1] ? 0 : 1;
      size_t V = std::min({D[(I - 1) * W + J] + 1, D[I * W + J - 1] + 1,
                           D[(I - 1) * W + J - 1] + Cost});
      if (I > 1 && J > 1 && A[I - 1] == B[J - 2] && A[I - 2] == B[J - 1])
        V = std::min(V, D[(I - 2) * W + J - 2] + 1);
      D[I * W + J] = V;
    }
  return D[A.size() * W + B.size()];
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
  // Suggest only when at most a third of the word differs, and something
  // of it is kept.
  if (Best.empty() || BestD == 0 || BestD >= Word.size() ||
      BestD * 3 > std::max<size_t>(Word.size(), 3))
    return "";
  return Best;
}

//===- Console.cpp - Where a command's output and messages go -------------===//

#include "driver/Console.h"

#include <cstdio>

using namespace dd;
using namespace dd::driver;

/// The innermost capture open on this thread, or null.
static thread_local Capture *Current = nullptr;

Capture::Capture() : Outer(Current) { Current = this; }

Capture::~Capture() { Current = Outer; }

Captured Capture::take() {
  Captured Out = std::move(Data);
  Data = Captured();
  return Out;
}

void dd::driver::writeOut(std::string_view S) {
  if (Current)
    Current->Data.Out += S;
  else
    std::fwrite(S.data(), 1, S.size(), stdout);
}

void dd::driver::writeJson(llvm::function_ref<void(JsonWriter &)> Write) {
  if (Current) {
    JsonWriter W(Current->Data.Values.emplace_back());
    Write(W);
    return;
  }
  std::string S;
  JsonWriter W(S);
  Write(W);
  S += '\n';
  std::fwrite(S.data(), 1, S.size(), stdout);
}

void dd::driver::writeErr(std::string_view S) {
  if (Current)
    Current->Data.Err += S;
  else
    std::fwrite(S.data(), 1, S.size(), stderr);
}

void dd::driver::keepMessage(Message M) {
  writeErr(M.Rendered);
  if (Current)
    Current->Data.Messages.push_back(std::move(M));
}

static void report(Severity Level, std::string_view File,
                   std::string_view Text) {
  Message M;
  M.Level = Level;
  M.File = File;
  M.Text = Text;
  M.Rendered = M.File +
               (Level == Severity::Error ? ": error: " : ": warning: ") +
               M.Text + "\n";
  keepMessage(std::move(M));
}

void dd::driver::reportError(std::string_view File, std::string_view Text) {
  report(Severity::Error, File, Text);
}

void dd::driver::reportWarning(std::string_view File, std::string_view Text) {
  report(Severity::Warning, File, Text);
}

void dd::driver::reportDiagnostic(const SourceManager &SM,
                                  const Diagnostic &D) {
  Message M;
  M.Level = D.Level;
  M.Text = D.Message;
  M.Rendered = renderDiagnostic(SM, D);
  if (D.Range.valid()) {
    LineColumn At = SM.lineColumn(D.Range.Buffer, D.Range.Begin);
    M.File = SM.name(D.Range.Buffer);
    M.Line = At.Line;
    M.Column = At.Column;
  }
  keepMessage(std::move(M));
}

void dd::driver::reportDiagnostics(const SourceManager &SM,
                                   const DiagEngine &E) {
  const auto &All = E.diagnostics();
  for (size_t I = 0; I < All.size() && I < MaxShownDiagnostics; ++I)
    reportDiagnostic(SM, All[I]);
  if (std::string More = moreDiagnostics(E); !More.empty())
    writeErr(More);
}

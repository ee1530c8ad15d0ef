//===- GoldenRunner.cpp - Runs one tests/lang/**.dd golden test -----------===//
//
// A golden test is a .dd file whose comments say what must happen:
//
//   // trace: hta/mi250_rocm_minitoy_train.json.gz   (relative to tests/data)
//   // set: NAME=VALUE                               (a parameter, repeatable)
//   // max-steps: N                                  (the VM's step budget)
//   // unprofiled: per-event       the profiler's cost taken out per event,
//                                  as `run` does by default (else --profiled)
//   // expect: TEXT            a line the script prints, in order; all of them
//   // expect error: L:C: MSG  a compile error at line L, column C whose
//                              message contains MSG; all of them, and no other
//   // expect warning: L:C: MSG
//   // expect runtime error: MSG         the run fails with MSG
//   // expect runtime error at: L:C      ... at that place
//
// Without a trace the file is only compiled (or, with expectations, run on
// an empty graph). With one, the model runs as `ddscript run FILE --trace
// TRACE` runs it, through the driver's own set-up (driver::setupRun, then
// driver::predict): the default steady-state iteration, memory and device
// facts, so that an expected line is what users see
// (tests/cli/check_golden_path.py checks it). Exit status 0 means the file
// behaved as it says.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "driver/Predict.h"
#include "vm/VM.h"

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace dd;

namespace {

struct Expectations {
  std::string Trace;
  std::vector<vm::Setting> Settings;
  uint64_t MaxSteps = vm::DefaultMaxSteps;
  bool PerEvent = false;
  std::vector<std::string> Lines;
  struct Diag {
    unsigned Line, Col;
    std::string Msg;
    bool Warning;
  };
  std::vector<Diag> Diags;
  std::string RuntimeError;
  unsigned RuntimeLine = 0, RuntimeCol = 0;
};

std::string trim(std::string S) {
  while (!S.empty() && (S.back() == ' ' || S.back() == '\r'))
    S.pop_back();
  size_t B = S.find_first_not_of(' ');
  return B == std::string::npos ? "" : S.substr(B);
}

bool parseLoc(const std::string &S, unsigned &L, unsigned &C,
              std::string *Rest) {
  unsigned A = 0, B = 0;
  int N = 0;
  if (std::sscanf(S.c_str(), "%u:%u%n", &A, &B, &N) != 2)
    return false;
  L = A;
  C = B;
  if (Rest) {
    std::string R = S.substr(static_cast<size_t>(N));
    if (!R.empty() && R[0] == ':')
      R = R.substr(1);
    *Rest = trim(R);
  }
  return true;
}

bool readExpectations(const std::string &Text, Expectations &E) {
  std::istringstream In(Text);
  std::string Line;
  while (std::getline(In, Line)) {
    size_t At = Line.find("// ");
    if (At == std::string::npos)
      continue;
    std::string C = Line.substr(At + 3);
    auto Take = [&](const char *Key, std::string &Out) {
      size_t K = std::string(Key).size();
      if (C.compare(0, K, Key) != 0)
        return false;
      Out = C.substr(K);
      return true;
    };
    std::string V;
    if (Take("trace:", V)) {
      E.Trace = trim(V);
    } else if (Take("set:", V)) {
      V = trim(V);
      size_t Eq = V.find('=');
      E.Settings.push_back({V.substr(0, Eq), V.substr(Eq + 1)});
    } else if (Take("unprofiled:", V)) {
      if (trim(V) != "per-event")
        return false;
      E.PerEvent = true;
    } else if (Take("max-steps:", V)) {
      E.MaxSteps = std::stoull(trim(V));
    } else if (Take("expect runtime error at:", V)) {
      if (!parseLoc(trim(V), E.RuntimeLine, E.RuntimeCol, nullptr))
        return false;
    } else if (Take("expect runtime error:", V)) {
      E.RuntimeError = trim(V);
    } else if (Take("expect error:", V) || Take("expect warning:", V)) {
      Expectations::Diag D;
      D.Warning = C.compare(0, 15, "expect warning:") == 0;
      if (!parseLoc(trim(V), D.Line, D.Col, &D.Msg))
        return false;
      E.Diags.push_back(D);
    } else if (Take("expect:", V)) {
      E.Lines.push_back(V.empty() ? V : V.substr(V[0] == ' ' ? 1 : 0));
    }
  }
  return true;
}

int failWith(const std::string &Why) {
  std::fprintf(stderr, "FAIL: %s\n", Why.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: dd_golden FILE.dd DATA_DIR\n");
    return 2;
  }
  std::string Path = argv[1], DataDir = argv[2];
  std::ifstream In(Path);
  std::stringstream SS;
  SS << In.rdbuf();
  Expectations E;
  if (!readExpectations(SS.str(), E))
    return failWith("unreadable expectation comments");

  SourceManager SM;
  DiagEngine Diags;
  compiler::CompileOptions Opts;
  Opts.StdlibDirs = {DD_STDLIB_SOURCE_DIR};
  auto Model = compiler::compileFile(Path, Opts, SM, Diags);
  std::string Rendered = renderDiagnostics(SM, Diags);

  // Compile-time diagnostics: exactly the expected ones.
  size_t Matched = 0;
  for (const Expectations::Diag &X : E.Diags) {
    bool Found = false;
    for (const Diagnostic &D : Diags.diagnostics()) {
      LineColumn LC = SM.lineColumn(D.Range.Buffer, D.Range.Begin);
      bool Level = (D.Level == Severity::Warning) == X.Warning;
      if (Level && LC.Line == X.Line && LC.Column == X.Col &&
          D.Message.find(X.Msg) != std::string::npos)
        Found = true;
    }
    if (!Found)
      return failWith("expected diagnostic " + std::to_string(X.Line) + ":" +
                      std::to_string(X.Col) + ": " + X.Msg + "\n--- got ---\n" +
                      Rendered);
    ++Matched;
  }
  if (Matched != Diags.diagnostics().size())
    return failWith("unexpected diagnostics:\n" + Rendered);
  if (!Model) {
    if (E.Diags.empty())
      return failWith("the model did not compile:\n" + Rendered);
    return 0;
  }
  if (E.Trace.empty() && E.Lines.empty() && E.RuntimeError.empty())
    return 0; // compile-only

  // With a trace, the model runs as `ddscript run MODEL --trace TRACE
  // --profiled` runs it (driver::setupRun, driver::predict): the same
  // reported iteration, memory and device facts, so a golden pins what
  // users see. The trace's CPU work stays as recorded: goldens pin the
  // language, not the fitted profiler model (--unprofiled per-event), which
  // a refit would change; `// unprofiled: per-event` opts in to it for a
  // golden about prices without the profiler.
  // Without one, against an empty graph.
  vm::RunResult R;
  if (!E.Trace.empty()) {
    driver::TraceOptions O;
    O.TracePath = DataDir + "/" + E.Trace;
    O.TracePaths = {O.TracePath};
    driver::ProfilerRequest Profiler;
    if (E.PerEvent)
      Profiler.PerEventNs = driver::DefaultPerEventNs;
    driver::RunSetupResult Setup = driver::setupRun(O, Profiler);
    if (!Setup.Setup)
      return failWith("the trace did not load (exit " +
                      std::to_string(Setup.Rc) + ")");
    driver::RunMemory Mem;
    if (auto Bad = Mem.takeSettings(E.Settings, Model->Program))
      return failWith("settings: " + *Bad);
    driver::Prediction P =
        driver::predict(Setup.Setup->baseline(), Setup.Setup->G, Model->Program,
                        E.Settings, std::move(Mem), E.MaxSteps);
    if (P.R.Ok && !P.SimError.empty())
      return failWith("simulation: " + P.SimError);
    R = std::move(P.R);
  } else {
    graph::Graph Empty;
    Empty.finalize();
    vm::RunEnv Env;
    Env.G = &Empty;
    vm::RunOptions RO;
    RO.MaxSteps = E.MaxSteps;
    RO.Settings = E.Settings;
    R = vm::run(Model->Program, Env, RO);
  }

  std::vector<std::string> Got;
  std::istringstream Out(R.Output);
  std::string Line;
  while (std::getline(Out, Line))
    Got.push_back(Line);
  std::string Shown = "\n--- printed ---\n" + R.Output;
  if (!R.Ok) {
    std::string Msg = renderDiagnostic(SM, R.Error);
    if (E.RuntimeError.empty())
      return failWith("runtime error:\n" + Msg + Shown);
    if (R.Error.Message.find(E.RuntimeError) == std::string::npos)
      return failWith("expected runtime error '" + E.RuntimeError +
                      "', got:\n" + Msg);
    if (E.RuntimeLine) {
      LineColumn LC = SM.lineColumn(R.Error.Range.Buffer, R.Error.Range.Begin);
      if (LC.Line != E.RuntimeLine || LC.Column != E.RuntimeCol)
        return failWith("runtime error at " + std::to_string(LC.Line) + ":" +
                        std::to_string(LC.Column) + ", expected " +
                        std::to_string(E.RuntimeLine) + ":" +
                        std::to_string(E.RuntimeCol) + "\n" + Msg);
    }
  } else if (!E.RuntimeError.empty()) {
    return failWith("expected runtime error '" + E.RuntimeError +
                    "', but the run succeeded" + Shown);
  }
  if (Got.size() != E.Lines.size())
    return failWith("printed " + std::to_string(Got.size()) +
                    " lines, expected " + std::to_string(E.Lines.size()) +
                    Shown);
  for (size_t I = 0; I < Got.size(); ++I)
    if (Got[I] != E.Lines[I])
      return failWith("line " + std::to_string(I + 1) + ": got '" + Got[I] +
                      "', expected '" + E.Lines[I] + "'" + Shown);
  return 0;
}

//===- ModelFixture.h - Compiling a .dd model in a test ---------*- C++ -*-===//
#ifndef DD_TESTS_MODELFIXTURE_H
#define DD_TESTS_MODELFIXTURE_H

#include "compiler/Compiler.h"

#include <doctest/doctest.h>

#include <string>

namespace dd::test {

/// Compiles the model in \p Path, its stdlib imports from the source tree;
/// the test stops with the diagnostics when it does not compile.
inline compiler::CompiledModel compileModel(const std::string &Path) {
  SourceManager SM;
  DiagEngine Diags;
  compiler::CompileOptions Opts;
  Opts.StdlibDirs = {DD_STDLIB_SOURCE_DIR};
  auto M = compiler::compileFile(Path, Opts, SM, Diags);
  REQUIRE_MESSAGE(M.has_value(), renderDiagnostics(SM, Diags));
  return std::move(*M);
}

} // namespace dd::test

#endif

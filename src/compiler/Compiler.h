//===- Compiler.h - .dd files to a bytecode Program -------------*- C++ -*-===//
//
// Loads a model and the modules it imports, checks them (Sema) and compiles
// them to bytecode. The VM never sees what is declared here beyond the
// resulting bc::Program.
//
//===----------------------------------------------------------------------===//
#ifndef DD_COMPILER_COMPILER_H
#define DD_COMPILER_COMPILER_H

#include "bytecode/Bytecode.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dd::compiler {

/// The largest .dd file (a model or a module it imports) ddscript reads.
constexpr uint64_t MaxModelFileBytes = uint64_t(16) << 20;

struct CompileOptions {
  /// Directories searched for "import std.NAME" (NAME.dd), in order.
  std::vector<std::string> StdlibDirs;
};

/// A parameter as `ddscript models` and `--set` see it.
struct ParamSummary {
  std::string Name, Doc, DefaultText;
};

struct CompiledModel {
  bc::Program Program;
  std::vector<ParamSummary> Params;
  std::string Description; ///< the model's first comment line
  /// The root module only declares (functions, constants, imports,
  /// parameters) and changes nothing: a library for other models.
  bool IsLibrary = false;
};

/// Compiles the model in \p Path. Errors (syntax, checks, missing imports)
/// go to \p Diags with locations in \p SM; the result is empty then.
std::optional<CompiledModel> compileFile(const std::string &Path,
                                         const CompileOptions &Opts,
                                         SourceManager &SM, DiagEngine &Diags);

/// Compiles source text given directly (tests, `--expr`).
std::optional<CompiledModel>
compileSource(const std::string &Name, std::string Text,
              const CompileOptions &Opts, SourceManager &SM, DiagEngine &Diags);

/// The first comment block of a model's text, joined ("what it models").
std::string leadingComment(const std::string &Text);

} // namespace dd::compiler

#endif

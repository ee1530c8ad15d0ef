//===- Models.h - Finding and compiling models ------------------*- C++ -*-===//
#ifndef DD_DRIVER_MODELS_H
#define DD_DRIVER_MODELS_H

#include "compiler/Compiler.h"

#include <optional>
#include <string>
#include <vector>

namespace dd::driver {

/// Directories of the standard library, in search order: DDSCRIPT_PATH's
/// entries, the installed stdlib, and (for builds run from the source
/// tree) the source tree's stdlib/.
std::vector<std::string> stdlibDirs();

/// Finds a model: \p Name as a path if it exists, else NAME or NAME.dd in
/// the stdlib directories. Returns the path, or a message saying where it
/// looked.
std::optional<std::string> findModel(const std::string &Name,
                                     std::string &Error);

/// Finds and compiles \p Name, printing diagnostics; nullopt on errors.
std::optional<compiler::CompiledModel> loadModel(const std::string &Name,
                                                 SourceManager &SM,
                                                 std::string *Path = nullptr);

} // namespace dd::driver

#endif

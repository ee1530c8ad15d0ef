//===- Models.h - Where models are found, and which there are ---*- C++ -*-===//
//
// The search path of models run by name (`ddscript run amp`), a name found
// on it, and what it holds (`ddscript models`): what the command line and
// the Python module find alike.
//
//===----------------------------------------------------------------------===//
#ifndef DD_WHATIF_MODELS_H
#define DD_WHATIF_MODELS_H

#include "compiler/Compiler.h"

#include <optional>
#include <string>
#include <vector>

namespace dd::whatif {

/// Directories of the standard library, in search order: DDSCRIPT_PATH's
/// entries, the installed stdlib, and (for builds run from the source
/// tree) the source tree's stdlib/; then each one's sibling models/.
std::vector<std::string> stdlibDirs();

/// Finds a model: \p Name as a path if it exists, else NAME or NAME.dd in
/// the stdlib directories. Returns the path, or a message saying where it
/// looked.
std::optional<std::string> findModel(const std::string &Name,
                                     std::string &Error);

/// A model or library of the search path, compiled.
struct ListedModel {
  std::string Name, Path;
  std::optional<compiler::CompiledModel> Model;
  std::string Error;               ///< its first diagnostic, when it fails
  std::vector<std::string> Hidden; ///< same name later in the search path
};

/// The models and libraries of the search path, first of each name wins.
std::vector<ListedModel> listModels();

} // namespace dd::whatif

#endif

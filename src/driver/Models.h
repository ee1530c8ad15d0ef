//===- Models.h - Finding and compiling models ------------------*- C++ -*-===//
#ifndef DD_DRIVER_MODELS_H
#define DD_DRIVER_MODELS_H

#include "compiler/Compiler.h"
#include "support/SourceManager.h"
#include "whatif/Models.h"

#include <optional>
#include <string>
#include <vector>

namespace dd::driver {

using whatif::findModel;
using whatif::stdlibDirs;

/// Finds and compiles \p Name, printing diagnostics; nullopt on errors.
std::optional<compiler::CompiledModel> loadModel(const std::string &Name,
                                                 SourceManager &SM,
                                                 std::string *Path = nullptr);

} // namespace dd::driver

#endif

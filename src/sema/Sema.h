//===- Sema.h - Checking .dd programs before they run -----------*- C++ -*-===//
//
// Resolves every name (locals, captures, globals, builtins, task properties
// in select predicates), checks arity, members, units and the shape of
// select predicates, and annotates the AST for the compiler. Everything it
// finds goes to the DiagEngine; it keeps going after an error so one run
// reports as much as it can.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SEMA_SEMA_H
#define DD_SEMA_SEMA_H

#include "support/Diagnostics.h"
#include "syntax/Ast.h"

#include <map>
#include <string>
#include <vector>

namespace dd::sema {

/// One module of a program, with what it exports to importers.
struct ModuleInfo {
  ast::Module *M = nullptr;
  std::string Name;                        ///< "std.comm", "ddp.dd"
  std::map<std::string, uint32_t> Exports; ///< top-level name -> global
  std::map<std::string, ast::FnStmt *> Functions;
};

/// The checked program, as the compiler reads it.
struct ProgramInfo {
  std::vector<ModuleInfo> Modules; ///< imported modules before importers
  std::vector<std::string> GlobalNames;
  std::vector<ast::ParamStmt *> Params;
};

/// Checks \p Modules (dependencies first: each ImportStmt's Loaded names an
/// earlier index) and fills \p Out. Returns false if any error was found.
bool analyze(const std::vector<std::pair<ast::Module *, std::string>> &Modules,
             DiagEngine &Diags, ProgramInfo &Out);

/// The phases a task may have ("forward", ...), for messages and checks.
const std::vector<std::string> &phaseNames();
/// The kinds a task may have ("kernel", ...).
const std::vector<std::string> &taskKindNames();
/// The classes a memory block may have ("activation", ...).
const std::vector<std::string> &blockClassNames();
/// The classes of GPU work a task may have ("gemm", ...).
const std::vector<std::string> &kernelClassNames();
/// Names that stand for strings anywhere: the phases ("forward") and the
/// block classes ("activation"; cross_phase is "cross-phase"), as (name,
/// value).
const std::vector<std::pair<std::string, std::string>> &namedConstants();

} // namespace dd::sema

#endif

//===- Parser.h - .dd source to AST -----------------------------*- C++ -*-===//
//
// The only entry point to the parser. ANTLR's generated code stays behind
// this header: callers see ddscript's AST and diagnostics only.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SYNTAX_PARSER_H
#define DD_SYNTAX_PARSER_H

#include "support/Diagnostics.h"
#include "syntax/Ast.h"

#include <memory>

namespace dd::syntax {

/// Parses buffer \p B of \p SM. Syntax errors (all of them, thanks to error
/// recovery) go to \p Diags and make the result null; errors in literals
/// (units, escapes, insert clauses) are reported with a usable AST.
std::unique_ptr<ast::Module> parseModule(const SourceManager &SM, BufferId B,
                                         ast::AstContext &Ctx,
                                         DiagEngine &Diags);

} // namespace dd::syntax

#endif

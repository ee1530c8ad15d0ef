//===- AstBuilderImpl.h - Parse tree to AST (private) -----------*- C++ -*-===//
//
// The ANTLR firewall: only AstBuilder*.cpp include this header and the
// generated parser. Each build function starts with the production it
// handles.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SYNTAX_ASTBUILDERIMPL_H
#define DD_SYNTAX_ASTBUILDERIMPL_H

#include "syntax/Parser.h"

#include "DDScriptLexer.h"
#include "DDScriptParser.h"

namespace dd::syntax {

using P = dd::syntax::gen::DDScriptParser;

class AstBuilder {
public:
  AstBuilder(const SourceManager &SM, BufferId B, ast::AstContext &Ctx,
             DiagEngine &Diags);

  /// How deep expressions and blocks may nest: the checks and the compiler
  /// after the builder recurse as deep, so deeper nesting is an error here
  /// (once per module).
  static constexpr unsigned MaxNesting = 256;

  /// Whether something nested too deep: the AST has stand-ins there, and
  /// the checks after the builder would report errors about them.
  bool nestedTooDeep() const { return ReportedDepth; }

  ast::Stmt *buildStmt(P::StmtContext *C);
  ast::Expr *buildExpr(P::ExprContext *C);
  void buildBlock(P::BlockContext *C, ast::Block &Out);

  /// The byte range of a token or a rule.
  SourceRange range(antlr4::Token *T) const;
  SourceRange range(antlr4::ParserRuleContext *C) const;
  SourceRange range(antlr4::tree::TerminalNode *N) const {
    return range(N->getSymbol());
  }

private:
  const SourceManager &SM;
  BufferId Buffer;
  ast::AstContext &Ctx;
  DiagEngine &Diags;
  /// Code-point index -> byte offset, when the buffer is not pure ASCII
  /// (ANTLR's input stream counts code points).
  std::vector<uint32_t> ByteOf;
  unsigned Depth = 0;
  bool ReportedDepth = false;
  /// Enters one level; false (after the error) when it is one too many.
  bool enter(antlr4::ParserRuleContext *C);

  uint32_t byteOffset(size_t CodePoint) const;
  ast::Stmt *buildIf(P::IfStatementContext *C);
  ast::Stmt *buildFn(P::FnStmtContext *C);
  ast::Stmt *buildImport(P::ImportStmtContext *C);
  ast::Expr *buildNumber(P::NumberExprContext *C);
  ast::Expr *buildSelect(P::SelectExprContext *C);
  ast::Expr *buildInsert(P::InsertExprContext *C);
  // Memory statements (AstBuilderMemory.cpp).
  /// One clause of free, offload or alloc as written; Prefetch when the
  /// word 'prefetch' came right before it.
  struct MemClause {
    std::string Word;
    SourceRange WordRange;
    size_t Line = 0; ///< of the clause's word
    bool Prefetch = false;
    SourceRange PrefetchRange;
    ast::Expr *Value = nullptr;
  };
  std::vector<MemClause>
  buildMemClauses(const std::vector<P::MemClauseContext *> &Cs);
  /// For an unknown clause word on a later line than its statement's
  /// start: the grammar reads a clause as `WORD expr` across lines, so a
  /// call such as `f(x)` on the line after a statement with clauses is
  /// taken for one. Empty otherwise.
  static std::string newLineHint(const std::string &Word, size_t WordLine,
                                 antlr4::ParserRuleContext *Stmt);
  ast::Stmt *buildFree(P::FreeStmtContext *C);
  ast::Stmt *buildOffload(P::OffloadStmtContext *C);
  ast::Expr *buildAlloc(P::AllocExprContext *C);
  ast::Expr *buildCall(P::CallExprContext *C);
  ast::Expr *buildLambda(P::LambdaExprContext *C);
  ast::Expr *buildOp(P::OpExprContext *C);
  ast::Expr *buildOpAt(P::OpExprContext *C);
  ast::Expr *binary(ast::BinaryOp Op, P::OpExprContext *C, P::OpExprContext *L,
                    P::OpExprContext *R, antlr4::Token *OpTok);
  std::string unquote(antlr4::tree::TerminalNode *N);
};

} // namespace dd::syntax

#endif

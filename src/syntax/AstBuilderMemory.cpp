//===- AstBuilderMemory.cpp - resize, free, offload, alloc ----------------===//
//
// The memory statements and the alloc expression. Their clauses share one
// grammar rule (memClause: 'prefetch'? ('on' | IDENT) expr); which names a
// statement takes, and in which combinations, is checked here.
//
//===----------------------------------------------------------------------===//

#include "AstBuilderImpl.h"

#include "antlr4-runtime.h"

using namespace dd;
using namespace dd::syntax;

std::vector<AstBuilder::MemClause>
AstBuilder::buildMemClauses(const std::vector<P::MemClauseContext *> &Cs) {
  // memClause -> 'prefetch'? ('on' | IDENT) expr
  std::vector<MemClause> Out;
  for (P::MemClauseContext *C : Cs) {
    MemClause Cl;
    antlr4::Token *Word = C->IDENT() ? C->IDENT()->getSymbol() : nullptr;
    if (!Word)
      for (antlr4::tree::ParseTree *Child : C->children)
        if (auto *T = dynamic_cast<antlr4::tree::TerminalNode *>(Child))
          if (T->getText() == "on")
            Word = T->getSymbol();
    Cl.Word = Word ? Word->getText() : "on";
    Cl.WordRange = Word ? range(Word) : range(C);
    Cl.Line = Word ? Word->getLine() : C->getStart()->getLine();
    Cl.Prefetch = C->getStart()->getText() == "prefetch";
    if (Cl.Prefetch)
      Cl.PrefetchRange = range(C->getStart());
    Cl.Value = buildExpr(C->expr());
    Out.push_back(Cl);
  }
  return Out;
}

std::string AstBuilder::newLineHint(const std::string &Word, size_t WordLine,
                                    antlr4::ParserRuleContext *Stmt) {
  size_t Line = Stmt->getStart()->getLine();
  if (WordLine <= Line)
    return "";
  return "; if line " + std::to_string(WordLine) +
         " starts a new statement, end the one on line " +
         std::to_string(Line) +
         " with ';' (a word and an expression after "
         "clauses read as one more clause, on any line)";
}

/// Stores \p E in \p Slot, or reports a clause given twice.
static bool fill(DiagEngine &Diags, ast::Expr *&Slot, ast::Expr *E,
                 const std::string &Word, SourceRange R) {
  if (Slot) {
    Diags.error(R, "'" + Word + "' given twice");
    return false;
  }
  Slot = E;
  return true;
}

ast::Stmt *AstBuilder::buildFree(P::FreeStmtContext *C) {
  // freeStmt -> 'free' expr memClause+
  auto *F = Ctx.make<ast::FreeStmt>(range(C), buildExpr(C->expr()));
  for (const MemClause &Cl : buildMemClauses(C->memClause())) {
    if (Cl.Prefetch) {
      Diags.error(Cl.PrefetchRange,
                  "'prefetch' belongs to offload (free takes after, before "
                  "and until)");
      continue;
    }
    if (Cl.Word == "after" || Cl.Word == "before") {
      if (F->At) {
        Diags.error(Cl.WordRange, "free takes one of 'after' and 'before'");
        continue;
      }
      F->At = Cl.Value;
      F->AtEnd = Cl.Word == "after";
    } else if (Cl.Word == "until") {
      fill(Diags, F->Until, Cl.Value, Cl.Word, Cl.WordRange);
    } else {
      Diags.error(Cl.WordRange, "unknown free clause '" + Cl.Word +
                                    "' (clauses: after, before, until)" +
                                    newLineHint(Cl.Word, Cl.Line, C));
    }
  }
  return F;
}

ast::Stmt *AstBuilder::buildOffload(P::OffloadStmtContext *C) {
  // offloadStmt -> 'offload' expr memClause+
  auto *O = Ctx.make<ast::OffloadStmt>(range(C), buildExpr(C->expr()));
  bool InPrefetch = false;
  for (const MemClause &Cl : buildMemClauses(C->memClause())) {
    if (Cl.Prefetch) {
      if (InPrefetch || O->Prefetch) {
        Diags.error(Cl.PrefetchRange, "'prefetch' given twice");
        continue;
      }
      InPrefetch = O->Prefetch = true;
      O->PrefetchRange = Cl.PrefetchRange;
    }
    if (Cl.Word == "bandwidth") {
      fill(Diags, O->Bandwidth, Cl.Value, Cl.Word, Cl.WordRange);
    } else if (Cl.Word == "after") {
      fill(Diags, InPrefetch ? O->PrefetchAfter : O->After, Cl.Value, Cl.Word,
           Cl.WordRange);
    } else if (Cl.Word == "on") {
      fill(Diags, InPrefetch ? O->PrefetchOn : O->On, Cl.Value, Cl.Word,
           Cl.WordRange);
    } else if (Cl.Word == "before") {
      if (!InPrefetch) {
        Diags.error(Cl.WordRange, "'before' names where the block must be "
                                  "back: write 'prefetch before TASK'");
        continue;
      }
      fill(Diags, O->PrefetchBefore, Cl.Value, Cl.Word, Cl.WordRange);
    } else {
      Diags.error(Cl.WordRange,
                  "unknown offload clause '" + Cl.Word +
                      "' (clauses: after, on, bandwidth, then prefetch "
                      "[after] before [on])" +
                      newLineHint(Cl.Word, Cl.Line, C));
    }
  }
  return O;
}

ast::Expr *AstBuilder::buildAlloc(P::AllocExprContext *C) {
  // allocExpr -> 'alloc' expr memClause+
  auto *A = Ctx.make<ast::Alloc>(range(C), buildExpr(C->expr()));
  for (const MemClause &Cl : buildMemClauses(C->memClause())) {
    if (Cl.Prefetch) {
      Diags.error(Cl.PrefetchRange,
                  "'prefetch' belongs to offload (alloc takes after, before, "
                  "until, through and on)");
      continue;
    }
    if (Cl.Word == "after" || Cl.Word == "before") {
      if (A->At) {
        Diags.error(Cl.WordRange, "alloc takes one of 'after' and 'before'");
        continue;
      }
      A->At = Cl.Value;
      A->AtEnd = Cl.Word == "after";
    } else if (Cl.Word == "until" || Cl.Word == "through") {
      if (A->Free) {
        Diags.error(Cl.WordRange, "alloc takes one of 'until' and 'through'");
        continue;
      }
      A->Free = Cl.Value;
      A->FreeAtEnd = Cl.Word == "through";
    } else if (Cl.Word == "on") {
      fill(Diags, A->Device, Cl.Value, Cl.Word, Cl.WordRange);
    } else {
      Diags.error(Cl.WordRange,
                  "unknown alloc clause '" + Cl.Word +
                      "' (clauses: after, before, until, through, on)" +
                      newLineHint(Cl.Word, Cl.Line, C));
    }
  }
  return A;
}

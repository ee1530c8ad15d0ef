//===- AstBuilderExpr.cpp - Expressions -----------------------------------===//

#include "AstBuilderImpl.h"

#include "antlr4-runtime.h"

#include <cmath>
#include <cstdlib>

using namespace dd;
using namespace dd::syntax;

ast::Expr *AstBuilder::buildNumber(P::NumberExprContext *C) {
  // NUMBER -> DIGITS ('.' DIGITS)? ([eE] [+-]? DIGITS)? UNIT?, read by the
  // one reader of quantities (support/Units.h) that --set values use too.
  std::string Why;
  auto Q = readQuantity(C->NUMBER()->getText(), &Why, /*AllowSign=*/false);
  if (!Q) {
    Diags.error(range(C), Why);
    return Ctx.make<ast::NumberLit>(range(C), 0.0, Dim());
  }
  return Ctx.make<ast::NumberLit>(range(C), Q->Value, Q->D);
}

ast::Expr *AstBuilder::buildSelect(P::SelectExprContext *C) {
  // selectExpr -> 'select' IDENT (',' IDENT)* ('where' expr)?
  auto *S = Ctx.make<ast::Select>(range(C));
  for (antlr4::tree::TerminalNode *K : C->IDENT()) {
    S->Kinds.push_back(K->getText());
    S->KindRanges.push_back(range(K));
  }
  if (C->expr())
    S->Where = buildExpr(C->expr());
  return S;
}

ast::Expr *AstBuilder::buildInsert(P::InsertExprContext *C) {
  // insertExpr -> 'insert' IDENT STRING insertClause+
  auto *I = Ctx.make<ast::Insert>(range(C));
  I->TaskKind = C->IDENT()->getText();
  I->KindRange = range(C->IDENT());
  I->TaskName = unquote(C->STRING());
  for (P::InsertClauseContext *Cl : C->insertClause()) {
    // insertClause -> ('on' | IDENT) expr
    std::string Word = Cl->IDENT() ? Cl->IDENT()->getText() : "on";
    SourceRange WordRange = range(Cl->getStart());
    ast::Expr *E = buildExpr(Cl->expr());
    ast::Expr **Slot = Word == "on"         ? &I->On
                       : Word == "duration" ? &I->Duration
                       : Word == "bytes"    ? &I->Bytes
                       : Word == "after"    ? &I->After
                       : Word == "before"   ? &I->Before
                                            : nullptr;
    if (!Slot) {
      Diags.error(WordRange,
                  "unknown insert clause '" + Word +
                      "' (clauses: on, duration, bytes, after, "
                      "before)" +
                      newLineHint(Word, Cl->getStart()->getLine(), C));
      continue;
    }
    if (*Slot) {
      Diags.error(WordRange, "'" + Word + "' given twice");
      continue;
    }
    *Slot = E;
  }
  return I;
}

ast::Expr *AstBuilder::buildCall(P::CallExprContext *C) {
  // callExpr -> expr '(' argList? ')'
  auto *Call = Ctx.make<ast::Call>(range(C), buildOp(C->opExpr()));
  if (P::ArgListContext *AL = C->argList())
    for (P::ArgContext *A : AL->arg()) {
      // arg -> (IDENT ':')? expr
      ast::Argument Arg;
      if (A->IDENT()) {
        Arg.Name = A->IDENT()->getText();
        Arg.NameRange = range(A->IDENT());
      }
      Arg.Value = buildExpr(A->expr());
      Call->Args.push_back(Arg);
    }
  return Call;
}

ast::Expr *AstBuilder::buildLambda(P::LambdaExprContext *C) {
  // lambdaExpr -> (IDENT | '(' IDENT (',' IDENT)* ')') '->' expr
  std::vector<std::string> Params;
  for (antlr4::tree::TerminalNode *P : C->lambdaParams()->IDENT())
    Params.push_back(P->getText());
  return Ctx.make<ast::Lambda>(range(C), std::move(Params),
                               buildExpr(C->expr()));
}

ast::Expr *AstBuilder::binary(ast::BinaryOp Op, P::OpExprContext *C,
                              P::OpExprContext *L, P::OpExprContext *R,
                              antlr4::Token *OpTok) {
  // The operator is the middle child of "L op R".
  if (!OpTok && C->children.size() == 3)
    if (auto *T = dynamic_cast<antlr4::tree::TerminalNode *>(C->children[1]))
      OpTok = T->getSymbol();
  SourceRange OR = OpTok ? range(OpTok) : range(C);
  // Operands in source order, one statement each: the order in which a
  // call's arguments are evaluated is unspecified (g++ goes right to left,
  // clang left to right), and it decides which error comes first and
  // where a nesting error points.
  ast::Expr *LE = buildOp(L);
  ast::Expr *RE = buildOp(R);
  return Ctx.make<ast::Binary>(range(C), Op, LE, RE, OR);
}

ast::Expr *AstBuilder::buildOp(P::OpExprContext *C) {
  if (!enter(C))
    return Ctx.make<ast::NoneLit>(range(C));
  ast::Expr *E = buildOpAt(C);
  --Depth;
  return E;
}

ast::Expr *AstBuilder::buildOpAt(P::OpExprContext *C) {
  using ast::BinaryOp;
  SourceRange R = range(C);
  if (auto *N = dynamic_cast<P::NameExprContext *>(C))
    return Ctx.make<ast::Name>(R, N->IDENT()->getText());
  if (auto *N = dynamic_cast<P::NumberExprContext *>(C))
    return buildNumber(N);
  if (auto *S = dynamic_cast<P::StringExprContext *>(C))
    return Ctx.make<ast::StringLit>(R, unquote(S->STRING()));
  if (auto *X = dynamic_cast<P::RegexExprContext *>(C)) {
    std::string T = X->REGEX()->getText();
    std::string Pattern;
    for (size_t I = 1; I + 1 < T.size(); ++I) {
      if (T[I] == '\\' && T[I + 1] == '/')
        continue; // "\/" is a slash
      Pattern.push_back(T[I]);
    }
    return Ctx.make<ast::RegexLit>(R, Pattern);
  }
  if (dynamic_cast<P::BoolExprContext *>(C))
    return Ctx.make<ast::BoolLit>(R, C->getStart()->getText() == "true");
  if (dynamic_cast<P::NoneExprContext *>(C))
    return Ctx.make<ast::NoneLit>(R);
  if (auto *P = dynamic_cast<P::ParenExprContext *>(C)) {
    ast::Expr *Inner = buildExpr(P->expr());
    return Inner;
  }
  if (auto *L = dynamic_cast<P::ListExprContext *>(C)) {
    auto *List = Ctx.make<ast::ListLit>(R);
    for (P::ExprContext *E : L->expr())
      List->Elements.push_back(buildExpr(E));
    return List;
  }
  if (auto *M = dynamic_cast<P::MemberExprContext *>(C))
    return Ctx.make<ast::Member>(R, buildOp(M->opExpr()), M->IDENT()->getText(),
                                 range(M->IDENT()));
  if (auto *Cl = dynamic_cast<P::CallExprContext *>(C))
    return buildCall(Cl);
  // Below, operands are built in source order (see binary()).
  if (auto *Sl = dynamic_cast<P::SliceExprContext *>(C)) {
    // sliceExpr -> opExpr '[' expr? ':' expr? ']'
    ast::Expr *Base = buildOp(Sl->opExpr());
    ast::Expr *Lo = Sl->lo ? buildExpr(Sl->lo) : nullptr;
    ast::Expr *Hi = Sl->hi ? buildExpr(Sl->hi) : nullptr;
    return Ctx.make<ast::Slice>(R, Base, Lo, Hi);
  }
  if (auto *I = dynamic_cast<P::IndexExprContext *>(C)) {
    ast::Expr *Base = buildOp(I->opExpr());
    return Ctx.make<ast::Index>(R, Base, buildExpr(I->expr()));
  }
  if (auto *N = dynamic_cast<P::NotExprContext *>(C))
    return Ctx.make<ast::Unary>(R, ast::UnaryOp::Not, buildOp(N->opExpr()));
  if (auto *N = dynamic_cast<P::NegExprContext *>(C)) {
    ast::Expr *E = buildOp(N->opExpr());
    // Fold "-5ms" into a literal so units stay attached.
    if (auto *Num = llvm::dyn_cast<ast::NumberLit>(E)) {
      Num->Value = -Num->Value;
      Num->Range = R;
      return Num;
    }
    return Ctx.make<ast::Unary>(R, ast::UnaryOp::Neg, E);
  }
  if (auto *O = dynamic_cast<P::OrExprContext *>(C))
    return binary(BinaryOp::Or, C, O->opExpr(0), O->opExpr(1), nullptr);
  if (auto *A = dynamic_cast<P::AndExprContext *>(C))
    return binary(BinaryOp::And, C, A->opExpr(0), A->opExpr(1), nullptr);
  if (auto *U = dynamic_cast<P::UnionExprContext *>(C))
    return binary(BinaryOp::Union, C, U->opExpr(0), U->opExpr(1), nullptr);
  if (auto *I = dynamic_cast<P::IntersectExprContext *>(C))
    return binary(BinaryOp::Intersect, C, I->opExpr(0), I->opExpr(1), nullptr);
  if (auto *Cmp = dynamic_cast<P::CompareExprContext *>(C)) {
    std::string Op = Cmp->op->getText();
    BinaryOp K = Op == "=="   ? BinaryOp::Eq
                 : Op == "!=" ? BinaryOp::Ne
                 : Op == "<"  ? BinaryOp::Lt
                 : Op == "<=" ? BinaryOp::Le
                 : Op == ">"  ? BinaryOp::Gt
                 : Op == ">=" ? BinaryOp::Ge
                 : Op == "~"  ? BinaryOp::Match
                 : Op == "!~" ? BinaryOp::NoMatch
                              : BinaryOp::In;
    return binary(K, C, Cmp->opExpr(0), Cmp->opExpr(1), Cmp->op);
  }
  if (auto *A = dynamic_cast<P::AddExprContext *>(C))
    return binary(A->op->getText() == "+" ? BinaryOp::Add : BinaryOp::Sub, C,
                  A->opExpr(0), A->opExpr(1), A->op);
  if (auto *M = dynamic_cast<P::MulExprContext *>(C)) {
    std::string Op = M->op->getText();
    return binary(Op == "*"   ? BinaryOp::Mul
                  : Op == "/" ? BinaryOp::Div
                              : BinaryOp::Mod,
                  C, M->opExpr(0), M->opExpr(1), M->op);
  }
  if (auto *Rg = dynamic_cast<P::RangeExprContext *>(C)) {
    ast::Expr *Lo = buildOp(Rg->opExpr(0));
    return Ctx.make<ast::Range>(R, Lo, buildOp(Rg->opExpr(1)));
  }
  if (auto *S = dynamic_cast<P::SelectExprContext *>(C))
    return buildSelect(S);
  if (auto *I = dynamic_cast<P::InsertExprContext *>(C))
    return buildInsert(I);
  if (auto *A = dynamic_cast<P::AllocExprContext *>(C))
    return buildAlloc(A);
  if (auto *Ch = dynamic_cast<P::ChannelExprContext *>(C))
    return Ctx.make<ast::Channel>(R, unquote(Ch->STRING()));
  Diags.error(R, "internal error: unhandled expression");
  return Ctx.make<ast::NoneLit>(R);
}

ast::Expr *AstBuilder::buildExpr(P::ExprContext *C) {
  // expr -> lambdaParams '->' expr | opExpr
  if (auto *L = dynamic_cast<P::LambdaExprContext *>(C)) {
    // A lambda is a level: `x -> y -> ...` nests as deep as brackets.
    if (!enter(L))
      return Ctx.make<ast::NoneLit>(range(L));
    ast::Expr *E = buildLambda(L);
    --Depth;
    return E;
  }
  return buildOp(static_cast<P::OperatorExprContext *>(C)->opExpr());
}

//===- AstBuilder.cpp - Parsing, syntax errors, statements ----------------===//

#include "AstBuilderImpl.h"

#include "antlr4-runtime.h"

#include "llvm/Support/ConvertUTF.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::syntax;

namespace {

/// Turns ANTLR's syntax errors into ddscript diagnostics. ANTLR's own
/// messages list every token it could have accepted; ours name the token
/// that does not fit and, when there are few, what was expected.
class ErrorListener : public antlr4::BaseErrorListener {
public:
  ErrorListener(AstBuilder &B, DiagEngine &D, const antlr4::dfa::Vocabulary &V)
      : Builder(B), Diags(D), Vocab(V) {}

  void syntaxError(antlr4::Recognizer *R, antlr4::Token *Offending,
                   size_t Line, size_t Col, const std::string &Msg,
                   std::exception_ptr E) override {
    SourceRange Where;
    std::string Text;
    if (Offending) {
      Where = Builder.range(Offending);
      Text = Offending->getType() == antlr4::Token::EOF
                 ? ""
                 : Offending->getText();
    }
    std::string Out;
    if (Offending && Offending->getType() == antlr4::Token::EOF) {
      Out = "unexpected end of file";
    } else if (Text == "\"") {
      Out = "unterminated string";
    } else if (!Text.empty()) {
      Out = "unexpected '" + Text + "'";
    } else {
      Out = Msg;
    }
    if (auto *P = dynamic_cast<antlr4::Parser *>(R)) {
      antlr4::misc::IntervalSet Expected = P->getExpectedTokens();
      if (!Expected.isEmpty() && Expected.size() <= 3) {
        std::string List;
        for (size_t T : Expected.toList()) {
          std::string Name = Vocab.getDisplayName(T);
          if (Name == "IDENT")
            Name = "a name";
          else if (Name == "EOF")
            Name = "end of file";
          List += (List.empty() ? "" : " or ") + Name;
        }
        Out += "; expected " + List;
      }
    }
    // After one error ANTLR may report the same position again.
    if (Where.valid() && Where.Begin == LastOffset && Where.valid())
      return;
    LastOffset = Where.Begin;
    Diags.error(Where, Out);
  }

private:
  AstBuilder &Builder;
  DiagEngine &Diags;
  const antlr4::dfa::Vocabulary &Vocab;
  uint32_t LastOffset = ~0u;
};

} // namespace

AstBuilder::AstBuilder(const SourceManager &SM, BufferId B,
                       ast::AstContext &Ctx, DiagEngine &Diags)
    : SM(SM), Buffer(B), Ctx(Ctx), Diags(Diags) {
  const std::string &Text = SM.text(B);
  bool Ascii = true;
  for (unsigned char Ch : Text)
    Ascii &= Ch < 0x80;
  if (!Ascii) {
    for (uint32_t I = 0; I < Text.size(); ++I)
      if ((static_cast<unsigned char>(Text[I]) & 0xC0) != 0x80)
        ByteOf.push_back(I);
    ByteOf.push_back(static_cast<uint32_t>(Text.size()));
  }
}

uint32_t AstBuilder::byteOffset(size_t CP) const {
  if (ByteOf.empty())
    return static_cast<uint32_t>(CP);
  return CP < ByteOf.size() ? ByteOf[CP] : ByteOf.back();
}

SourceRange AstBuilder::range(antlr4::Token *T) const {
  if (!T || T->getType() == antlr4::Token::EOF) {
    uint32_t End = static_cast<uint32_t>(SM.text(Buffer).size());
    return {Buffer, End, End};
  }
  return {Buffer, byteOffset(T->getStartIndex()),
          byteOffset(T->getStopIndex() + 1)};
}

SourceRange AstBuilder::range(antlr4::ParserRuleContext *C) const {
  SourceRange B = range(C->getStart()), E = range(C->getStop());
  return SourceRange::join(B, E);
}

std::string AstBuilder::unquote(antlr4::tree::TerminalNode *N) {
  std::string T = N->getText();
  std::string Out;
  for (size_t I = 1; I + 1 < T.size(); ++I) {
    if (T[I] != '\\') {
      Out.push_back(T[I]);
      continue;
    }
    char E = T[++I];
    switch (E) {
    case 'n': Out.push_back('\n'); break;
    case 't': Out.push_back('\t'); break;
    case 'r': Out.push_back('\r'); break;
    case '"': Out.push_back('"'); break;
    case '\\': Out.push_back('\\'); break;
    default: {
      SourceRange R = range(N);
      Diags.error({Buffer, R.Begin + static_cast<uint32_t>(I) - 1,
                   R.Begin + static_cast<uint32_t>(I) + 1},
                  std::string("unknown escape '\\") + E +
                      "' (use \\n, \\t, \\r, \\\" or \\\\)");
    }
    }
  }
  return Out;
}

bool AstBuilder::enter(antlr4::ParserRuleContext *C) {
  if (Depth < MaxNesting) {
    ++Depth;
    return true;
  }
  if (!ReportedDepth)
    Diags.error(range(C), "nested more than " + std::to_string(MaxNesting) +
                              " levels deep (expressions and blocks; a chain "
                              "of operators is one level per operator)");
  ReportedDepth = true;
  return false;
}

void AstBuilder::buildBlock(P::BlockContext *C, ast::Block &Out) {
  // block -> '{' stmt* '}'
  Out.Range = range(C);
  if (!enter(C))
    return;
  for (P::StmtContext *S : C->stmt())
    if (ast::Stmt *St = buildStmt(S))
      Out.Stmts.push_back(St);
  --Depth;
}

ast::Stmt *AstBuilder::buildIf(P::IfStatementContext *C) {
  // ifStatement -> 'if' expr block ('else' (ifStatement | block))?
  auto *S = Ctx.make<ast::IfStmt>(range(C), buildExpr(C->expr()));
  buildBlock(C->block(0), S->Then);
  if (P::IfStatementContext *ElseIf = C->ifStatement()) {
    S->HasElse = true;
    S->Else.Range = range(ElseIf);
    S->Else.Stmts.push_back(buildIf(ElseIf));
  } else if (C->block().size() > 1) {
    S->HasElse = true;
    buildBlock(C->block(1), S->Else);
  }
  return S;
}

ast::Stmt *AstBuilder::buildFn(P::FnStmtContext *C) {
  // fnStmt -> 'fn' IDENT '(' paramList? ')' block
  auto *F = Ctx.make<ast::FnStmt>(range(C), C->IDENT()->getText(),
                                  range(C->IDENT()));
  if (P::ParamListContext *PL = C->paramList())
    for (P::ParamContext *P : PL->param())
      F->Params.push_back({P->IDENT()->getText(), range(P->IDENT()),
                           P->expr() ? buildExpr(P->expr()) : nullptr});
  buildBlock(C->block(), F->Body);
  return F;
}

ast::Stmt *AstBuilder::buildImport(P::ImportStmtContext *C) {
  // importStmt -> 'import' (dottedName | STRING) ('as' IDENT)?
  auto *I = Ctx.make<ast::ImportStmt>(range(C));
  if (P::DottedNameContext *D = C->dottedName()) {
    I->Module = D->getText();
    I->ModuleRange = range(D);
    I->Alias = D->IDENT().back()->getText();
  } else {
    I->IsPath = true;
    I->Module = unquote(C->STRING());
    I->ModuleRange = range(C->STRING());
    std::string Stem = I->Module;
    size_t Slash = Stem.find_last_of('/');
    if (Slash != std::string::npos)
      Stem = Stem.substr(Slash + 1);
    size_t Dot = Stem.find('.');
    if (Dot != std::string::npos)
      Stem = Stem.substr(0, Dot);
    I->Alias = Stem;
  }
  if (C->IDENT())
    I->Alias = C->IDENT()->getText();
  return I;
}

ast::Stmt *AstBuilder::buildStmt(P::StmtContext *C) {
  SourceRange R = range(C);
  if (auto *P = dynamic_cast<P::ParamStmtContext *>(C)) {
    // paramStmt -> 'param' IDENT '=' expr STRING?
    auto *S = Ctx.make<ast::ParamStmt>(R, P->IDENT()->getText(),
                                       range(P->IDENT()), buildExpr(P->expr()));
    if (P->STRING())
      S->Doc = unquote(P->STRING());
    return S;
  }
  if (auto *I = dynamic_cast<P::ImportStmtContext *>(C))
    return buildImport(I);
  if (auto *L = dynamic_cast<P::LetStmtContext *>(C))
    // letStmt -> 'let' IDENT '=' expr
    return Ctx.make<ast::LetStmt>(R, L->IDENT()->getText(), range(L->IDENT()),
                                  buildExpr(L->expr()));
  if (auto *A = dynamic_cast<P::AssignStmtContext *>(C)) {
    // assignStmt -> IDENT '=' expr
    auto *N = Ctx.make<ast::Name>(range(A->IDENT()), A->IDENT()->getText());
    return Ctx.make<ast::AssignStmt>(R, N, buildExpr(A->expr()));
  }
  if (auto *I = dynamic_cast<P::IfStmtContext *>(C))
    return buildIf(I->ifStatement());
  if (auto *F = dynamic_cast<P::ForStmtContext *>(C)) {
    // forStmt -> 'for' IDENT 'in' expr block
    auto *S = Ctx.make<ast::ForStmt>(R, F->IDENT()->getText(),
                                     range(F->IDENT()), buildExpr(F->expr()));
    buildBlock(F->block(), S->Body);
    return S;
  }
  if (dynamic_cast<P::BreakStmtContext *>(C))
    // breakStmt -> 'break'
    return Ctx.make<ast::LoopJumpStmt>(ast::NodeKind::BreakStmt, R);
  if (dynamic_cast<P::ContinueStmtContext *>(C))
    // continueStmt -> 'continue'
    return Ctx.make<ast::LoopJumpStmt>(ast::NodeKind::ContinueStmt, R);
  if (auto *T = dynamic_cast<P::TryStmtContext *>(C)) {
    // tryStmt -> 'try' block
    auto *S = Ctx.make<ast::TryStmt>(R);
    buildBlock(T->block(), S->Body);
    return S;
  }
  if (auto *F = dynamic_cast<P::FnStmtContext *>(C))
    return buildFn(F);
  if (auto *Rt = dynamic_cast<P::ReturnStmtContext *>(C))
    // returnStmt -> 'return' expr?
    return Ctx.make<ast::ReturnStmt>(R,
                                     Rt->expr() ? buildExpr(Rt->expr()) : nullptr);
  if (auto *S = dynamic_cast<P::ScaleStmtContext *>(C))
    // scaleStmt -> ('shrink' | 'scale') expr ('by' | 'to') expr
    return Ctx.make<ast::ScaleStmt>(R, S->verb->getText() == "shrink",
                                    S->how->getText() == "to",
                                    buildExpr(S->expr(0)), buildExpr(S->expr(1)));
  if (auto *Rm = dynamic_cast<P::RemoveStmtContext *>(C))
    // removeStmt -> 'remove' expr
    return Ctx.make<ast::RemoveStmt>(R, buildExpr(Rm->expr()));
  if (auto *Rs = dynamic_cast<P::ResizeStmtContext *>(C))
    // resizeStmt -> 'resize' expr ('by' | 'to') expr
    return Ctx.make<ast::ResizeStmt>(R, Rs->how->getText() == "to",
                                     buildExpr(Rs->expr(0)),
                                     buildExpr(Rs->expr(1)));
  if (auto *F = dynamic_cast<P::FreeStmtContext *>(C))
    return buildFree(F);
  if (auto *O = dynamic_cast<P::OffloadStmtContext *>(C))
    return buildOffload(O);
  if (auto *D = dynamic_cast<P::DependStmtContext *>(C))
    // dependStmt -> 'depend' expr 'on' expr
    return Ctx.make<ast::DependStmt>(R, buildExpr(D->expr(0)),
                                     buildExpr(D->expr(1)));
  if (auto *Sc = dynamic_cast<P::ScheduleStmtContext *>(C)) {
    // scheduleStmt -> 'schedule' expr ('by' expr | IDENT)
    auto *S = Ctx.make<ast::ScheduleStmt>(R, buildExpr(Sc->expr()));
    P::ScheduleRuleContext *Rule = Sc->scheduleRule();
    if (Rule->expr()) {
      S->Priority = buildExpr(Rule->expr());
    } else {
      S->Policy = Rule->IDENT()->getText();
      S->PolicyRange = range(Rule->IDENT());
    }
    return S;
  }
  if (auto *P = dynamic_cast<P::PrintStmtContext *>(C)) {
    // printStmt -> 'print' expr (',' expr)*
    auto *S = Ctx.make<ast::PrintStmt>(R);
    for (P::ExprContext *E : P->expr())
      S->Args.push_back(buildExpr(E));
    return S;
  }
  if (auto *A = dynamic_cast<P::AssertStmtContext *>(C))
    // assertStmt -> 'assert' expr (',' expr)?
    return Ctx.make<ast::AssertStmt>(
        R, buildExpr(A->expr(0)),
        A->expr().size() > 1 ? buildExpr(A->expr(1)) : nullptr);
  if (auto *E = dynamic_cast<P::ExprStmtContext *>(C))
    // exprStmt -> expr
    return Ctx.make<ast::ExprStmt>(R, buildExpr(E->expr()));
  Diags.error(R, "internal error: unhandled statement");
  return nullptr;
}

std::unique_ptr<ast::Module> dd::syntax::parseModule(const SourceManager &SM,
                                                     BufferId B,
                                                     ast::AstContext &Ctx,
                                                     DiagEngine &Diags) {
  unsigned ErrorsBefore = Diags.errorCount();
  // ANTLR decodes the text as UTF-8 and throws on a byte that is not.
  const std::string &Text = SM.text(B);
  const auto *Begin = reinterpret_cast<const llvm::UTF8 *>(Text.data());
  const llvm::UTF8 *At = Begin;
  if (!llvm::isLegalUTF8String(&At, Begin + Text.size())) {
    auto Offset = static_cast<uint32_t>(At - Begin);
    Diags.error({B, Offset, Offset + 1},
                fmt::format("invalid UTF-8 (byte 0x{:02x}): .dd files are "
                            "UTF-8 text",
                            static_cast<unsigned>(*At)));
    return nullptr;
  }
  antlr4::ANTLRInputStream Input(Text);
  gen::DDScriptLexer Lexer(&Input);
  antlr4::CommonTokenStream Tokens(&Lexer);
  P Parser(&Tokens);
  AstBuilder Builder(SM, B, Ctx, Diags);
  ErrorListener Listener(Builder, Diags, Parser.getVocabulary());
  Lexer.removeErrorListeners();
  Parser.removeErrorListeners();
  Parser.addErrorListener(&Listener);

  // The parser recurses once per bracket: nesting far past what the
  // builder accepts would exhaust the stack before it could say so.
  Tokens.fill();
  size_t Depth = 0;
  for (antlr4::Token *T : Tokens.getTokens()) {
    std::string Text = T->getText();
    if (Text == "(" || Text == "[" || Text == "{") {
      if (++Depth > 4 * AstBuilder::MaxNesting) {
        Diags.error(Builder.range(T),
                    "brackets nested more than " +
                        std::to_string(4 * AstBuilder::MaxNesting) +
                        " levels deep");
        return nullptr;
      }
    } else if ((Text == ")" || Text == "]" || Text == "}") && Depth > 0) {
      --Depth;
    }
  }
  P::ModuleContext *Tree = Parser.module();
  // Characters the lexer could not use arrive as ERROR_CHAR tokens, which
  // the parser reports as unexpected.
  if (Diags.errorCount() != ErrorsBefore)
    return nullptr;
  // Errors found while building (units, escapes, clause names) leave a
  // well-formed AST: later checks still run and report theirs.
  auto M = std::make_unique<ast::Module>();
  M->Buffer = B;
  M->Path = SM.name(B);
  for (P::StmtContext *S : Tree->stmt())
    if (ast::Stmt *St = Builder.buildStmt(S))
      M->Body.push_back(St);
  if (Builder.nestedTooDeep())
    return nullptr;
  return M;
}

//===- AstBuilder.cpp - Parsing, syntax errors, statements ----------------===//

#include "AstBuilderImpl.h"

#include "antlr4-runtime.h"

#include "support/DeepStack.h"

#include "llvm/Support/ConvertUTF.h"

#include <fmt/format.h>

#include <optional>

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

  void syntaxError(antlr4::Recognizer *R, antlr4::Token *Offending, size_t Line,
                   size_t Col, const std::string &Msg,
                   std::exception_ptr E) override {
    SourceRange Where;
    std::string Text;
    if (Offending) {
      Where = Builder.range(Offending);
      Text = Offending->getType() == antlr4::Token::EOF ? ""
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

  /// Forgets the last position reported: the parse starts again.
  void forget() { LastOffset = ~0u; }

private:
  AstBuilder &Builder;
  DiagEngine &Diags;
  const antlr4::dfa::Vocabulary &Vocab;
  uint32_t LastOffset = ~0u;
};

/// ANTLR's prediction with a bound on its work, counted in epsilon
/// closure steps: full-context LL prediction can rescan the rest of an
/// expression at each of its operators, for minutes on a long one.
class BoundedPrediction : public antlr4::atn::ParserATNSimulator {
public:
  using ParserATNSimulator::ParserATNSimulator;
  struct OverBudget {};
  /// Steps left; unbounded until set.
  size_t Budget = SIZE_MAX;

protected:
  void closure_(Ref<antlr4::atn::ATNConfig> const &Config,
                antlr4::atn::ATNConfigSet *Configs,
                antlr4::atn::ATNConfig::Set &Busy, bool CollectPredicates,
                bool FullCtx, int Depth, bool TreatEofAsEpsilon) override {
    if (Budget-- == 0)
      throw OverBudget{};
    ParserATNSimulator::closure_(Config, Configs, Busy, CollectPredicates,
                                 FullCtx, Depth, TreatEofAsEpsilon);
  }
};

/// The closure steps LL prediction may take, for each token of a module
/// and in all (BoundedPrediction): a model of the standard library with a
/// syntax error at its end needs 12 to 50 per token; a chain of 250
/// indexes with an error before it needs over 10 million (5 s), 800 of
/// them a minute. Past the bound the errors come from SLL prediction.
constexpr size_t MaxClosurePerToken = 100;
constexpr size_t MaxClosure = 2'000'000;

/// How deep the pre-scan lets a module nest (findTooDeep). The builder
/// accepts AstBuilder::MaxNesting levels, each of which the parser follows
/// with a few calls; this bound keeps the parser, and ANTLR's lookahead
/// over the same tokens, well inside the stack it runs on
/// (support/DeepStack.h: 4.3 MB at this depth under AddressSanitizer).
constexpr unsigned MaxParseNesting = 4 * AstBuilder::MaxNesting;

struct TooDeep {
  antlr4::Token *At; ///< the token one level past the limit
  bool OnlyBrackets; ///< brackets alone nest that deep
};

/// What a token does to the nesting findTooDeep counts.
enum class Nesting : uint8_t {
  None,
  Open,       ///< ( [ {
  Close,      ///< ) ]
  CloseBlock, ///< }
  Opener,     ///< -> where alloc insert: what follows, to the end, is inside
  Else,       ///< an opener too: an else-if chain nests
  Prefix,     ///< not, and '-' before an operand
  Binary,     ///< an infix operator ('-' after an operand)
  Reset,      ///< ; = and statement keywords: nothing before stays open
  Comma,      ///< a reset, except in select's list of kinds
  If,         ///< a statement keyword, except right after 'else'
  Select,     ///< starts a list of kinds whose commas reset nothing
  Operand,    ///< ends an operand: a '-' after it subtracts
};

/// The binding of each infix operator, as the grammar orders opExpr's
/// alternatives (tighter first); a prefix operator's operand takes the
/// infix operators that bind tighter than it.
enum Binding : uint8_t {
  BindAll = 0, ///< the body of a lambda, a where, an alloc: everything
  BindOr = 1,
  BindAnd,
  BindNot,
  BindCompare,
  BindRange,
  BindUnion,
  BindIntersect,
  BindAdd,
  BindMul,
  BindNeg,
};

/// Finds where the module nests deeper than MaxParseNesting, from its
/// tokens alone, before the parser (which recurses once per level) or its
/// lookahead sees them. It follows the parser's calls: each open bracket
/// is a level, and inside one, each prefix operator, '->', 'where',
/// 'alloc', 'insert' and 'else' whose operand is still open, and each
/// infix operator whose right operand is (an operator that binds looser
/// than the one before closes it, as the parser returns from it). As
/// tokens cannot tell where the operands of '->', 'where', 'alloc',
/// 'insert' and 'else' end, they stay open until their bracket closes or
/// something ends every expression there: a ',', a ';', an '=', a '{' or
/// a statement keyword (so the count can be more than the parser's, by a
/// level for each of those and each prefix before an operator that binds
/// tighter, never less).
std::optional<TooDeep> findTooDeep(const std::vector<antlr4::Token *> &Tokens,
                                   const antlr4::dfa::Vocabulary &Vocab) {
  std::vector<Nesting> Kind(Vocab.getMaxTokenType() + 1, Nesting::None);
  std::vector<uint8_t> Bind(Kind.size(), BindAll);
  for (size_t T = 0; T < Kind.size(); ++T) {
    std::string Lit = Vocab.getLiteralName(T);
    if (Lit.size() < 3)
      continue;
    Lit = Lit.substr(1, Lit.size() - 2); // 'not' -> not
    auto Infix = [&](Binding B) {
      Kind[T] = Nesting::Binary;
      Bind[T] = B;
    };
    if (Lit == "(" || Lit == "[" || Lit == "{")
      Kind[T] = Nesting::Open;
    else if (Lit == ")" || Lit == "]")
      Kind[T] = Nesting::Close;
    else if (Lit == "}")
      Kind[T] = Nesting::CloseBlock;
    else if (Lit == "->" || Lit == "where" || Lit == "alloc" || Lit == "insert")
      Kind[T] = Nesting::Opener;
    else if (Lit == "else")
      Kind[T] = Nesting::Else;
    else if (Lit == "not")
      Kind[T] = Nesting::Prefix;
    else if (Lit == "-")
      Infix(BindAdd); // or a prefix: decided by the token before
    else if (Lit == "*" || Lit == "/" || Lit == "%")
      Infix(BindMul);
    else if (Lit == "+")
      Infix(BindAdd);
    else if (Lit == "&")
      Infix(BindIntersect);
    else if (Lit == "|")
      Infix(BindUnion);
    else if (Lit == "..")
      Infix(BindRange);
    else if (Lit == "==" || Lit == "!=" || Lit == "<" || Lit == "<=" ||
             Lit == ">" || Lit == ">=" || Lit == "~" || Lit == "!~" ||
             Lit == "in")
      Infix(BindCompare);
    else if (Lit == "and")
      Infix(BindAnd);
    else if (Lit == "or")
      Infix(BindOr);
    else if (Lit == ",")
      Kind[T] = Nesting::Comma;
    else if (Lit == "if")
      Kind[T] = Nesting::If;
    else if (Lit == "select")
      Kind[T] = Nesting::Select;
    else if (Lit == "true" || Lit == "false" || Lit == "none")
      Kind[T] = Nesting::Operand;
    else if (Lit == ";" || Lit == "=" || Lit == "param" || Lit == "import" ||
             Lit == "let" || Lit == "for" || Lit == "break" ||
             Lit == "continue" || Lit == "try" || Lit == "fn" ||
             Lit == "return" || Lit == "shrink" || Lit == "scale" ||
             Lit == "remove" || Lit == "resize" || Lit == "free" ||
             Lit == "offload" || Lit == "depend" || Lit == "schedule" ||
             Lit == "print" || Lit == "assert")
      Kind[T] = Nesting::Reset;
  }
  for (size_t T : {P::IDENT, P::NUMBER, P::STRING, P::REGEX})
    Kind[T] = Nesting::Operand;

  // Open[I]: the operands open inside the I-th open bracket (0: outside
  // any), each as the loosest infix operator it takes.
  std::vector<std::vector<uint8_t>> Open(1);
  size_t Depth = 0, Brackets = 0;
  Nesting Last = Nesting::None;
  bool KindList = false; // after 'select' IDENT (',' IDENT)*
  auto Pop = [&] {
    Open.back().pop_back();
    --Depth;
  };
  auto Reset = [&] {
    Depth -= Open.back().size();
    Open.back().clear();
  };
  auto Push = [&](uint8_t Takes) {
    Open.back().push_back(Takes);
    ++Depth;
  };
  for (antlr4::Token *Tok : Tokens) {
    if (Tok->getChannel() != antlr4::Token::DEFAULT_CHANNEL ||
        Tok->getType() >= Kind.size())
      continue;
    Nesting K = Kind[Tok->getType()];
    size_t Before = Depth;
    switch (K) {
    case Nesting::Open:
      if (Tok->getText() == "{") // an if's or for's expression ends here
        while (!Open.back().empty() && Open.back().back() != BindAll)
          Pop();
      Open.emplace_back();
      ++Brackets;
      ++Depth;
      break;
    case Nesting::Close:
    case Nesting::CloseBlock:
      if (Open.size() > 1) {
        Reset();
        Open.pop_back();
        --Brackets;
        --Depth;
      }
      break;
    case Nesting::Opener:
    case Nesting::Else:
      Push(BindAll);
      break;
    case Nesting::Prefix:
      Push(BindNot);
      break;
    case Nesting::Binary: {
      uint8_t B = Bind[Tok->getType()];
      if (Tok->getText() == "-" && Last != Nesting::Operand &&
          Last != Nesting::Close) {
        Push(BindNeg); // negation
        break;
      }
      // The operands that do not take this operator end here; its right
      // operand takes the operators that bind tighter.
      while (!Open.back().empty() && Open.back().back() > B)
        Pop();
      Push(B + 1);
      break;
    }
    case Nesting::Comma:
      if (!KindList)
        Reset();
      break;
    case Nesting::If:
      if (Last != Nesting::Else)
        Reset();
      break;
    case Nesting::Reset:
      Reset();
      break;
    default:
      break;
    }
    if (Depth > Before && Depth > MaxParseNesting)
      return TooDeep{Tok, Depth == Brackets};
    KindList = K == Nesting::Select ||
               (KindList && (K == Nesting::Comma || K == Nesting::Operand));
    Last = K;
  }
  return std::nullopt;
}

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
    case 'n':
      Out.push_back('\n');
      break;
    case 't':
      Out.push_back('\t');
      break;
    case 'r':
      Out.push_back('\r');
      break;
    case '"':
      Out.push_back('"');
      break;
    case '\\':
      Out.push_back('\\');
      break;
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
    // Each else-if is a level: the checks and the compiler recurse on it.
    if (enter(ElseIf)) {
      S->Else.Stmts.push_back(buildIf(ElseIf));
      --Depth;
    }
  } else if (C->block().size() > 1) {
    S->HasElse = true;
    buildBlock(C->block(1), S->Else);
  }
  return S;
}

ast::Stmt *AstBuilder::buildFn(P::FnStmtContext *C) {
  // fnStmt -> 'fn' IDENT '(' paramList? ')' block
  auto *F =
      Ctx.make<ast::FnStmt>(range(C), C->IDENT()->getText(), range(C->IDENT()));
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
    return Ctx.make<ast::ReturnStmt>(R, Rt->expr() ? buildExpr(Rt->expr())
                                                   : nullptr);
  // Two operands are built in source order, one statement each (see
  // AstBuilder::binary).
  if (auto *S = dynamic_cast<P::ScaleStmtContext *>(C)) {
    // scaleStmt -> ('shrink' | 'scale') expr ('by' | 'to') expr
    ast::Expr *What = buildExpr(S->expr(0));
    return Ctx.make<ast::ScaleStmt>(R, S->verb->getText() == "shrink",
                                    S->how->getText() == "to", What,
                                    buildExpr(S->expr(1)));
  }
  if (auto *Rm = dynamic_cast<P::RemoveStmtContext *>(C))
    // removeStmt -> 'remove' expr
    return Ctx.make<ast::RemoveStmt>(R, buildExpr(Rm->expr()));
  if (auto *Rs = dynamic_cast<P::ResizeStmtContext *>(C)) {
    // resizeStmt -> 'resize' expr ('by' | 'to') expr
    ast::Expr *What = buildExpr(Rs->expr(0));
    return Ctx.make<ast::ResizeStmt>(R, Rs->how->getText() == "to", What,
                                     buildExpr(Rs->expr(1)));
  }
  if (auto *F = dynamic_cast<P::FreeStmtContext *>(C))
    return buildFree(F);
  if (auto *O = dynamic_cast<P::OffloadStmtContext *>(C))
    return buildOffload(O);
  if (auto *D = dynamic_cast<P::DependStmtContext *>(C)) {
    // dependStmt -> 'depend' expr 'on' expr
    ast::Expr *What = buildExpr(D->expr(0));
    return Ctx.make<ast::DependStmt>(R, What, buildExpr(D->expr(1)));
  }
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
  if (auto *A = dynamic_cast<P::AssertStmtContext *>(C)) {
    // assertStmt -> 'assert' expr (',' expr)?
    ast::Expr *Cond = buildExpr(A->expr(0));
    return Ctx.make<ast::AssertStmt>(
        R, Cond, A->expr().size() > 1 ? buildExpr(A->expr(1)) : nullptr);
  }
  if (auto *E = dynamic_cast<P::ExprStmtContext *>(C))
    // exprStmt -> expr
    return Ctx.make<ast::ExprStmt>(R, buildExpr(E->expr()));
  Diags.error(R, "internal error: unhandled statement");
  return nullptr;
}

namespace {
std::unique_ptr<ast::Module> parseHere(const SourceManager &SM, BufferId B,
                                       ast::AstContext &Ctx, DiagEngine &Diags);
} // namespace

std::unique_ptr<ast::Module> dd::syntax::parseModule(const SourceManager &SM,
                                                     BufferId B,
                                                     ast::AstContext &Ctx,
                                                     DiagEngine &Diags) {
  // The parser and its lookahead recurse once or more per level, up to
  // MaxParseNesting: on a stack of a known size (support/DeepStack.h; the
  // compiler is on one already).
  std::unique_ptr<ast::Module> M;
  runOnDeepStack([&] { M = parseHere(SM, B, Ctx, Diags); });
  return M;
}

namespace {
std::unique_ptr<ast::Module> parseHere(const SourceManager &SM, BufferId B,
                                       ast::AstContext &Ctx,
                                       DiagEngine &Diags) {
  unsigned ErrorsBefore = Diags.errorCount();
  size_t DiagsBefore = Diags.size();
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

  // The parser recurses once per bracket and once per prefix construct:
  // nesting far past what the builder accepts would exhaust the stack
  // before it could say so.
  Tokens.fill();
  if (std::optional<TooDeep> Deep =
          findTooDeep(Tokens.getTokens(), Parser.getVocabulary())) {
    Diags.error(Builder.range(Deep->At),
                Deep->OnlyBrackets
                    ? fmt::format("brackets nested more than {} levels deep",
                                  MaxParseNesting)
                    : fmt::format("nested more than {} levels deep for the "
                                  "parser (a level is a bracket, a prefix "
                                  "'-' or 'not', '->', 'where', 'alloc', "
                                  "'insert', 'else', or an operator that "
                                  "binds tighter than the one before it)",
                                  MaxParseNesting));
    return nullptr;
  }
  // Two stages, as ANTLR recommends: SLL prediction, which never looks at
  // the rules around a decision, parses every valid module we have seen,
  // in time linear in its tokens; full-context LL prediction rescans the
  // rest of an expression at each postfix operator or 'or' of a long chain
  // (250 indexes took 8 s, 800 took 80 s). LL runs only where SLL stops
  // at an error, and then reports the errors and recovers as before,
  // within a bound on its work (BoundedPrediction); past it, a third pass
  // reports the errors with SLL prediction.
  auto *Generated = Parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  auto *Sim =
      new BoundedPrediction(&Parser, Parser.getATN(), Generated->decisionToDFA,
                            Generated->getSharedContextCache());
  // The runtime (4.9) deletes the simulator it replaces; the parser
  // deletes this one.
  Parser.setInterpreter(Sim);
  Sim->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  Parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  P::ModuleContext *Tree = nullptr;
  auto Again = [&](antlr4::atn::PredictionMode Mode) {
    Tokens.seek(0);
    Parser.reset();
    Parser.removeErrorListeners();
    Listener.forget();
    Parser.addErrorListener(&Listener);
    Parser.setErrorHandler(std::make_shared<antlr4::DefaultErrorStrategy>());
    Sim->setPredictionMode(Mode);
    return Parser.module();
  };
  try {
    Tree = Parser.module();
  } catch (antlr4::ParseCancellationException &) {
    Sim->Budget = MaxClosurePerToken * Tokens.size() + MaxClosure;
    try {
      Tree = Again(antlr4::atn::PredictionMode::LL);
    } catch (BoundedPrediction::OverBudget &) {
      Diags.truncate(DiagsBefore);
      Sim->Budget = SIZE_MAX;
      Tree = Again(antlr4::atn::PredictionMode::SLL);
    }
  }
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
} // namespace

#include "syntax/Ast.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::ast;
using llvm::cast;

const char *ast::binaryOpSpelling(BinaryOp Op) {
  switch (Op) {
  case BinaryOp::Or:
    return "or";
  case BinaryOp::And:
    return "and";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::Match:
    return "~";
  case BinaryOp::NoMatch:
    return "!~";
  case BinaryOp::In:
    return "in";
  case BinaryOp::Union:
    return "|";
  case BinaryOp::Intersect:
    return "&";
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Mod:
    return "%";
  }
  return "?";
}

namespace {

struct Dumper {
  std::string Out;

  void expr(const Expr *E) {
    if (!E) {
      Out += "_";
      return;
    }
    switch (E->kind()) {
    case ExprKind::NumberLit: {
      auto *N = llvm::cast<NumberLit>(E);
      Out += fmt::format("{}", N->Value);
      if (!N->D.plain())
        Out += ":" + dimName(N->D);
      return;
    }
    case ExprKind::StringLit:
      Out += "\"" + llvm::cast<StringLit>(E)->Value + "\"";
      return;
    case ExprKind::RegexLit:
      Out += "/" + llvm::cast<RegexLit>(E)->Pattern + "/";
      return;
    case ExprKind::BoolLit:
      Out += llvm::cast<BoolLit>(E)->Value ? "true" : "false";
      return;
    case ExprKind::NoneLit:
      Out += "none";
      return;
    case ExprKind::ListLit: {
      Out += "[";
      bool First = true;
      for (const Expr *X : llvm::cast<ListLit>(E)->Elements) {
        if (!First)
          Out += " ";
        First = false;
        expr(X);
      }
      Out += "]";
      return;
    }
    case ExprKind::Name:
      Out += llvm::cast<Name>(E)->Ident;
      return;
    case ExprKind::Member: {
      auto *M = llvm::cast<Member>(E);
      Out += "(. ";
      expr(M->Object);
      Out += " " + M->Field + ")";
      return;
    }
    case ExprKind::Call: {
      auto *C = llvm::cast<Call>(E);
      Out += "(call ";
      expr(C->Callee);
      for (const Argument &A : C->Args) {
        Out += " ";
        if (!A.Name.empty())
          Out += A.Name + ":";
        expr(A.Value);
      }
      Out += ")";
      return;
    }
    case ExprKind::Slice: {
      auto *Sl = llvm::cast<Slice>(E);
      Out += "(slice ";
      expr(Sl->Object);
      Out += " ";
      expr(Sl->Lo);
      Out += " ";
      expr(Sl->Hi);
      Out += ")";
      return;
    }
    case ExprKind::Index: {
      auto *I = llvm::cast<Index>(E);
      Out += "(index ";
      expr(I->Object);
      Out += " ";
      expr(I->Key);
      Out += ")";
      return;
    }
    case ExprKind::Unary: {
      auto *U = llvm::cast<Unary>(E);
      Out += U->Op == UnaryOp::Not ? "(not " : "(neg ";
      expr(U->Operand);
      Out += ")";
      return;
    }
    case ExprKind::Binary: {
      auto *B = llvm::cast<Binary>(E);
      Out += "(";
      Out += binaryOpSpelling(B->Op);
      Out += " ";
      expr(B->Lhs);
      Out += " ";
      expr(B->Rhs);
      Out += ")";
      return;
    }
    case ExprKind::Range: {
      auto *R = llvm::cast<Range>(E);
      Out += "(.. ";
      expr(R->Lo);
      Out += " ";
      expr(R->Hi);
      Out += ")";
      return;
    }
    case ExprKind::Lambda: {
      auto *L = llvm::cast<Lambda>(E);
      Out += "(lambda (";
      for (size_t I = 0; I < L->Params.size(); ++I)
        Out += (I ? " " : "") + L->Params[I];
      Out += ") ";
      expr(L->Body);
      Out += ")";
      return;
    }
    case ExprKind::Select: {
      auto *S = llvm::cast<Select>(E);
      Out += "(select";
      for (const std::string &K : S->Kinds)
        Out += " " + K;
      if (S->Where) {
        Out += " where ";
        expr(S->Where);
      }
      Out += ")";
      return;
    }
    case ExprKind::Insert: {
      auto *I = llvm::cast<Insert>(E);
      Out += "(insert " + I->TaskKind + " \"" + I->TaskName + "\"";
      auto Clause = [&](const char *N, const Expr *X) {
        if (!X)
          return;
        Out += std::string(" ") + N + " ";
        expr(X);
      };
      Clause("on", I->On);
      Clause("duration", I->Duration);
      Clause("bytes", I->Bytes);
      Clause("after", I->After);
      Clause("before", I->Before);
      Out += ")";
      return;
    }
    case ExprKind::Alloc: {
      auto *A = llvm::cast<Alloc>(E);
      Out += "(alloc ";
      expr(A->Size);
      Out += A->AtEnd ? " after " : " before ";
      expr(A->At);
      if (A->Free) {
        Out += A->FreeAtEnd ? " through " : " until ";
        expr(A->Free);
      }
      if (A->Device) {
        Out += " on ";
        expr(A->Device);
      }
      Out += ")";
      return;
    }
    case ExprKind::Channel:
      Out += "(channel \"" + llvm::cast<Channel>(E)->ChannelName + "\")";
      return;
    }
    Out += "?";
  }

  void block(const Block &B) {
    Out += "{";
    for (const Stmt *S : B.Stmts) {
      Out += " ";
      stmt(S);
    }
    Out += " }";
  }

  void stmt(const Stmt *S) {
    switch (S->kind()) {
    case StmtKind::ParamStmt: {
      auto *P = llvm::cast<ParamStmt>(S);
      Out += "(param " + P->Name + " ";
      expr(P->Default);
      if (!P->Doc.empty())
        Out += " \"" + P->Doc + "\"";
      Out += ")";
      return;
    }
    case StmtKind::ImportStmt: {
      auto *I = llvm::cast<ImportStmt>(S);
      Out += "(import " + std::string(I->IsPath ? "\"" : "") + I->Module +
             (I->IsPath ? "\"" : "") + " as " + I->Alias + ")";
      return;
    }
    case StmtKind::LetStmt: {
      auto *L = llvm::cast<LetStmt>(S);
      Out += "(let " + L->Name + " ";
      expr(L->Value);
      Out += ")";
      return;
    }
    case StmtKind::AssignStmt: {
      auto *A = llvm::cast<AssignStmt>(S);
      Out += "(= " + A->Target->Ident + " ";
      expr(A->Value);
      Out += ")";
      return;
    }
    case StmtKind::IfStmt: {
      auto *I = llvm::cast<IfStmt>(S);
      Out += "(if ";
      expr(I->Cond);
      Out += " ";
      block(I->Then);
      if (I->HasElse) {
        Out += " else ";
        block(I->Else);
      }
      Out += ")";
      return;
    }
    case StmtKind::ForStmt: {
      auto *F = llvm::cast<ForStmt>(S);
      Out += "(for " + F->Var + " ";
      expr(F->Iterable);
      Out += " ";
      block(F->Body);
      Out += ")";
      return;
    }
    case StmtKind::BreakStmt:
      Out += "(break)";
      return;
    case StmtKind::ContinueStmt:
      Out += "(continue)";
      return;
    case StmtKind::TryStmt:
      Out += "(try ";
      block(llvm::cast<TryStmt>(S)->Body);
      Out += ")";
      return;
    case StmtKind::FnStmt: {
      auto *F = llvm::cast<FnStmt>(S);
      Out += "(fn " + F->Name + " (";
      for (size_t I = 0; I < F->Params.size(); ++I) {
        Out += (I ? " " : "") + F->Params[I].Name;
        if (F->Params[I].Default) {
          Out += "=";
          expr(F->Params[I].Default);
        }
      }
      Out += ") ";
      block(F->Body);
      Out += ")";
      return;
    }
    case StmtKind::ReturnStmt:
      Out += "(return ";
      expr(llvm::cast<ReturnStmt>(S)->Value);
      Out += ")";
      return;
    case StmtKind::ScaleStmt: {
      auto *Sc = llvm::cast<ScaleStmt>(S);
      Out += std::string("(") + (Sc->Shrink ? "shrink " : "scale ");
      expr(Sc->Target);
      Out += Sc->To ? " to " : " by ";
      expr(Sc->Amount);
      Out += ")";
      return;
    }
    case StmtKind::RemoveStmt:
      Out += "(remove ";
      expr(llvm::cast<RemoveStmt>(S)->Target);
      Out += ")";
      return;
    case StmtKind::ResizeStmt: {
      auto *Rs = llvm::cast<ResizeStmt>(S);
      Out += "(resize ";
      expr(Rs->Target);
      Out += Rs->To ? " to " : " by ";
      expr(Rs->Amount);
      Out += ")";
      return;
    }
    case StmtKind::FreeStmt: {
      auto *F = llvm::cast<FreeStmt>(S);
      Out += "(free ";
      expr(F->Target);
      Out += F->AtEnd ? " after " : " before ";
      expr(F->At);
      if (F->Until) {
        Out += " until ";
        expr(F->Until);
      }
      Out += ")";
      return;
    }
    case StmtKind::OffloadStmt: {
      auto *O = llvm::cast<OffloadStmt>(S);
      Out += "(offload ";
      expr(O->Target);
      auto Clause = [&](const char *N, const Expr *X) {
        if (!X)
          return;
        Out += std::string(" ") + N + " ";
        expr(X);
      };
      Clause("after", O->After);
      Clause("on", O->On);
      Clause("bandwidth", O->Bandwidth);
      if (O->Prefetch)
        Out += " prefetch";
      Clause("after", O->PrefetchAfter);
      Clause("before", O->PrefetchBefore);
      Clause("on", O->PrefetchOn);
      Out += ")";
      return;
    }
    case StmtKind::DependStmt: {
      auto *D = llvm::cast<DependStmt>(S);
      Out += "(depend ";
      expr(D->Waiter);
      Out += " on ";
      expr(D->On);
      Out += ")";
      return;
    }
    case StmtKind::ScheduleStmt: {
      auto *Sc = llvm::cast<ScheduleStmt>(S);
      Out += "(schedule ";
      expr(Sc->Resource);
      if (Sc->Priority) {
        Out += " by ";
        expr(Sc->Priority);
      } else {
        Out += " " + Sc->Policy;
      }
      Out += ")";
      return;
    }
    case StmtKind::PrintStmt: {
      Out += "(print";
      for (const Expr *E : llvm::cast<PrintStmt>(S)->Args) {
        Out += " ";
        expr(E);
      }
      Out += ")";
      return;
    }
    case StmtKind::AssertStmt: {
      auto *A = llvm::cast<AssertStmt>(S);
      Out += "(assert ";
      expr(A->Cond);
      if (A->Message) {
        Out += " ";
        expr(A->Message);
      }
      Out += ")";
      return;
    }
    case StmtKind::ExprStmt:
      expr(llvm::cast<ExprStmt>(S)->E);
      return;
    }
    Out += "?";
  }
};

} // namespace

bool ast::mentionsTaskProperty(const Expr *E) {
  if (!E)
    return false;
  switch (E->kind()) {
  case ExprKind::Name:
    return cast<Name>(E)->Res.K == Resolution::Property;
  case ExprKind::Member:
    return mentionsTaskProperty(cast<Member>(E)->Object);
  case ExprKind::Unary:
    return mentionsTaskProperty(cast<Unary>(E)->Operand);
  case ExprKind::Binary:
    return mentionsTaskProperty(cast<Binary>(E)->Lhs) ||
           mentionsTaskProperty(cast<Binary>(E)->Rhs);
  case ExprKind::Range:
    return mentionsTaskProperty(cast<Range>(E)->Lo) ||
           mentionsTaskProperty(cast<Range>(E)->Hi);
  case ExprKind::Slice: {
    const auto *Sl = cast<Slice>(E);
    return mentionsTaskProperty(Sl->Object) ||
           (Sl->Lo && mentionsTaskProperty(Sl->Lo)) ||
           (Sl->Hi && mentionsTaskProperty(Sl->Hi));
  }
  case ExprKind::Index:
    return mentionsTaskProperty(cast<Index>(E)->Object) ||
           mentionsTaskProperty(cast<Index>(E)->Key);
  case ExprKind::Call: {
    const auto *C = cast<Call>(E);
    if (mentionsTaskProperty(C->Callee))
      return true;
    for (const Argument &A : C->Args)
      if (mentionsTaskProperty(A.Value))
        return true;
    return false;
  }
  case ExprKind::ListLit:
    for (const Expr *X : cast<ListLit>(E)->Elements)
      if (mentionsTaskProperty(X))
        return true;
    return false;
  // Literals name no property; a lambda's body is a function of its own
  // (a property there is the task it is called with); select, insert,
  // alloc and channel are not per-task values.
  case ExprKind::NumberLit:
  case ExprKind::StringLit:
  case ExprKind::RegexLit:
  case ExprKind::BoolLit:
  case ExprKind::NoneLit:
  case ExprKind::Lambda:
  case ExprKind::Select:
  case ExprKind::Insert:
  case ExprKind::Alloc:
  case ExprKind::Channel:
    return false;
  }
  return false;
}

std::string ast::dump(const Module &M) {
  Dumper D;
  for (const Stmt *S : M.Body) {
    D.stmt(S);
    D.Out += "\n";
  }
  return D.Out;
}

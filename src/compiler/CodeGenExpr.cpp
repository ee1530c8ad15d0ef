//===- CodeGenExpr.cpp - Expressions
//---------------------------------------===//

#include "compiler/CodeGen.h"

#include <algorithm>

using namespace dd;
using namespace dd::compiler;
using bc::Opcode;
using llvm::cast;
using llvm::dyn_cast;

void CodeGen::call(ast::Call *C) {
  auto PushArgs = [&]() -> unsigned {
    if (C->Reordered) {
      for (ast::Expr *A : C->Positional) {
        if (A)
          expr(A);
        else
          op(Opcode::PushMissing);
      }
      return static_cast<unsigned>(C->Positional.size());
    }
    for (ast::Argument &A : C->Args)
      expr(A.Value);
    return static_cast<unsigned>(C->Args.size());
  };
  if (auto *N = dyn_cast<ast::Name>(C->Callee);
      N && N->Res.K == ast::Resolution::Builtin && N->Res.Index < 0x4000) {
    unsigned Argc = PushArgs();
    mark(C->Range);
    op(Opcode::CallBuiltin);
    u16(N->Res.Index, C->Range);
    u8(Argc);
    return;
  }
  expr(C->Callee);
  unsigned Argc = PushArgs();
  if (Argc > 255)
    Diags.error(C->Range, "too many arguments (at most 255)");
  mark(C->Range);
  op(Opcode::Call);
  u8(Argc);
}

void CodeGen::binary(ast::Binary *B) {
  using ast::BinaryOp;
  if (B->Op == BinaryOp::And || B->Op == BinaryOp::Or) {
    expr(B->Lhs);
    uint32_t End = jump(B->Op == BinaryOp::And ? Opcode::JumpIfFalseKeep
                                               : Opcode::JumpIfTrueKeep);
    expr(B->Rhs);
    patch(End);
    return;
  }
  expr(B->Lhs);
  expr(B->Rhs);
  mark(B->OpRange);
  switch (B->Op) {
  case BinaryOp::Eq:
    op(Opcode::Eq);
    return;
  case BinaryOp::Ne:
    op(Opcode::Ne);
    return;
  case BinaryOp::Lt:
    op(Opcode::Lt);
    return;
  case BinaryOp::Le:
    op(Opcode::Le);
    return;
  case BinaryOp::Gt:
    op(Opcode::Gt);
    return;
  case BinaryOp::Ge:
    op(Opcode::Ge);
    return;
  case BinaryOp::Match:
    op(Opcode::Match);
    return;
  case BinaryOp::NoMatch:
    op(Opcode::NoMatch);
    return;
  case BinaryOp::In:
    op(Opcode::In);
    return;
  case BinaryOp::Union:
    op(Opcode::Union);
    return;
  case BinaryOp::Intersect:
    op(Opcode::Intersect);
    return;
  case BinaryOp::Add:
    op(Opcode::Add);
    return;
  case BinaryOp::Sub:
    op(Opcode::Sub);
    return;
  case BinaryOp::Mul:
    op(Opcode::Mul);
    return;
  case BinaryOp::Div:
    op(Opcode::Div);
    return;
  case BinaryOp::Mod:
    op(Opcode::Mod);
    return;
  default:
    return;
  }
}

void CodeGen::insert(ast::Insert *I) {
  bc::InsertDesc D;
  const auto &Kinds = sema::taskKindNames();
  D.TaskKind = static_cast<uint8_t>(
      std::find(Kinds.begin(), Kinds.end(), I->TaskKind) - Kinds.begin());
  D.Name = I->TaskName;
  D.Clauses = 0;
  auto Clause = [&](ast::Expr *E, uint8_t Bit) {
    if (!E)
      return;
    expr(E);
    D.Clauses |= Bit;
  };
  Clause(I->On, bc::InsertDesc::On);
  Clause(I->Duration, bc::InsertDesc::Duration);
  Clause(I->Bytes, bc::InsertDesc::Bytes);
  Clause(I->After, bc::InsertDesc::After);
  Clause(I->Before, bc::InsertDesc::Before);
  fn().Inserts.push_back(std::move(D));
  mark(I->Range);
  op(Opcode::Insert);
  u16(static_cast<unsigned>(fn().Inserts.size() - 1), I->Range);
}

void CodeGen::alloc(ast::Alloc *A) {
  expr(A->Size);
  expr(A->At);
  uint8_t Bits = A->AtEnd ? bc::AtEnd : 0;
  if (A->Free) {
    expr(A->Free);
    Bits |= bc::HasUntil | (A->FreeAtEnd ? bc::UntilAtEnd : 0);
  }
  if (A->Device) {
    expr(A->Device);
    Bits |= bc::HasOn;
  }
  mark(A->Range);
  op(Opcode::Alloc);
  u8(Bits);
}

void CodeGen::expr(ast::Expr *E) {
  switch (E->kind()) {
  case ast::ExprKind::NumberLit: {
    auto *N = cast<ast::NumberLit>(E);
    op(Opcode::Const);
    u16(constNumber(N->Value, N->D, E->Range), E->Range);
    return;
  }
  case ast::ExprKind::StringLit:
    op(Opcode::Const);
    u16(constString(cast<ast::StringLit>(E)->Value, E->Range), E->Range);
    return;
  case ast::ExprKind::RegexLit:
    op(Opcode::Const);
    u16(constString(cast<ast::RegexLit>(E)->Pattern, E->Range,
                    bc::Constant::Regex),
        E->Range);
    return;
  case ast::ExprKind::BoolLit:
    op(cast<ast::BoolLit>(E)->Value ? Opcode::PushTrue : Opcode::PushFalse);
    return;
  case ast::ExprKind::NoneLit:
    op(Opcode::PushNone);
    return;
  case ast::ExprKind::ListLit: {
    auto *L = cast<ast::ListLit>(E);
    for (ast::Expr *X : L->Elements)
      expr(X);
    op(Opcode::MakeList);
    u16(static_cast<unsigned>(L->Elements.size()), E->Range);
    return;
  }
  case ast::ExprKind::Name: {
    auto *N = cast<ast::Name>(E);
    if (N->Res.K == ast::Resolution::Builtin) {
      if (N->Res.Index >= BuiltinValueBase) {
        mark(E->Range);
        op(Opcode::CallBuiltin);
        u16(N->Res.Index - BuiltinValueBase, E->Range);
        u8(0);
      } else if (N->Res.Index >= PhaseConstBase) {
        op(Opcode::Const);
        u16(constString(
                sema::namedConstants()[N->Res.Index - PhaseConstBase].second,
                E->Range),
            E->Range);
      } else {
        Diags.error(E->Range, "builtin function '" + N->Ident +
                                  "' cannot be used as a value; wrap it: "
                                  "x -> " +
                                  N->Ident + "(x)");
        op(Opcode::PushNone);
      }
      return;
    }
    if (N->Res.K == ast::Resolution::Property) {
      Diags.error(E->Range, "internal error: property outside a predicate");
      op(Opcode::PushNone);
      return;
    }
    load(N->Res, E->Range);
    return;
  }
  case ast::ExprKind::Member: {
    auto *M = cast<ast::Member>(E);
    if (M->Res.K == ast::Resolution::Global) {
      load(M->Res, E->Range);
      return;
    }
    expr(M->Object);
    mark(M->FieldRange);
    op(Opcode::GetMember);
    // Sema refused names no kind of value has.
    u16(bc::memberNameId(M->Field).value_or(0), M->FieldRange);
    return;
  }
  case ast::ExprKind::Call:
    call(cast<ast::Call>(E));
    return;
  case ast::ExprKind::Slice: {
    auto *Sl = cast<ast::Slice>(E);
    expr(Sl->Object);
    for (ast::Expr *Bound : {Sl->Lo, Sl->Hi}) {
      if (Bound)
        expr(Bound);
      else
        op(Opcode::PushNone);
    }
    mark(E->Range);
    op(Opcode::Slice);
    return;
  }
  case ast::ExprKind::Index: {
    auto *I = cast<ast::Index>(E);
    expr(I->Object);
    expr(I->Key);
    mark(E->Range);
    op(Opcode::Index);
    return;
  }
  case ast::ExprKind::Unary: {
    auto *U = cast<ast::Unary>(E);
    expr(U->Operand);
    mark(E->Range);
    op(U->Op == ast::UnaryOp::Not ? Opcode::Not : Opcode::Neg);
    return;
  }
  case ast::ExprKind::Binary:
    binary(cast<ast::Binary>(E));
    return;
  case ast::ExprKind::Range: {
    auto *R = cast<ast::Range>(E);
    expr(R->Lo);
    expr(R->Hi);
    mark(E->Range);
    op(Opcode::MakeRange);
    return;
  }
  case ast::ExprKind::Lambda:
    lambda(cast<ast::Lambda>(E));
    return;
  case ast::ExprKind::Select:
    select(cast<ast::Select>(E));
    return;
  case ast::ExprKind::Insert:
    insert(cast<ast::Insert>(E));
    return;
  case ast::ExprKind::Alloc:
    alloc(cast<ast::Alloc>(E));
    return;
  case ast::ExprKind::Channel:
    mark(E->Range);
    op(Opcode::Channel);
    u16(constString(cast<ast::Channel>(E)->ChannelName, E->Range), E->Range);
    return;
  }
  Diags.error(E->Range, "internal error: cannot compile this expression");
  op(Opcode::PushNone);
}

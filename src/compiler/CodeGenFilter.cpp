//===- CodeGenFilter.cpp - Select predicates to filter programs -----------===//
//
// A predicate becomes a FilterProgram: nodes the VM evaluates column-wise
// over all tasks. The parts that do not depend on the task ("captures") are
// ordinary bytecode run once before the Select instruction; the filter
// refers to them by position. Sema has checked the predicate's shape.
//
//===----------------------------------------------------------------------===//

#include "compiler/CodeGen.h"

using namespace dd;
using namespace dd::compiler;
using bc::FilterOp;
using llvm::cast;
using llvm::dyn_cast;

static uint16_t add(bc::FilterProgram &P, bc::FilterNode N) {
  P.Nodes.push_back(N);
  return static_cast<uint16_t>(P.Nodes.size() - 1);
}

uint16_t CodeGen::filterNode(FilterBuilder &B, ast::Expr *E) {
  using ast::BinaryOp;
  if (!ast::mentionsTaskProperty(E)) {
    uint16_t Index = static_cast<uint16_t>(B.Captures.size());
    B.Captures.push_back(E);
    return add(B.Program, {FilterOp::Capture, 0, Index, 0});
  }
  switch (E->kind()) {
  case ast::ExprKind::Name:
    return add(B.Program,
               {FilterOp::Prop,
                static_cast<uint16_t>(cast<ast::Name>(E)->Res.Index), 0, 0});
  case ast::ExprKind::Member: {
    auto *M = cast<ast::Member>(E);
    auto Id = bc::lookupMember(bc::TypeKind::Layer, M->Field);
    return add(B.Program,
               {FilterOp::LayerProp,
                static_cast<uint16_t>(Id ? *Id : bc::MemberId{}), 0, 0});
  }
  case ast::ExprKind::Unary: {
    auto *U = cast<ast::Unary>(E);
    if (U->Op == ast::UnaryOp::Not)
      return add(B.Program, {FilterOp::Not, 0, filterMask(B, U->Operand), 0});
    // -x as 0 - x.
    uint16_t Zero = static_cast<uint16_t>(B.Captures.size());
    B.Captures.push_back(nullptr); // the VM's zero
    uint16_t ZeroNode = add(B.Program, {FilterOp::Capture, 0, Zero, 0});
    return add(B.Program,
               {FilterOp::Arith, 1, ZeroNode, filterNode(B, U->Operand)});
  }
  case ast::ExprKind::Binary: {
    auto *Bi = cast<ast::Binary>(E);
    switch (Bi->Op) {
    case BinaryOp::And:
    case BinaryOp::Or: {
      uint16_t L = filterMask(B, Bi->Lhs);
      uint16_t R = filterMask(B, Bi->Rhs);
      return add(
          B.Program,
          {Bi->Op == BinaryOp::And ? FilterOp::And : FilterOp::Or, 0, L, R});
    }
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge: {
      uint16_t Cmp =
          static_cast<uint16_t>(Bi->Op) - static_cast<uint16_t>(BinaryOp::Eq);
      uint16_t L = filterNode(B, Bi->Lhs);
      uint16_t R = filterNode(B, Bi->Rhs);
      return add(B.Program, {FilterOp::Compare, Cmp, L, R});
    }
    case BinaryOp::Match:
    case BinaryOp::NoMatch:
    case BinaryOp::In: {
      uint16_t L = filterNode(B, Bi->Lhs);
      uint16_t R = filterNode(B, Bi->Rhs);
      FilterOp Op = Bi->Op == BinaryOp::Match     ? FilterOp::Match
                    : Bi->Op == BinaryOp::NoMatch ? FilterOp::NotMatch
                                                  : FilterOp::In;
      return add(B.Program, {Op, 0, L, R});
    }
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod: {
      uint16_t Ar =
          static_cast<uint16_t>(Bi->Op) - static_cast<uint16_t>(BinaryOp::Add);
      uint16_t L = filterNode(B, Bi->Lhs);
      uint16_t R = filterNode(B, Bi->Rhs);
      return add(B.Program, {FilterOp::Arith, Ar, L, R});
    }
    default:
      break;
    }
    break;
  }
  // Sema lets no other expression that mentions a task property into a
  // predicate (SemaImpl::predicate).
  case ast::ExprKind::NumberLit:
  case ast::ExprKind::StringLit:
  case ast::ExprKind::RegexLit:
  case ast::ExprKind::BoolLit:
  case ast::ExprKind::NoneLit:
  case ast::ExprKind::ListLit:
  case ast::ExprKind::Call:
  case ast::ExprKind::Index:
  case ast::ExprKind::Slice:
  case ast::ExprKind::Range:
  case ast::ExprKind::Lambda:
  case ast::ExprKind::Select:
  case ast::ExprKind::Insert:
  case ast::ExprKind::Alloc:
  case ast::ExprKind::Channel:
    break;
  }
  Diags.error(E->Range, "internal error: predicate not compiled");
  return add(B.Program, {FilterOp::True, 0, 0, 0});
}

uint16_t CodeGen::filterMask(FilterBuilder &B, ast::Expr *E) {
  uint16_t N = filterNode(B, E);
  FilterOp Op = B.Program.Nodes[N].Op;
  if (Op == FilterOp::Prop || Op == FilterOp::LayerProp ||
      Op == FilterOp::Capture || Op == FilterOp::Arith)
    return add(B.Program, {FilterOp::Truthy, 0, N, 0});
  return N;
}

void CodeGen::select(ast::Select *S) {
  FilterBuilder B;
  B.Program.Blocks =
      S->Kinds.front() == "block" || S->Kinds.front() == "blocks";
  for (const std::string &K : S->Kinds)
    B.Program.KindMask |= bc::selectKindMask(K).value_or(0);
  if (S->Where)
    filterMask(B, S->Where);
  else
    add(B.Program, {FilterOp::True, 0, 0, 0});
  // The captures, in order, then the instruction.
  for (ast::Expr *C : B.Captures) {
    if (C) {
      expr(C);
    } else {
      op(bc::Opcode::Const);
      u16(constNumber(0, {}, S->Range), S->Range);
    }
  }
  if (B.Captures.size() > 255)
    Diags.error(S->Range, "a select predicate with over 255 values");
  B.Program.NumCaptures = static_cast<uint8_t>(B.Captures.size());
  if (S->Where) {
    // Keep the predicate's source for the disassembly.
    SourceRange R = S->Where->Range;
    B.Program.Text = SM.text(R.Buffer).substr(R.Begin, R.End - R.Begin);
  }
  fn().Filters.push_back(std::move(B.Program));
  mark(S->Range);
  op(bc::Opcode::Select);
  u16(static_cast<unsigned>(fn().Filters.size() - 1), S->Range);
  u8(static_cast<unsigned>(B.Captures.size()));
}

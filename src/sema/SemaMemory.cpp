//===- SemaMemory.cpp - resize, free, offload and alloc -------------------===//
//
// The memory statements take blocks (a block, a block set, or a list of
// blocks) and task points: a task, or a function that gives the task for
// each block (computed before any change).
//
//===----------------------------------------------------------------------===//

#include "sema/SemaImpl.h"

#include <tuple>

using namespace dd;
using namespace dd::sema;
using bc::TypeKind;
using llvm::dyn_cast;

std::optional<Ty> SemaImpl::blockSetOp(ast::Binary *B, Ty L, Ty R) {
  using ast::BinaryOp;
  auto BlockLike = [](Ty T) {
    return T.is(TypeKind::BlockSet) || T.is(TypeKind::Block);
  };
  auto TaskLike = [](Ty T) {
    return T.is(TypeKind::Set) || T.is(TypeKind::Task);
  };
  bool SetOp = B->Op == BinaryOp::Union || B->Op == BinaryOp::Intersect ||
               B->Op == BinaryOp::Add || B->Op == BinaryOp::Sub;
  if (!SetOp || (!BlockLike(L) && !BlockLike(R)))
    return std::nullopt;
  if ((!L.any() && !BlockLike(L)) || (!R.any() && !BlockLike(R))) {
    Diags.error(B->OpRange,
                std::string("'") + ast::binaryOpSpelling(B->Op) +
                    "' combines block sets, not " +
                    describe(BlockLike(L) ? R : L) +
                    (TaskLike(L) || TaskLike(R)
                         ? " (tasks and blocks do not mix; t.allocs are the "
                           "blocks a task allocates)"
                         : ""));
    return Ty{};
  }
  return Ty::of(TypeKind::BlockSet);
}

bool SemaImpl::propertyComparable(ast::Binary *B, Ty L, Ty R) {
  // In a predicate, a string property never equals these: most likely a
  // variable hides a name like 'backward' or 'activation'.
  for (auto [P, X, XE] : {std::tuple{B->Lhs, R, B->Rhs}, {B->Rhs, L, B->Lhs}}) {
    auto *N = dyn_cast<ast::Name>(P);
    if (!InPredicate || !N || N->Res.K != ast::Resolution::Property ||
        bc::memberInfo(static_cast<bc::MemberId>(N->Res.Index)).Result !=
            TypeKind::String)
      continue;
    if (!X.is(TypeKind::Set) && !X.is(TypeKind::BlockSet) &&
        !X.is(TypeKind::Task) && !X.is(TypeKind::Block) &&
        !X.is(TypeKind::Number) && !X.is(TypeKind::Bool) &&
        !X.is(TypeKind::List) && !X.is(TypeKind::Function))
      continue;
    std::string Why =
        "'" + N->Ident + "' is a string; it never equals " + describe(X);
    if (auto *XN = dyn_cast<ast::Name>(XE))
      for (const auto &C : namedConstants())
        if (C.first == XN->Ident)
          Why += " ('" + XN->Ident +
                 "' here is a variable, which hides the "
                 "name \"" +
                 C.second + "\")";
    Diags.error(B->OpRange, Why);
    return false;
  }
  return true;
}

void SemaImpl::expectBlocks(ast::Expr *E, Ty T, const char *Role) {
  if (T.any() || T.is(TypeKind::BlockSet) || T.is(TypeKind::Block) ||
      T.is(TypeKind::List))
    return;
  Diags.error(E->Range,
              std::string("'") + Role +
                  "' takes memory blocks (a block or a block set, like "
                  "select block where class == activation), got " +
                  describe(T) +
                  (T.is(TypeKind::Set) || T.is(TypeKind::Task)
                       ? " (the blocks a task allocates are t.allocs)"
                       : ""));
}

void SemaImpl::expectTaskPoint(ast::Expr *E, const char *Clause,
                               bool PerBlock) {
  Ty T = expr(E);
  if (T.any() || T.is(TypeKind::Task) || T.is(TypeKind::Set) ||
      (PerBlock && T.is(TypeKind::Function)))
    return;
  Diags.error(E->Range, std::string("'") + Clause + "' takes a task" +
                            (PerBlock ? " (or a function giving one for each "
                                        "block, like b -> b.alloc_task)"
                                      : "") +
                            ", got " + describe(T));
}

void SemaImpl::visit(ast::ResizeStmt *S) {
  expectBlocks(S->Target, expr(S->Target), "resize");
  Ty Amount = expr(S->Amount);
  if (Amount.any() || Amount.is(TypeKind::Function))
    return;
  if (!Amount.is(TypeKind::Number)) {
    Diags.error(S->Amount->Range, std::string("expected ") +
                                      (S->To ? "a size" : "a factor") +
                                      ", got " + describe(Amount));
    return;
  }
  if (S->To && Amount.D != Dim::bytes())
    Diags.error(S->Amount->Range,
                "'resize ... to' sets sizes: expected a size (like 64MB), "
                "got " +
                    describe(Amount) +
                    (Amount.D.plain() ? " (to scale sizes write 'by')" : ""));
  if (!S->To && !Amount.D.plain())
    Diags.error(
        S->Amount->Range,
        "'by' takes a plain factor, got " + describe(Amount) +
            (Amount.D == Dim::bytes() ? " (to set sizes write 'to')" : ""));
  if (auto *N = llvm::dyn_cast<ast::NumberLit>(S->Amount))
    if (N->Value < 0)
      Diags.error(S->Amount->Range, S->To ? "a size cannot be negative"
                                          : "the factor cannot be negative");
}

void SemaImpl::visit(ast::FreeStmt *S) {
  expectBlocks(S->Target, expr(S->Target), "free");
  if (!S->At)
    Diags.error(S->Range, "free needs 'after TASK' (freed when the task "
                          "ends) or 'before TASK' (when it starts)");
  else
    expectTaskPoint(S->At, S->AtEnd ? "after" : "before");
  if (S->Until)
    expectTaskPoint(S->Until, "until");
}

void SemaImpl::visit(ast::OffloadStmt *S) {
  expectBlocks(S->Target, expr(S->Target), "offload");
  if (!S->After)
    Diags.error(S->Range, "offload needs 'after TASK' (the copy to the host "
                          "starts when the task ends)");
  else
    expectTaskPoint(S->After, "after");
  if (S->Prefetch && !S->PrefetchBefore)
    Diags.error(S->PrefetchRange, "'prefetch' needs 'before TASK' (the "
                                  "block must be back when the task starts)");
  if (S->PrefetchAfter)
    expectTaskPoint(S->PrefetchAfter, "prefetch after");
  if (S->PrefetchBefore)
    expectTaskPoint(S->PrefetchBefore, "prefetch before");
  for (ast::Expr *On : {S->On, S->PrefetchOn})
    if (On) {
      Ty T = expr(On);
      if (!T.any() && !T.is(TypeKind::Resource))
        Diags.error(On->Range, "'on' takes a GPU stream for the copies, got " +
                                   describe(T));
    }
  if (S->Bandwidth)
    expectNumber(S->Bandwidth, expr(S->Bandwidth), Dim::bandwidth(),
                 "'bandwidth'");
}

Ty SemaImpl::alloc(ast::Alloc *A) {
  Ty Size = expr(A->Size);
  expectNumber(A->Size, Size, Dim::bytes(), "alloc");
  if (auto *N = llvm::dyn_cast<ast::NumberLit>(A->Size))
    if (N->Value < 0)
      Diags.error(A->Size->Range, "a size cannot be negative");
  if (!A->At)
    Diags.error(A->Range, "alloc needs 'after TASK' or 'before TASK' (when "
                          "the block is allocated)");
  else
    expectTaskPoint(A->At, A->AtEnd ? "after" : "before", false);
  if (A->Free)
    expectTaskPoint(A->Free, A->FreeAtEnd ? "through" : "until", false);
  if (A->Device) {
    Ty T = expr(A->Device);
    if (!T.any() && !(T.is(TypeKind::Number) && T.D.plain()))
      Diags.error(A->Device->Range,
                  "'on' takes a device number, got " + describe(T));
  }
  return Ty::of(TypeKind::Block);
}

//===- SemaPredicate.cpp - The shape of select predicates -----------------===//
//
// A select predicate runs as a few native loops over all tasks, so it must
// be built from what those loops can do:
//   mask   := mask and mask | mask or mask | not mask
//           | column CMP column | column ~ value | column in value
//           | bool property
//   column := task property | layer.index | layer.name | value
//           | column (+ - * / %) column
//   value  := any expression that does not mention a task property; it is
//             computed once, before the loops
// Anything else that mentions a task property (a call, an index, ...)
// cannot run as a set operation; a per-task filter is S.filter(t -> ...).
//
//===----------------------------------------------------------------------===//

#include "sema/SemaImpl.h"

#include <algorithm>

using namespace dd;
using namespace dd::sema;
using bc::TypeKind;
using llvm::cast;
using llvm::dyn_cast;

void SemaImpl::checkPropertyConstant(ast::Expr *Prop, ast::Expr *Const) {
  auto *N = dyn_cast<ast::Name>(Prop);
  auto *S = dyn_cast<ast::StringLit>(Const);
  if (!N || !S || N->Res.K != ast::Resolution::Property)
    return;
  const std::vector<std::string> *Known = nullptr;
  if (N->Ident == "phase" || N->Ident == "free_phase")
    Known = &phaseNames();
  else if (N->Ident == "kind" && PredOwner == TypeKind::Task)
    Known = &taskKindNames();
  else if (N->Ident == "class" && PredOwner == TypeKind::Block)
    Known = &blockClassNames();
  else if (N->Ident == "class" && PredOwner == TypeKind::Task)
    Known = &kernelClassNames();
  if (!Known ||
      std::find(Known->begin(), Known->end(), S->Value) != Known->end())
    return;
  std::string Best = closestMatch(S->Value, *Known);
  std::string List;
  for (const std::string &K : *Known)
    List += (List.empty() ? "" : ", ") + K;
  std::string Plural = N->Ident == "class" ? "classes" : N->Ident + "s";
  const std::vector<std::string> &Blocks = blockClassNames();
  bool BlockClass =
      PredOwner == TypeKind::Task && N->Ident == "class" &&
      std::find(Blocks.begin(), Blocks.end(), S->Value) != Blocks.end();
  Diags.error(
      S->Range,
      std::string(PredOwner == TypeKind::Block ? "no block" : "no task") +
          " has " + N->Ident + " \"" + S->Value + "\" (" + Plural + ": " +
          List + ")" +
          (BlockClass ? "; \"" + S->Value +
                            "\" is a class of memory blocks: select block "
                            "where class == ..."
           : Best.empty() ? ""
                          : "; did you mean \"" + Best + "\"?"));
}

SemaImpl::PredShape SemaImpl::predicate(ast::Expr *E) {
  using ast::BinaryOp;
  if (!ast::mentionsTaskProperty(E))
    return PredShape::Capture;
  auto Unsupported = [&](ast::Expr *X, const std::string &What) {
    Diags.error(X->Range,
                What + " cannot run as a set operation in a select predicate "
                       "(predicates compare task properties with values, and "
                       "combine with and/or/not); filter task by task with "
                       "S.filter(t -> ...)");
    return PredShape::Invalid;
  };
  auto Operand = [&](ast::Expr *X) { return predicate(X); };
  switch (E->kind()) {
  case ast::ExprKind::Name:
    return PredShape::Column;
  case ast::ExprKind::Member: {
    auto *M = cast<ast::Member>(E);
    auto *N = dyn_cast<ast::Name>(M->Object);
    if (N && N->Res.K == ast::Resolution::Property) {
      if (N->Ident == "layer" && (M->Field == "index" || M->Field == "name"))
        return PredShape::Column;
      // A member the property's value does not have at all: the member's
      // own check said so (with a suggestion); a second error about it
      // would only repeat it.
      TypeKind Of = bc::memberInfo(bc::MemberId(N->Res.Index)).Result;
      if (!bc::lookupMember(Of, M->Field))
        return PredShape::Invalid;
    }
    return Unsupported(E, "'." + M->Field + "' of a task property");
  }
  case ast::ExprKind::Unary: {
    auto *U = cast<ast::Unary>(E);
    PredShape S = Operand(U->Operand);
    if (S == PredShape::Invalid)
      return S;
    if (U->Op == ast::UnaryOp::Not)
      return PredShape::Mask;
    if (S == PredShape::Mask)
      return Unsupported(E, "negating a condition");
    return PredShape::Column;
  }
  case ast::ExprKind::Binary: {
    auto *B = cast<ast::Binary>(E);
    switch (B->Op) {
    case BinaryOp::And:
    case BinaryOp::Or:
      if (Operand(B->Lhs) == PredShape::Invalid ||
          Operand(B->Rhs) == PredShape::Invalid)
        return PredShape::Invalid;
      return PredShape::Mask;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge: {
      PredShape L = Operand(B->Lhs), R = Operand(B->Rhs);
      if (L == PredShape::Invalid || R == PredShape::Invalid)
        return PredShape::Invalid;
      if (L == PredShape::Mask || R == PredShape::Mask)
        return Unsupported(E, "comparing conditions");
      checkPropertyConstant(B->Lhs, B->Rhs);
      checkPropertyConstant(B->Rhs, B->Lhs);
      return PredShape::Mask;
    }
    case BinaryOp::Match:
    case BinaryOp::NoMatch:
    case BinaryOp::In: {
      PredShape L = Operand(B->Lhs);
      if (L == PredShape::Invalid)
        return L;
      if (ast::mentionsTaskProperty(B->Rhs))
        return Unsupported(B->Rhs, "a pattern or collection that depends on "
                                   "the task");
      if (L != PredShape::Column)
        return Unsupported(E, "this test");
      return PredShape::Mask;
    }
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod: {
      PredShape L = Operand(B->Lhs), R = Operand(B->Rhs);
      if (L == PredShape::Invalid || R == PredShape::Invalid)
        return PredShape::Invalid;
      if (L == PredShape::Mask || R == PredShape::Mask)
        return Unsupported(E, "arithmetic on conditions");
      return PredShape::Column;
    }
    default:
      return Unsupported(E, std::string("'") + ast::binaryOpSpelling(B->Op) +
                                "' on task properties");
    }
  }
  case ast::ExprKind::Call:
    return Unsupported(E, "a call that depends on the task");
  case ast::ExprKind::Index:
    return Unsupported(E, "indexing with a task property");
  case ast::ExprKind::Slice:
    return Unsupported(E, "slicing with a task property");
  // A list or a range of task properties; the others mention none
  // (mentionsTaskProperty), so they are captured above.
  case ast::ExprKind::ListLit:
  case ast::ExprKind::Range:
  case ast::ExprKind::NumberLit:
  case ast::ExprKind::StringLit:
  case ast::ExprKind::RegexLit:
  case ast::ExprKind::BoolLit:
  case ast::ExprKind::NoneLit:
  case ast::ExprKind::Lambda:
  case ast::ExprKind::Select:
  case ast::ExprKind::Insert:
  case ast::ExprKind::Alloc:
  case ast::ExprKind::Channel:
    return Unsupported(E, "this expression");
  }
  return Unsupported(E, "this expression");
}

Ty SemaImpl::select(ast::Select *S) {
  auto IsBlock = [](const std::string &K) {
    return K == "block" || K == "blocks";
  };
  bool Blocks = IsBlock(S->Kinds.front());
  for (size_t I = 0; I < S->Kinds.size(); ++I) {
    if (IsBlock(S->Kinds[I]) != Blocks) {
      Diags.error(S->KindRanges[I],
                  "a select takes tasks or memory blocks, not both");
      continue;
    }
    if (Blocks || bc::selectKindMask(S->Kinds[I]))
      continue;
    std::vector<std::string> Kinds = {
        "task", "gpu",    "kernel",     "comm",    "memcpy", "memset",
        "cpu",  "cpu_op", "annotation", "runtime", "block"};
    std::string Best = closestMatch(S->Kinds[I], Kinds);
    Diags.error(S->KindRanges[I],
                "cannot select '" + S->Kinds[I] +
                    "' (kinds: " + bc::selectKinds() + ")" +
                    (Best.empty() ? "" : "; did you mean '" + Best + "'?"));
  }
  TypeKind Result = Blocks ? TypeKind::BlockSet : TypeKind::Set;
  if (!S->Where)
    return Ty::of(Result);
  bool Saved = InPredicate;
  TypeKind SavedOwner = PredOwner;
  InPredicate = true;
  PredOwner = Blocks ? TypeKind::Block : TypeKind::Task;
  Ty T = expr(S->Where);
  PredShape Shape = predicate(S->Where);
  InPredicate = Saved;
  PredOwner = SavedOwner;
  if (!T.any() && !T.is(TypeKind::Bool))
    Diags.error(S->Where->Range,
                "a select predicate is a condition, got " + describe(T));
  else if (Shape == PredShape::Column && !T.is(TypeKind::Bool) && !T.any())
    Diags.error(S->Where->Range, "a select predicate is a condition");
  return Ty::of(Result);
}

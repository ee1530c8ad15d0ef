//===- SemaExpr.cpp - Names, members, calls and types of expressions ------===//

#include "sema/SemaImpl.h"

#include "support/Regex.h"

#include <algorithm>

using namespace dd;
using namespace dd::sema;
using bc::TypeKind;
using llvm::cast;
using llvm::dyn_cast;

namespace {
/// Resolution indexes of builtin values (see the compiler).
constexpr uint32_t BuiltinValueBase = 0x8000; ///< + BuiltinId, called at once
constexpr uint32_t PhaseConstBase = 0x4000;   ///< + index into namedConstants()
} // namespace

const Symbol *SemaImpl::lookup(const std::string &Name, ast::Resolution &Res,
                               Symbol &Copy) {
  if (auto R = lookupIn(F, Name, &Copy)) {
    Res = *R;
    return &Copy;
  }
  auto G = Globals.find(Name);
  if (G != Globals.end()) {
    Res = G->second.Res;
    Copy = G->second;
    return &Copy;
  }
  return nullptr;
}

void SemaImpl::expectSetLike(ast::Expr *E, Ty T, const char *Role) {
  if (T.any() || T.is(TypeKind::Set) || T.is(TypeKind::Task))
    return;
  Diags.error(E->Range, std::string("'") + Role +
                            "' takes tasks (a task or a task set), got " +
                            describe(T));
}

void SemaImpl::expectNumber(ast::Expr *E, Ty T, Dim D, const char *Role) {
  if (T.any())
    return;
  if (!T.is(TypeKind::Number) || T.D != D)
    Diags.error(E->Range, std::string(Role) + " takes " +
                              describe(Ty::number(D)) + ", got " + describe(T));
}

Ty SemaImpl::name(ast::Name *N) {
  if (InPredicate) {
    if (auto M = bc::lookupMember(PredOwner, N->Ident)) {
      const bc::MemberInfo &Info = bc::memberInfo(*M);
      if (Info.Flags & bc::Prop) {
        N->Res = {ast::Resolution::Property, static_cast<uint32_t>(*M)};
        return Ty::of(Info.Result, Info.D);
      }
    }
  }
  Symbol Copy;
  ast::Resolution Res;
  if (const Symbol *S = lookup(N->Ident, Res, Copy)) {
    N->Res = Res;
    if (Res.K == ast::Resolution::Global && FnDepth == 0 &&
        !DefinedSoFar.count(N->Ident)) {
      Diags.error(N->Range, "'" + N->Ident + "' is used before it is defined");
      Diags.note(S->Decl, "defined here");
    }
    return S->Type;
  }
  if (Imports.count(N->Ident)) {
    Diags.error(N->Range, "'" + N->Ident +
                              "' is a module; use one of its names, like '" +
                              N->Ident + ".NAME'");
    return {};
  }
  if (auto B = bc::lookupBuiltin(N->Ident); B && N->Ident[0] != '_') {
    N->Res = {ast::Resolution::Builtin, static_cast<uint32_t>(*B)};
    return Ty::of(TypeKind::Function);
  }
  if (N->Ident == "device" || N->Ident == "trace") {
    bc::BuiltinId B =
        N->Ident == "device" ? bc::BuiltinId::__device : bc::BuiltinId::__trace;
    N->Res = {ast::Resolution::Builtin,
              BuiltinValueBase + static_cast<uint32_t>(B)};
    return Ty::of(bc::builtinInfo(B).Result);
  }
  const auto &Consts = namedConstants();
  for (size_t I = 0; I < Consts.size(); ++I)
    if (N->Ident == Consts[I].first) {
      N->Res = {ast::Resolution::Builtin,
                PhaseConstBase + static_cast<uint32_t>(I)};
      return Ty::of(TypeKind::String);
    }

  // Unknown: suggest the closest visible name.
  std::vector<std::string> Cands;
  for (Frame *Fr = F; Fr; Fr = Fr->Parent)
    for (auto &B : Fr->Blocks)
      for (auto &[K, V] : B)
        Cands.push_back(K);
  for (auto &[K, V] : Globals)
    Cands.push_back(K);
  for (auto &[K, V] : Imports)
    Cands.push_back(K);
  for (unsigned I = 0; I < static_cast<unsigned>(bc::BuiltinId::NumBuiltins);
       ++I)
    if (bc::builtinInfo(static_cast<bc::BuiltinId>(I)).Name[0] != '_')
      Cands.push_back(bc::builtinInfo(static_cast<bc::BuiltinId>(I)).Name);
  for (const auto &C : Consts)
    Cands.push_back(C.first);
  if (InPredicate)
    for (const std::string &P : bc::memberNames(PredOwner))
      if (auto M = bc::lookupMember(PredOwner, P);
          M && (bc::memberInfo(*M).Flags & bc::Prop))
        Cands.push_back(P);
  Cands.push_back("device");
  Cands.push_back("trace");
  std::string Msg = "unknown name '" + N->Ident + "'";
  if (!InPredicate) {
    if (auto M = bc::lookupMember(TypeKind::Task, N->Ident);
        M && (bc::memberInfo(*M).Flags & bc::Prop))
      Msg += " (task properties like '" + N->Ident +
             "' are names only inside 'select ... where')";
    else if (auto M = bc::lookupMember(TypeKind::Block, N->Ident);
             M && (bc::memberInfo(*M).Flags & bc::Prop))
      Msg += " (block properties like '" + N->Ident +
             "' are names only inside 'select block where')";
  } else {
    TypeKind Other =
        PredOwner == TypeKind::Task ? TypeKind::Block : TypeKind::Task;
    if (auto M = bc::lookupMember(Other, N->Ident);
        M && (bc::memberInfo(*M).Flags & bc::Prop))
      Msg += Other == TypeKind::Block ? " ('" + N->Ident +
                                            "' is a property of blocks: select "
                                            "block where ...)"
                                      : " ('" + N->Ident +
                                            "' is a property of tasks, not of "
                                            "blocks)";
  }
  std::string Best = closestMatch(N->Ident, Cands);
  if (!Best.empty())
    Msg += "; did you mean '" + Best + "'?";
  Diags.error(N->Range, Msg);
  return {};
}

Ty SemaImpl::member(ast::Member *M, bool Called) {
  // Names of an imported module.
  if (auto *N = dyn_cast<ast::Name>(M->Object)) {
    auto Imp = Imports.find(N->Ident);
    Symbol Copy;
    ast::Resolution Shadow;
    if (Imp != Imports.end() && !lookup(N->Ident, Shadow, Copy)) {
      const ModuleInfo &Mod = Out.Modules[Imp->second];
      auto E = Mod.Exports.find(M->Field);
      if (E == Mod.Exports.end()) {
        std::vector<std::string> Names;
        for (auto &[K, V] : Mod.Exports)
          Names.push_back(K);
        std::string Best = closestMatch(M->Field, Names);
        Diags.error(M->FieldRange,
                    "module '" + N->Ident + "' has no '" + M->Field + "'" +
                        (Best.empty() ? "" : "; did you mean '" + Best + "'?"));
        return {};
      }
      M->Res = {ast::Resolution::Global, E->second};
      auto Fn = Mod.Functions.find(M->Field);
      return Fn != Mod.Functions.end() ? Ty::of(TypeKind::Function) : Ty{};
    }
  }
  Ty Obj = expr(M->Object);
  if (Obj.any()) {
    // Known only when the program runs; but no value of any kind has a
    // member that Members.def does not name.
    if (!bc::memberNameId(M->Field)) {
      std::string Msg = "no value has a member '" + M->Field + "'";
      std::string Best = closestMatch(M->Field, bc::allMemberNames());
      if (!Best.empty())
        Msg += "; did you mean '" + Best + "'?";
      Diags.error(M->FieldRange, Msg);
    }
    return {};
  }
  TypeKind Owner = Obj.K;
  if (Owner == TypeKind::Range)
    Owner = TypeKind::List;
  auto Id = bc::lookupMember(Owner, M->Field);
  if (!Id) {
    std::vector<std::string> Names = bc::memberNames(Owner);
    std::string Msg = describe(Obj) + " has no member '" + M->Field + "'";
    if (Names.empty()) {
      Msg = describe(Obj) + " has no members";
    } else {
      std::string Best = closestMatch(M->Field, Names);
      if (!Best.empty())
        Msg += "; did you mean '" + Best + "'?";
    }
    Diags.error(M->FieldRange, Msg);
    return {};
  }
  const bc::MemberInfo &Info = bc::memberInfo(*Id);
  bool IsMethod = Info.Flags & bc::Method;
  if (IsMethod && !Called)
    Diags.error(M->FieldRange, "'" + M->Field +
                                   "' is a method: call it, as "
                                   "in ." +
                                   M->Field + "(t -> ...)");
  if (!IsMethod && Called)
    Diags.error(M->FieldRange, "'" + M->Field + "' is not a method");
  return Ty::of(Info.Result, Info.D);
}

void SemaImpl::checkArity(ast::Call *C, const std::string &What, unsigned Min,
                          unsigned Max,
                          const std::vector<std::string> &Params) {
  // The callee is known: named arguments are handled here, and the
  // compiler uses Positional (filled below when the call is well formed).
  C->Reordered = true;
  // Place named arguments by parameter name.
  std::vector<ast::Expr *> Slots(std::max<size_t>(Params.size(), Max), nullptr);
  bool SawNamed = false;
  unsigned Positional = 0;
  for (ast::Argument &A : C->Args) {
    if (A.Name.empty()) {
      if (SawNamed) {
        Diags.error(A.Value->Range,
                    "a positional argument follows a named one");
        return;
      }
      if (Positional >= Max) {
        Diags.error(A.Value->Range, What + " takes at most " +
                                        std::to_string(Max) + " argument" +
                                        (Max == 1 ? "" : "s") + ", got " +
                                        std::to_string(C->Args.size()));
        return;
      }
      Slots[Positional++] = A.Value;
      continue;
    }
    SawNamed = true;
    auto It = std::find(Params.begin(), Params.end(), A.Name);
    if (It == Params.end()) {
      std::string Best = closestMatch(A.Name, Params);
      Diags.error(A.NameRange,
                  What + " has no parameter '" + A.Name + "'" +
                      (Best.empty() ? "" : "; did you mean '" + Best + "'?"));
      return;
    }
    size_t Pos = static_cast<size_t>(It - Params.begin());
    if (Slots[Pos]) {
      Diags.error(A.NameRange, "parameter '" + A.Name + "' given twice");
      return;
    }
    Slots[Pos] = A.Value;
  }
  size_t Given = 0;
  for (size_t I = 0; I < Slots.size(); ++I)
    if (Slots[I])
      Given = I + 1;
  for (unsigned I = 0; I < Min; ++I)
    if (!Slots[I]) {
      Diags.error(C->Range,
                  What + " needs " + std::to_string(Min) + " argument" +
                      (Min == 1 ? "" : "s") +
                      (I < Params.size() ? " (missing '" + Params[I] + "')"
                                         : std::string()));
      return;
    }
  Slots.resize(Given);
  C->Positional = std::move(Slots);
}

static std::vector<std::string> split(const char *S) {
  std::vector<std::string> Out;
  std::string Cur;
  for (const char *P = S; *P; ++P) {
    if (*P == ',') {
      Out.push_back(Cur);
      Cur.clear();
    } else {
      Cur.push_back(*P);
    }
  }
  if (!Cur.empty())
    Out.push_back(Cur);
  return Out;
}

Ty SemaImpl::call(ast::Call *C) {
  Ty Result;
  if (auto *M = dyn_cast<ast::Member>(C->Callee)) {
    Ty T = member(M, /*Called=*/true);
    Result = T;
    if (M->Res.K == ast::Resolution::Global) {
      // A function of an imported module.
      for (const ModuleInfo &Mod : Out.Modules)
        for (auto &[Name, Fn] : Mod.Functions)
          if (Mod.Exports.at(Name) == M->Res.Index) {
            std::vector<std::string> Ps;
            unsigned Req = 0;
            for (auto &P : Fn->Params) {
              Ps.push_back(P.Name);
              if (!P.Default)
                ++Req;
            }
            checkArity(C, "'" + M->Field + "'", Req,
                       static_cast<unsigned>(Ps.size()), Ps);
          }
      Result = {};
    }
  } else if (auto *N = dyn_cast<ast::Name>(C->Callee)) {
    Ty T = name(N);
    if (N->Res.K == ast::Resolution::Builtin && N->Res.Index < 0x4000) {
      const bc::BuiltinInfo &B =
          bc::builtinInfo(static_cast<bc::BuiltinId>(N->Res.Index));
      std::vector<std::string> Ps = split(B.Params);
      if (B.MaxArgs > Ps.size()) // variadic (min/max)
        Ps.clear();
      checkArity(C, "'" + N->Ident + "'", B.MinArgs, B.MaxArgs, Ps);
      Result = Ty::of(B.Result);
      auto Id = static_cast<bc::BuiltinId>(N->Res.Index);
      if (Id == bc::BuiltinId::simulate || Id == bc::BuiltinId::baseline)
        Result = Ty::number(Dim::duration());
      if (Id == bc::BuiltinId::peak || Id == bc::BuiltinId::baseline_peak)
        Result = Ty::number(Dim::bytes());
    } else {
      Symbol Copy;
      ast::Resolution Res;
      const Symbol *S = N->Res.K != ast::Resolution::Unresolved &&
                                N->Res.K != ast::Resolution::Builtin
                            ? lookup(N->Ident, Res, Copy)
                            : nullptr;
      if (S && S->Fn) {
        std::vector<std::string> Ps;
        unsigned Req = 0;
        for (auto &P : S->Fn->Params) {
          Ps.push_back(P.Name);
          if (!P.Default)
            ++Req;
        }
        checkArity(C, "'" + N->Ident + "'", Req,
                   static_cast<unsigned>(Ps.size()), Ps);
      } else if (!T.any() && !T.is(TypeKind::Function)) {
        Diags.error(C->Callee->Range, "'" + N->Ident + "' is " + describe(T) +
                                          ", not a function");
      }
    }
  } else {
    Ty T = expr(C->Callee);
    if (!T.any() && !T.is(TypeKind::Function))
      Diags.error(C->Callee->Range,
                  "calling " + describe(T) + ", which is not a function");
  }
  for (ast::Argument &A : C->Args) {
    if (!A.Name.empty() && !C->Reordered &&
        !(llvm::isa<ast::Member>(C->Callee) &&
          cast<ast::Member>(C->Callee)->Res.K != ast::Resolution::Global))
      Diags.error(A.NameRange, "named arguments need a function known "
                               "before the model runs");
    expr(A.Value);
  }
  return Result;
}

Ty SemaImpl::binary(ast::Binary *B) {
  using ast::BinaryOp;
  Ty L = expr(B->Lhs), R = expr(B->Rhs);
  auto SetLike = [](Ty T) {
    return T.is(TypeKind::Set) || T.is(TypeKind::Task);
  };
  if (auto T = blockSetOp(B, L, R))
    return *T;
  auto Fail = [&](const std::string &Why) {
    Diags.error(B->OpRange, Why);
    return Ty{};
  };
  const char *Op = ast::binaryOpSpelling(B->Op);
  switch (B->Op) {
  case BinaryOp::Or:
  case BinaryOp::And:
    // Either operand is the value (x or default), as in Python.
    if (L.K == R.K && L.D == R.D)
      return L;
    return {};
  case BinaryOp::Union:
  case BinaryOp::Intersect:
    if ((!L.any() && !SetLike(L)) || (!R.any() && !SetLike(R)))
      return Fail(std::string("'") + Op + "' combines task sets, not " +
                  describe(SetLike(L) ? R : L));
    return Ty::of(TypeKind::Set);
  case BinaryOp::Add:
  case BinaryOp::Sub:
    if (SetLike(L) || SetLike(R)) {
      if ((!L.any() && !SetLike(L)) || (!R.any() && !SetLike(R)))
        return Fail(std::string("cannot ") +
                    (B->Op == BinaryOp::Add ? "add " : "subtract ") +
                    describe(R) + (B->Op == BinaryOp::Add ? " to " : " from ") +
                    describe(L));
      return Ty::of(TypeKind::Set);
    }
    if (L.is(TypeKind::Number) && R.is(TypeKind::Number)) {
      if (L.D != R.D)
        return Fail(std::string("cannot ") +
                    (B->Op == BinaryOp::Add ? "add " : "subtract ") +
                    describe(R) + (B->Op == BinaryOp::Add ? " to " : " from ") +
                    describe(L));
      return L;
    }
    if (B->Op == BinaryOp::Add && L.is(TypeKind::String) &&
        R.is(TypeKind::String))
      return L;
    if (B->Op == BinaryOp::Add && L.is(TypeKind::List) && R.is(TypeKind::List))
      return L;
    if (!L.any() && !R.any())
      return Fail(std::string("cannot ") +
                  (B->Op == BinaryOp::Add ? "add " : "subtract ") +
                  describe(R) + (B->Op == BinaryOp::Add ? " to " : " from ") +
                  describe(L));
    return L.any() ? R : L;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Mod:
    if (L.is(TypeKind::Number) && R.is(TypeKind::Number)) {
      if (B->Op == BinaryOp::Mul)
        return Ty::number(L.D * R.D);
      if (B->Op == BinaryOp::Div)
        return Ty::number(L.D / R.D);
      if (L.D != R.D && !R.D.plain())
        return Fail("'%' needs operands of one unit");
      return L;
    }
    if ((!L.any() && !L.is(TypeKind::Number)) ||
        (!R.any() && !R.is(TypeKind::Number)))
      return Fail(std::string("'") + Op + "' needs numbers, got " +
                  describe(L.is(TypeKind::Number) ? R : L));
    return {};
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    if (!propertyComparable(B, L, R))
      return {};
    if (L.is(TypeKind::Number) && R.is(TypeKind::Number) && L.D != R.D)
      return Fail(
          "comparing " + describe(L) + " with " + describe(R) +
          (R.D.plain() || L.D.plain() ? " (give the number a unit)" : ""));
    return Ty::of(TypeKind::Bool);
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    if (L.is(TypeKind::Number) && R.is(TypeKind::Number) && L.D != R.D)
      return Fail(
          "comparing " + describe(L) + " with " + describe(R) +
          (R.D.plain() || L.D.plain() ? " (give the number a unit)" : ""));
    if ((!L.any() && !L.is(TypeKind::Number) && !L.is(TypeKind::String)) ||
        (!R.any() && !R.is(TypeKind::Number) && !R.is(TypeKind::String)))
      return Fail(
          std::string("'") + Op + "' orders numbers or strings, not " +
          describe(L.is(TypeKind::Number) || L.is(TypeKind::String) ? R : L));
    return Ty::of(TypeKind::Bool);
  case BinaryOp::Match:
  case BinaryOp::NoMatch:
    if (!L.any() && !L.is(TypeKind::String) && !L.is(TypeKind::Layer))
      return Fail("'~' matches strings, not " + describe(L));
    if (!R.any() && !R.is(TypeKind::Regex) && !R.is(TypeKind::String))
      return Fail("the right of '~' is a regex (/.../) or a string, not " +
                  describe(R));
    return Ty::of(TypeKind::Bool);
  case BinaryOp::In:
    if (!R.any() && !R.is(TypeKind::List) && !R.is(TypeKind::Set) &&
        !R.is(TypeKind::Range) && !R.is(TypeKind::String) &&
        !R.is(TypeKind::BlockSet))
      return Fail("'in' needs a list, a range, a task set, a block set or a "
                  "string on its right, not " +
                  describe(R));
    return Ty::of(TypeKind::Bool);
  }
  return {};
}

Ty SemaImpl::lambda(ast::Lambda *L) {
  Frame Inner;
  Inner.Parent = F;
  Inner.Info = &L->Frame;
  Inner.InFunction = true;
  Inner.Blocks.emplace_back();
  Frame *Saved = F;
  bool SavedPred = InPredicate;
  InPredicate = false;
  F = &Inner;
  ++FnDepth;
  for (const std::string &P : L->Params) {
    Symbol S;
    S.K = Symbol::FnParam;
    S.Decl = L->Range;
    S.Res = {ast::Resolution::Local, newLocal()};
    declareLocal(P, S);
  }
  expr(L->Body);
  --FnDepth;
  F = Saved;
  InPredicate = SavedPred;
  return Ty::of(TypeKind::Function);
}

Ty SemaImpl::insert(ast::Insert *I) {
  const auto &Kinds = taskKindNames();
  if (std::find(Kinds.begin(), Kinds.end(), I->TaskKind) == Kinds.end()) {
    std::string Best = closestMatch(I->TaskKind, Kinds);
    Diags.error(I->KindRange,
                "cannot insert a '" + I->TaskKind +
                    "' (kinds: kernel, memcpy, memset, comm, "
                    "cpu_op, runtime, annotation)" +
                    (Best.empty() ? "" : "; did you mean '" + Best + "'?"));
  }
  if (!I->On)
    Diags.error(I->Range, "insert needs 'on RESOURCE' (a stream, a thread, "
                          "a channel, or a task whose resource to use)");
  if (I->On) {
    Ty T = expr(I->On);
    if (!T.any() && !T.is(TypeKind::Resource) && !T.is(TypeKind::Task))
      Diags.error(I->On->Range,
                  "'on' takes a resource or a task, got " + describe(T));
  }
  if (I->Duration)
    expectNumber(I->Duration, expr(I->Duration), Dim::duration(), "'duration'");
  if (I->Bytes)
    expectNumber(I->Bytes, expr(I->Bytes), Dim::bytes(), "'bytes'");
  for (ast::Expr *E : {I->After, I->Before})
    if (E) {
      Ty T = expr(E);
      if (!T.any() && !T.is(TypeKind::Set) && !T.is(TypeKind::Task) &&
          !T.is(TypeKind::None))
        Diags.error(E->Range,
                    "'after'/'before' take tasks, got " + describe(T));
    }
  return Ty::of(TypeKind::Task);
}

Ty SemaImpl::expr(ast::Expr *E) {
  switch (E->kind()) {
  case ast::ExprKind::NumberLit:
    return Ty::number(cast<ast::NumberLit>(E)->D);
  case ast::ExprKind::StringLit:
    return Ty::of(TypeKind::String);
  case ast::ExprKind::RegexLit: {
    auto *R = cast<ast::RegexLit>(E);
    if (auto Problem = regexProblem(R->Pattern))
      Diags.error(R->Range, "invalid regex: " + *Problem);
    return Ty::of(TypeKind::Regex);
  }
  case ast::ExprKind::BoolLit:
    return Ty::of(TypeKind::Bool);
  case ast::ExprKind::NoneLit:
    return Ty::of(TypeKind::None);
  case ast::ExprKind::ListLit:
    for (ast::Expr *X : cast<ast::ListLit>(E)->Elements)
      expr(X);
    return Ty::of(TypeKind::List);
  case ast::ExprKind::Name:
    return name(cast<ast::Name>(E));
  case ast::ExprKind::Member:
    return member(cast<ast::Member>(E), false);
  case ast::ExprKind::Call:
    return call(cast<ast::Call>(E));
  case ast::ExprKind::Slice: {
    auto *Sl = cast<ast::Slice>(E);
    Ty O = expr(Sl->Object);
    if (!O.any() && !O.is(TypeKind::List) && !O.is(TypeKind::String) &&
        !O.is(TypeKind::Range))
      Diags.error(Sl->Object->Range,
                  "cannot slice " + describe(O) +
                      " (slice a list, a range or a string)");
    for (ast::Expr *Bound : {Sl->Lo, Sl->Hi}) {
      if (!Bound)
        continue;
      Ty B = expr(Bound);
      if (!B.any() && !(B.is(TypeKind::Number) && B.D.plain()))
        Diags.error(Bound->Range,
                    "a slice bound is a plain number, not " + describe(B));
    }
    return O;
  }
  case ast::ExprKind::Index: {
    auto *I = cast<ast::Index>(E);
    Ty O = expr(I->Object);
    Ty K = expr(I->Key);
    if (!O.any() && !O.is(TypeKind::List) && !O.is(TypeKind::String) &&
        !O.is(TypeKind::Range))
      Diags.error(I->Object->Range, "cannot index " + describe(O));
    if (!K.any() && !(K.is(TypeKind::Number) && K.D.plain()))
      Diags.error(I->Key->Range,
                  "an index is a plain number, not " + describe(K));
    return O.is(TypeKind::String) ? O : Ty{};
  }
  case ast::ExprKind::Unary: {
    auto *U = cast<ast::Unary>(E);
    Ty T = expr(U->Operand);
    if (U->Op == ast::UnaryOp::Not)
      return Ty::of(TypeKind::Bool);
    if (!T.any() && !T.is(TypeKind::Number))
      Diags.error(U->Range, "cannot negate " + describe(T));
    return T;
  }
  case ast::ExprKind::Binary:
    return binary(cast<ast::Binary>(E));
  case ast::ExprKind::Range: {
    auto *R = cast<ast::Range>(E);
    for (ast::Expr *X : {R->Lo, R->Hi}) {
      Ty T = expr(X);
      if (!T.any() && !(T.is(TypeKind::Number) && T.D.plain()))
        Diags.error(X->Range,
                    "a range is of plain integers, not " + describe(T));
    }
    return Ty::of(TypeKind::Range);
  }
  case ast::ExprKind::Lambda:
    return lambda(cast<ast::Lambda>(E));
  case ast::ExprKind::Select:
    return select(cast<ast::Select>(E));
  case ast::ExprKind::Insert:
    return insert(cast<ast::Insert>(E));
  case ast::ExprKind::Alloc:
    return alloc(cast<ast::Alloc>(E));
  case ast::ExprKind::Channel:
    return Ty::of(TypeKind::Resource);
  }
  Diags.error(E->Range, "internal error: unknown expression");
  return {};
}

//===- Sema.cpp - Modules, scopes and statements --------------------------===//

#include "sema/SemaImpl.h"

using namespace dd;
using namespace dd::sema;
using bc::TypeKind;
using llvm::cast;
using llvm::dyn_cast;

const std::vector<std::string> &sema::phaseNames() {
  static const std::vector<std::string> P = {"forward", "backward", "optimizer",
                                             "other", "unknown"};
  return P;
}

const std::vector<std::string> &sema::taskKindNames() {
  static const std::vector<std::string> K = {
      "cpu_op", "annotation", "runtime", "kernel", "memcpy", "memset", "comm"};
  return K;
}

const std::vector<std::string> &sema::kernelClassNames() {
  static const std::vector<std::string> C = {
#define DD_KERNEL_CLASS(Name, Description) #Name,
#include "graph/KernelClasses.def"
  };
  return C;
}

const std::vector<std::string> &sema::blockClassNames() {
  static const std::vector<std::string> C = {"persistent", "activation",
                                             "temporary", "cross-phase"};
  return C;
}

const std::vector<std::pair<std::string, std::string>> &sema::namedConstants() {
  static const auto Names = [] {
    std::vector<std::pair<std::string, std::string>> Out;
    for (const std::string &P : phaseNames())
      Out.push_back({P, P});
    for (const std::string &C : blockClassNames())
      Out.push_back({C == "cross-phase" ? "cross_phase" : C, C});
    return Out;
  }();
  return Names;
}

std::string sema::describe(Ty T) {
  switch (T.K) {
  case TypeKind::Number:
    if (T.D.plain())
      return "a plain number";
    if (T.D == Dim::duration())
      return "a duration";
    if (T.D == Dim::bytes())
      return "a size";
    if (T.D == Dim::bandwidth())
      return "a bandwidth";
    return "a number in " + dimName(T.D);
  case TypeKind::Any:
    return "a value";
  case TypeKind::None:
    return "none";
  case TypeKind::Set:
    return "a task set";
  case TypeKind::Task:
    return "a task";
  case TypeKind::BlockSet:
    return "a block set";
  case TypeKind::Block:
    return "a block";
  default:
    return std::string("a ") + bc::typeName(T.K);
  }
}

uint32_t SemaImpl::newGlobal(const std::string &Name) {
  Out.GlobalNames.push_back(
      Current->Name == "<main>" ? Name : Current->Name + "." + Name);
  return static_cast<uint32_t>(Out.GlobalNames.size() - 1);
}

uint32_t SemaImpl::newLocal() { return F->Info->NumLocals++; }

void SemaImpl::declareLocal(const std::string &Name, Symbol S) {
  auto &Scope = F->Blocks.back();
  auto It = Scope.find(Name);
  if (It != Scope.end()) {
    Diags.error(S.Decl, "'" + Name + "' is already defined in this block");
    Diags.note(It->second.Decl, "defined here");
    return;
  }
  Scope[Name] = S;
}

std::optional<ast::Resolution>
SemaImpl::lookupIn(Frame *Fr, const std::string &Name, Symbol *Found) {
  for (auto It = Fr->Blocks.rbegin(); It != Fr->Blocks.rend(); ++It) {
    auto S = It->find(Name);
    if (S != It->end()) {
      if (Found)
        *Found = S->second;
      return S->second.Res;
    }
  }
  if (!Fr->Parent)
    return std::nullopt;
  std::optional<ast::Resolution> Outer = lookupIn(Fr->Parent, Name, Found);
  if (!Outer || Outer->K == ast::Resolution::Global)
    return Outer;
  // A variable of an enclosing function: captured by value.
  for (auto &[Res, Index] : Fr->CaptureOf)
    if (Res.K == Outer->K && Res.Index == Outer->Index)
      return ast::Resolution{ast::Resolution::Capture, Index};
  uint32_t Index = static_cast<uint32_t>(Fr->Info->Captures.size());
  Fr->Info->Captures.push_back(*Outer);
  Fr->CaptureOf.push_back({*Outer, Index});
  return ast::Resolution{ast::Resolution::Capture, Index};
}

void SemaImpl::predeclare(ast::Module *M) {
  for (ast::Stmt *S : M->Body) {
    std::string Name;
    SourceRange R;
    Symbol Sym;
    if (auto *L = dyn_cast<ast::LetStmt>(S)) {
      Name = L->Name;
      R = L->NameRange;
      Sym.K = Symbol::Let;
    } else if (auto *P = dyn_cast<ast::ParamStmt>(S)) {
      Name = P->Name;
      R = P->NameRange;
      Sym.K = Symbol::Param;
    } else if (auto *Fn = dyn_cast<ast::FnStmt>(S)) {
      Name = Fn->Name;
      R = Fn->NameRange;
      Sym.K = Symbol::Function;
      Sym.Fn = Fn;
      Sym.Type = Ty::of(TypeKind::Function);
    } else {
      continue;
    }
    auto It = Globals.find(Name);
    if (It != Globals.end()) {
      Diags.error(R, "redefinition of '" + Name + "'");
      Diags.note(It->second.Decl, "first defined here");
      continue;
    }
    Sym.Decl = R;
    Sym.Res = {ast::Resolution::Global, newGlobal(Name)};
    Globals[Name] = Sym;
    Current->Exports[Name] = Sym.Res.Index;
    if (Sym.Fn)
      Current->Functions[Name] = Sym.Fn;
  }
}

void SemaImpl::module(ast::Module *M, const std::string &Name) {
  Out.Modules.push_back({});
  Current = &Out.Modules.back();
  Current->M = M;
  Current->Name = Name;
  Globals.clear();
  Imports.clear();
  DefinedSoFar.clear();
  Frame Top;
  Top.Info = &M->Frame;
  Top.IsModule = true;
  Top.Blocks.emplace_back();
  F = &Top;
  predeclare(M);
  for (ast::Stmt *S : M->Body)
    stmt(S);
  F = nullptr;
}

void SemaImpl::block(ast::Block &B) {
  pushBlock();
  for (ast::Stmt *S : B.Stmts)
    stmt(S);
  popBlock();
}

void SemaImpl::fnBody(ast::FnStmt *Fn) {
  Frame Inner;
  Inner.Parent = F;
  Inner.Info = &Fn->Frame;
  Inner.InFunction = true;
  Inner.Blocks.emplace_back();
  Frame *Saved = F;
  F = &Inner;
  ++FnDepth;
  bool SeenDefault = false;
  for (ast::FnParam &P : Fn->Params) {
    if (P.Default) {
      SeenDefault = true;
      expr(P.Default);
    } else if (SeenDefault) {
      Diags.error(P.Range, "parameter '" + P.Name +
                               "' without a default follows one with a "
                               "default");
    }
    Symbol S;
    S.K = Symbol::FnParam;
    S.Decl = P.Range;
    S.Res = {ast::Resolution::Local, newLocal()};
    declareLocal(P.Name, S);
  }
  for (ast::Stmt *St : Fn->Body.Stmts)
    stmt(St);
  --FnDepth;
  F = Saved;
}

void SemaImpl::visit(ast::ScaleStmt *S) {
  Ty Target = expr(S->Target);
  expectSetLike(S->Target, Target, S->Shrink ? "shrink" : "scale");
  Ty Amount = expr(S->Amount);
  if (Amount.any() || Amount.is(TypeKind::Function))
    return;
  if (!Amount.is(TypeKind::Number)) {
    Diags.error(S->Amount->Range, std::string("expected ") +
                                      (S->To ? "a duration" : "a factor") +
                                      ", got " + describe(Amount));
    return;
  }
  if (S->To && Amount.D != Dim::duration())
    Diags.error(S->Amount->Range,
                "'" + std::string(S->Shrink ? "shrink" : "scale") +
                    " ... to' sets durations: expected a duration (like 5us), "
                    "got " +
                    describe(Amount));
  if (!S->To && !Amount.D.plain())
    Diags.error(S->Amount->Range, "'by' takes a plain factor, got " +
                                      describe(Amount) +
                                      (Amount.D == Dim::duration()
                                           ? " (to set durations write 'to')"
                                           : ""));
  if (!S->To)
    if (auto *N = dyn_cast<ast::NumberLit>(S->Amount))
      if (N->Value <= 0)
        Diags.error(S->Amount->Range, "the factor must be positive");
}

void SemaImpl::visit(ast::ParamStmt *P) {
  Ty T = expr(P->Default);
  if (!atModuleLevel()) {
    Diags.error(P->Range, "'param' belongs at the top level of a model");
    return;
  }
  auto &G = Globals[P->Name];
  G.Type = T;
  P->Global = G.Res.Index;
  DefinedSoFar[P->Name] = true;
  auto It = ParamIndex.find(P->Name);
  if (It != ParamIndex.end()) {
    ast::ParamStmt *Other = Out.Params[It->second];
    Diags.error(P->NameRange, "parameter '" + P->Name +
                                  "' is declared by two modules (--set "
                                  "would be ambiguous)");
    Diags.note(Other->NameRange, "also declared here");
    return;
  }
  ParamIndex[P->Name] = Out.Params.size();
  Out.Params.push_back(P);
}

void SemaImpl::visit(ast::ImportStmt *I) {
  if (!atModuleLevel()) {
    Diags.error(I->Range, "'import' belongs at the top level of a model");
    return;
  }
  if (I->Loaded == ~0u)
    return; // the loader reported it
  if (Globals.count(I->Alias) || Imports.count(I->Alias)) {
    Diags.error(I->ModuleRange, "'" + I->Alias +
                                    "' is already defined; import it with "
                                    "'as NAME'");
    return;
  }
  Imports[I->Alias] = I->Loaded;
}

void SemaImpl::visit(ast::LetStmt *L) {
  Ty T = expr(L->Value);
  // "let x = none" is a placeholder for a value assigned later.
  if (T.is(TypeKind::None))
    T = {};
  if (atModuleLevel()) {
    Symbol &G = Globals[L->Name];
    G.Type = T;
    L->Target = G.Res;
    DefinedSoFar[L->Name] = true;
    return;
  }
  Symbol Sym;
  Sym.K = Symbol::Let;
  Sym.Decl = L->NameRange;
  Sym.Type = T;
  Sym.Res = {ast::Resolution::Local, newLocal()};
  L->Target = Sym.Res;
  declareLocal(L->Name, Sym);
}

void SemaImpl::visit(ast::AssignStmt *A) {
  Ty T = expr(A->Value);
  ast::Resolution Res;
  Symbol Sym;
  const Symbol *Found = lookup(A->Target->Ident, Res, Sym);
  if (!Found) {
    Diags.error(A->Target->Range, "assignment to undefined '" +
                                      A->Target->Ident +
                                      "' (declare it with 'let')");
    return;
  }
  if (Found->K == Symbol::Param) {
    Diags.error(A->Target->Range, "cannot assign to parameter '" +
                                      A->Target->Ident +
                                      "' (parameters are set with --set)");
    return;
  }
  if (Found->K == Symbol::Function) {
    Diags.error(A->Target->Range,
                "cannot assign to function '" + A->Target->Ident + "'");
    return;
  }
  if (Res.K == ast::Resolution::Capture) {
    Diags.error(A->Target->Range,
                "cannot assign to '" + A->Target->Ident +
                    "' here: it belongs to an enclosing function (functions "
                    "see a copy)");
    return;
  }
  if (Res.K == ast::Resolution::Builtin) {
    Diags.error(A->Target->Range,
                "cannot assign to builtin '" + A->Target->Ident + "'");
    return;
  }
  A->Target->Res = Res;
  (void)T;
}

void SemaImpl::visit(ast::IfStmt *I) {
  expr(I->Cond);
  block(I->Then);
  if (I->HasElse)
    block(I->Else);
}

void SemaImpl::visit(ast::ForStmt *Fo) {
  Ty T = expr(Fo->Iterable);
  if (!T.any() && !T.is(TypeKind::List) && !T.is(TypeKind::Set) &&
      !T.is(TypeKind::Range) && !T.is(TypeKind::String) &&
      !T.is(TypeKind::BlockSet))
    Diags.error(Fo->Iterable->Range,
                "cannot loop over " + describe(T) +
                    " (loop over a list, a range, a task set, a block set "
                    "or a string)");
  pushBlock();
  Fo->IterSlot = newLocal();
  Symbol V;
  V.K = Symbol::LoopVar;
  V.Decl = Fo->VarRange;
  V.Res = {ast::Resolution::Local, newLocal()};
  if (T.is(TypeKind::Set))
    V.Type = Ty::of(TypeKind::Task);
  else if (T.is(TypeKind::BlockSet))
    V.Type = Ty::of(TypeKind::Block);
  else if (T.is(TypeKind::Range))
    V.Type = Ty::number();
  Fo->VarSlot = V.Res;
  declareLocal(Fo->Var, V);
  ++F->LoopDepth;
  for (ast::Stmt *St : Fo->Body.Stmts)
    stmt(St);
  --F->LoopDepth;
  popBlock();
}

void SemaImpl::visit(ast::TryStmt *S) { block(cast<ast::TryStmt>(S)->Body); }

void SemaImpl::visit(ast::LoopJumpStmt *S) {
  if (!F->LoopDepth)
    Diags.error(
        S->Range,
        std::string("'") +
            (cast<ast::LoopJumpStmt>(S)->isBreak() ? "break" : "continue") +
            "' outside a loop");
}

void SemaImpl::visit(ast::FnStmt *Fn) {
  if (atModuleLevel()) {
    Fn->Target = Globals[Fn->Name].Res;
    DefinedSoFar[Fn->Name] = true;
  } else {
    Symbol Sym;
    Sym.K = Symbol::Function;
    Sym.Fn = Fn;
    Sym.Decl = Fn->NameRange;
    Sym.Type = Ty::of(TypeKind::Function);
    Sym.Res = {ast::Resolution::Local, newLocal()};
    Fn->Target = Sym.Res;
    declareLocal(Fn->Name, Sym); // before the body: recursion works
  }
  fnBody(Fn);
}

void SemaImpl::visit(ast::ReturnStmt *R) {
  if (R->Value)
    expr(R->Value);
  if (!F->InFunction)
    Diags.error(R->Range, "'return' outside a function");
}

void SemaImpl::visit(ast::RemoveStmt *R) {
  expectSetLike(R->Target, expr(R->Target), "remove");
}

void SemaImpl::visit(ast::DependStmt *D) {
  expectSetLike(D->Waiter, expr(D->Waiter), "depend");
  expectSetLike(D->On, expr(D->On), "depend ... on");
}

void SemaImpl::visit(ast::ScheduleStmt *Sc) {
  Ty R = expr(Sc->Resource);
  if (!R.any() && !R.is(TypeKind::Resource))
    Diags.error(Sc->Resource->Range,
                "schedule takes a resource (a stream, a thread or a "
                "channel), got " +
                    describe(R));
  if (Sc->Priority) {
    Ty P = expr(Sc->Priority);
    if (!P.any() && !P.is(TypeKind::Function))
      Diags.error(Sc->Priority->Range,
                  "'schedule ... by' takes a function of a task (like "
                  "t -> t.layer.index), got " +
                      describe(P));
  } else if (Sc->Policy != "fifo" && Sc->Policy != "program") {
    Diags.error(Sc->PolicyRange, "unknown schedule '" + Sc->Policy +
                                     "' (use 'by PRIORITY', 'fifo' or "
                                     "'program')");
  }
}

void SemaImpl::visit(ast::PrintStmt *S) {
  for (ast::Expr *E : cast<ast::PrintStmt>(S)->Args)
    expr(E);
}

void SemaImpl::visit(ast::AssertStmt *A) {
  expr(A->Cond);
  if (A->Message)
    expr(A->Message);
}

void SemaImpl::visit(ast::ExprStmt *E) {
  expr(E->E);
  if (!llvm::isa<ast::Call>(E->E) && !llvm::isa<ast::Insert>(E->E) &&
      !llvm::isa<ast::Alloc>(E->E))
    Diags.warning(E->E->Range, "this expression's value is not used");
}

void SemaImpl::stmt(ast::Stmt *S) {
  switch (S->kind()) {
#define DD_STMT(Name)                                                          \
  case ast::StmtKind::Name:                                                    \
    return visit(cast<ast::Name>(S));
#include "syntax/AstNodes.def"
  }
}

bool sema::analyze(
    const std::vector<std::pair<ast::Module *, std::string>> &Modules,
    DiagEngine &Diags, ProgramInfo &Out) {
  unsigned Before = Diags.errorCount();
  SemaImpl S(Diags, Out);
  Out.Modules.reserve(Modules.size());
  for (auto &[M, Name] : Modules)
    S.module(M, Name);
  return Diags.errorCount() == Before;
}

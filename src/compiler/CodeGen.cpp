//===- CodeGen.cpp - Functions, emission helpers, statements --------------===//

#include "compiler/CodeGen.h"
#include "support/Work.h"

#include <cstring>
#include <utility>

using namespace dd;
using namespace dd::compiler;
using bc::Opcode;
using llvm::cast;
using llvm::dyn_cast;

void CodeGen::mark(SourceRange R) {
  auto &Lines = fn().Lines;
  if (!Lines.empty() && Lines.back().Pc == pc()) {
    Lines.back().Range = R;
    return;
  }
  Lines.push_back({pc(), R});
}

void CodeGen::op(Opcode Op) { fn().Code.push_back(static_cast<uint8_t>(Op)); }

void CodeGen::u8(unsigned V) { fn().Code.push_back(static_cast<uint8_t>(V)); }

void CodeGen::u16(unsigned V, SourceRange R) {
  if (V > 0xFFFF) {
    Diags.error(R, "the model is too large (over 65,535 constants, locals or "
                   "globals)");
    V = 0;
  }
  fn().Code.push_back(static_cast<uint8_t>(V & 0xFF));
  fn().Code.push_back(static_cast<uint8_t>(V >> 8));
}

void CodeGen::i32(int32_t V) {
  uint8_t B[4];
  std::memcpy(B, &V, 4);
  fn().Code.insert(fn().Code.end(), B, B + 4);
}

uint32_t CodeGen::jump(Opcode Op, int Slot) {
  op(Op);
  if (Slot >= 0)
    u16(static_cast<unsigned>(Slot), {});
  uint32_t At = pc();
  i32(0);
  return At;
}

void CodeGen::patch(uint32_t At) {
  int32_t Off = static_cast<int32_t>(pc() - (At + 4));
  std::memcpy(&fn().Code[At], &Off, 4);
}

void CodeGen::loop(Opcode Op, uint32_t Target, int Slot) {
  op(Op);
  if (Slot >= 0)
    u16(static_cast<unsigned>(Slot), {});
  i32(static_cast<int32_t>(Target) - static_cast<int32_t>(pc() + 4));
}

uint16_t CodeGen::constant(std::optional<std::string> Key, SourceRange R,
                           const bc::Constant &C) {
  if (ConstIndex.size() <= Fn)
    ConstIndex.resize(Fn + 1);
  auto &Index = ConstIndex[Fn];
  work::add(work::Counter::CompileConstants, 1);
  if (Key)
    if (auto It = Index.find(*Key); It != Index.end())
      return It->second;
  auto &Cs = fn().Constants;
  Cs.push_back(C);
  if (Cs.size() > 0xFFFF)
    Diags.error(R, "too many constants in one function");
  auto At = static_cast<uint16_t>(Cs.size() - 1);
  if (Key)
    Index.emplace(std::move(*Key), At);
  return At;
}

uint16_t CodeGen::constNumber(double V, Dim D, SourceRange R) {
  bc::Constant C;
  C.K = bc::Constant::Number;
  C.Num = V;
  C.D = D;
  // Equal numbers share a constant (0 and -0 too); a NaN equals nothing.
  if (V != V)
    return constant(std::nullopt, R, C);
  double Key = V == 0 ? 0.0 : V;
  std::string K(1, 'n');
  K.append(reinterpret_cast<const char *>(&Key), sizeof Key);
  K += static_cast<char>(D.Bytes);
  K += static_cast<char>(D.Time);
  return constant(std::move(K), R, C);
}

uint16_t CodeGen::constString(const std::string &S, SourceRange R,
                              bc::Constant::Kind K) {
  bc::Constant C;
  C.K = K;
  C.Str = S;
  std::string Key(1, static_cast<char>('a' + static_cast<int>(K)));
  Key += S;
  return constant(std::move(Key), R, C);
}

uint32_t CodeGen::newFunction(std::string Name, SourceRange R) {
  bc::Function F;
  F.Name = std::move(Name);
  F.Range = R;
  P.Functions.push_back(std::move(F));
  return static_cast<uint32_t>(P.Functions.size() - 1);
}

void CodeGen::load(const ast::Resolution &Res, SourceRange R) {
  switch (Res.K) {
  case ast::Resolution::Local:
    op(Opcode::LoadLocal);
    u16(Res.Index, R);
    return;
  case ast::Resolution::Capture:
    op(Opcode::LoadCapture);
    u16(Res.Index, R);
    return;
  case ast::Resolution::Global:
    op(Opcode::LoadGlobal);
    u16(Res.Index, R);
    return;
  default:
    Diags.error(R, "internal error: cannot load this name");
    op(Opcode::PushNone);
  }
}

void CodeGen::store(const ast::Resolution &Res, SourceRange R) {
  switch (Res.K) {
  case ast::Resolution::Local:
    op(Opcode::StoreLocal);
    u16(Res.Index, R);
    return;
  case ast::Resolution::Global:
    op(Opcode::StoreGlobal);
    u16(Res.Index, R);
    return;
  default:
    Diags.error(R, "internal error: cannot store to this name");
    op(Opcode::Pop);
  }
}

void CodeGen::closure(uint32_t Index, const ast::FrameInfo &Frame,
                      SourceRange R) {
  for (const ast::Resolution &C : Frame.Captures)
    load(C, R);
  mark(R);
  op(Opcode::MakeClosure);
  u16(Index, R);
  u8(static_cast<unsigned>(Frame.Captures.size()));
}

void CodeGen::function(ast::FnStmt *F) {
  uint32_t Saved = Fn;
  unsigned SavedTries = std::exchange(Tries, 0);
  std::vector<Loop> SavedLoops = std::exchange(Loops, {});
  uint32_t Index = newFunction(F->Name, F->Range);
  Fn = Index;
  bc::Function &Out = fn();
  Out.NumParams = static_cast<uint16_t>(F->Params.size());
  for (const ast::FnParam &Pm : F->Params)
    if (!Pm.Default)
      ++Out.RequiredParams;
  Out.NumLocals = static_cast<uint16_t>(F->Frame.NumLocals);
  Out.NumCaptures = static_cast<uint16_t>(F->Frame.Captures.size());
  // Defaults of parameters the caller left out.
  for (size_t I = 0; I < F->Params.size(); ++I) {
    if (!F->Params[I].Default)
      continue;
    uint32_t Skip = jump(Opcode::JumpIfPresent, static_cast<int>(I));
    expr(F->Params[I].Default);
    op(Opcode::StoreLocal);
    u16(static_cast<unsigned>(I), F->Params[I].Range);
    patch(Skip);
  }
  block(F->Body);
  op(Opcode::PushNone);
  op(Opcode::Return);
  Fn = Saved;
  Tries = SavedTries;
  Loops = std::move(SavedLoops);
  closure(Index, F->Frame, F->NameRange);
  store(F->Target, F->NameRange);
}

void CodeGen::lambda(ast::Lambda *L) {
  uint32_t Saved = Fn;
  uint32_t Index = newFunction("lambda", L->Range);
  Fn = Index;
  fn().NumParams = fn().RequiredParams =
      static_cast<uint16_t>(L->Params.size());
  fn().NumLocals = static_cast<uint16_t>(L->Frame.NumLocals);
  fn().NumCaptures = static_cast<uint16_t>(L->Frame.Captures.size());
  expr(L->Body);
  op(Opcode::Return);
  Fn = Saved;
  closure(Index, L->Frame, L->Range);
}

void CodeGen::block(const ast::Block &B) {
  for (ast::Stmt *S : B.Stmts)
    stmt(S);
}

void CodeGen::visit(ast::ParamStmt *Pm) {
  expr(Pm->Default);
  uint32_t Index = 0;
  for (; Index < P.Params.size(); ++Index)
    if (P.Params[Index].Name == Pm->Name)
      break;
  mark(Pm->Range);
  op(Opcode::Param);
  u16(Index, Pm->Range);
}

void CodeGen::visit(ast::ImportStmt *S) {
  // Nothing here: imported modules run first, in InitOrder.
}

void CodeGen::visit(ast::LetStmt *L) {
  expr(L->Value);
  store(L->Target, L->NameRange);
}

void CodeGen::visit(ast::AssignStmt *A) {
  expr(A->Value);
  store(A->Target->Res, A->Target->Range);
}

void CodeGen::visit(ast::IfStmt *I) {
  expr(I->Cond);
  mark(I->Cond->Range);
  uint32_t Else = jump(Opcode::JumpIfFalse);
  block(I->Then);
  if (!I->HasElse) {
    patch(Else);
    return;
  }
  uint32_t End = jump(Opcode::Jump);
  patch(Else);
  block(I->Else);
  patch(End);
}

void CodeGen::visit(ast::ForStmt *F) {
  expr(F->Iterable);
  mark(F->Iterable->Range);
  op(Opcode::IterInit);
  u16(F->IterSlot, F->Range);
  uint32_t Top = pc();
  uint32_t Exit = jump(Opcode::IterNext, static_cast<int>(F->IterSlot));
  store(F->VarSlot, F->VarRange);
  Loops.push_back({Top, {}, Tries});
  block(F->Body);
  loop(Opcode::Jump, Top);
  patch(Exit);
  for (uint32_t Break : Loops.back().Breaks)
    patch(Break);
  Loops.pop_back();
}

void CodeGen::visit(ast::LoopJumpStmt *S) {
  mark(S->Range);
  leaveTries(Loops.back().Tries);
  if (S->isBreak())
    Loops.back().Breaks.push_back(jump(Opcode::Jump));
  else
    loop(Opcode::Jump, Loops.back().Top);
}

void CodeGen::visit(ast::TryStmt *S) {
  mark(S->Range);
  op(Opcode::TryBegin);
  ++Tries;
  block(cast<ast::TryStmt>(S)->Body);
  --Tries;
  op(Opcode::TryEnd);
}

void CodeGen::visit(ast::FnStmt *S) { function(cast<ast::FnStmt>(S)); }

void CodeGen::visit(ast::ReturnStmt *R) {
  if (R->Value)
    expr(R->Value);
  else
    op(Opcode::PushNone);
  leaveTries(0);
  op(Opcode::Return);
}

void CodeGen::visit(ast::ScaleStmt *Sc) {
  expr(Sc->Target);
  expr(Sc->Amount);
  mark(Sc->Range);
  op(Opcode::Scale);
  u8(Sc->To ? 2 : Sc->Shrink ? 1 : 0);
}

void CodeGen::visit(ast::RemoveStmt *S) {
  expr(cast<ast::RemoveStmt>(S)->Target);
  mark(S->Range);
  op(Opcode::Remove);
}

void CodeGen::visit(ast::ResizeStmt *Rs) {
  expr(Rs->Target);
  expr(Rs->Amount);
  mark(Rs->Range);
  op(Opcode::Resize);
  u8(Rs->To ? 1 : 0);
}

void CodeGen::visit(ast::FreeStmt *F) {
  expr(F->Target);
  expr(F->At);
  uint8_t Bits = F->AtEnd ? bc::AtEnd : 0;
  if (F->Until) {
    expr(F->Until);
    Bits |= bc::HasUntil;
  }
  mark(F->Range);
  op(Opcode::Free);
  u8(Bits);
}

void CodeGen::visit(ast::OffloadStmt *O) {
  expr(O->Target);
  expr(O->After);
  uint8_t Bits = bc::AtEnd;
  auto Clause = [&](ast::Expr *E, uint8_t Bit) {
    if (!E)
      return;
    expr(E);
    Bits |= Bit;
  };
  Clause(O->On, bc::HasOn);
  Clause(O->Bandwidth, bc::HasBandwidth);
  Clause(O->PrefetchAfter, bc::HasPrefetchAfter);
  Clause(O->PrefetchBefore, bc::HasPrefetchBefore);
  Clause(O->PrefetchOn, bc::HasPrefetchOn);
  mark(O->Range);
  op(Opcode::Offload);
  u8(Bits);
}

void CodeGen::visit(ast::DependStmt *D) {
  expr(D->Waiter);
  expr(D->On);
  mark(D->Range);
  op(Opcode::Depend);
}

void CodeGen::visit(ast::ScheduleStmt *Sc) {
  if (Sc->Priority)
    expr(Sc->Priority);
  expr(Sc->Resource);
  mark(Sc->Range);
  op(Opcode::Schedule);
  u8(Sc->Priority ? 0 : Sc->Policy == "fifo" ? 1 : 2);
}

void CodeGen::visit(ast::PrintStmt *Pr) {
  for (ast::Expr *E : Pr->Args)
    expr(E);
  mark(Pr->Range);
  op(Opcode::Print);
  u8(static_cast<unsigned>(Pr->Args.size()));
}

void CodeGen::visit(ast::AssertStmt *A) {
  expr(A->Cond);
  if (A->Message)
    expr(A->Message);
  mark(A->Range);
  op(Opcode::Assert);
  u8(A->Message ? 1 : 0);
}

void CodeGen::visit(ast::ExprStmt *S) {
  expr(cast<ast::ExprStmt>(S)->E);
  op(Opcode::Pop);
}

void CodeGen::stmt(ast::Stmt *S) {
  switch (S->kind()) {
#define DD_STMT(Name)                                                          \
  case ast::StmtKind::Name:                                                    \
    return visit(cast<ast::Name>(S));
#include "syntax/AstNodes.def"
  }
  Diags.error(S->Range, "internal error: cannot compile this statement");
}

void CodeGen::moduleInit(const sema::ModuleInfo &M) {
  uint32_t Index = newFunction("<module " + M.Name + ">", {M.M->Buffer, 0, 0});
  Fn = Index;
  fn().NumLocals = static_cast<uint16_t>(M.M->Frame.NumLocals);
  for (ast::Stmt *S : M.M->Body)
    stmt(S);
  op(Opcode::PushNone);
  op(Opcode::Return);
  P.InitOrder.push_back(Index);
}

void CodeGen::program() {
  P.GlobalNames = Info.GlobalNames;
  for (ast::ParamStmt *Pm : Info.Params) {
    bc::ParamInfo I;
    I.Name = Pm->Name;
    I.Doc = Pm->Doc;
    I.Global = static_cast<uint16_t>(Pm->Global);
    I.Range = Pm->Range;
    if (auto *N = dyn_cast<ast::NumberLit>(Pm->Default)) {
      I.LiteralDefault = true;
      I.Default.K = bc::Constant::Number;
      I.Default.Num = N->Value;
      I.Default.D = N->D;
    } else if (auto *S = dyn_cast<ast::StringLit>(Pm->Default)) {
      I.LiteralDefault = true;
      I.Default.K = bc::Constant::String;
      I.Default.Str = S->Value;
    } else if (auto *B = dyn_cast<ast::BoolLit>(Pm->Default)) {
      I.BoolDefault = true;
      I.Default.K = bc::Constant::String;
      I.Default.Str = B->Value ? "true" : "false";
    }
    P.Params.push_back(std::move(I));
  }
  for (size_t I = 0; I < Info.Modules.size(); ++I)
    for (bc::ParamInfo &Pm : P.Params)
      if (Pm.Range.Buffer == Info.Modules[I].M->Buffer)
        Pm.Module = Info.Modules[I].Name;
  for (const sema::ModuleInfo &M : Info.Modules)
    moduleInit(M);
}

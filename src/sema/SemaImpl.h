//===- SemaImpl.h - Sema's private state ------------------------*- C++ -*-===//
#ifndef DD_SEMA_SEMAIMPL_H
#define DD_SEMA_SEMAIMPL_H

#include "bytecode/Bytecode.h"
#include "sema/Sema.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dd::sema {

/// What Sema knows statically about a value.
struct Ty {
  bc::TypeKind K = bc::TypeKind::Any;
  Dim D;
  bool any() const { return K == bc::TypeKind::Any; }
  bool is(bc::TypeKind T) const { return K == T; }
  static Ty of(bc::TypeKind T, Dim D = {}) { return {T, D}; }
  static Ty number(Dim D = {}) { return {bc::TypeKind::Number, D}; }
};

/// "a duration", "a task set", ...
std::string describe(Ty T);

struct Symbol {
  enum Kind : uint8_t { Let, Param, Function, LoopVar, FnParam } K = Let;
  ast::Resolution Res;
  Ty Type;
  SourceRange Decl;
  ast::FnStmt *Fn = nullptr; ///< for Fn symbols: arity checks
};

/// A function being analysed (module top level, fn, lambda).
struct Frame {
  Frame *Parent = nullptr;
  ast::FrameInfo *Info = nullptr;
  bool IsModule = false;
  std::vector<std::map<std::string, Symbol>> Blocks;
  /// Resolution in Parent -> capture index here.
  std::vector<std::pair<ast::Resolution, uint32_t>> CaptureOf;
  bool InFunction = false; ///< return is allowed
  unsigned LoopDepth = 0;  ///< for loops around here: break is allowed
};

class SemaImpl {
public:
  SemaImpl(DiagEngine &Diags, ProgramInfo &Out) : Diags(Diags), Out(Out) {}
  void module(ast::Module *M, const std::string &Name);

private:
  DiagEngine &Diags;
  ProgramInfo &Out;
  ModuleInfo *Current = nullptr;
  std::map<std::string, Symbol> Globals;    ///< this module's
  std::map<std::string, uint32_t> Imports;  ///< alias -> module index
  std::map<std::string, size_t> ParamIndex; ///< across modules
  Frame *F = nullptr;
  /// Top-level globals defined so far (module code cannot read later ones).
  std::map<std::string, bool> DefinedSoFar;
  bool InPredicate = false;
  /// What a predicate's bare names are properties of: Task or Block.
  bc::TypeKind PredOwner = bc::TypeKind::Task;
  unsigned FnDepth = 0;

  // Declarations and scopes (Sema.cpp).
  void predeclare(ast::Module *M);
  uint32_t newGlobal(const std::string &Name);
  uint32_t newLocal();
  void declareLocal(const std::string &Name, Symbol S);
  std::optional<ast::Resolution> lookupIn(Frame *Fr, const std::string &Name,
                                          Symbol *Found);
  const Symbol *lookup(const std::string &Name, ast::Resolution &Res,
                       Symbol &Copy);
  void pushBlock() { F->Blocks.emplace_back(); }
  void popBlock() { F->Blocks.pop_back(); }
  bool atModuleLevel() const { return F->IsModule && F->Blocks.size() == 1; }

  // Statements (Sema.cpp).
  void stmt(ast::Stmt *S);
  // One per statement kind: stmt calls the one of its node's class.
  void visit(ast::ParamStmt *P);
  void visit(ast::ImportStmt *I);
  void visit(ast::LetStmt *L);
  void visit(ast::AssignStmt *A);
  void visit(ast::IfStmt *I);
  void visit(ast::ForStmt *Fo);
  void visit(ast::TryStmt *S);
  void visit(ast::LoopJumpStmt *S);
  void visit(ast::FnStmt *Fn);
  void visit(ast::ReturnStmt *R);
  void visit(ast::RemoveStmt *R);
  void visit(ast::DependStmt *D);
  void visit(ast::ScheduleStmt *Sc);
  void visit(ast::PrintStmt *S);
  void visit(ast::AssertStmt *A);
  void visit(ast::ExprStmt *E);
  void block(ast::Block &B);
  void fnBody(ast::FnStmt *Fn);
  void visit(ast::ScaleStmt *S);

  // Memory statements and alloc (SemaMemory.cpp).
  void visit(ast::ResizeStmt *S);
  void visit(ast::FreeStmt *S);
  void visit(ast::OffloadStmt *S);
  Ty alloc(ast::Alloc *A);
  /// |, &, + and - on block sets; nullopt when neither side is blocks.
  std::optional<Ty> blockSetOp(ast::Binary *B, Ty L, Ty R);
  /// False (after an error) for a string property compared, in a predicate,
  /// with a value it can never equal.
  bool propertyComparable(ast::Binary *B, Ty L, Ty R);
  void expectBlocks(ast::Expr *E, Ty T, const char *Role);
  /// A task point of a memory statement: a task, or (\p PerBlock) a
  /// function of a block.
  void expectTaskPoint(ast::Expr *E, const char *Clause, bool PerBlock = true);

  // Expressions (SemaExpr.cpp).
  Ty expr(ast::Expr *E);
  Ty name(ast::Name *N);
  Ty member(ast::Member *M, bool Called);
  Ty call(ast::Call *C);
  Ty binary(ast::Binary *B);
  Ty lambda(ast::Lambda *L);
  Ty select(ast::Select *S);
  Ty insert(ast::Insert *I);
  void checkArity(ast::Call *C, const std::string &What, unsigned Min,
                  unsigned Max, const std::vector<std::string> &Params);
  void expectSetLike(ast::Expr *E, Ty T, const char *Role);
  void expectNumber(ast::Expr *E, Ty T, Dim D, const char *Role);

  // Select predicates (SemaPredicate.cpp).
  enum class PredShape { Mask, Column, Capture, Invalid };
  PredShape predicate(ast::Expr *E);
  void checkPropertyConstant(ast::Expr *Prop, ast::Expr *Const);
};

} // namespace dd::sema

#endif

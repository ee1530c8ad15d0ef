//===- CodeGen.h - AST to bytecode (private) --------------------*- C++ -*-===//
#ifndef DD_COMPILER_CODEGEN_H
#define DD_COMPILER_CODEGEN_H

#include "bytecode/Bytecode.h"
#include "sema/Sema.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dd::compiler {

/// Resolution indexes Sema gives builtin values.
constexpr uint32_t BuiltinValueBase = 0x8000;
constexpr uint32_t PhaseConstBase = 0x4000;

class CodeGen {
public:
  CodeGen(const sema::ProgramInfo &Info, bc::Program &P, DiagEngine &Diags,
          const SourceManager &SM)
      : Info(Info), P(P), Diags(Diags), SM(SM) {}
  void program();

private:
  const sema::ProgramInfo &Info;
  bc::Program &P;
  DiagEngine &Diags;
  const SourceManager &SM;
  uint32_t Fn = 0; ///< index of the function being emitted
  /// The for loops being emitted, innermost last: where continue goes and
  /// the jumps break leaves to patch. Sema keeps break and continue inside
  /// a loop of their own function, so the innermost is always theirs.
  struct Loop {
    uint32_t Top;
    std::vector<uint32_t> Breaks;
    unsigned Tries; ///< try blocks open where the loop starts
  };
  std::vector<Loop> Loops;
  /// try blocks open in the function being emitted: break, continue and
  /// return undo those they leave (TryEnd) before they jump.
  unsigned Tries = 0;
  void leaveTries(unsigned Down) {
    for (unsigned I = Tries; I > Down; --I)
      op(bc::Opcode::TryEnd);
  }

  bc::Function &fn() { return P.Functions[Fn]; }
  uint32_t pc() { return static_cast<uint32_t>(fn().Code.size()); }
  void mark(SourceRange R);
  void op(bc::Opcode Op);
  void u8(unsigned V);
  void u16(unsigned V, SourceRange R);
  void i32(int32_t V);
  /// Emits a jump with a placeholder; returns the offset to patch.
  uint32_t jump(bc::Opcode Op, int Slot = -1);
  void patch(uint32_t At); ///< make the jump at At land here
  void loop(bc::Opcode Op, uint32_t Target, int Slot = -1);
  /// Per function: its constants by key (kind, value, unit), so that each
  /// is found in one lookup, not a scan of those before it (280,000 `let`s
  /// took 128 s to refuse).
  std::vector<std::unordered_map<std::string, uint16_t>> ConstIndex;
  /// The index of the constant of \p Key in the function being emitted, else
  /// of \p C, added; without a key (a NaN, equal to nothing) \p C is added.
  uint16_t constant(std::optional<std::string> Key, SourceRange R,
                    const bc::Constant &C);
  uint16_t constNumber(double V, Dim D, SourceRange R);
  uint16_t constString(const std::string &S, SourceRange R,
                       bc::Constant::Kind K = bc::Constant::String);

  uint32_t newFunction(std::string Name, SourceRange R);
  void moduleInit(const sema::ModuleInfo &M);
  void function(ast::FnStmt *F);
  void lambda(ast::Lambda *L);
  void closure(uint32_t Index, const ast::FrameInfo &Frame, SourceRange R);
  void load(const ast::Resolution &Res, SourceRange R);
  void store(const ast::Resolution &Res, SourceRange R);

  void stmt(ast::Stmt *S);
  // One per statement kind: stmt calls the one of its node's class.
  void visit(ast::ParamStmt *Pm);
  void visit(ast::ImportStmt *S);
  void visit(ast::LetStmt *L);
  void visit(ast::AssignStmt *A);
  void visit(ast::IfStmt *I);
  void visit(ast::ForStmt *F);
  void visit(ast::LoopJumpStmt *S);
  void visit(ast::TryStmt *S);
  void visit(ast::FnStmt *S);
  void visit(ast::ReturnStmt *R);
  void visit(ast::ScaleStmt *Sc);
  void visit(ast::RemoveStmt *S);
  void visit(ast::ResizeStmt *Rs);
  void visit(ast::FreeStmt *F);
  void visit(ast::OffloadStmt *O);
  void visit(ast::DependStmt *D);
  void visit(ast::ScheduleStmt *Sc);
  void visit(ast::PrintStmt *Pr);
  void visit(ast::AssertStmt *A);
  void visit(ast::ExprStmt *S);
  void block(const ast::Block &B);
  void expr(ast::Expr *E);
  void call(ast::Call *C);
  void binary(ast::Binary *B);
  void select(ast::Select *S);
  void insert(ast::Insert *I);
  void alloc(ast::Alloc *A);

  // Select predicates (CodeGenFilter.cpp).
  struct FilterBuilder {
    bc::FilterProgram Program;
    std::vector<ast::Expr *> Captures;
  };
  uint16_t filterNode(FilterBuilder &B, ast::Expr *E);
  uint16_t filterMask(FilterBuilder &B, ast::Expr *E);
};

} // namespace dd::compiler

#endif

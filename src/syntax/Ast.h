//===- Ast.h - The .dd abstract syntax tree ---------------------*- C++ -*-===//
//
// ddscript's own AST: every node has a Kind (for LLVM-style isa/dyn_cast) and
// a SourceRange. Nodes are owned by an AstContext and never freed one by one.
// Sema fills in the resolution fields; the compiler reads them. Nothing below
// src/compiler sees this header (the VM works on bytecode only).
//
//===----------------------------------------------------------------------===//
#ifndef DD_SYNTAX_AST_H
#define DD_SYNTAX_AST_H

#include "support/SourceManager.h"
#include "support/Units.h"

#include "llvm/Support/Casting.h"

#include <memory>
#include <string>
#include <vector>

namespace dd::ast {

/// Every node kind, expressions first (AstNodes.def).
enum class NodeKind : uint8_t {
#define DD_EXPR(Name) Name,
#define DD_STMT(Name) Name,
#include "syntax/AstNodes.def"
};
/// The expression kinds alone, in NodeKind's order and values: switch over
/// Expr::kind() to handle every expression, without `default:`.
enum class ExprKind : uint8_t {
#define DD_EXPR(Name) Name,
#include "syntax/AstNodes.def"
};
/// The statement kinds alone (Stmt::kind()), in NodeKind's order.
enum class StmtKind : uint8_t {
#define DD_STMT(Name) Name,
#include "syntax/AstNodes.def"
};
constexpr unsigned NumExprKinds = 0
#define DD_EXPR(Name) +1
#include "syntax/AstNodes.def"
    ;

struct Node {
  NodeKind Kind;
  SourceRange Range;
  explicit Node(NodeKind K, SourceRange R) : Kind(K), Range(R) {}
  virtual ~Node() = default;
};

// --- Expressions ------------------------------------------------------------

struct Expr : Node {
  using Node::Node;
  ExprKind kind() const { return static_cast<ExprKind>(Kind); }
  static bool classof(const Node *N) {
    return static_cast<unsigned>(N->Kind) < NumExprKinds;
  }
};

struct NumberLit : Expr {
  double Value; ///< in base units (ns, bytes, bytes/ns)
  Dim D;
  NumberLit(SourceRange R, double V, Dim D)
      : Expr(NodeKind::NumberLit, R), Value(V), D(D) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::NumberLit; }
};

struct StringLit : Expr {
  std::string Value;
  StringLit(SourceRange R, std::string V)
      : Expr(NodeKind::StringLit, R), Value(std::move(V)) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::StringLit; }
};

struct RegexLit : Expr {
  std::string Pattern;
  RegexLit(SourceRange R, std::string P)
      : Expr(NodeKind::RegexLit, R), Pattern(std::move(P)) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::RegexLit; }
};

struct BoolLit : Expr {
  bool Value;
  BoolLit(SourceRange R, bool V) : Expr(NodeKind::BoolLit, R), Value(V) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::BoolLit; }
};

struct NoneLit : Expr {
  explicit NoneLit(SourceRange R) : Expr(NodeKind::NoneLit, R) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::NoneLit; }
};

struct ListLit : Expr {
  std::vector<Expr *> Elements;
  explicit ListLit(SourceRange R) : Expr(NodeKind::ListLit, R) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::ListLit; }
};

/// What a name refers to, filled in by Sema.
struct Resolution {
  enum Kind : uint8_t {
    Unresolved,
    Local,    ///< a slot of the current function's frame
    Capture,  ///< a value captured by the enclosing lambda/function
    Global,   ///< a global slot (module-level let/param/fn)
    Builtin,  ///< a builtin function or value
    Property, ///< a task property inside a select predicate
  };
  Kind K = Unresolved;
  uint32_t Index = 0;
};

struct Name : Expr {
  std::string Ident;
  Resolution Res;
  Name(SourceRange R, std::string I)
      : Expr(NodeKind::Name, R), Ident(std::move(I)) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Name; }
};

struct Member : Expr {
  Expr *Object;
  std::string Field;
  SourceRange FieldRange;
  /// Sema: when Object names an imported module, the member's global slot.
  Resolution Res;
  Member(SourceRange R, Expr *O, std::string F, SourceRange FR)
      : Expr(NodeKind::Member, R), Object(O), Field(std::move(F)),
        FieldRange(FR) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Member; }
};

struct Argument {
  std::string Name; ///< empty for a positional argument
  SourceRange NameRange;
  Expr *Value;
};

struct Call : Expr {
  Expr *Callee;
  std::vector<Argument> Args;
  /// Sema: for callees known at compile time, the arguments in parameter
  /// order with named ones placed; null where an optional one is missing.
  std::vector<Expr *> Positional;
  bool Reordered = false;
  Call(SourceRange R, Expr *C) : Expr(NodeKind::Call, R), Callee(C) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Call; }
};

/// xs[lo:hi], either bound optional: the items from lo up to (not
/// including) hi, negative bounds counting from the end, clamped as Python
/// clamps them.
struct Slice : Expr {
  Expr *Object;
  Expr *Lo, *Hi; ///< null when left out
  Slice(SourceRange R, Expr *O, Expr *L, Expr *H)
      : Expr(NodeKind::Slice, R), Object(O), Lo(L), Hi(H) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Slice; }
};

struct Index : Expr {
  Expr *Object, *Key;
  Index(SourceRange R, Expr *O, Expr *K)
      : Expr(NodeKind::Index, R), Object(O), Key(K) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Index; }
};

enum class UnaryOp : uint8_t { Not, Neg };

struct Unary : Expr {
  UnaryOp Op;
  Expr *Operand;
  Unary(SourceRange R, UnaryOp O, Expr *E)
      : Expr(NodeKind::Unary, R), Op(O), Operand(E) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Unary; }
};

enum class BinaryOp : uint8_t {
  Or,
  And,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Match,
  NoMatch,
  In,
  Union,
  Intersect,
  Add,
  Sub,
  Mul,
  Div,
  Mod
};
const char *binaryOpSpelling(BinaryOp Op);

struct Binary : Expr {
  BinaryOp Op;
  Expr *Lhs, *Rhs;
  SourceRange OpRange;
  Binary(SourceRange R, BinaryOp O, Expr *L, Expr *Rh, SourceRange OR)
      : Expr(NodeKind::Binary, R), Op(O), Lhs(L), Rhs(Rh), OpRange(OR) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Binary; }
};

/// a..b, inclusive.
struct Range : Expr {
  Expr *Lo, *Hi;
  Range(SourceRange R, Expr *L, Expr *H)
      : Expr(NodeKind::Range, R), Lo(L), Hi(H) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Range; }
};

struct Block;

/// What a function body needs at run time, filled in by Sema.
struct FrameInfo {
  uint32_t NumLocals = 0; ///< slots, parameters first
  /// The enclosing function's variables this function captures, in order:
  /// each is a resolution in the enclosing frame.
  std::vector<Resolution> Captures;
};

struct Lambda : Expr {
  std::vector<std::string> Params;
  Expr *Body;
  FrameInfo Frame;
  Lambda(SourceRange R, std::vector<std::string> P, Expr *B)
      : Expr(NodeKind::Lambda, R), Params(std::move(P)), Body(B) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Lambda; }
};

/// select KIND[, KIND...] [where PREDICATE]
struct Select : Expr {
  std::vector<std::string> Kinds;
  std::vector<SourceRange> KindRanges;
  Expr *Where = nullptr; ///< names of task properties resolve to Property
  explicit Select(SourceRange R) : Expr(NodeKind::Select, R) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Select; }
};

/// insert KIND "name" on R duration D bytes B after X before Y
struct Insert : Expr {
  std::string TaskKind;
  SourceRange KindRange;
  std::string TaskName;
  Expr *On = nullptr, *Duration = nullptr, *Bytes = nullptr, *After = nullptr,
       *Before = nullptr;
  explicit Insert(SourceRange R) : Expr(NodeKind::Insert, R) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Insert; }
};

/// alloc SIZE after|before T [until|through T2] [on DEVICE]: a new memory
/// block, allocated at the end (after) or start (before) of T and freed at
/// the start (until) or end (through) of T2, or never.
struct Alloc : Expr {
  Expr *Size;
  Expr *At = nullptr;
  bool AtEnd = true;
  Expr *Free = nullptr;
  bool FreeAtEnd = false;
  Expr *Device = nullptr;
  Alloc(SourceRange R, Expr *S) : Expr(NodeKind::Alloc, R), Size(S) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Alloc; }
};

/// channel "name": a communication channel resource.
struct Channel : Expr {
  std::string ChannelName;
  Channel(SourceRange R, std::string N)
      : Expr(NodeKind::Channel, R), ChannelName(std::move(N)) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::Channel; }
};

// --- Statements -------------------------------------------------------------

struct Stmt : Node {
  using Node::Node;
  StmtKind kind() const {
    return static_cast<StmtKind>(static_cast<unsigned>(Kind) - NumExprKinds);
  }
  static bool classof(const Node *N) {
    return static_cast<unsigned>(N->Kind) >= NumExprKinds;
  }
};

struct Block {
  std::vector<Stmt *> Stmts;
  SourceRange Range;
};

struct ParamStmt : Stmt {
  std::string Name;
  SourceRange NameRange;
  Expr *Default;
  std::string Doc;
  uint32_t Global = 0; ///< Sema
  ParamStmt(SourceRange R, std::string N, SourceRange NR, Expr *D)
      : Stmt(NodeKind::ParamStmt, R), Name(std::move(N)), NameRange(NR),
        Default(D) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::ParamStmt; }
};

struct ImportStmt : Stmt {
  std::string Module;  ///< "std.comm", or a path for a string import
  bool IsPath = false; ///< import "file.dd"
  std::string Alias;   ///< the name it binds
  SourceRange ModuleRange;
  uint32_t Loaded = ~0u; ///< Sema/loader: index of the loaded module
  ImportStmt(SourceRange R) : Stmt(NodeKind::ImportStmt, R) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::ImportStmt; }
};

struct LetStmt : Stmt {
  std::string Name;
  SourceRange NameRange;
  Expr *Value;
  Resolution Target; ///< Sema: where the value is stored
  LetStmt(SourceRange R, std::string N, SourceRange NR, Expr *V)
      : Stmt(NodeKind::LetStmt, R), Name(std::move(N)), NameRange(NR),
        Value(V) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::LetStmt; }
};

struct AssignStmt : Stmt {
  Name *Target;
  Expr *Value;
  AssignStmt(SourceRange R, Name *T, Expr *V)
      : Stmt(NodeKind::AssignStmt, R), Target(T), Value(V) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::AssignStmt; }
};

struct IfStmt : Stmt {
  Expr *Cond;
  Block Then;
  Block Else; ///< empty when absent; an else-if is an IfStmt inside it
  bool HasElse = false;
  IfStmt(SourceRange R, Expr *C) : Stmt(NodeKind::IfStmt, R), Cond(C) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::IfStmt; }
};

struct ForStmt : Stmt {
  std::string Var;
  SourceRange VarRange;
  Expr *Iterable;
  Block Body;
  Resolution VarSlot;    ///< Sema
  uint32_t IterSlot = 0; ///< Sema: hidden local holding the iterator
  ForStmt(SourceRange R, std::string V, SourceRange VR, Expr *I)
      : Stmt(NodeKind::ForStmt, R), Var(std::move(V)), VarRange(VR),
        Iterable(I) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::ForStmt; }
};

/// break | continue: leave the innermost for loop, or go on to its next item.
struct LoopJumpStmt : Stmt {
  LoopJumpStmt(NodeKind K, SourceRange R) : Stmt(K, R) {}
  bool isBreak() const { return Kind == NodeKind::BreakStmt; }
  static bool classof(const Node *N) {
    return N->Kind == NodeKind::BreakStmt || N->Kind == NodeKind::ContinueStmt;
  }
};

/// The node class of each loop-jump kind, so that a pass can name each
/// statement kind's class after the kind (AstNodes.def).
using BreakStmt = LoopJumpStmt;
using ContinueStmt = LoopJumpStmt;

/// try { ... }: the body's changes to the graph, the memory blocks and the
/// schedules are undone when it ends, however it is left.
struct TryStmt : Stmt {
  Block Body;
  explicit TryStmt(SourceRange R) : Stmt(NodeKind::TryStmt, R) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::TryStmt; }
};

struct FnParam {
  std::string Name;
  SourceRange Range;
  Expr *Default = nullptr;
};

struct FnStmt : Stmt {
  std::string Name;
  SourceRange NameRange;
  std::vector<FnParam> Params;
  Block Body;
  FrameInfo Frame;   ///< Sema
  Resolution Target; ///< Sema: where the function value is stored
  FnStmt(SourceRange R, std::string N, SourceRange NR)
      : Stmt(NodeKind::FnStmt, R), Name(std::move(N)), NameRange(NR) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::FnStmt; }
};

struct ReturnStmt : Stmt {
  Expr *Value; ///< may be null
  ReturnStmt(SourceRange R, Expr *V)
      : Stmt(NodeKind::ReturnStmt, R), Value(V) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::ReturnStmt; }
};

/// shrink|scale SET by|to AMOUNT
struct ScaleStmt : Stmt {
  bool Shrink; ///< shrink divides, scale multiplies
  bool To;     ///< "to": set the duration instead of a factor
  Expr *Target, *Amount;
  ScaleStmt(SourceRange R, bool S, bool T, Expr *Tg, Expr *A)
      : Stmt(NodeKind::ScaleStmt, R), Shrink(S), To(T), Target(Tg), Amount(A) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::ScaleStmt; }
};

struct RemoveStmt : Stmt {
  Expr *Target;
  RemoveStmt(SourceRange R, Expr *T)
      : Stmt(NodeKind::RemoveStmt, R), Target(T) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::RemoveStmt; }
};

/// resize BLOCKS by FACTOR | resize BLOCKS to SIZE
struct ResizeStmt : Stmt {
  bool To; ///< "to": set the size instead of a factor
  Expr *Target, *Amount;
  ResizeStmt(SourceRange R, bool T, Expr *Tg, Expr *A)
      : Stmt(NodeKind::ResizeStmt, R), To(T), Target(Tg), Amount(A) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::ResizeStmt; }
};

/// free BLOCKS after|before T [until T2]: freed at the end (after) or start
/// (before) of T; with until, allocated again at the start of T2.
struct FreeStmt : Stmt {
  Expr *Target;
  Expr *At = nullptr; ///< a task, or a function of a block
  bool AtEnd = true;
  Expr *Until = nullptr;
  FreeStmt(SourceRange R, Expr *T) : Stmt(NodeKind::FreeStmt, R), Target(T) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::FreeStmt; }
};

/// offload BLOCKS after T [on S] [bandwidth B]
///                [prefetch [after T3] before T2 [on S2]]
struct OffloadStmt : Stmt {
  Expr *Target;
  Expr *After = nullptr, *On = nullptr, *Bandwidth = nullptr;
  bool Prefetch = false;
  SourceRange PrefetchRange;
  Expr *PrefetchAfter = nullptr, *PrefetchBefore = nullptr,
       *PrefetchOn = nullptr;
  OffloadStmt(SourceRange R, Expr *T)
      : Stmt(NodeKind::OffloadStmt, R), Target(T) {}
  static bool classof(const Node *N) {
    return N->Kind == NodeKind::OffloadStmt;
  }
};

/// depend A on B: every task of A waits for every task of B.
struct DependStmt : Stmt {
  Expr *Waiter, *On;
  DependStmt(SourceRange R, Expr *W, Expr *O)
      : Stmt(NodeKind::DependStmt, R), Waiter(W), On(O) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::DependStmt; }
};

/// schedule R by PRIORITY | schedule R fifo | schedule R program
struct ScheduleStmt : Stmt {
  Expr *Resource;
  Expr *Priority = nullptr; ///< a function of a task
  std::string Policy;       ///< "fifo" / "program" when Priority is null
  SourceRange PolicyRange;
  ScheduleStmt(SourceRange R, Expr *Res)
      : Stmt(NodeKind::ScheduleStmt, R), Resource(Res) {}
  static bool classof(const Node *N) {
    return N->Kind == NodeKind::ScheduleStmt;
  }
};

struct PrintStmt : Stmt {
  std::vector<Expr *> Args;
  explicit PrintStmt(SourceRange R) : Stmt(NodeKind::PrintStmt, R) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::PrintStmt; }
};

struct AssertStmt : Stmt {
  Expr *Cond, *Message;
  AssertStmt(SourceRange R, Expr *C, Expr *M)
      : Stmt(NodeKind::AssertStmt, R), Cond(C), Message(M) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::AssertStmt; }
};

struct ExprStmt : Stmt {
  Expr *E;
  ExprStmt(SourceRange R, Expr *Ex) : Stmt(NodeKind::ExprStmt, R), E(Ex) {}
  static bool classof(const Node *N) { return N->Kind == NodeKind::ExprStmt; }
};

/// One .dd file.
struct Module {
  BufferId Buffer = NoBuffer;
  std::string Path; ///< as loaded (for imports relative to it)
  std::vector<Stmt *> Body;
  FrameInfo Frame; ///< top-level code's locals (block-scoped lets)
};

/// Owns every node of the modules parsed with it.
class AstContext {
public:
  template <typename T, typename... Args> T *make(Args &&...A) {
    auto N = std::make_unique<T>(std::forward<Args>(A)...);
    T *P = N.get();
    Nodes.push_back(std::move(N));
    return P;
  }

private:
  std::vector<std::unique_ptr<Node>> Nodes;
};

/// A compact s-expression of a module, for tests.
std::string dump(const Module &M);

/// Whether E mentions a task property (a name Sema resolved as one): such an
/// expression takes a value per task; the others are computed once. Lambdas,
/// selects and inserts inside E see no property names.
bool mentionsTaskProperty(const Expr *E);

} // namespace dd::ast

#endif

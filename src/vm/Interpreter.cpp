//===- Interpreter.cpp - Frames, dispatch and the ordinary instructions ---===//

#include "graph/KernelClass.h"
#include "support/Work.h"
#include "vm/VMImpl.h"

#include "support/Checked.h"
#include "support/DeepStack.h"
#include "support/Diagnostics.h"
#include "support/Regex.h"

#include <fmt/format.h>

#include <cmath>

using namespace dd;
using namespace dd::vm;
using bc::Opcode;

namespace {
constexpr size_t MaxFrames = 2000;
} // namespace

Interpreter::Interpreter(const bc::Program &P, RunEnv &Env, const RunOptions &O,
                         RunResult &R)
    : P(P), Env(Env), Opts(O), Result(R) {
  Globals.resize(P.GlobalNames.size());
  EverSelected.resize(graph().numTasks());
  StartDur = graph().Dur;
  Stack.reserve(1024);
}

void Interpreter::step(uint64_t N) {
  Result.Steps += N;
  if (Result.Steps > Opts.MaxSteps)
    fail(fmt::format("the model ran more than {} steps (raise the budget "
                     "with --max-steps if that is expected; is a loop "
                     "unbounded?)",
                     Opts.MaxSteps));
}

std::optional<Diagnostic> Interpreter::cycleCulprit() const {
  // The first deferred depend whose edges, with those before them, close
  // a cycle: a prefix of the edges has a cycle or not, and more edges
  // never break one, so a binary search over copies finds it (on the error
  // path only).
  const graph::Graph &G = graph();
  auto Cyclic = [&](size_t K) {
    graph::Graph Copy = G;
    Copy.Edges.resize(Deferred[K].EdgeEnd);
    Copy.markDirty();
    return !Copy.finalize(nullptr);
  };
  if (Deferred.empty() || !Cyclic(Deferred.size() - 1))
    return std::nullopt;
  size_t Lo = 0, Hi = Deferred.size() - 1;
  while (Lo < Hi) {
    size_t Mid = (Lo + Hi) / 2;
    if (Cyclic(Mid))
      Hi = Mid;
    else
      Lo = Mid + 1;
  }
  return Deferred[Lo].At;
}

void Interpreter::markStructural() {
  ++StructureVersion;
  StructuralPending = true;
  LastStructural = errorAt("");
  graphChanged();
}

const sim::SimResult &Interpreter::currentReplay() {
  if (Replay && ReplayVersion == GraphVersion)
    return *Replay;
  ensureFinalized();
  auto R = sim::simulate(graph());
  if (!R)
    fail("a container's duration needs a replay of the graph as it stands, "
         "and it cannot be simulated: " +
         llvm::toString(R.takeError()));
  Replay = std::move(*R);
  ReplayVersion = GraphVersion;
  return *Replay;
}

const std::vector<double> &Interpreter::flopsColumn() {
  if (FlopsVersion != StructureVersion || Flops.size() != graph().numTasks()) {
    Flops = graph::taskFlops(graph());
    FlopsVersion = StructureVersion;
    work::add(work::Counter::VmColumns, Flops.size());
  }
  return Flops;
}

const std::vector<double> &Interpreter::movedColumn() {
  if (MovedVersion != StructureVersion || Moved.size() != graph().numTasks()) {
    Moved = graph::taskMovedBytes(graph());
    MovedVersion = StructureVersion;
    work::add(work::Counter::VmColumns, Moved.size());
  }
  return Moved;
}

int64_t Interpreter::containerDuration(graph::TaskId T) {
  const sim::SimResult &R = currentReplay();
  if (T >= R.Start.size() || R.Start[T] == graph::NoTime ||
      R.End[T] == graph::NoTime)
    return 0;
  return R.End[T] - R.Start[T];
}

graph::Graph &Interpreter::mutableGraph() {
  if (!Tries.empty() && !Tries.back().G)
    Tries.back().G = *Env.G;
  return *Env.G;
}

graph::Graph &Interpreter::durationsGraph() {
  graph::Graph &G = *Env.G;
  if (!Tries.empty() && !Tries.back().G && !Tries.back().Times) {
    TrySnapshot &S = Tries.back();
    S.Dur = G.Dur;
    S.Gap = G.Gap;
    S.Flags = G.Flags;
    S.Times = true;
  }
  return G;
}

void Interpreter::ensureFinalized() {
  // Finalizing derives the resource order, lowered edges and the like from
  // what the graph holds, and changes none of it: no try keeps a copy for
  // it.
  graph::Graph &G = *Env.G;
  if (G.finalized())
    return;
  std::string Err;
  if (!G.finalize(&Err)) {
    std::string Msg = "this makes the dependencies circular: " + Err;
    if (auto At = cycleCulprit())
      throw VMError{Msg, *At};
    if (StructuralPending)
      throw VMError{Msg, LastStructural};
    fail(Msg);
  }
  Deferred.clear();
  StructuralPending = false;
  EverSelected.resize(G.numTasks());
}

void Interpreter::decodeConstants() {
  Constants.resize(P.Functions.size());
  for (size_t F = 0; F < P.Functions.size(); ++F) {
    for (const bc::Constant &C : P.Functions[F].Constants) {
      switch (C.K) {
      case bc::Constant::Number:
        Constants[F].push_back(Value::number(C.Num, C.D));
        break;
      case bc::Constant::String:
        Constants[F].push_back(Value::string(C.Str));
        break;
      case bc::Constant::Regex:
        // Sema checked it (regexProblem); a program built otherwise gets
        // a regex that matches nothing rather than an exception.
        try {
          Constants[F].push_back(
              Value::object(new RegexObj(C.Str, compileRegex(C.Str))));
        } catch (const std::regex_error &) {
          Constants[F].push_back(
              Value::object(new RegexObj(C.Str, compileRegex("[^\\s\\S]"))));
        }
        break;
      }
    }
  }
}

/// Reads a --set value: a number with an optional unit, true/false, none,
/// or text (quoted or not).
static std::optional<Value> parseSetting(std::string_view T,
                                         std::string *Why = nullptr) {
  if (T == "true" || T == "false")
    return Value::boolean(T == "true");
  if (T == "none")
    return Value::none();
  if (T.size() >= 2 && T.front() == '"' && T.back() == '"')
    return Value::string(std::string(T.substr(1, T.size() - 2)));
  // What starts like a number is read as .dd reads a literal (with a sign),
  // and refused if it is not one ("0x10GB", "16 GB"); the rest is text.
  if (!looksNumeric(T))
    return Value::string(std::string(T));
  auto Q = readQuantity(T, Why);
  if (!Q)
    return std::nullopt;
  return Value::number(Q->Value, Q->D);
}

/// A --set value as parameter \p Default takes it: a plain 0 is 0 of any
/// dimension ("--set latency=0"), and none is the word "none" for a text
/// parameter ("--set fp8_casts=none").
static Value asParameter(Value V, const Value &Default) {
  if (V.is(VKind::Number) && Default.is(VKind::Number) && V.unit().plain() &&
      V.asNumber() == 0)
    return Value::number(0, Default.unit());
  if (V.is(VKind::None) && Default.is(VKind::String))
    return Value::string("none");
  return V;
}

std::optional<Diagnostic> vm::checkSettings(const bc::Program &P,
                                            const std::vector<Setting> &S) {
  auto Error = [](std::string Msg, SourceRange R = {}) {
    Diagnostic D;
    D.Range = R;
    D.Message = std::move(Msg);
    return D;
  };
  for (const Setting &Set : S) {
    const bc::ParamInfo *Param = nullptr;
    for (const bc::ParamInfo &Pm : P.Params)
      if (Pm.Name == Set.Name)
        Param = &Pm;
    if (!Param) {
      std::vector<std::string> Names;
      for (const bc::ParamInfo &Pm : P.Params)
        Names.push_back(Pm.Name);
      std::string List;
      for (const std::string &N : Names)
        List += (List.empty() ? "" : ", ") + N;
      std::string Best = closestMatch(Set.Name, Names);
      return Error(
          "the model has no parameter '" + Set.Name + "'" +
          (Best.empty() ? "" : "; did you mean '" + Best + "'?") +
          (List.empty() ? " (it has none)" : " (parameters: " + List + ")"));
    }
    std::string Why;
    auto V = parseSetting(Set.Text, &Why);
    if (!V)
      return Error("cannot read --set " + Set.Name + "=" + Set.Text + ": " +
                   Why +
                   " (give a number with an optional unit, true, "
                   "false, or text)");
    // A boolean takes true or false, not any text ("no" would be true).
    if (Param->BoolDefault && !V->is(VKind::Bool))
      return Error(fmt::format("--set {}={}: the parameter is true or false "
                               "(default {}), the value given is {}",
                               Set.Name, Set.Text, Param->Default.Str,
                               describeValue(*V)),
                   Param->Range);
    // A literal number's kind is known before the run (the VM checks the
    // others when the parameter's declaration runs).
    if (Param->LiteralDefault && Param->Default.K == bc::Constant::Number)
      V = asParameter(*V, Value::number(Param->Default.Num, Param->Default.D));
    if (Param->LiteralDefault && Param->Default.K == bc::Constant::Number &&
        (!V->is(VKind::Number) || V->unit() != Param->Default.D)) {
      Value Default = Value::number(Param->Default.Num, Param->Default.D);
      return Error(
          fmt::format("--set {}={}: the parameter is {} (default {}), the "
                      "value given is {}",
                      Set.Name, Set.Text, describeValue(Default),
                      formatQuantity(Default.asNumber(), Default.unit()),
                      describeValue(*V)),
          Param->Range);
    }
  }
  return std::nullopt;
}

std::optional<double> vm::settingNumber(std::string_view Text) {
  auto V = parseSetting(Text);
  if (!V || !V->is(VKind::Number))
    return std::nullopt;
  return V->asNumber();
}

void Interpreter::applySettings() {
  ParamOverrides.assign(P.Params.size(), Value::missing());
  for (const Setting &S : Opts.Settings)
    for (size_t I = 0; I < P.Params.size(); ++I)
      if (P.Params[I].Name == S.Name) {
        if (auto V = parseSetting(S.Text))
          ParamOverrides[I] = *V;
      }
}

void Interpreter::pushFrame(uint32_t Fn, uint32_t Argc, ClosureObj *C) {
  const bc::Function &F = P.Functions[Fn];
  if (Frames.size() >= MaxFrames)
    fail("calls nested too deeply (over " + std::to_string(MaxFrames) +
         " frames; unbounded recursion?)");
  if (Argc > F.NumParams)
    fail(fmt::format("'{}' takes {} argument{}, got {}", F.Name, F.NumParams,
                     F.NumParams == 1 ? "" : "s", Argc));
  uint32_t Base = static_cast<uint32_t>(Stack.size()) - Argc;
  for (uint32_t I = 0; I < F.RequiredParams && I < Argc; ++I)
    if (Stack[Base + I].is(VKind::Missing))
      fail(fmt::format("'{}' needs argument {}", F.Name, I + 1));
  if (Argc < F.RequiredParams)
    fail(fmt::format("'{}' needs {} argument{}, got {}", F.Name,
                     F.RequiredParams, F.RequiredParams == 1 ? "" : "s", Argc));
  for (uint32_t I = Argc; I < F.NumParams; ++I)
    Stack.push_back(Value::missing());
  for (uint32_t I = F.NumParams; I < F.NumLocals; ++I)
    Stack.push_back(Value::none());
  Frames.push_back({Fn, 0, Base, C});
}

Value Interpreter::call(const Value &Callee, std::vector<Value> Args) {
  if (Callee.is(VKind::Bound))
    return callMethod(*Callee.as<BoundObj>(), Args);
  if (!Callee.is(VKind::Function))
    fail("calling " + describeValue(Callee) + ", which is not a function");
  size_t Depth = Frames.size();
  push(Callee);
  for (Value &A : Args)
    push(std::move(A));
  auto *C = Callee.as<ClosureObj>();
  pushFrame(C->Function, static_cast<uint32_t>(Args.size()), C);
  return execute(Depth);
}

void Interpreter::jumpBy(const Cursor &C, int64_t Offset) {
  Frames.back().Pc = static_cast<uint32_t>(
      static_cast<int64_t>(
          C.Pc + bc::instructionSize(static_cast<Opcode>(C.F.Code[C.Pc]))) +
      Offset);
}

namespace {
using Handler = void (Interpreter::*)(const Interpreter::Cursor &);
}

Value Interpreter::execute(size_t StopDepth) {
  static const Handler Table[] = {
#define DD_OPCODE(Name, Operands, Effect) &Interpreter::op##Name,
#include "bytecode/Opcodes.def"
  };
  while (true) {
    Frame &Fr = Frames.back();
    const bc::Function &F = P.Functions[Fr.Fn];
    uint32_t Pc = Fr.Pc;
    auto Op = static_cast<Opcode>(F.Code[Pc]);
    Fr.Pc = Pc + bc::instructionSize(Op);
    step();
    // Loaded first: GCC 12's -fsanitize=bounds checks a garbage index on a
    // call made straight through Table[Op] (a false report, not a fault).
    Handler H = Table[static_cast<unsigned>(Op)];
    (this->*H)(Cursor{F, Pc});
    if (Returned && Frames.size() == StopDepth) {
      Returned = false;
      return pop();
    }
    Returned = false;
  }
}

// --- Instructions -----------------------------------------------------------

void Interpreter::opNop(const Cursor &) {}
void Interpreter::opConst(const Cursor &C) {
  push(Constants[Frames.back().Fn][C.u16(0)]);
}
void Interpreter::opPushNone(const Cursor &) { push(Value::none()); }
void Interpreter::opPushTrue(const Cursor &) { push(Value::boolean(true)); }
void Interpreter::opPushFalse(const Cursor &) { push(Value::boolean(false)); }
void Interpreter::opPushMissing(const Cursor &) { push(Value::missing()); }
void Interpreter::opPop(const Cursor &) { Stack.pop_back(); }
void Interpreter::opDup(const Cursor &) { push(Stack.back()); }

void Interpreter::opLoadLocal(const Cursor &C) {
  push(Stack[Frames.back().Base + C.u16(0)]);
}
void Interpreter::opStoreLocal(const Cursor &C) {
  Stack[Frames.back().Base + C.u16(0)] = pop();
}
void Interpreter::opLoadGlobal(const Cursor &C) { push(Globals[C.u16(0)]); }
void Interpreter::opStoreGlobal(const Cursor &C) { Globals[C.u16(0)] = pop(); }
void Interpreter::opLoadCapture(const Cursor &C) {
  push(Frames.back().Closure->Captures[C.u16(0)]);
}

#define DD_BINARY_ARITH(Name)                                                  \
  void Interpreter::op##Name(const Cursor &) {                                 \
    Value B = pop();                                                           \
    Value A = pop();                                                           \
    push(arith(Opcode::Name, A, B));                                           \
  }
DD_BINARY_ARITH(Sub)
DD_BINARY_ARITH(Mul)
DD_BINARY_ARITH(Div)
DD_BINARY_ARITH(Mod)
DD_BINARY_ARITH(Union)
DD_BINARY_ARITH(Intersect)
#undef DD_BINARY_ARITH

/// The variable that the instruction after \p C stores into, when that
/// variable holds object \p O: `xs = xs + [x]`.
Value *Interpreter::storeTargetHolding(const Cursor &C, const Obj *O) {
  uint32_t Next = C.Pc + bc::instructionSize(Opcode::Add);
  if (Next >= C.F.Code.size())
    return nullptr;
  auto Op = static_cast<Opcode>(C.F.Code[Next]);
  Value *Slot = nullptr;
  if (Op == Opcode::StoreLocal)
    Slot = &Stack[Frames.back().Base + bc::readOperand(C.F, Next, 0)];
  else if (Op == Opcode::StoreGlobal)
    Slot = &Globals[bc::readOperand(C.F, Next, 0)];
  return Slot && Slot->isObject() && Slot->asObj() == O ? Slot : nullptr;
}

void Interpreter::opAdd(const Cursor &C) {
  Value B = pop();
  Value A = pop();
  // `xs = xs + [x]` and `s = s + "x"` in a loop would copy the whole list
  // or string each time. When the variable about to be overwritten is the
  // only other holder of the left operand, it lets go first; arith then
  // holds the only reference and joins in place (see arith): linear, not
  // quadratic. Any other holder (another variable, a loop over the list, a
  // constant) keeps its value: the count says so, and the sum is a copy.
  if ((A.is(VKind::List) || A.is(VKind::String)) && A.asObj()->Refs == 2)
    if (Value *Slot = storeTargetHolding(C, A.asObj()))
      *Slot = Value::none();
  push(arith(Opcode::Add, std::move(A), B));
}

void Interpreter::opNeg(const Cursor &) {
  Value A = pop();
  if (!A.is(VKind::Number))
    fail("cannot negate " + describeValue(A));
  push(Value::number(-A.asNumber(), A.unit()));
}
void Interpreter::opNot(const Cursor &) {
  push(Value::boolean(!truthy(pop())));
}
void Interpreter::opEq(const Cursor &) {
  Value B = pop(), A = pop();
  push(Value::boolean(equal(A, B)));
}
void Interpreter::opNe(const Cursor &) {
  Value B = pop(), A = pop();
  push(Value::boolean(!equal(A, B)));
}
void Interpreter::opLt(const Cursor &) {
  Value B = pop(), A = pop();
  push(Value::boolean(less(A, B, "<")));
}
void Interpreter::opLe(const Cursor &) {
  Value B = pop(), A = pop();
  push(Value::boolean(!less(B, A, "<=")));
}
void Interpreter::opGt(const Cursor &) {
  Value B = pop(), A = pop();
  push(Value::boolean(less(B, A, ">")));
}
void Interpreter::opGe(const Cursor &) {
  Value B = pop(), A = pop();
  push(Value::boolean(!less(A, B, ">=")));
}
void Interpreter::opMatch(const Cursor &) {
  Value B = pop(), A = pop();
  push(Value::boolean(matches(A, B)));
}
void Interpreter::opNoMatch(const Cursor &) {
  Value B = pop(), A = pop();
  push(Value::boolean(!matches(A, B)));
}
void Interpreter::opIn(const Cursor &) {
  Value B = pop(), A = pop();
  push(Value::boolean(contains(B, A)));
}
void Interpreter::opMakeRange(const Cursor &) {
  Value Hi = pop(), Lo = pop();
  double L = toNumber(Lo, {}, "a range's start");
  double H = toNumber(Hi, {}, "a range's end");
  if (L != std::floor(L) || H != std::floor(H))
    fail("a range is of integers, got " + show(Lo) + ".." + show(Hi));
  if (std::fabs(L) > MaxRangeEnd || std::fabs(H) > MaxRangeEnd)
    fail("a range's ends are integers from -2^53 to 2^53 "
         "(9,007,199,254,740,992), got " +
         show(Lo) + ".." + show(Hi));
  push(Value::object(
      new RangeObj(static_cast<int64_t>(L), static_cast<int64_t>(H))));
}
void Interpreter::opMakeList(const Cursor &C) {
  unsigned N = C.u16(0);
  std::vector<Value> Items(std::make_move_iterator(Stack.end() - N),
                           std::make_move_iterator(Stack.end()));
  Stack.resize(Stack.size() - N);
  push(Value::list(std::move(Items)));
}
void Interpreter::opSlice(const Cursor &) {
  Value Hi = pop(), Lo = pop(), A = pop();
  push(slice(A, Lo, Hi));
}
void Interpreter::opIndex(const Cursor &) {
  Value K = pop(), A = pop();
  push(index(A, K));
}
void Interpreter::opGetMember(const Cursor &C) {
  Value Obj = pop();
  push(member(Obj, C.u16(0)));
}

void Interpreter::opCall(const Cursor &C) {
  unsigned Argc = static_cast<unsigned>(C.operand(0));
  Value &Callee = Stack[Stack.size() - Argc - 1];
  if (Callee.is(VKind::Function)) {
    auto *Cl = Callee.as<ClosureObj>();
    pushFrame(Cl->Function, Argc, Cl);
    return;
  }
  if (Callee.is(VKind::Bound)) {
    std::vector<Value> Args(std::make_move_iterator(Stack.end() - Argc),
                            std::make_move_iterator(Stack.end()));
    Stack.resize(Stack.size() - Argc);
    Value B = pop();
    push(callMethod(*B.as<BoundObj>(), Args));
    return;
  }
  fail("calling " + describeValue(Callee) + ", which is not a function");
}

void Interpreter::opCallBuiltin(const Cursor &C) {
  auto Id = static_cast<bc::BuiltinId>(C.u16(0));
  unsigned Argc = static_cast<unsigned>(C.operand(1));
  std::vector<Value> Args(std::make_move_iterator(Stack.end() - Argc),
                          std::make_move_iterator(Stack.end()));
  Stack.resize(Stack.size() - Argc);
  push(builtin(Id, Args));
}

void Interpreter::opMakeClosure(const Cursor &C) {
  unsigned Fn = C.u16(0);
  unsigned N = static_cast<unsigned>(C.operand(1));
  std::vector<Value> Caps(std::make_move_iterator(Stack.end() - N),
                          std::make_move_iterator(Stack.end()));
  Stack.resize(Stack.size() - N);
  push(Value::object(new ClosureObj(Fn, std::move(Caps))));
}

void Interpreter::opReturn(const Cursor &) {
  Value R = pop();
  Frame Fr = Frames.back();
  Frames.pop_back();
  Stack.resize(Fr.Base - 1); // the callee slot goes too
  push(std::move(R));
  Returned = true;
}

void Interpreter::opJumpIfPresent(const Cursor &C) {
  if (!Stack[Frames.back().Base + C.u16(0)].is(VKind::Missing))
    jumpBy(C, C.operand(1));
}
void Interpreter::opTryBegin(const Cursor &) {
  // The graph is kept as the block changes it (mutableGraph,
  // durationsGraph); the memory blocks, a copy (see "Trying a change" in
  // docs/language.md).
  std::optional<memory::MemoryModel> Mem;
  if (Env.Mem)
    Mem = *Env.Mem;
  TrySnapshot S;
  S.Mem = std::move(Mem);
  S.Stats = Result.Stats;
  S.Policy = Result.Policy;
  S.Schedules = Schedules;
  S.EverSelected = EverSelected;
  S.LastStructural = LastStructural;
  S.StructuralPending = StructuralPending;
  S.Deferred = Deferred;
  Tries.push_back(std::move(S));
}
void Interpreter::opTryEnd(const Cursor &) {
  TrySnapshot &S = Tries.back();
  graph::Graph &G = *Env.G;
  if (S.G)
    G = std::move(*S.G);
  // Kept before any copy of the graph, of the graph the block began with.
  if (S.Times) {
    G.Dur = std::move(S.Dur);
    G.Gap = std::move(S.Gap);
    G.Flags = std::move(S.Flags);
  }
  if (Env.Mem && S.Mem)
    *Env.Mem = std::move(*S.Mem);
  Result.Stats = S.Stats;
  Result.Policy = std::move(S.Policy);
  Schedules = std::move(S.Schedules);
  EverSelected = std::move(S.EverSelected);
  EverSelected.resize(graph().numTasks());
  LastStructural = std::move(S.LastStructural);
  StructuralPending = S.StructuralPending;
  Deferred = std::move(S.Deferred);
  Tries.pop_back();
  Index = TaskIndex();
  Names = ResourceNames();
  ++StructureVersion;
  graphChanged();
}
void Interpreter::opJump(const Cursor &C) { jumpBy(C, C.operand(0)); }
void Interpreter::opJumpIfFalse(const Cursor &C) {
  if (!truthy(pop()))
    jumpBy(C, C.operand(0));
}
void Interpreter::opJumpIfFalseKeep(const Cursor &C) {
  if (!truthy(Stack.back()))
    jumpBy(C, C.operand(0));
  else
    Stack.pop_back();
}
void Interpreter::opJumpIfTrueKeep(const Cursor &C) {
  if (truthy(Stack.back()))
    jumpBy(C, C.operand(0));
  else
    Stack.pop_back();
}

void Interpreter::opIterInit(const Cursor &C) {
  Value Src = pop();
  if (Src.is(VKind::BlockSet)) {
    // Blocks in allocation order, fixed when the loop starts.
    std::vector<Value> Items;
    for (memory::BlockId B : blocksInOrder(Src.as<BlockSetObj>()->Bits))
      Items.push_back(Value::id(VKind::Block, B));
    Src = Value::list(std::move(Items));
  }
  if (!Src.is(VKind::List) && !Src.is(VKind::Range) && !Src.is(VKind::Set) &&
      !Src.is(VKind::String))
    fail("cannot loop over " + describeValue(Src));
  Stack[Frames.back().Base + C.u16(0)] =
      Value::object(new IteratorObj(std::move(Src)));
}

void Interpreter::opIterNext(const Cursor &C) {
  auto *It = Stack[Frames.back().Base + C.u16(0)].as<IteratorObj>();
  const Value &S = It->Source;
  switch (S.kind()) {
  case VKind::List: {
    auto &Items = S.as<ListObj>()->Items;
    if (It->Pos < Items.size()) {
      push(Items[It->Pos++]);
      return;
    }
    break;
  }
  case VKind::Range: {
    auto *R = S.as<RangeObj>();
    if (static_cast<int64_t>(It->Pos) < R->size()) {
      push(Value::number(static_cast<double>(R->Lo + It->Pos++)));
      return;
    }
    break;
  }
  case VKind::String: {
    const std::string &Str = S.as<StringObj>()->S;
    if (It->Pos < Str.size()) {
      push(Value::string(Str.substr(It->Pos++, 1)));
      return;
    }
    break;
  }
  case VKind::Set: {
    int64_t Next = S.as<SetObj>()->S.next(It->Pos);
    if (Next >= 0) {
      push(Value::id(VKind::Task, static_cast<uint32_t>(Next)));
      return;
    }
    break;
  }
  default:
    break;
  }
  jumpBy(C, C.operand(1));
}

void Interpreter::opSelect(const Cursor &C) {
  const bc::FilterProgram &F = C.F.Filters[C.u16(0)];
  unsigned N = static_cast<unsigned>(C.operand(1));
  std::vector<Value> Caps(std::make_move_iterator(Stack.end() - N),
                          std::make_move_iterator(Stack.end()));
  Stack.resize(Stack.size() - N);
  push(select(F, Caps.data()));
}

void Interpreter::opScale(const Cursor &C) {
  Value Amount = pop(), Target = pop();
  scale(Target, Amount, static_cast<unsigned>(C.operand(0)));
}
void Interpreter::opRemove(const Cursor &) { remove(pop()); }
void Interpreter::opInsert(const Cursor &C) {
  const bc::InsertDesc &D = C.F.Inserts[C.u16(0)];
  unsigned N = 0;
  for (unsigned Bit = 1; Bit <= bc::InsertDesc::Before; Bit <<= 1)
    N += (D.Clauses & Bit) ? 1 : 0;
  std::vector<Value> Clauses(std::make_move_iterator(Stack.end() - N),
                             std::make_move_iterator(Stack.end()));
  Stack.resize(Stack.size() - N);
  push(insert(D, Clauses.data()));
}
void Interpreter::opDepend(const Cursor &) {
  Value On = pop(), Waiter = pop();
  depend(Waiter, On);
}
void Interpreter::opSchedule(const Cursor &C) {
  unsigned Mode = static_cast<unsigned>(C.operand(0));
  Value Res = pop();
  if (Mode == 0) {
    Value Prio = pop();
    schedule(Res, &Prio, Mode);
  } else {
    schedule(Res, nullptr, Mode);
  }
}
void Interpreter::opParam(const Cursor &C) {
  unsigned I = C.u16(0);
  Value Default = pop();
  if (ParamOverrides[I].is(VKind::Missing)) {
    Globals[P.Params[I].Global] = std::move(Default);
    return;
  }
  Value Over = asParameter(ParamOverrides[I], Default);
  if ((Default.is(VKind::Number) &&
       (!Over.is(VKind::Number) || Over.unit() != Default.unit())) ||
      (Default.is(VKind::Bool) && !Over.is(VKind::Bool)))
    fail(fmt::format("--set {}: the parameter is {} (default {}), the value "
                     "given is {}",
                     P.Params[I].Name,
                     Default.is(VKind::Bool) ? "true or false"
                                             : describeValue(Default),
                     show(Default), describeValue(Over)));
  Globals[P.Params[I].Global] = Over;
}
void Interpreter::opChannel(const Cursor &C) {
  push(channel(Constants[Frames.back().Fn][C.u16(0)].as<StringObj>()->S));
}
void Interpreter::opPrint(const Cursor &C) {
  unsigned N = static_cast<unsigned>(C.operand(0));
  std::string Line;
  for (unsigned I = 0; I < N; ++I)
    Line += (I ? " " : "") + show(Stack[Stack.size() - N + I]);
  Stack.resize(Stack.size() - N);
  if (Result.Output.size() + Line.size() + 1 > Opts.MaxOutputBytes)
    fail(fmt::format("the model printed more than {} (a print in a loop, or "
                     "of a very long string?)",
                     formatQuantity(static_cast<double>(Opts.MaxOutputBytes),
                                    Dim::bytes())));
  Result.Output += Line + "\n";
}
void Interpreter::opAssert(const Cursor &C) {
  Value Msg;
  if (C.operand(0))
    Msg = pop();
  Value Cond = pop();
  if (!truthy(Cond))
    fail("assertion failed" +
         (C.operand(0) ? ": " + (Msg.is(VKind::String) ? Msg.as<StringObj>()->S
                                                       : show(Msg))
                       : std::string()));
}

// --- Running a program -------------------------------------------------------

Diagnostic Interpreter::errorAt(const std::string &Msg) {
  Diagnostic D;
  D.Level = Severity::Error;
  D.Message = Msg;
  bool First = true;
  size_t Shown = 0;
  for (auto It = Frames.rbegin(); It != Frames.rend(); ++It) {
    const bc::Function &F = P.Functions[It->Fn];
    SourceRange R = F.rangeAt(It->Pc == 0 ? 0 : It->Pc - 1);
    if (First) {
      D.Range = R;
      First = false;
      continue;
    }
    // Deep recursion: the innermost callers and the outermost one.
    if (++Shown == 8 && Frames.size() > 10) {
      D.Notes.push_back(
          {Severity::Note,
           {},
           std::to_string(Frames.size() - 9) + " more calls like these",
           {}});
      It = Frames.rend() - 2;
      continue;
    }
    D.Notes.push_back({Severity::Note, R, "called from " + F.Name, {}});
  }
  return D;
}

void Interpreter::runAll() {
  decodeConstants();
  applySettings();
  try {
    for (uint32_t Fn : P.InitOrder) {
      push(Value::none()); // the callee slot
      pushFrame(Fn, 0, nullptr);
      execute(0);
      Stack.clear();
    }
    ensureFinalized();
    finishSchedules();
    work::add(work::Counter::VmSteps, Result.Steps);
  } catch (const VMError &E) {
    Result.Ok = false;
    Result.Error = E.At ? *E.At : errorAt(E.Message);
    Result.Error.Message = E.Message;
    return;
  } catch (const std::bad_alloc &) {
    Result.Ok = false;
    Result.Error = errorAt("the model ran out of memory");
    return;
  }
  finishStats();
}

void Interpreter::finishStats() {
  const graph::Graph &G = graph();
  ChangeStats &S = Result.Stats;
  S.Selected = EverSelected.count();
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    if (!G.isLeaf(T))
      continue;
    auto Ph = static_cast<size_t>(G.PhaseOf[T]);
    // Each duration is bounded; their sum need not be (a model that scales
    // every task to the longest time): it saturates, never wraps.
    int64_t &Moved = S.MovedByPhase[Ph];
    if (G.isRemoved(T)) {
      if (T < StartDur.size())
        Moved = subSaturating(Moved, StartDur[T]);
      continue;
    }
    if (T >= StartDur.size()) {
      Moved = addSaturating(Moved, G.Dur[T]);
      continue;
    }
    if (G.Dur[T] != StartDur[T])
      Moved = addSaturating(Moved, subSaturating(G.Dur[T], StartDur[T]));
  }
}

RunResult vm::run(const bc::Program &P, RunEnv &Env, const RunOptions &O) {
  RunResult R;
  if (auto Bad = checkSettings(P, O.Settings)) {
    R.Ok = false;
    R.Error = std::move(*Bad);
    return R;
  }
  // A builtin that calls a model's function (sum(xs, f), sorted, a
  // predicate, a schedule) runs it in a nested execute(): native recursion
  // up to MaxFrames deep, on a stack of a known size (support/DeepStack.h).
  runOnDeepStack([&] {
    Interpreter I(P, Env, O, R);
    I.runAll();
  });
  return R;
}

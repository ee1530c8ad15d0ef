//===- Ops.cpp - Arithmetic, comparison, printing of values ---------------===//

#include "ops/Gpus.h"
#include "vm/VMImpl.h"

#include "support/Format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::vm;
using bc::Opcode;

std::string vm::describeValue(const Value &V) {
  switch (V.kind()) {
  case VKind::None:
    return "none";
  case VKind::Missing:
    return "a missing argument";
  case VKind::Bool:
    return "a bool";
  case VKind::Number:
    if (V.unit().plain())
      return "a plain number";
    if (V.unit() == Dim::duration())
      return "a duration";
    if (V.unit() == Dim::bytes())
      return "a size";
    if (V.unit() == Dim::bandwidth())
      return "a bandwidth";
    return "a number in " + dimName(V.unit());
  case VKind::String:
    return "a string";
  case VKind::Regex:
    return "a regex";
  case VKind::List:
    return "a list";
  case VKind::Range:
    return "a range";
  case VKind::Task:
    return "a task";
  case VKind::Set:
    return "a task set";
  case VKind::Layer:
    return "a layer";
  case VKind::ModelBlock:
    return "a model block";
  case VKind::Resource:
    return "a resource";
  case VKind::Block:
    return "a block";
  case VKind::BlockSet:
    return "a block set";
  case VKind::Function:
    return "a function";
  case VKind::Bound:
    return "a method";
  case VKind::Device:
    return "the device";
  case VKind::Trace:
    return "the trace";
  case VKind::Iterator:
    return "an iterator";
  }
  return "a value";
}

bool Interpreter::truthy(const Value &V) {
  switch (V.kind()) {
  case VKind::None:
  case VKind::Missing:
    return false;
  case VKind::Bool:
    return V.asBool();
  case VKind::Number:
    return V.asNumber() != 0;
  case VKind::String:
    return !V.as<StringObj>()->S.empty();
  case VKind::List:
    return !V.as<ListObj>()->Items.empty();
  case VKind::Range:
    return V.as<RangeObj>()->size() > 0;
  case VKind::Set:
    return !V.as<SetObj>()->S.empty();
  case VKind::BlockSet:
    return V.as<BlockSetObj>()->Bits.any();
  default:
    return true;
  }
}

double Interpreter::toNumber(const Value &V, Dim Unit, const char *Role) {
  if (!V.is(VKind::Number))
    fail(std::string(Role) + " must be " +
         describeValue(Value::number(0, Unit)) + ", not " + describeValue(V));
  if (V.unit() != Unit)
    fail(std::string(Role) + " must be " +
         describeValue(Value::number(0, Unit)) + ", not " + describeValue(V) +
         " (" + show(V) + ")");
  return V.asNumber();
}

void Interpreter::chargeList(size_t Items, size_t Made) {
  if (Items > MaxListItems)
    fail(fmt::format("a list of {} items, over the {} a model may make",
                     formatCount(Items), formatCount(MaxListItems)));
  step(Made / 8);
}

void Interpreter::chargeString(size_t Bytes, size_t Made) {
  if (Bytes > MaxStringBytes)
    fail(fmt::format("a string of {} bytes, over the {} MiB a model may make",
                     formatCount(Bytes), MaxStringBytes >> 20));
  step(Made / 64);
}

int64_t Interpreter::toAmount(const Value &V, Dim Unit, const char *Role) {
  double X = toNumber(V, Unit, Role);
  if (!std::isfinite(X) || X < 0)
    fail(std::string(Role) + " cannot be negative (got " + show(V) + ")");
  if (X >= static_cast<double>(graph::MaxTime))
    fail(std::string(Role) + " of " + show(V) + " is beyond what ddscript " +
         "represents (" +
         (Unit == Dim::duration()
              ? std::string("about 146 years")
              : formatQuantity(static_cast<double>(graph::MaxTime), Unit)) +
         ")");
  return std::llround(X);
}

std::string Interpreter::toStr(const Value &V, const char *Role) {
  if (!V.is(VKind::String))
    fail(std::string(Role) + " must be a string, not " + describeValue(V));
  return V.as<StringObj>()->S;
}

TaskSet Interpreter::toSet(const Value &V, const char *Role) {
  if (V.is(VKind::Set))
    return V.as<SetObj>()->S;
  if (V.is(VKind::Task))
    return TaskSet::one(toTask(V, "a task"));
  if (V.is(VKind::None))
    return TaskSet();
  if (V.is(VKind::List)) {
    // Tasks and sets of a list, flattened: ids gathered, sorted once.
    std::vector<uint32_t> Ids;
    for (const Value *X : leaves(V)) {
      if (X->is(VKind::Task))
        Ids.push_back(toTask(*X, "a task"));
      else
        toSet(*X, Role).forEach([&](uint32_t T) { Ids.push_back(T); });
    }
    return TaskSet::fromIds(std::move(Ids));
  }
  fail(std::string(Role) + " takes tasks, not " + describeValue(V));
}

std::vector<const Value *> Interpreter::leaves(const Value &List) {
  // A list of lists can be a million deep: a stack of our own, not the
  // call stack. Each list visited is a step (and one per 8 items), so
  // that a list holding itself twice at each of 60 levels stops.
  std::vector<const Value *> Out, Todo{&List};
  while (!Todo.empty()) {
    const Value *X = Todo.back();
    Todo.pop_back();
    if (!X->is(VKind::List)) {
      Out.push_back(X);
      continue;
    }
    const std::vector<Value> &Items = X->as<ListObj>()->Items;
    step(1 + Items.size() / 8);
    for (auto I = Items.rbegin(); I != Items.rend(); ++I)
      Todo.push_back(&*I);
  }
  return Out;
}

graph::TaskId Interpreter::toTask(const Value &V, const char *Role) {
  if (V.is(VKind::Task)) {
    if (V.asId() >= graph().numTasks())
      fail(std::string(Role) +
           " was added inside a try block that has ended: it is gone");
    return V.asId();
  }
  if (V.is(VKind::Set)) {
    const TaskSet &B = V.as<SetObj>()->S;
    if (B.count() == 1)
      return static_cast<graph::TaskId>(B.first());
    fail(std::string(Role) + " takes one task, got a set of " +
         std::to_string(B.count()));
  }
  fail(std::string(Role) + " takes a task, not " + describeValue(V));
}

static std::string unitMismatch(const char *Op, const Value &A,
                                const Value &B) {
  return fmt::format("cannot {} {} and {}", Op, describeValue(A),
                     describeValue(B));
}

Value Interpreter::arith(Opcode Op, Value A, const Value &B) {
  auto SetLike = [](const Value &V) {
    return V.is(VKind::Set) || V.is(VKind::Task);
  };
  auto BlockLike = [](const Value &V) {
    return V.is(VKind::BlockSet) || V.is(VKind::Block);
  };
  if ((Op == Opcode::Union || Op == Opcode::Intersect || Op == Opcode::Add ||
       Op == Opcode::Sub) &&
      (BlockLike(A) || BlockLike(B))) {
    const char *Role = Op == Opcode::Intersect ? "'&'"
                       : Op == Opcode::Sub     ? "'-'"
                                               : "'|'";
    llvm::BitVector L = toBlocks(A, Role), R = toBlocks(B, Role);
    if (Op == Opcode::Intersect)
      L &= R;
    else if (Op == Opcode::Sub)
      L.reset(R);
    else
      L |= R;
    return blockSet(std::move(L));
  }
  if (Op == Opcode::Union || Op == Opcode::Intersect ||
      ((Op == Opcode::Add || Op == Opcode::Sub) &&
       (SetLike(A) || SetLike(B)))) {
    const char *Role = Op == Opcode::Intersect ? "'&'"
                       : Op == Opcode::Sub     ? "'-'"
                                               : "'|'";
    TaskSet L = toSet(A, Role), R = toSet(B, Role);
    if (Op == Opcode::Intersect)
      return taskSet(L.intersect(R));
    if (Op == Opcode::Sub)
      return taskSet(L.subtract(R));
    return taskSet(L.unite(R));
  }
  if (A.is(VKind::Number) && B.is(VKind::Number)) {
    double X = A.asNumber(), Y = B.asNumber();
    switch (Op) {
    case Opcode::Add:
    case Opcode::Sub:
      if (A.unit() != B.unit())
        fail(unitMismatch(Op == Opcode::Add ? "add" : "subtract", A, B));
      return Value::number(Op == Opcode::Add ? X + Y : X - Y, A.unit());
    case Opcode::Mul:
      return Value::number(X * Y, A.unit() * B.unit());
    case Opcode::Div:
      if (Y == 0)
        fail("division by zero");
      return Value::number(X / Y, A.unit() / B.unit());
    case Opcode::Mod:
      if (Y == 0)
        fail("modulo by zero");
      if (A.unit() != B.unit() && !B.unit().plain())
        fail(unitMismatch("take the remainder of", A, B));
      return Value::number(std::fmod(X, Y), A.unit());
    default:
      break;
    }
  }
  // A held by this call alone (handed over with std::move) is joined in
  // place: nobody else can see it change.
  bool Alone = A.isObject() && A.asObj()->Refs == 1;
  if (Op == Opcode::Add && A.is(VKind::String)) {
    std::string &L = A.as<StringObj>()->S;
    std::string R = B.is(VKind::String) ? B.as<StringObj>()->S : show(B);
    if (!Alone) {
      chargeString(L.size() + R.size());
      return Value::string(L + R);
    }
    chargeString(L.size() + R.size(), R.size());
    L += R;
    return A;
  }
  if (Op == Opcode::Add && A.is(VKind::List) && B.is(VKind::List)) {
    std::vector<Value> &L = A.as<ListObj>()->Items;
    const std::vector<Value> &R = B.as<ListObj>()->Items;
    if (Alone) {
      chargeList(L.size() + R.size(), R.size());
      L.insert(L.end(), R.begin(), R.end());
      return A;
    }
    chargeList(L.size() + R.size());
    std::vector<Value> Items;
    Items.reserve(L.size() + R.size());
    Items.insert(Items.end(), L.begin(), L.end());
    Items.insert(Items.end(), R.begin(), R.end());
    return Value::list(std::move(Items));
  }
  const char *Name = Op == Opcode::Add   ? "add"
                     : Op == Opcode::Sub ? "subtract"
                     : Op == Opcode::Mul ? "multiply"
                     : Op == Opcode::Div ? "divide"
                                         : "take the remainder of";
  fail(unitMismatch(Name, A, B));
}

bool Interpreter::equal(const Value &A, const Value &B) {
  if (!A.is(VKind::List) || !B.is(VKind::List))
    return equalScalar(A, B);
  // Lists of lists compare item by item with a stack of their own, as
  // show walks them; each pair compared is a step, so that two lists that
  // hold themselves twice at each of 60 levels stop at the budget.
  struct Pair {
    const std::vector<Value> *X, *Y;
    size_t Next;
  };
  std::vector<Pair> Inside;
  auto Push = [&](const Value &X, const Value &Y) {
    const auto &XI = X.as<ListObj>()->Items, &YI = Y.as<ListObj>()->Items;
    if (XI.size() != YI.size())
      return false;
    Inside.push_back({&XI, &YI, 0});
    return true;
  };
  if (!Push(A, B))
    return false;
  while (!Inside.empty()) {
    Pair &Top = Inside.back();
    if (Top.Next == Top.X->size()) {
      Inside.pop_back();
      continue;
    }
    step();
    const Value &X = (*Top.X)[Top.Next], &Y = (*Top.Y)[Top.Next];
    ++Top.Next;
    if (X.is(VKind::List) && Y.is(VKind::List)) {
      if (!Push(X, Y))
        return false;
    } else if (!equalScalar(X, Y)) {
      return false;
    }
  }
  return true;
}

bool Interpreter::equalScalar(const Value &A, const Value &B) {
  const graph::Graph &G = graph();
  if (A.kind() != B.kind()) {
    // A resource equals its id (stream == 7); a layer equals its name.
    if (A.is(VKind::Resource) && B.is(VKind::Number))
      return static_cast<double>(G.Resources[A.asId()].Id) == B.asNumber();
    if (B.is(VKind::Resource) && A.is(VKind::Number))
      return equal(B, A);
    if (A.is(VKind::Resource) && B.is(VKind::String))
      return G.Resources[A.asId()].Name == B.as<StringObj>()->S;
    if (A.is(VKind::Layer) && B.is(VKind::String))
      return G.Layers[A.asId()].Name == B.as<StringObj>()->S;
    if (B.is(VKind::Layer) || B.is(VKind::Resource))
      return equal(B, A);
    return false;
  }
  switch (A.kind()) {
  case VKind::None:
  case VKind::Missing:
    return true;
  case VKind::Bool:
    return A.asBool() == B.asBool();
  case VKind::Number:
    return A.unit() == B.unit() && A.asNumber() == B.asNumber();
  case VKind::String:
    return A.as<StringObj>()->S == B.as<StringObj>()->S;
  case VKind::Regex:
    return A.as<RegexObj>()->Pattern == B.as<RegexObj>()->Pattern;
  case VKind::Task:
  case VKind::Layer:
  case VKind::ModelBlock:
  case VKind::Block:
  case VKind::Resource:
    return A.asId() == B.asId();
  case VKind::Set:
    return A.as<SetObj>()->S == B.as<SetObj>()->S;
  case VKind::BlockSet: {
    llvm::BitVector X = A.as<BlockSetObj>()->Bits,
                    Y = B.as<BlockSetObj>()->Bits;
    X.resize(numBlocks());
    Y.resize(numBlocks());
    return X == Y;
  }
  case VKind::Range:
    return A.as<RangeObj>()->Lo == B.as<RangeObj>()->Lo &&
           A.as<RangeObj>()->Hi == B.as<RangeObj>()->Hi;
  case VKind::List:
    return equal(A, B);
  default:
    return A.asObj() == B.asObj();
  }
}

bool Interpreter::less(const Value &A, const Value &B, const char *Op) {
  if (A.is(VKind::Number) && B.is(VKind::Number)) {
    if (A.unit() != B.unit())
      fail(fmt::format("cannot compare {} with {} ('{}')", describeValue(A),
                       describeValue(B), Op));
    return A.asNumber() < B.asNumber();
  }
  if (A.is(VKind::String) && B.is(VKind::String))
    return A.as<StringObj>()->S < B.as<StringObj>()->S;
  fail(fmt::format("'{}' orders numbers or strings, not {} and {}", Op,
                   describeValue(A), describeValue(B)));
}

const std::regex &Interpreter::regexOf(const Value &Pattern) {
  if (Pattern.is(VKind::Regex))
    return Pattern.as<RegexObj>()->Re;
  fail("expected a regex, got " + describeValue(Pattern));
}

bool Interpreter::matches(const Value &S, const Value &Pattern) {
  std::string Text;
  if (S.is(VKind::String))
    Text = S.as<StringObj>()->S;
  else if (S.is(VKind::Layer))
    Text = graph().Layers[S.asId()].Name;
  else
    fail("'~' matches strings, not " + describeValue(S));
  if (Pattern.is(VKind::String))
    return Text.find(Pattern.as<StringObj>()->S) != std::string::npos;
  return std::regex_search(Text, regexOf(Pattern));
}

bool Interpreter::contains(const Value &Coll, const Value &X) {
  switch (Coll.kind()) {
  case VKind::List:
    for (const Value &Y : Coll.as<ListObj>()->Items)
      if (equal(Y, X))
        return true;
    return false;
  case VKind::Range: {
    if (!X.is(VKind::Number) || !X.unit().plain())
      return false;
    auto *R = Coll.as<RangeObj>();
    double V = X.asNumber();
    return V == std::floor(V) && V >= R->Lo && V <= R->Hi;
  }
  case VKind::Set: {
    const TaskSet &B = Coll.as<SetObj>()->S;
    if (X.is(VKind::Task))
      return B.test(X.asId());
    if (X.is(VKind::Set))
      return X.as<SetObj>()->S.subtract(B).empty();
    return false;
  }
  case VKind::BlockSet: {
    const llvm::BitVector &B = Coll.as<BlockSetObj>()->Bits;
    if (X.is(VKind::Block))
      return X.asId() < B.size() && B.test(X.asId());
    if (X.is(VKind::BlockSet)) {
      llvm::BitVector Y = X.as<BlockSetObj>()->Bits;
      Y.resize(std::max(Y.size(), B.size()));
      llvm::BitVector Z = B;
      Z.resize(Y.size());
      return !Y.test(Z);
    }
    return false;
  }
  case VKind::String:
    if (!X.is(VKind::String))
      fail("'in' a string looks for a string, not " + describeValue(X));
    return Coll.as<StringObj>()->S.find(X.as<StringObj>()->S) !=
           std::string::npos;
  default:
    fail("'in' needs a list, a range, a task set, a block set or a string, "
         "not " +
         describeValue(Coll));
  }
}

Value Interpreter::index(const Value &Coll, const Value &Key) {
  double K = toNumber(Key, {}, "an index");
  if (K != std::floor(K))
    fail("an index is an integer, got " + show(Key));
  auto At = [&](int64_t Size) {
    // Compared as doubles first: an index beyond int64 has no cast.
    if (!(K >= -double(Size) && K < double(Size)))
      fail(fmt::format("index {} is out of range (size {})", show(Key), Size));
    int64_t I = static_cast<int64_t>(K);
    if (I < 0)
      I += Size;
    return I;
  };
  switch (Coll.kind()) {
  case VKind::List: {
    auto &Items = Coll.as<ListObj>()->Items;
    return Items[At(static_cast<int64_t>(Items.size()))];
  }
  case VKind::Range: {
    auto *R = Coll.as<RangeObj>();
    return Value::number(static_cast<double>(R->Lo + At(R->size())));
  }
  case VKind::String: {
    const std::string &S = Coll.as<StringObj>()->S;
    return Value::string(S.substr(At(static_cast<int64_t>(S.size())), 1));
  }
  default:
    fail("cannot index " + describeValue(Coll));
  }
}

Value Interpreter::slice(const Value &Coll, const Value &Lo, const Value &Hi) {
  // Python's rules: a left-out bound is the start or the end, a negative
  // one counts from the end, and either clamps to [0, size].
  auto Bound = [&](const Value &B, int64_t Size, int64_t Default) {
    if (B.is(VKind::None))
      return Default;
    double K = toNumber(B, {}, "a slice bound");
    if (K != std::floor(K))
      fail("a slice bound is an integer, got " + show(B));
    // Clamped as a double first: a bound beyond int64 has no cast.
    if (K < 0)
      K += double(Size);
    return static_cast<int64_t>(std::clamp<double>(K, 0, double(Size)));
  };
  auto Span = [&](int64_t Size) {
    int64_t Begin = Bound(Lo, Size, 0), End = Bound(Hi, Size, Size);
    return std::pair{Begin, std::max(Begin, End)};
  };
  switch (Coll.kind()) {
  case VKind::List: {
    auto &Items = Coll.as<ListObj>()->Items;
    auto [Begin, End] = Span(static_cast<int64_t>(Items.size()));
    chargeList(static_cast<size_t>(End - Begin));
    return Value::list(
        std::vector<Value>(Items.begin() + Begin, Items.begin() + End));
  }
  case VKind::Range: {
    auto *R = Coll.as<RangeObj>();
    auto [Begin, End] = Span(R->size());
    return Value::object(new RangeObj(R->Lo + Begin, R->Lo + End - 1));
  }
  case VKind::String: {
    const std::string &S = Coll.as<StringObj>()->S;
    auto [Begin, End] = Span(static_cast<int64_t>(S.size()));
    chargeString(static_cast<size_t>(End - Begin));
    return Value::string(S.substr(Begin, End - Begin));
  }
  default:
    fail("cannot slice " + describeValue(Coll) +
         " (slice a list, a range or a string)");
  }
}

std::string Interpreter::show(const Value &V) {
  if (!V.is(VKind::List))
    return showScalar(V);
  // Lists hold lists, a million deep if a loop made them so: the walk keeps
  // its own stack of the lists it is inside. Each item shown is a step,
  // and the text is bounded as a string is: a list that holds itself twice
  // at each of 60 levels is small but would print for ever.
  struct Open {
    const std::vector<Value> *Items;
    size_t Next;
  };
  std::vector<Open> Inside{{&V.as<ListObj>()->Items, 0}};
  std::string S = "[";
  while (!Inside.empty()) {
    Open &Top = Inside.back();
    const std::vector<Value> &Items = *Top.Items;
    if (Top.Next == Items.size()) {
      S += ']';
      Inside.pop_back();
      continue;
    }
    size_t I = Top.Next++;
    if (I)
      S += ", ";
    if (I == 20 && Items.size() > 21) {
      S += fmt::format("... {} more]", Items.size() - 20);
      Inside.pop_back();
      continue;
    }
    step();
    if (S.size() > MaxStringBytes)
      chargeString(S.size(), 0);
    const Value &X = Items[I];
    if (X.is(VKind::List)) {
      S += '[';
      Inside.push_back({&X.as<ListObj>()->Items, 0});
    } else if (X.is(VKind::String)) {
      S += '"' + X.as<StringObj>()->S + '"';
    } else {
      S += showScalar(X);
    }
  }
  return S;
}

std::string Interpreter::showScalar(const Value &V) {
  const graph::Graph &G = graph();
  switch (V.kind()) {
  case VKind::None:
    return "none";
  case VKind::Missing:
    return "<missing>";
  case VKind::Bool:
    return V.asBool() ? "true" : "false";
  case VKind::Number:
    return formatQuantity(V.asNumber(), V.unit());
  case VKind::String:
    return V.as<StringObj>()->S;
  case VKind::Regex:
    return "/" + V.as<RegexObj>()->Pattern + "/";
  case VKind::List:
    return show(V);
  case VKind::Range:
    return fmt::format("{}..{}", V.as<RangeObj>()->Lo, V.as<RangeObj>()->Hi);
  case VKind::Task: {
    graph::TaskId T = V.asId();
    return fmt::format(
        "task #{} \"{}\" ({}, {})", T, G.name(T),
        graph::taskKindName(G.Kind[T]),
        formatQuantity(static_cast<double>(G.Dur[T]), Dim::duration()));
  }
  case VKind::Set:
    return fmt::format("set of {} tasks", V.as<SetObj>()->S.count());
  case VKind::Layer:
    return "layer " + G.Layers[V.asId()].Name;
  case VKind::ModelBlock: {
    const graph::ModelBlocks &B = BlockSearches[V.asId() >> 16];
    uint32_t I = V.asId() & 0xffff;
    return fmt::format("model block {} of {} ({} layers from {})", I, B.Count,
                       B.Period, G.Layers[B.Layers[I * B.Period]].Name);
  }
  case VKind::Block:
    return showBlock(V.asId());
  case VKind::BlockSet:
    return fmt::format("set of {} blocks", V.as<BlockSetObj>()->Bits.count());
  case VKind::Resource:
    return G.Resources[V.asId()].Name;
  case VKind::Function:
    return "<function>";
  case VKind::Bound:
    return std::string("<method ") +
           bc::memberInfo(V.as<BoundObj>()->Method).Name + ">";
  case VKind::Device:
    return "device " +
           (V.asId() == 0 ? Env.Device.Name
                          : std::string(ops::gpuCatalogue()[V.asId() - 1].Key));
  case VKind::Trace:
    return "trace " + Env.TracePath;
  case VKind::Iterator:
    return "<iterator>";
  }
  return "?";
}

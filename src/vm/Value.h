//===- Value.h - Run-time values of the .dd VM ------------------*- C++ -*-===//
//
// A Value is 16 bytes: a kind, a unit (for numbers) and a payload: a bool, a
// double, a 32-bit id (task, layer, resource) or a reference-counted heap
// object (strings, regexes, lists, ranges, task sets, block sets, closures,
// bound methods, iterators). Task sets are bit vectors over task ids, block
// sets over the memory model's block ids; both are immutable once made.
//
//===----------------------------------------------------------------------===//
#ifndef DD_VM_VALUE_H
#define DD_VM_VALUE_H

#include "bytecode/Bytecode.h"
#include "support/Units.h"

#include "vm/TaskSet.h"

#include "llvm/ADT/BitVector.h"

#include <regex>
#include <string>
#include <vector>

namespace dd::vm {

enum class VKind : uint8_t {
  None,
  Missing, ///< an optional argument not given
  Bool,
  Number,
  String,
  Regex,
  List,
  Range,
  Task,
  Set,
  Layer,
  ModelBlock, ///< a model's repeated block (Interpreter::modelBlocks)
  Resource,
  Block,    ///< a memory block (id into the memory model)
  BlockSet, ///< a set of memory blocks
  Function,
  Bound, ///< a method bound to its object (set.where)
  Device,
  Trace,
  Iterator,
};

struct Obj {
  uint32_t Refs = 0;
  VKind Kind;
  explicit Obj(VKind K) : Kind(K) {}
  virtual ~Obj() = default;
};

class Value;

class Value {
public:
  Value() : K(VKind::None) { P.O = nullptr; }
  ~Value() { release(); }
  Value(const Value &O) : K(O.K), D(O.D), P(O.P) { retain(); }
  Value(Value &&O) noexcept : K(O.K), D(O.D), P(O.P) { O.K = VKind::None; }
  Value &operator=(const Value &O) {
    if (this != &O) {
      Value Tmp(O);
      swap(Tmp);
    }
    return *this;
  }
  Value &operator=(Value &&O) noexcept {
    if (this != &O) {
      release();
      K = O.K;
      D = O.D;
      P = O.P;
      O.K = VKind::None;
    }
    return *this;
  }
  void swap(Value &O) {
    std::swap(K, O.K);
    std::swap(D, O.D);
    std::swap(P, O.P);
  }

  static Value none() { return Value(); }
  static Value missing() {
    Value V;
    V.K = VKind::Missing;
    return V;
  }
  static Value boolean(bool B) {
    Value V;
    V.K = VKind::Bool;
    V.P.B = B;
    return V;
  }
  static Value number(double N, Dim Unit = {}) {
    Value V;
    V.K = VKind::Number;
    V.D = Unit;
    V.P.N = N;
    return V;
  }
  static Value id(VKind K, uint32_t Id) {
    Value V;
    V.K = K;
    V.P.Id = Id;
    return V;
  }
  static Value object(Obj *O) {
    Value V;
    V.K = O->Kind;
    V.P.O = O;
    ++O->Refs;
    return V;
  }
  static Value string(std::string S);
  static Value set(TaskSet S);
  static Value list(std::vector<Value> Items);

  VKind kind() const { return K; }
  Dim unit() const { return D; }
  bool is(VKind X) const { return K == X; }
  bool asBool() const { return P.B; }
  double asNumber() const { return P.N; }
  uint32_t asId() const { return P.Id; }
  Obj *asObj() const { return P.O; }
  template <typename T> T *as() const { return static_cast<T *>(P.O); }
  bool isObject() const {
    return K == VKind::String || K == VKind::Regex || K == VKind::List ||
           K == VKind::Range || K == VKind::Set || K == VKind::BlockSet ||
           K == VKind::Function || K == VKind::Bound || K == VKind::Iterator;
  }

private:
  VKind K;
  Dim D;
  union Payload {
    bool B;
    double N;
    uint32_t Id;
    Obj *O;
  } P;

  void retain() {
    if (isObject() && P.O)
      ++P.O->Refs;
  }
  void release() {
    if (isObject() && P.O && --P.O->Refs == 0)
      destroy(P.O);
  }
  /// Deletes \p O, and what only it held, without recursing (Value.cpp).
  static void destroy(Obj *O);
};

struct StringObj : Obj {
  std::string S;
  explicit StringObj(std::string Str) : Obj(VKind::String), S(std::move(Str)) {}
};

struct RegexObj : Obj {
  std::string Pattern;
  std::regex Re;
  RegexObj(std::string P, std::regex R)
      : Obj(VKind::Regex), Pattern(std::move(P)), Re(std::move(R)) {}
};

struct ListObj : Obj {
  std::vector<Value> Items;
  explicit ListObj(std::vector<Value> I)
      : Obj(VKind::List), Items(std::move(I)) {}
};

/// lo..hi, inclusive.
struct RangeObj : Obj {
  int64_t Lo, Hi;
  RangeObj(int64_t L, int64_t H) : Obj(VKind::Range), Lo(L), Hi(H) {}
  int64_t size() const { return Hi >= Lo ? Hi - Lo + 1 : 0; }
};

struct SetObj : Obj {
  TaskSet S;
  explicit SetObj(TaskSet X) : Obj(VKind::Set), S(std::move(X)) {}
};

struct BlockSetObj : Obj {
  llvm::BitVector Bits;
  explicit BlockSetObj(llvm::BitVector B)
      : Obj(VKind::BlockSet), Bits(std::move(B)) {}
};

struct ClosureObj : Obj {
  uint32_t Function;
  std::vector<Value> Captures;
  ClosureObj(uint32_t F, std::vector<Value> C)
      : Obj(VKind::Function), Function(F), Captures(std::move(C)) {}
};

struct BoundObj : Obj {
  Value Self;
  bc::MemberId Method;
  BoundObj(Value S, bc::MemberId M)
      : Obj(VKind::Bound), Self(std::move(S)), Method(M) {}
};

struct IteratorObj : Obj {
  Value Source;
  size_t Pos = 0; ///< list index, range offset, or next set bit to search
  explicit IteratorObj(Value S) : Obj(VKind::Iterator), Source(std::move(S)) {}
};

inline Value Value::string(std::string S) {
  return object(new StringObj(std::move(S)));
}
inline Value Value::set(TaskSet S) { return object(new SetObj(std::move(S))); }
inline Value Value::list(std::vector<Value> Items) {
  return object(new ListObj(std::move(Items)));
}

/// What messages call a kind ("a task set", "a duration", ...).
std::string describeValue(const Value &V);

} // namespace dd::vm

#endif

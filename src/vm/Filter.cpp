//===- Filter.cpp - select: predicates as native loops over all tasks -----===//
//
// A filter program is a small tree. Each node is evaluated once, over every
// task at the same time: property nodes produce columns (a number, a string
// id, an enum or an id per task), captured values are constants, and
// comparisons, matches and boolean operators produce bit masks. A select
// over a million tasks is a handful of tight loops, whatever the predicate.
// A block select ("select block where ...") runs the same loops over the
// memory model's blocks; its columns come from Blocks.cpp.
//
//===----------------------------------------------------------------------===//

#include "graph/Edit.h"
#include "graph/KernelClass.h"
#include "support/Work.h"
#include "vm/FilterColumns.h"
#include "vm/TaskProperties.h"
#include "vm/VMImpl.h"

#include <array>
#include <cmath>
#include <optional>

using namespace dd;
using namespace dd::vm;
using bc::FilterOp;
using bc::MemberId;
using graph::TaskId;
using namespace dd::vm::filter;

namespace {

class FilterEval {
public:
  /// Over every task (every block), or over the tasks of \p Dom only
  /// (ascending ids): position I of a column is task(I).
  FilterEval(Interpreter &I, const bc::FilterProgram &F, const Value *Caps,
             const std::vector<TaskId> *Dom = nullptr)
      : I(I), G(I.graph()), F(F), Caps(Caps), Dom(Dom),
        N(Dom        ? Dom->size()
          : F.Blocks ? I.numBlocks()
                     : G.numTasks()) {}

  /// The positions that pass: of blocks for a block select, else of tasks
  /// (live, of a selected kind).
  llvm::BitVector run() {
    Node Root = eval(static_cast<uint16_t>(F.Nodes.size() - 1));
    llvm::BitVector M = toMask(Root);
    if (F.Blocks)
      return M;
    llvm::BitVector Cand(N);
    for (size_t P = 0; P < N; ++P) {
      TaskId T = task(P);
      if (!G.isRemoved(T) &&
          ((F.KindMask >> static_cast<unsigned>(G.Kind[T])) & 1))
        Cand.set(P);
    }
    M &= Cand;
    work::add(work::Counter::VmFilterTasks, N);
    return M;
  }

private:
  Interpreter &I;
  const graph::Graph &G;
  const bc::FilterProgram &F;
  const Value *Caps;
  const std::vector<TaskId> *Dom;
  size_t N;
  TaskId task(size_t P) const {
    return Dom ? (*Dom)[P] : static_cast<TaskId>(P);
  }
  std::vector<graph::ResourceId> ResOf; ///< tasks' resources, containers too

  /// A task's resource; a container's is its leaves'. Over a domain, task
  /// by task; else for every task at once.
  graph::ResourceId resourceOf(TaskId T) {
    if (!Dom)
      return resources()[T];
    if (G.Res[T] != graph::NoResource || !G.isContainer(T))
      return G.Res[T];
    I.ensureFinalized();
    std::vector<TaskId> L = G.leavesOf(T);
    return L.empty() ? graph::NoResource : G.Res[L.front()];
  }
  const std::vector<graph::ResourceId> &resources() {
    if (!ResOf.empty())
      return ResOf;
    I.ensureFinalized();
    ResOf = G.Res;
    for (const auto &Seq : G.ResourceTasks)
      for (TaskId L : Seq)
        for (TaskId P = G.Parent[L]; P != graph::NoTask; P = G.Parent[P])
          if (ResOf[P] == graph::NoResource)
            ResOf[P] = G.Res[L];
    return ResOf;
  }

  Node column(MemberId M) {
    if (F.Blocks)
      return blockColumn(I, M);
    if (!props::isTaskProperty(M))
      fail("internal error: property not usable in a predicate");
    // A task's own values: one accessor each (TaskProperties.h), which the
    // member t.M reads too.
    auto ResourceOf = [&](TaskId T) { return resourceOf(T); };
    props::Source S{I, G, ResourceOf};
    return props::withTaskProperty(M, S, [&](const auto &A) {
      Node C;
      C.Type = A.Type;
      C.Unit = A.Unit;
      if constexpr (std::decay_t<decltype(A)>::Type == Col::Num) {
        C.Num.resize(N);
        for (size_t P = 0; P < N; ++P)
          C.Num[P] = A.Get(task(P));
      } else {
        C.Ids.resize(N);
        for (size_t P = 0; P < N; ++P)
          C.Ids[P] = A.Get(task(P));
      }
      return C;
    });
  }

  Node layerColumn(MemberId M) {
    Node C;
    // Blocks: the layer of the task that allocated them.
    const std::vector<graph::LayerId> &LayerOf =
        F.Blocks ? I.mem("select block").AllocLayer : G.LayerOf;
    // Blocks are never a domain's: position P is block P.
    if (M == MemberId::Layer_index) {
      C.Type = Col::Num;
      C.Num.resize(N);
      for (size_t P = 0; P < N; ++P) {
        graph::LayerId L = LayerOf[task(P)];
        C.Num[P] = L == graph::NoLayer ? std::nan("")
                                       : static_cast<double>(G.Layers[L].Index);
      }
      return C;
    }
    // Layer names as string ids of the graph's pool.
    std::vector<uint32_t> NameOf(G.Layers.size());
    for (size_t L = 0; L < G.Layers.size(); ++L)
      NameOf[L] = I.strings().intern(G.Layers[L].Name);
    C.Type = Col::Str;
    C.Ids.resize(N);
    for (size_t P = 0; P < N; ++P) {
      graph::LayerId L = LayerOf[task(P)];
      C.Ids[P] = L == graph::NoLayer ? NoId : NameOf[L];
    }
    return C;
  }

  /// The name of id \p Id in a column of type \p Ty (for matches).
  std::string nameOf(Col Ty, uint32_t Id) {
    switch (Ty) {
    case Col::Str:
      return Id == NoId ? "" : std::string(G.Strings.str(Id));
    case Col::Kind:
      return graph::taskKindName(static_cast<graph::TaskKind>(Id));
    case Col::Phase:
      return graph::phaseName(static_cast<graph::Phase>(Id));
    case Col::Layer:
      return Id == NoId ? "" : G.Layers[Id].Name;
    case Col::Res:
      return Id == NoId ? "" : G.Resources[Id].Name;
    case Col::Task:
      return Id == NoId ? "" : std::string(G.name(Id));
    default:
      return "";
    }
  }

  /// Whether id \p Id of column type \p Ty equals value \p V.
  bool idEquals(Col Ty, uint32_t Id, const Value &V) {
    switch (V.kind()) {
    case VKind::None:
      return Id == NoId;
    case VKind::String:
      return Id != NoId && nameOf(Ty, Id) == V.as<StringObj>()->S;
    case VKind::Layer:
      return Ty == Col::Layer && Id == V.asId();
    case VKind::Resource:
      return Ty == Col::Res && Id == V.asId();
    case VKind::Task:
      return Ty == Col::Task && Id == V.asId();
    case VKind::Number:
      return Ty == Col::Res && Id != NoId &&
             static_cast<double>(G.Resources[Id].Id) == V.asNumber();
    case VKind::Bool:
      return Ty == Col::Bool && (Id != 0) == V.asBool();
    default:
      return false;
    }
  }

  /// A per-id table of \p Pred for a column whose ids are few (names,
  /// kinds, layers, resources): each distinct id is tested once.
  template <typename Pred> llvm::BitVector byId(const Node &A, Pred P) {
    // NoId (no layer, no resource) is DenseMap's empty key: it cannot be a
    // key, so its answer is kept apart.
    llvm::DenseMap<uint32_t, bool> Cache;
    std::optional<bool> None;
    llvm::BitVector Out(N);
    for (TaskId T = 0; T < N; ++T) {
      uint32_t Id = A.Ids[T];
      if (Id == NoId) {
        if (!None)
          None = P(Id);
        if (*None)
          Out.set(T);
        continue;
      }
      auto [It, New] = Cache.try_emplace(Id, false);
      if (New)
        It->second = P(Id);
      if (It->second)
        Out.set(T);
    }
    return Out;
  }

  static bool cmp(unsigned Op, double A, double B) {
    switch (Op) {
    case 0:
      return A == B;
    case 1:
      return A != B;
    case 2:
      return A < B;
    case 3:
      return A <= B;
    case 4:
      return A > B;
    default:
      return A >= B;
    }
  }

  double numAt(const Node &A, TaskId T) {
    return A.Type == Col::Const ? A.Const.asNumber() : A.Num[T];
  }
  bool isNum(const Node &A) {
    return A.Type == Col::Num ||
           (A.Type == Col::Const && A.Const.is(VKind::Number));
  }
  Dim unitOf(const Node &A) {
    return A.Type == Col::Const ? A.Const.unit() : A.Unit;
  }

  llvm::BitVector compare(unsigned Op, Node &A, Node &B) {
    llvm::BitVector Out(N);
    if (A.Type == Col::Const && B.Type == Col::Const) {
      bool R = Op == 0   ? I.equal(A.Const, B.Const)
               : Op == 1 ? !I.equal(A.Const, B.Const)
               : Op == 2 ? I.less(A.Const, B.Const, "<")
               : Op == 3 ? !I.less(B.Const, A.Const, "<=")
               : Op == 4 ? I.less(B.Const, A.Const, ">")
                         : !I.less(A.Const, B.Const, ">=");
      if (R)
        Out.set();
      return Out;
    }
    // Numbers a task may lack (iteration, start, layer.index) are none.
    if (Op <= 1 && A.Type == Col::Num && B.Type == Col::Const &&
        B.Const.is(VKind::None)) {
      for (TaskId T = 0; T < N; ++T)
        if (std::isnan(A.Num[T]) == (Op == 0))
          Out.set(T);
      return Out;
    }
    if (isNum(A) && isNum(B)) {
      if (unitOf(A) != unitOf(B))
        fail("comparing " + describeValue(Value::number(0, unitOf(A))) +
             " with " + describeValue(Value::number(0, unitOf(B))) +
             " in a select predicate");
      for (TaskId T = 0; T < N; ++T)
        if (cmp(Op, numAt(A, T), numAt(B, T)))
          Out.set(T);
      return Out;
    }
    if (A.Type == Col::Const)
      return compare(Op == 2   ? 4
                     : Op == 3 ? 5
                     : Op == 4 ? 2
                     : Op == 5 ? 3
                               : Op,
                     B, A);
    if (Op > 1)
      fail("'<', '<=', '>' and '>=' in a select predicate compare numbers");
    if (B.Type == Col::Const) {
      if (A.Type == Col::Num)
        fail("comparing a number property with " + describeValue(B.Const));
      Out = byId(A, [&](uint32_t Id) { return idEquals(A.Type, Id, B.Const); });
    } else {
      if (A.Type != B.Type)
        fail("comparing task properties of different kinds");
      for (TaskId T = 0; T < N; ++T)
        if (A.Ids[T] == B.Ids[T])
          Out.set(T);
    }
    if (Op == 1)
      Out.flip();
    return Out;
  }

  llvm::BitVector match(Node &A, Node &B) {
    if (B.Type != Col::Const)
      fail("the pattern of '~' in a select predicate must not depend on the "
           "task");
    if (A.Type == Col::Num || A.Type == Col::Bool || A.Type == Col::Const)
      fail("'~' matches names, not numbers");
    const Value &Pat = B.Const;
    if (!Pat.is(VKind::Regex) && !Pat.is(VKind::String))
      fail("'~' takes a regex (/.../) or a string, not " + describeValue(Pat));
    return byId(A, [&](uint32_t Id) {
      if (Id == NoId)
        return false;
      return I.matches(Value::string(nameOf(A.Type, Id)), Pat);
    });
  }

  llvm::BitVector in(Node &A, Node &B) {
    if (B.Type != Col::Const)
      fail("the collection of 'in' must not depend on the task");
    const Value &C = B.Const;
    llvm::BitVector Out(N);
    if (isNum(A)) {
      for (TaskId T = 0; T < N; ++T)
        if (I.contains(C, Value::number(numAt(A, T), unitOf(A))))
          Out.set(T);
      return Out;
    }
    if (A.Type == Col::Task && C.is(VKind::Set)) {
      const TaskSet &S = C.as<SetObj>()->S;
      for (size_t P = 0; P < N; ++P)
        if (A.Ids[P] != NoId && S.test(A.Ids[P]))
          Out.set(P);
      return Out;
    }
    if (!C.is(VKind::List))
      fail("'in' a " + describeValue(C) + " tests numbers; use a list here");
    return byId(A, [&](uint32_t Id) {
      for (const Value &X : C.as<ListObj>()->Items)
        if (idEquals(A.Type, Id, X))
          return true;
      return false;
    });
  }

  Node arith(unsigned Op, Node &A, Node &B) {
    if (!isNum(A) || !isNum(B))
      fail("arithmetic in a select predicate is on numbers");
    static const bc::Opcode Ops[] = {bc::Opcode::Add, bc::Opcode::Sub,
                                     bc::Opcode::Mul, bc::Opcode::Div,
                                     bc::Opcode::Mod};
    // The unit of the result, checked once on sample values.
    Value U = I.arith(Ops[Op], Value::number(1, unitOf(A)),
                      Value::number(1, unitOf(B)));
    Node C;
    C.Type = Col::Num;
    C.Unit = U.unit();
    C.Num.resize(N);
    for (TaskId T = 0; T < N; ++T) {
      double X = numAt(A, T), Y = numAt(B, T);
      C.Num[T] = Op == 0   ? X + Y
                 : Op == 1 ? X - Y
                 : Op == 2 ? X * Y
                 : Op == 3 ? X / Y
                           : std::fmod(X, Y);
    }
    return C;
  }

  llvm::BitVector toMask(Node &A) {
    if (A.IsMask)
      return std::move(A.Mask);
    llvm::BitVector Out(N);
    switch (A.Type) {
    case Col::Const:
      if (I.truthy(A.Const))
        Out.set();
      return Out;
    case Col::Num:
      for (TaskId T = 0; T < N; ++T)
        if (A.Num[T] != 0 && !std::isnan(A.Num[T]))
          Out.set(T);
      return Out;
    case Col::Task:
      for (TaskId T = 0; T < N; ++T)
        if (A.Ids[T] != NoId)
          Out.set(T);
      return Out;
    case Col::Bool:
    case Col::Kind:
    case Col::Phase:
      for (TaskId T = 0; T < N; ++T)
        if (A.Ids[T] != 0 || A.Type != Col::Bool)
          Out.set(T);
      return Out;
    default:
      for (TaskId T = 0; T < N; ++T)
        if (A.Ids[T] != NoId && A.Ids[T] != 0)
          Out.set(T);
      return Out;
    }
  }

  Node mask(llvm::BitVector M) {
    Node Out;
    Out.IsMask = true;
    Out.Mask = std::move(M);
    return Out;
  }

  Node eval(uint16_t Index) {
    const bc::FilterNode &X = F.Nodes[Index];
    switch (X.Op) {
    case FilterOp::True: {
      llvm::BitVector All(N);
      All.set();
      return mask(std::move(All));
    }
    case FilterOp::Prop:
      return column(static_cast<MemberId>(X.Sub));
    case FilterOp::LayerProp:
      return layerColumn(static_cast<MemberId>(X.Sub));
    case FilterOp::Capture: {
      Node C;
      C.Type = Col::Const;
      C.Const = Caps[X.A];
      return C;
    }
    case FilterOp::Arith: {
      Node A = eval(X.A), B = eval(X.B);
      return arith(X.Sub, A, B);
    }
    case FilterOp::Compare: {
      Node A = eval(X.A), B = eval(X.B);
      return mask(compare(X.Sub, A, B));
    }
    case FilterOp::Match:
    case FilterOp::NotMatch: {
      Node A = eval(X.A), B = eval(X.B);
      llvm::BitVector M = match(A, B);
      if (X.Op == FilterOp::NotMatch)
        M.flip();
      return mask(std::move(M));
    }
    case FilterOp::In: {
      Node A = eval(X.A), B = eval(X.B);
      return mask(in(A, B));
    }
    case FilterOp::And:
    case FilterOp::Or: {
      Node A = eval(X.A), B = eval(X.B);
      llvm::BitVector M = toMask(A), R = toMask(B);
      if (X.Op == FilterOp::And)
        M &= R;
      else
        M |= R;
      return mask(std::move(M));
    }
    case FilterOp::Not: {
      Node A = eval(X.A);
      llvm::BitVector M = toMask(A);
      M.flip();
      return mask(std::move(M));
    }
    case FilterOp::Truthy: {
      Node A = eval(X.A);
      return mask(toMask(A));
    }
    }
    fail("internal error: bad filter node");
  }
};

} // namespace

namespace {
/// What a predicate requires of every task it passes, where a chain of
/// `and`s says it with captured values: its iteration (`iteration == N`)
/// and its layer (`layer == L`). The select then runs over those tasks only.
struct Required {
  std::optional<double> Iteration;
  std::optional<uint32_t> Layer;
};

void required(const bc::FilterProgram &F, uint16_t Index, const Value *Caps,
              Required &R) {
  const bc::FilterNode &X = F.Nodes[Index];
  if (X.Op == FilterOp::And) {
    required(F, X.A, Caps, R);
    required(F, X.B, Caps, R);
    return;
  }
  if (X.Op != FilterOp::Compare || X.Sub != 0)
    return;
  auto Is = [&](uint16_t I, MemberId M) {
    return F.Nodes[I].Op == FilterOp::Prop &&
           static_cast<MemberId>(F.Nodes[I].Sub) == M;
  };
  auto Captured = [&](uint16_t I) -> const Value * {
    return F.Nodes[I].Op == FilterOp::Capture ? &Caps[F.Nodes[I].A] : nullptr;
  };
  for (auto [P, C] : {std::pair(X.A, X.B), std::pair(X.B, X.A)}) {
    const Value *V = Captured(C);
    if (!V)
      continue;
    if (Is(P, MemberId::Task_iteration) && V->is(VKind::Number) &&
        V->unit().plain())
      R.Iteration = V->asNumber();
    if (Is(P, MemberId::Task_layer) && V->is(VKind::Layer))
      R.Layer = V->asId();
  }
}
} // namespace

Value Interpreter::select(const bc::FilterProgram &F, const Value *Captures) {
  if (F.Blocks)
    return selectBlocks(F, Captures);
  const graph::Graph &G = graph();
  Required R;
  if (!F.Nodes.empty())
    required(F, static_cast<uint16_t>(F.Nodes.size() - 1), Captures, R);
  TaskSet Out;
  if (R.Iteration) {
    // One iteration's tasks (of one layer): what they hold, not the graph.
    static const std::vector<TaskId> None;
    const std::vector<TaskId> *Dom = &None;
    const TaskIndex &X = taskIndex();
    if (auto It = X.IterationByNumber.find(*R.Iteration);
        It != X.IterationByNumber.end()) {
      if (!R.Layer)
        Dom = &X.ByIteration[It->second];
      else if (auto Hit = X.ByIterationLayer.find((uint64_t(It->second) << 32) |
                                                  *R.Layer);
               Hit != X.ByIterationLayer.end())
        Dom = &Hit->second;
    }
    step(Dom->size() / 4096);
    llvm::BitVector Pass = FilterEval(*this, F, Captures, Dom).run();
    std::vector<uint32_t> Ids;
    for (int P = Pass.find_first(); P >= 0; P = Pass.find_next(P))
      Ids.push_back((*Dom)[static_cast<size_t>(P)]);
    Out = TaskSet::fromSorted(std::move(Ids));
  } else {
    step(G.numTasks() / 4096); // a select costs like a short loop
    Out = TaskSet(FilterEval(*this, F, Captures).run());
  }
  EverSelected.resize(G.numTasks());
  Out.addTo(EverSelected);
  return taskSet(std::move(Out));
}

Value Interpreter::selectBlocks(const bc::FilterProgram &F,
                                const Value *Captures) {
  // A trace without memory records has no blocks: the set is empty.
  if (!hasMemory())
    return blockSet(noBlocks());
  step(numBlocks() / 4096);
  return blockSet(FilterEval(*this, F, Captures).run());
}

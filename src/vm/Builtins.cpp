//===- Builtins.cpp - Functions every model can call ----------------------===//

#include "ops/Gpus.h"
#include "support/Diagnostics.h"
#include "vm/VMImpl.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::vm;
using bc::BuiltinId;

static bool given(const std::vector<Value> &Args, size_t I) {
  return I < Args.size() && !Args[I].is(VKind::Missing);
}

/// The elements of a list, range, set or string, as values.
static std::vector<Value> elements(Interpreter &I, const Value &V,
                                   const char *Role) {
  switch (V.kind()) {
  case VKind::List:
    I.chargeList(V.as<ListObj>()->Items.size());
    return V.as<ListObj>()->Items;
  case VKind::Range: {
    std::vector<Value> Out;
    auto *R = V.as<RangeObj>();
    if (R->Hi >= R->Lo)
      I.chargeList(static_cast<size_t>(R->Hi - R->Lo) + 1);
    for (int64_t X = R->Lo; X <= R->Hi; ++X)
      Out.push_back(Value::number(static_cast<double>(X)));
    return Out;
  }
  case VKind::Set: {
    std::vector<Value> Out;
    for (graph::TaskId T : I.inOrder(V.as<SetObj>()->S))
      Out.push_back(Value::id(VKind::Task, T));
    return Out;
  }
  case VKind::Task:
    return {V};
  case VKind::BlockSet: {
    std::vector<Value> Out;
    for (memory::BlockId B : I.blocksInOrder(V.as<BlockSetObj>()->Bits))
      Out.push_back(Value::id(VKind::Block, B));
    return Out;
  }
  default:
    fail(std::string(Role) +
         " takes a list, a range, a task set or a block set, not " +
         describeValue(V));
  }
}

Value Interpreter::builtin(BuiltinId Id, std::vector<Value> &Args) {
  auto Num = [&](size_t I, const char *Role) -> const Value & {
    if (!Args[I].is(VKind::Number))
      fail(std::string(Role) + " takes a number, not " +
           describeValue(Args[I]));
    return Args[I];
  };
  auto Rounded = [&](double (*F)(double)) {
    const Value &X = Num(0, bc::builtinInfo(Id).Name);
    return Value::number(F(X.asNumber()), X.unit());
  };
  switch (Id) {
  case BuiltinId::len:
    switch (Args[0].kind()) {
    case VKind::String:
      return Value::number(
          static_cast<double>(Args[0].as<StringObj>()->S.size()));
    case VKind::Set:
      return Value::number(
          static_cast<double>(inOrder(Args[0].as<SetObj>()->S).size()));
    case VKind::List:
      return Value::number(
          static_cast<double>(Args[0].as<ListObj>()->Items.size()));
    case VKind::Range: {
      auto *R = Args[0].as<RangeObj>();
      return Value::number(
          static_cast<double>(R->Hi >= R->Lo ? R->Hi - R->Lo + 1 : 0));
    }
    default:
      return Value::number(
          static_cast<double>(elements(*this, Args[0], "len").size()));
    }
  case BuiltinId::sum: {
    std::vector<Value> Items = elements(*this, Args[0], "sum");
    if (Items.empty())
      return Value::number(0);
    Value Acc;
    for (size_t I = 0; I < Items.size(); ++I) {
      Value X = given(Args, 1) ? call(Args[1], {Items[I]}) : Items[I];
      Acc = I == 0 ? X : arith(bc::Opcode::Add, Acc, X);
    }
    return Acc;
  }
  case BuiltinId::min:
  case BuiltinId::max: {
    std::vector<Value> Items =
        Args.size() == 1 ? elements(*this, Args[0], bc::builtinInfo(Id).Name)
                         : Args;
    if (Items.empty())
      fail(std::string(bc::builtinInfo(Id).Name) + " of nothing");
    Value Best = Items[0];
    for (size_t I = 1; I < Items.size(); ++I) {
      bool Better = Id == BuiltinId::min ? less(Items[I], Best, "min")
                                         : less(Best, Items[I], "max");
      if (Better)
        Best = Items[I];
    }
    return Best;
  }
  case BuiltinId::abs:
    return Rounded(std::fabs);
  case BuiltinId::ceil:
    return Rounded(std::ceil);
  case BuiltinId::floor:
    return Rounded(std::floor);
  case BuiltinId::round:
    return Rounded(std::round);
  case BuiltinId::sqrt: {
    const Value &X = Num(0, "sqrt");
    if (X.asNumber() < 0)
      fail("sqrt of a negative number");
    if (X.unit().Bytes % 2 || X.unit().Time % 2)
      fail("sqrt of " + describeValue(X) + " has no unit");
    return Value::number(std::sqrt(X.asNumber()),
                         {static_cast<int8_t>(X.unit().Bytes / 2),
                          static_cast<int8_t>(X.unit().Time / 2)});
  }
  case BuiltinId::str:
    return Value::string(show(Args[0]));
  case BuiltinId::range: {
    double A = 0, B = 0;
    if (given(Args, 1)) {
      A = toNumber(Args[0], {}, "range's start");
      B = toNumber(Args[1], {}, "range's end");
    } else {
      B = toNumber(Args[0], {}, "range's size");
    }
    if (A != std::floor(A) || B != std::floor(B))
      fail("range takes integers");
    // Past 2^53, X + 1 can be X: the loop below would never end.
    if (std::fabs(A) > MaxRangeEnd || std::fabs(B) > MaxRangeEnd)
      fail("range takes integers from -2^53 to 2^53 (9,007,199,254,740,992)");
    std::vector<Value> Out;
    if (B - A > double(MaxListItems))
      fail("range of over 10 million numbers");
    chargeList(static_cast<size_t>(std::max(0.0, B - A)));
    for (double X = A; X < B; ++X)
      Out.push_back(Value::number(X));
    return Value::list(std::move(Out));
  }
  case BuiltinId::list:
    return Value::list(elements(*this, Args[0], "list"));
  case BuiltinId::set:
    return given(Args, 0) ? taskSet(toSet(Args[0], "set")) : taskSet(TaskSet());
  case BuiltinId::sorted: {
    std::vector<Value> Items = elements(*this, Args[0], "sorted");
    std::vector<std::pair<Value, Value>> Keyed;
    for (Value &X : Items)
      Keyed.push_back({given(Args, 1) ? call(Args[1], {X}) : X, X});
    std::stable_sort(Keyed.begin(), Keyed.end(),
                     [&](const auto &A, const auto &B) {
                       return less(A.first, B.first, "sorted");
                     });
    std::vector<Value> Out;
    for (auto &[K, V] : Keyed)
      Out.push_back(V);
    return Value::list(std::move(Out));
  }
  case BuiltinId::tasks: {
    llvm::BitVector All(graph().numTasks());
    for (graph::TaskId T = 0; T < graph().numTasks(); ++T)
      if (!graph().isRemoved(T))
        All.set(T);
    return taskSet(std::move(All));
  }
  case BuiltinId::buckets: {
    std::vector<Value> Items = elements(*this, Args[0], "buckets");
    const Value &Cap = Args[2];
    if (!Cap.is(VKind::Number))
      fail("buckets' cap must be a number, not " + describeValue(Cap));
    std::vector<Value> Out;
    std::vector<Value> Cur;
    double Filled = 0;
    for (Value &X : Items) {
      Value Size = call(Args[1], {X});
      if (!Size.is(VKind::Number) || Size.unit() != Cap.unit())
        fail("buckets: size(item) gave " + describeValue(Size) +
             ", the cap is " + describeValue(Cap));
      double S = Size.asNumber();
      if (!Cur.empty() && Filled + S > Cap.asNumber()) {
        Out.push_back(Value::list(std::move(Cur)));
        Cur.clear();
        Filled = 0;
      }
      Cur.push_back(X);
      Filled += S;
    }
    if (!Cur.empty())
      Out.push_back(Value::list(std::move(Cur)));
    return Value::list(std::move(Out));
  }
  case BuiltinId::simulate: {
    if (!Env.Simulate)
      fail("simulate() needs a trace (this run has none)");
    ensureFinalized();
    finishSchedules();
    auto Time = Env.Simulate(Result.Policy);
    if (!Time)
      fail("simulate(): " + llvm::toString(Time.takeError()));
    return Value::number(static_cast<double>(*Time), Dim::duration());
  }
  case BuiltinId::baseline:
    return Value::number(static_cast<double>(Env.BaselineNs), Dim::duration());
  case BuiltinId::gpu: {
    if (!Args[0].is(VKind::String))
      fail("gpu() takes a GPU's key, a string, got " + describeValue(Args[0]));
    const std::string &Key = Args[0].as<StringObj>()->S;
    const ops::GpuSpec *Spec = ops::findGpu(Key);
    if (!Spec) {
      // The catalogue is long: the closest key, and where the rest are.
      std::vector<std::string> Keys;
      for (const ops::GpuSpec &G : ops::gpuCatalogue())
        Keys.push_back(G.Key);
      std::string Near = closestMatch(Key, Keys);
      fail("gpu(\"" + Key + "\"): not in the catalogue of " +
           std::to_string(Keys.size()) + " GPUs" +
           (Near.empty() ? "" : " (did you mean \"" + Near + "\"?)") +
           "; docs/models.md lists them");
    }
    // Id 0 is the traced GPU; the catalogue's entries follow.
    return Value::id(VKind::Device,
                     static_cast<uint32_t>(Spec - ops::gpuCatalogue().data()) +
                         1);
  }
  case BuiltinId::model_blocks:
    return modelBlocks(given(Args, 0) ? Num(0, "model_blocks()").asNumber()
                                      : 2);
  case BuiltinId::worker_thread:
    if (!Args[0].is(VKind::String))
      fail("worker_thread() takes the thread's name, a string, got " +
           describeValue(Args[0]));
    if (Args[0].as<StringObj>()->S.empty())
      fail("worker_thread() needs a name, got an empty string");
    return workerThread(Args[0].as<StringObj>()->S);
  case BuiltinId::peak:
  case BuiltinId::baseline_peak:
    return peak(Id == BuiltinId::baseline_peak);
  case BuiltinId::__device:
    return Value::id(VKind::Device, 0);
  case BuiltinId::__trace:
    return Value::id(VKind::Trace, 0);
  case BuiltinId::NumBuiltins:
    break;
  }
  // Every row of Builtins.def has its case above, without a default: a new
  // row without one does not build (-Wswitch); the compiler calls none with
  // NumBuiltins.
  llvm_unreachable("NumBuiltins is not a builtin");
}

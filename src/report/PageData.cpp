//===- PageData.cpp - The data the HTML report draws ----------------------===//
//
// One JSON object, embedded in the page, that report.js draws from: the
// leaves of each resource on the two schedules compared (times relative to
// each window's start), per-phase and per-layer totals, memory curves, the
// sweep, the roofline's kernels, the ranked what-ifs of `opportunities` and
// the rows of `compare`.
// Compact: tasks are flat integer arrays, names an indexed table.
// docs/report.md describes each view.
//
//===----------------------------------------------------------------------===//

#include "report/ReportImpl.h"
#include "support/Format.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::report;
using namespace dd::report::detail;

namespace {

/// Bits above the kind (0-6) in a task's code.
enum : unsigned {
  CodeChanged = 8,
  CodeInserted = 16,
  CodeRemoved = 32,
  CodeCritical = 64
};

/// More points than this per memory curve are thinned to the first, lowest,
/// highest and last of each of MemoryBuckets time buckets.
constexpr size_t MaxMemoryPoints = 4000;
constexpr size_t MemoryBuckets = 1000;

class PageWriter {
public:
  PageWriter(const RunData &D, const Roofline &RF, std::string &Out)
      : D(D), RF(RF), G(*D.G), W(Out), Before(D.before()), After(D.after()),
        BW(window(D, Before)), AW(window(D, After)) {}
  void write();

private:
  const RunData &D;
  const Roofline &RF;
  const Graph &G;
  JsonWriter W;
  const Schedule &Before, &After;
  Span BW, AW;
  std::vector<std::string> Names;
  llvm::DenseMap<uint32_t, uint32_t> NameIndex; // StringId -> Names

  uint32_t nameOf(TaskId T);
  void tasks(const Schedule &S, Span Win, ResourceId R,
             const llvm::BitVector &Critical,
             const std::vector<std::vector<TaskId>> &ByRes);
  void timeline();
  void iterations(const Schedule &S, Span Win);
  void bars();
  void memoryCurve(const memory::Curve &C, Span Win);
  void memory();
  void sweep();
  void roofline();
  void opportunities();
  void comparison();
};

uint32_t PageWriter::nameOf(TaskId T) {
  auto [It, New] = NameIndex.try_emplace(G.Name[T], Names.size());
  if (New)
    Names.emplace_back(G.name(T));
  return It->second;
}

void PageWriter::tasks(const Schedule &S, Span Win, ResourceId R,
                       const llvm::BitVector &Critical,
                       const std::vector<std::vector<TaskId>> &ByRes) {
  W.beginArray();
  for (TaskId T : ByRes[R]) {
    unsigned Code = static_cast<unsigned>(G.Kind[T]);
    uint8_t F = G.Flags[T];
    if (F & graph::TF_Changed)
      Code |= CodeChanged;
    if (F & graph::TF_Inserted)
      Code |= CodeInserted;
    if (F & graph::TF_Removed)
      Code |= CodeRemoved;
    if (Critical.size() && Critical.test(T))
      Code |= CodeCritical;
    W.value(S.Start[T] - Win.Begin).value(S.End[T] - S.Start[T]);
    W.value(nameOf(T)).value(Code);
  }
  W.endArray();
}

void PageWriter::iterations(const Schedule &S, Span Win) {
  W.beginArray();
  for (size_t I = 0; I < G.Iterations.size(); ++I) {
    Span It = S.Iterations[I];
    if (It.Begin < Win.End && It.End > Win.Begin)
      W.beginArray()
          .value(G.Iterations[I].Label)
          .value(It.Begin - Win.Begin)
          .value(It.End - Win.Begin)
          .endArray();
  }
  W.endArray();
}

void PageWriter::timeline() {
  // Leaves only: the page draws what ran on each resource.
  auto Leaves = [&](const Schedule &S, Span Win) {
    std::vector<std::vector<TaskId>> ByRes(G.Resources.size());
    llvm::BitVector Shown = shownTasks(D, S, Win);
    for (TaskId T : Shown.set_bits())
      if (G.isLeaf(T) && G.Res[T] != graph::NoResource)
        ByRes[G.Res[T]].push_back(T);
    for (auto &V : ByRes)
      std::stable_sort(V.begin(), V.end(), [&](TaskId A, TaskId B) {
        return S.Start[A] < S.Start[B];
      });
    return ByRes;
  };
  auto BL = Leaves(Before, BW), AL = Leaves(After, AW);
  llvm::BitVector BC = criticalTasks(G, Before.Paths);
  llvm::BitVector AC = criticalTasks(G, After.Paths);
  W.key("window").beginObject();
  W.field("before", BW.length()).field("after", AW.length()).endObject();
  W.key("iterations").beginObject();
  W.key("before");
  iterations(Before, BW);
  W.key("after");
  iterations(After, AW);
  W.endObject();
  W.key("resources").beginArray();
  for (ResourceId R : displayOrder(G)) {
    if (BL[R].empty() && AL[R].empty())
      continue;
    const graph::Resource &Res = G.Resources[R];
    W.beginObject().field("name", Res.Name);
    W.field("kind", graph::resourceKindName(Res.Kind));
    W.key("before");
    tasks(Before, BW, R, BC, BL);
    W.key("after");
    tasks(After, AW, R, AC, AL);
    W.endObject();
  }
  W.endArray();
}

/// Per label (phase or layer), the totals of one metric on both schedules.
struct Metric {
  std::vector<int64_t> Before, After;
  bool HasBefore = true, HasAfter = true;
};

void PageWriter::bars() {
  llvm::BitVector InReported(G.Iterations.size());
  for (size_t I : D.Reported)
    InReported.set(I);
  size_t NumLayers = G.Layers.size() + 1; // the last: no layer
  auto LayerSlot = [&](TaskId T) {
    return G.LayerOf[T] == graph::NoLayer ? G.Layers.size() : G.LayerOf[T];
  };
  // [phase|layer][gpu|cpu|critical]
  Metric Phase[3], Layer[3];
  for (Metric &M : Phase) {
    M.Before.assign(graph::NumPhases, 0);
    M.After.assign(graph::NumPhases, 0);
  }
  for (Metric &M : Layer) {
    M.Before.assign(NumLayers, 0);
    M.After.assign(NumLayers, 0);
  }
  for (int Side = 0; Side < 2; ++Side) {
    const Schedule &S = Side ? After : Before;
    for (TaskId T = 0; T < G.numTasks(); ++T) {
      int32_t It = G.IterationOf[T];
      if (!G.isLeaf(T) || It < 0 || !InReported.test(size_t(It)) ||
          !present(S, T))
        continue;
      int M = G.isGpu(T) ? 0 : 1;
      int64_t Dur = S.End[T] - S.Start[T];
      (Side ? Phase[M].After : Phase[M].Before)[size_t(G.PhaseOf[T])] += Dur;
      (Side ? Layer[M].After : Layer[M].Before)[LayerSlot(T)] += Dur;
    }
    // The critical path's running time, by the task's phase and layer.
    if (!S.Simulated) {
      (Side ? Phase[2].HasAfter : Phase[2].HasBefore) = false;
      (Side ? Layer[2].HasAfter : Layer[2].HasBefore) = false;
    }
    for (const sim::CriticalPath &P : S.Paths)
      for (const sim::PathSegment &Seg : P.Segments)
        if (Seg.Kind == sim::SegmentKind::Run) {
          int64_t Dur = Seg.End - Seg.Begin;
          (Side ? Phase[2].After
                : Phase[2].Before)[size_t(G.PhaseOf[Seg.Task])] += Dur;
          (Side ? Layer[2].After : Layer[2].Before)[LayerSlot(Seg.Task)] += Dur;
        }
  }
  static const char *MetricNames[3] = {"gpu", "cpu", "critical"};
  auto Group = [&](const char *Key, Metric *Ms, auto LabelOf,
                   const std::vector<size_t> &Order) {
    std::vector<size_t> Used;
    for (size_t I : Order)
      for (int M = 0; M < 3; ++M)
        if (Ms[M].Before[I] || Ms[M].After[I]) {
          Used.push_back(I);
          break;
        }
    W.key(Key).beginObject().key("labels").beginArray();
    for (size_t I : Used)
      W.value(LabelOf(I));
    W.endArray().key("metrics").beginObject();
    for (int M = 0; M < 3; ++M) {
      W.key(MetricNames[M]).beginObject();
      for (int Side = 0; Side < 2; ++Side) {
        W.key(Side ? "after" : "before");
        if (!(Side ? Ms[M].HasAfter : Ms[M].HasBefore)) {
          W.null();
          continue;
        }
        W.beginArray();
        for (size_t I : Used)
          W.value((Side ? Ms[M].After : Ms[M].Before)[I]);
        W.endArray();
      }
      W.endObject();
    }
    W.endObject().endObject();
  };
  std::vector<size_t> PhaseOrder;
  for (size_t P = 1; P < graph::NumPhases; ++P)
    PhaseOrder.push_back(P);
  PhaseOrder.push_back(0); // unknown last
  std::vector<size_t> LayerOrder(NumLayers);
  for (size_t L = 0; L < NumLayers; ++L)
    LayerOrder[L] = L;
  std::stable_sort(LayerOrder.begin(), LayerOrder.end() - 1,
                   [&](size_t A, size_t B) {
                     return G.Layers[A].Index < G.Layers[B].Index;
                   });
  W.key("bars").beginObject();
  Group(
      "phase", Phase,
      [](size_t P) { return std::string(graph::phaseName(graph::Phase(P))); },
      PhaseOrder);
  Group(
      "layer", Layer,
      [&](size_t L) {
        return L < G.Layers.size() ? G.Layers[L].Name
                                   : std::string("(no layer)");
      },
      LayerOrder);
  W.endObject();
}

void PageWriter::memoryCurve(const memory::Curve &C, Span Win) {
  std::vector<std::pair<int64_t, int64_t>> Pts = curveSteps(C, Win);
  for (auto &P : Pts)
    P.first -= Win.Begin;
  if (Pts.size() > MaxMemoryPoints) {
    // Keep each bucket's first, lowest, highest and last point, in order.
    std::vector<std::pair<int64_t, int64_t>> Thin;
    int64_t Len = std::max<int64_t>(1, Win.length());
    size_t I = 0;
    while (I < Pts.size()) {
      size_t B = size_t(
          std::clamp<int64_t>(Pts[I].first * int64_t(MemoryBuckets) / Len, 0,
                              int64_t(MemoryBuckets)));
      size_t J = I, Lo = I, Hi = I;
      while (J < Pts.size() && size_t(std::clamp<int64_t>(
                                   Pts[J].first * int64_t(MemoryBuckets) / Len,
                                   0, int64_t(MemoryBuckets))) == B) {
        if (Pts[J].second < Pts[Lo].second)
          Lo = J;
        if (Pts[J].second > Pts[Hi].second)
          Hi = J;
        ++J;
      }
      std::vector<size_t> Keep = {I, Lo, Hi, J - 1};
      std::sort(Keep.begin(), Keep.end());
      Keep.erase(std::unique(Keep.begin(), Keep.end()), Keep.end());
      for (size_t K : Keep)
        Thin.push_back(Pts[K]);
      I = J;
    }
    Pts = std::move(Thin);
  }
  W.beginArray();
  for (auto [T, L] : Pts)
    W.value(T).value(L);
  W.endArray();
}

void PageWriter::memory() {
  W.key("memory").beginArray();
  if (D.Memory) {
    std::vector<memory::Curve> BC = memoryCurves(D, Before),
                               AC = memoryCurves(D, After);
    for (memory::PoolId P = 0; P < D.Memory->Pools.size(); ++P) {
      const memory::Pool &Pool = D.Memory->Pools[P];
      if (!Pool.isDevice())
        continue;
      memory::Peak PB = memory::peakIn(BC[P], BW.Begin, BW.End);
      memory::Peak PA = memory::peakIn(AC[P], AW.Begin, AW.End);
      W.beginObject().field("pool", Pool.label());
      W.field("capacity", capacityOf(D, Pool.DeviceId));
      W.field("startRecorded", Pool.HasTotals);
      W.key("peak").beginObject();
      W.key("before").beginArray().value(PB.Time - BW.Begin).value(PB.Bytes);
      W.endArray();
      W.key("after").beginArray().value(PA.Time - AW.Begin).value(PA.Bytes);
      W.endArray().endObject();
      W.key("before");
      memoryCurve(BC[P], BW);
      W.key("after");
      memoryCurve(AC[P], AW);
      W.endObject();
    }
  }
  W.endArray();
}

void PageWriter::sweep() {
  W.key("sweep");
  if (!D.SweepResults) {
    W.null();
    return;
  }
  const Sweep &S = *D.SweepResults;
  W.beginObject().key("params").beginArray();
  for (const std::string &P : S.Params)
    W.value(P);
  W.endArray().field("baseline", S.BaselineNs).key("points").beginArray();
  for (const SweepPoint &P : S.Points) {
    W.beginObject().key("text").beginArray();
    for (const SweepValue &V : P.Values)
      W.value(V.Text);
    W.endArray().key("number").beginArray();
    for (const SweepValue &V : P.Values) {
      if (V.Number)
        W.value(*V.Number);
      else
        W.null();
    }
    W.endArray().field("ns", P.PredictedNs);
    W.field("peak", P.PeakBytes).field("capacity", P.DeviceMemory);
    W.field("oom", P.outOfMemory()).endObject();
  }
  W.endArray().endObject();
}

/// \p V to 4 significant digits: the plot needs no more, the page less.
static double fourDigits(double V) {
  if (V == 0 || !std::isfinite(V))
    return V;
  double Scale = std::pow(10.0, 3 - std::floor(std::log10(std::fabs(V))));
  return std::round(V * Scale) / Scale;
}

void PageWriter::roofline() {
  W.key("roofline");
  const Roofline &R = RF;
  if (R.Points.empty()) {
    W.null();
    return;
  }
  W.beginObject().field("iteration", R.Iteration).field("gpu", R.Gpu);
  W.field("device", D.DeviceName).field("bandwidth", R.BandwidthGBs);
  W.key("peaks").beginArray();
  for (const auto &[Name, Tflops] : R.Peaks)
    W.beginArray().value(Name).value(Tflops).endArray();
  W.endArray().key("classes").beginArray();
  for (unsigned K = 0; K < graph::NumKernelClasses; ++K)
    W.value(graph::kernelClassName(static_cast<graph::KernelClass>(K)));
  W.endArray().field("sized", static_cast<uint64_t>(R.SizedKernels));
  // Each point: intensity, TFLOP/s, ns, class, name.
  W.key("points").beginArray();
  for (const Roofline::Point &P : R.Points)
    W.beginArray()
        .value(fourDigits(P.Intensity))
        .value(fourDigits(P.Tflops))
        .value(P.Ns)
        .value(static_cast<unsigned>(P.Class))
        .value(nameOf(P.Task))
        .endArray();
  W.endArray().endObject();
}

void PageWriter::opportunities() {
  W.key("opportunities");
  if (!D.Opportunities) {
    W.null();
    return;
  }
  const OpportunityList &O = *D.Opportunities;
  W.beginObject().field("baseline", O.BaselineNs).field("factor", O.Factor);
  W.key("entries").beginArray();
  for (const OpportunityList::Entry &E : O.Entries)
    W.beginObject()
        .field("what", E.What)
        .field("model", E.Model)
        .field("ns", E.PredictedNs)
        .field("gain", E.GainNs)
        .endObject();
  W.endArray().endObject();
}

void PageWriter::comparison() {
  W.key("compare");
  if (!D.Compared) {
    W.null();
    return;
  }
  const Comparison &C = *D.Compared;
  auto Side = [&](const char *Key, const Comparison::Side &S) {
    W.key(Key).beginObject().field("trace", S.Trace).field("label", S.Label);
    W.field("ns", S.MeasuredNs).endObject();
  };
  W.beginObject();
  Side("before", C.Before);
  Side("after", C.After);
  W.key("model");
  if (C.PredictedNs)
    W.value(C.ModelPath).field("predicted", *C.PredictedNs);
  else
    W.null().key("predicted").null();
  static const char *KindNames[] = {"sum", "part", "heading"};
  W.key("rows").beginArray();
  for (const Comparison::Row &R : C.Rows) {
    W.beginObject().field("what", R.What);
    W.field("kind", KindNames[static_cast<unsigned>(R.Kind)]);
    if (R.Kind != Comparison::RowKind::Heading) {
      W.field("before", R.BeforeNs).field("after", R.AfterNs);
      W.key("predicted");
      if (C.PredictedNs)
        W.value(R.PredictedNs);
      else
        W.null();
    }
    W.endObject();
  }
  W.endArray().endObject();
}

void PageWriter::write() {
  W.beginObject();
  W.field("before", Before.Label).field("after", After.Label);
  W.key("kinds").beginArray();
  for (unsigned K = 0; K < graph::NumTaskKinds; ++K)
    W.value(graph::taskKindName(graph::TaskKind(K)));
  W.endArray();
  timeline();
  bars();
  memory();
  sweep();
  roofline();
  opportunities();
  comparison();
  // Last: the names the tasks above refer to.
  W.key("names").beginArray();
  for (const std::string &N : Names)
    W.value(N);
  W.endArray();
  W.endObject();
}

} // namespace

std::string detail::pageData(const RunData &D, const Roofline &R) {
  std::string Out;
  PageWriter(D, R, Out).write();
  return Out;
}

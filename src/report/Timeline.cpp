//===- Timeline.cpp - The run as Chrome-trace JSON ------------------------===//
//
// Two processes side by side: pid 1 is the measured run, pid 2 the
// prediction (`run`) or the replay (`replay`), both over the reported
// iterations and aligned at their start, so one iteration sits above the
// other. Each process has a track of iterations, one thread per CPU thread,
// GPU stream and channel (with extra lanes where slices would not nest), flow
// arrows from each launch call to the GPU work it launched, and a counter per
// device with allocated memory when the trace has memory records. Each slice
// carries the task's id, phase and layer, and what the model did to it.
//
// Times are written as microseconds with three decimals (appendMicros), as
// `convert` writes them; the output is a function of the input alone.
//
//===----------------------------------------------------------------------===//

#include "report/ReportImpl.h"
#include "support/Format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

using namespace dd;
using namespace dd::report;
using namespace dd::report::detail;

namespace {

/// Room for each process's threads: tids are Pid * TidBase + row, so no tid
/// is shared between the processes (Perfetto keys threads by tid).
constexpr int64_t TidBase = 100000;

struct Process {
  int Pid;
  const Schedule *S;
  std::string Name;
  Span W;
  /// Tasks in the window, by resource (index into Graph::Resources).
  std::vector<std::vector<TaskId>> ByRes;
  /// A job's rank: its resources [ResFirst, ResEnd) and its iterations
  /// only (Rank -1: everything).
  int32_t Rank = -1;
  ResourceId ResFirst = 0, ResEnd = ~0u;
};

/// Where a task was put: its tid.
struct Placed {
  std::vector<int64_t> Tid; ///< per task; 0: not written
};

class TimelineWriter {
public:
  explicit TimelineWriter(const RunData &D) : D(D), G(*D.G) {}
  std::string write();

private:
  const RunData &D;
  const Graph &G;
  std::vector<std::string> Events;
  int64_t Shift = 0;
  uint64_t NextFlow = 1;

  /// \p T on the process's timeline, from its window's start.
  int64_t ts(const Process &P, int64_t T) const {
    return T - P.W.Begin + Shift;
  }
  void meta(int Pid, int64_t Tid, const char *What, std::string_view Key,
            const std::string &Value);
  void metaSort(int Pid, int64_t Tid, const char *What, int64_t Index);
  void slice(const Process &P, int64_t Tid, TaskId T,
             const llvm::BitVector &Critical);
  void writeProcess(Process &P, int SortIndex);
  void writeIterations(const Process &P, int64_t Tid);
  void writeFlows(const Process &P, const Placed &At);
  void writeMemory(const Process &P);
  std::string metadata() const;
};

void TimelineWriter::meta(int Pid, int64_t Tid, const char *What,
                          std::string_view Key, const std::string &Value) {
  std::string E;
  JsonWriter W(E);
  W.beginObject().field("ph", "M").field("name", What).field("pid", Pid);
  if (Tid)
    W.field("tid", Tid);
  W.key("args").beginObject().field(Key, Value).endObject().endObject();
  Events.push_back(std::move(E));
}

void TimelineWriter::metaSort(int Pid, int64_t Tid, const char *What,
                              int64_t Index) {
  std::string E;
  JsonWriter W(E);
  W.beginObject().field("ph", "M").field("name", What).field("pid", Pid);
  if (Tid)
    W.field("tid", Tid);
  W.key("args").beginObject().field("sort_index", Index).endObject();
  W.endObject();
  Events.push_back(std::move(E));
}

void TimelineWriter::slice(const Process &P, int64_t Tid, TaskId T,
                           const llvm::BitVector &Critical) {
  const Schedule &S = *P.S;
  std::string E;
  JsonWriter W(E);
  W.beginObject().field("ph", "X").field("cat", chromeCategory(G.Kind[T]));
  W.field("name", G.name(T)).field("pid", P.Pid).field("tid", Tid);
  W.key("ts").micros(ts(P, S.Start[T]));
  W.key("dur").micros(S.End[T] - S.Start[T]);
  W.key("args").beginObject().field("task", uint64_t(T));
  if (G.PhaseOf[T] != graph::Phase::Unknown)
    W.field("phase", graph::phaseName(G.PhaseOf[T]));
  if (G.LayerOf[T] != graph::NoLayer)
    W.field("layer", G.Layers[G.LayerOf[T]].Name);
  uint8_t F = G.Flags[T];
  if (F & graph::TF_Inserted)
    W.field("inserted", true);
  if (F & graph::TF_Removed)
    W.field("removed", true);
  if ((F & graph::TF_Changed) && G.MeasuredDur[T] != graph::NoTime) {
    W.field("changed", true);
    W.key("original_dur_us").micros(G.MeasuredDur[T]);
    if (G.isLeaf(T) && G.MeasuredDur[T] > 0)
      W.field("factor",
              std::round(double(G.Dur[T]) / double(G.MeasuredDur[T]) * 1e4) /
                  1e4);
  }
  if (Critical.size() && Critical.test(T))
    W.field("critical_path", true);
  W.endObject().endObject();
  Events.push_back(std::move(E));
}

void TimelineWriter::writeIterations(const Process &P, int64_t Tid) {
  const Schedule &S = *P.S;
  for (size_t I = 0; I < G.Iterations.size(); ++I) {
    if (P.Rank >= 0 && G.Iterations[I].Rank != P.Rank)
      continue;
    Span It = S.Iterations[I];
    if (!(It.Begin < P.W.End && It.End > P.W.Begin))
      continue;
    std::string E;
    JsonWriter W(E);
    W.beginObject().field("ph", "X").field("cat", "iteration");
    W.field("name", G.Iterations[I].Label).field("pid", P.Pid);
    W.field("tid", Tid).key("ts").micros(ts(P, It.Begin));
    W.key("dur").micros(It.length());
    W.key("args").beginObject().field("ns", It.length());
    W.field("duration", formatDuration(It.length())).endObject().endObject();
    Events.push_back(std::move(E));
  }
}

void TimelineWriter::writeFlows(const Process &P, const Placed &At) {
  const Schedule &S = *P.S;
  for (const auto &Tasks : P.ByRes)
    for (TaskId T : Tasks) {
      TaskId L = G.Launcher[T];
      if (!G.isGpu(T) || L == graph::NoTask || !At.Tid[L] || !At.Tid[T])
        continue;
      uint64_t Id = NextFlow++;
      for (int End = 0; End < 2; ++End) {
        TaskId X = End ? T : L;
        std::string E;
        JsonWriter W(E);
        W.beginObject().field("ph", End ? "f" : "s").field("id", Id);
        W.field("cat", "ac2g").field("name", "launch").field("pid", P.Pid);
        W.field("tid", At.Tid[X]).key("ts").micros(ts(P, S.Start[X]));
        if (End)
          W.field("bp", "e");
        W.endObject();
        Events.push_back(std::move(E));
      }
    }
}

void TimelineWriter::writeMemory(const Process &P) {
  std::vector<memory::Curve> Curves = memoryCurves(D, *P.S);
  for (memory::PoolId Pool = 0; Pool < Curves.size(); ++Pool) {
    const memory::Pool &Info = D.Memory->Pools[Pool];
    if (!Info.isDevice())
      continue;
    const memory::Curve &C = Curves[Pool];
    std::string Name = Info.label() + " memory";
    auto Counter = [&](int64_t T, int64_t Level) {
      std::string E;
      JsonWriter W(E);
      W.beginObject().field("ph", "C").field("name", Name);
      W.field("pid", P.Pid).key("ts").micros(ts(P, T));
      W.key("args").beginObject().field("allocated", Level).endObject();
      W.endObject();
      Events.push_back(std::move(E));
    };
    for (auto [T, Level] : curveSteps(C, P.W))
      Counter(T, Level);
  }
}

void TimelineWriter::writeProcess(Process &P, int SortIndex) {
  const Schedule &S = *P.S;
  meta(P.Pid, 0, "process_name", "name", P.Name);
  metaSort(P.Pid, 0, "process_sort_index", SortIndex);
  int64_t Row = 0;
  auto NewTid = [&](const std::string &Name) {
    int64_t Tid = P.Pid * TidBase + Row;
    meta(P.Pid, Tid, "thread_name", "name", Name);
    metaSort(P.Pid, Tid, "thread_sort_index", Row);
    ++Row;
    return Tid;
  };
  writeIterations(P, NewTid("iterations"));

  llvm::BitVector Critical = criticalTasks(G, S.Paths);
  Placed At;
  At.Tid.assign(G.numTasks(), 0);
  std::vector<uint32_t> Index(G.numTasks(), ~0u);
  for (ResourceId R : displayOrder(G)) {
    const std::vector<TaskId> &Tasks = P.ByRes[R];
    if (Tasks.empty())
      continue;
    std::vector<LaneItem> Items;
    for (uint32_t I = 0; I < Tasks.size(); ++I)
      Index[Tasks[I]] = I;
    for (TaskId T : Tasks) {
      TaskId Par = G.Parent[T];
      Items.push_back({S.Start[T], S.End[T], depthOf(G, T),
                       Par == graph::NoTask ? ~0u : Index[Par]});
    }
    uint32_t Lanes = 0;
    std::vector<uint32_t> Lane = assignLanes(Items, Lanes);
    std::vector<int64_t> Tids;
    for (uint32_t L = 0; L < Lanes; ++L)
      Tids.push_back(NewTid(
          L == 0 ? G.Resources[R].Name
                 : fmt::format("{} (overlap {})", G.Resources[R].Name, L)));
    for (uint32_t I : nestingOrder(Items)) {
      At.Tid[Tasks[I]] = Tids[Lane[I]];
      slice(P, Tids[Lane[I]], Tasks[I], Critical);
    }
    for (TaskId T : Tasks)
      Index[T] = ~0u;
  }
  writeFlows(P, At);
  if (D.Memory)
    writeMemory(P);
}

std::string TimelineWriter::metadata() const {
  std::string Out;
  JsonWriter W(Out);
  W.beginObject().field("command", D.Command).field("trace", D.TracePath);
  if (!D.ModelPath.empty())
    W.field("model", D.ModelPath);
  W.key("processes").beginObject();
  W.field("1", D.Measured.Label).field("2", D.after().Label).endObject();
  if (!D.Ranks.empty()) {
    // A job: rank K's sides are pids 2K + 1 and 2K + 2.
    W.key("ranks").beginArray();
    for (size_t K = 0; K < D.Ranks.size(); ++K)
      W.beginObject()
          .field("rank", D.Ranks[K].Rank)
          .field("measured_pid", uint64_t(2 * K + 1))
          .field("after_pid", uint64_t(2 * K + 2))
          .endObject();
    W.endArray();
  }
  // replayed_ns is the replay as `replay` reports it; where the profiler's
  // cost was taken out, baseline_ns is the replay without it (run's JSON
  // names it so), which the speedup is against.
  bool Profiled = !D.ProfiledReplays.empty();
  W.key("iterations").beginArray();
  for (size_t K = 0; K < D.Reported.size(); ++K) {
    size_t I = D.Reported[K];
    W.beginObject().field("label", D.G->Iterations[I].Label);
    W.field("measured_ns", D.Measured.Iterations[I].length());
    if (Profiled) {
      W.field("replayed_ns", D.ProfiledReplays[K]);
      W.field("baseline_ns", D.Replayed.Iterations[I].length());
    } else {
      W.field("replayed_ns", D.Replayed.Iterations[I].length());
    }
    if (D.Predicted)
      W.field("predicted_ns", D.Predicted->Iterations[I].length());
    W.endObject();
  }
  W.endArray();
  W.key("iteration_start_us").micros(Shift);
  W.endObject();
  return Out;
}

std::string TimelineWriter::write() {
  std::vector<Process> Procs;
  const Schedule &A = D.after();
  Span MW = window(D, D.Measured), AW = window(D, A);
  Procs.push_back({1,
                   &D.Measured,
                   fmt::format("{}: {} {}", D.Measured.Label, windowLabel(D),
                               formatDuration(MW.length())),
                   MW,
                   {}});
  std::string AfterName = fmt::format("{}: {} {}", A.Label, windowLabel(D),
                                      formatDuration(AW.length()));
  if (D.Predicted)
    AfterName +=
        fmt::format(", {} vs {}",
                    formatSpeedup(window(D, D.Replayed).length(), AW.length()),
                    D.ProfiledReplays.empty() ? "replayed" : "unprofiled");
  else if (MW.length())
    AfterName += ", error " + formatPercent(double(AW.length() - MW.length()) /
                                                double(MW.length()),
                                            true);
  Procs.push_back({2, &A, AfterName, AW, {}});
  if (!D.Ranks.empty()) {
    // A job: the two sides of every rank, in rank order.
    std::vector<Process> PerRank;
    int Pid = 1;
    for (const RunData::RankResources &R : D.Ranks)
      for (const Process &Side : Procs) {
        Process P = Side;
        P.Pid = Pid++;
        // Named by the rank's own reported iteration.
        P.Name = fmt::format("rank {} {}", R.Rank, Side.S->Label);
        for (size_t I : D.Reported)
          if (G.Iterations[I].Rank == R.Rank)
            P.Name +=
                fmt::format(": {} {}", G.Iterations[I].Label,
                            formatDuration(Side.S->Iterations[I].length()));
        P.Rank = R.Rank;
        P.ResFirst = R.First;
        P.ResEnd = R.End;
        PerRank.push_back(std::move(P));
      }
    Procs = std::move(PerRank);
  }

  // The tasks each process shows, and how far the earliest starts before
  // its window: both windows open at the same ts, after the earliest task
  // of either.
  for (Process &P : Procs) {
    P.ByRes.resize(G.Resources.size());
    llvm::BitVector Shown = shownTasks(D, *P.S, P.W);
    for (TaskId T : Shown.set_bits()) {
      ResourceId R = resourceOf(G, T);
      if (R == graph::NoResource || R < P.ResFirst || R >= P.ResEnd)
        continue;
      P.ByRes[R].push_back(T);
      Shift = std::max(Shift, P.W.Begin - P.S->Start[T]);
    }
  }
  int SortIndex = 0;
  for (Process &P : Procs)
    writeProcess(P, SortIndex++);

  // What ddscript adds goes under otherData, the one key besides
  // traceEvents and displayTimeUnit that viewers skip: Perfetto stops
  // reading at a top-level key it does not know.
  std::string Out =
      "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"ddscript\":";
  Out += metadata();
  Out += "},\n\"traceEvents\":[\n";
  for (size_t I = 0; I < Events.size(); ++I) {
    Out += Events[I];
    Out += I + 1 < Events.size() ? ",\n" : "\n";
  }
  Out += "]}\n";
  return Out;
}

} // namespace

std::string report::renderTimeline(const RunData &D) {
  return TimelineWriter(D).write();
}

// The timeline (--timeline) and the page's data (--report), read back with
// simdjson and checked against the graph and the schedules they were written
// from: processes, thread names, launch flows, memory counters, the args of
// the tasks a model changed, the sweep, and the same bytes every time.

#include "ModelFixture.h"

#include "builder/GraphBuilder.h"
#include "compiler/Compiler.h"
#include "driver/Outputs.h"
#include "driver/Session.h"
#include "report/Report.h"
#include "sim/Simulator.h"
#include "trace/TraceReader.h"
#include "vm/VM.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>

using namespace dd;

namespace {

/// Everything a `replay` or `run` hands to the outputs, kept alive together
/// (RunData points into it).
struct Run {
  trace::Trace T;
  std::optional<graph::Graph> G;
  std::optional<sim::SimResult> Base, Pred;
  std::vector<int64_t> MStart, MEnd;
  std::optional<memory::MemoryModel> Mem;
  report::RunData D;
};

/// As the driver does it: \p Model (a path, or empty for a replay) run on
/// \p Trace, reporting iteration \p Iteration ("" for the default).
std::unique_ptr<Run> prepare(const std::string &Trace,
                             const std::string &Model = "",
                             const std::string &Iteration = "") {
  auto R = std::make_unique<Run>();
  auto T = trace::readTrace(std::string(DD_TEST_DATA) + "/" + Trace);
  REQUIRE(static_cast<bool>(T));
  R->T = std::move(*T);
  auto G = graph::buildGraph(R->T);
  REQUIRE(static_cast<bool>(G));
  R->G.emplace(std::move(*G));
  auto Chosen = driver::chooseIterations(*R->G, Iteration);
  REQUIRE(static_cast<bool>(Chosen));
  auto Base = sim::simulate(*R->G);
  REQUIRE(static_cast<bool>(Base));
  R->Base.emplace(std::move(*Base));
  R->Mem = driver::memoryForOutputs(R->T, *R->G);
  // As run does: the replay's critical paths before the model.
  R->D.Replayed =
      driver::simulatedSchedule("replayed", *R->G, *R->Base, *Chosen);

  report::RunData &D = R->D;
  D.Command = Model.empty() ? "replay" : "run";
  if (!Model.empty()) {
    compiler::CompiledModel M = test::compileModel(Model);
    vm::RunEnv Env;
    Env.G = &*R->G;
    vm::RunResult VR = vm::run(M.Program, Env, {});
    REQUIRE_MESSAGE(VR.Ok, VR.Error.Message);
    auto Pred = sim::simulate(*R->G, &VR.Policy);
    REQUIRE(static_cast<bool>(Pred));
    R->Pred.emplace(std::move(*Pred));
    D.ModelPath = Model;
  }
  driver::measuredTimes(*R->G, R->MStart, R->MEnd);
  D.G = &*R->G;
  D.TracePath = Trace;
  D.Reported = *Chosen;
  D.SteadyState = driver::defaultIteration(*R->G);
  D.Measured = driver::measuredSchedule(*R->G, R->MStart, R->MEnd);
  if (R->Pred)
    D.Predicted =
        driver::simulatedSchedule("predicted", *R->G, *R->Pred, *Chosen);
  D.Memory = R->Mem ? &*R->Mem : nullptr;
  for (const trace::DeviceInfo &Dev : R->T.Devices)
    D.DeviceMemory.push_back({Dev.Id, Dev.TotalGlobalMem});
  return R;
}

/// Exact ns from a microsecond value the timeline writes with at most three
/// decimals.
int64_t nsOf(simdjson::dom::element E) {
  double Us = E.is_int64() ? double(int64_t(E)) : double(E);
  return std::llround(Us * 1000);
}

std::string str(simdjson::dom::element E) {
  return std::string(std::string_view(E));
}

struct Slice {
  int64_t Tid, Ts, Dur;
  std::string Name, Cat;
  simdjson::dom::object Args;
};

/// A parsed timeline, by kind of event.
struct Timeline {
  simdjson::dom::parser Parser;
  simdjson::dom::element Doc;
  std::map<int64_t, std::string> Processes;                   // pid -> name
  std::map<std::pair<int64_t, int64_t>, std::string> Threads; // (pid, tid)
  std::map<int64_t, std::vector<Slice>> Slices;               // pid ->
  /// Per flow id: (pid, tid, ts) of its start and of its end.
  std::map<uint64_t,
           std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>>>
      Flows;
  /// (pid, counter name) -> values.
  std::map<std::pair<int64_t, std::string>, std::vector<int64_t>> Counters;
  int64_t StartNs = 0; ///< where both windows open

  explicit Timeline(const std::string &Json) {
    auto R = Parser.parse(Json);
    REQUIRE_MESSAGE(!R.error(), simdjson::error_message(R.error()));
    Doc = R.value();
    StartNs = nsOf(Doc["otherData"]["ddscript"]["iteration_start_us"]);
    for (simdjson::dom::object E : Doc["traceEvents"].get_array()) {
      std::string Ph = str(E["ph"]);
      int64_t Pid = E["pid"];
      if (Ph == "M") {
        std::string What = str(E["name"]);
        if (What == "process_name")
          Processes[Pid] = str(E["args"]["name"]);
        else if (What == "thread_name")
          Threads[{Pid, int64_t(E["tid"])}] = str(E["args"]["name"]);
      } else if (Ph == "X") {
        Slices[Pid].push_back({E["tid"], nsOf(E["ts"]), nsOf(E["dur"]),
                               str(E["name"]), str(E["cat"]), E["args"]});
      } else if (Ph == "s" || Ph == "f") {
        Flows[uint64_t(E["id"])].push_back(
            {Ph, Pid, int64_t(E["tid"]), nsOf(E["ts"])});
      } else if (Ph == "C") {
        Counters[{Pid, str(E["name"])}].push_back(E["args"]["allocated"]);
      }
    }
  }
};

bool flag(simdjson::dom::object Args, const char *Key) {
  bool B = false;
  return !Args[Key].get(B) && B;
}

/// The window the outputs show of \p S.
report::Span windowOf(const report::RunData &D, const report::Schedule &S) {
  return {S.Iterations[D.Reported.front()].Begin,
          S.Iterations[D.Reported.back()].End};
}

bool onSchedule(const report::Schedule &S, graph::TaskId T) {
  return T < S.Start.size() && S.Start[T] != graph::NoTime &&
         S.End[T] != graph::NoTime;
}

/// Checks the tasks of process \p Pid against schedule \p S: each task of
/// the window is there once, at its time, named as in the graph; each
/// flow's ends sit where a launch and the GPU work it launched start.
void checkProcess(const Timeline &TL, const report::RunData &D, int64_t Pid,
                  const report::Schedule &S) {
  const graph::Graph &G = *D.G;
  report::Span W = windowOf(D, S);
  std::map<graph::TaskId, const Slice *> ByTask;
  for (const Slice &X : TL.Slices.at(Pid)) {
    CHECK(TL.Threads.count({Pid, X.Tid}));
    if (X.Cat == "iteration")
      continue;
    uint64_t T = X.Args["task"];
    REQUIRE(T < G.numTasks());
    CHECK_MESSAGE(ByTask.emplace(graph::TaskId(T), &X).second, T);
    CHECK(X.Name == G.name(graph::TaskId(T)));
    REQUIRE(onSchedule(S, graph::TaskId(T)));
    CHECK(X.Ts == S.Start[T] - W.Begin + TL.StartNs);
    CHECK(X.Dur == S.End[T] - S.Start[T]);
  }
  // Every leaf of the reported iterations, and every other inside the
  // window, on a thread named after its resource (or an overlap lane of it).
  size_t Leaves = 0;
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    int32_t Iter = G.IterationOf[T];
    bool Reported = Iter >= 0 && std::count(D.Reported.begin(),
                                            D.Reported.end(), size_t(Iter));
    if (!G.isLeaf(T) || !onSchedule(S, T) ||
        (!Reported && (S.End[T] <= W.Begin || S.Start[T] >= W.End)))
      continue;
    ++Leaves;
    auto It = ByTask.find(T);
    REQUIRE_MESSAGE(It != ByTask.end(), G.name(T));
    const std::string &Thread = TL.Threads.at({Pid, It->second->Tid});
    CHECK(Thread.rfind(G.Resources[G.Res[T]].Name, 0) == 0);
  }
  CHECK(Leaves > 0);

  // Flows: one start and one end each, from the launch to the GPU work.
  std::multiset<std::tuple<int64_t, int64_t, int64_t, int64_t>> Want, Got;
  for (auto [T, X] : ByTask) {
    graph::TaskId L = G.Launcher[T];
    if (G.isGpu(T) && L != graph::NoTask && ByTask.count(L))
      Want.insert({ByTask[L]->Tid, ByTask[L]->Ts, X->Tid, X->Ts});
  }
  for (const auto &[Id, Ends] : TL.Flows) {
    REQUIRE(Ends.size() == 2);
    auto [Ph0, Pid0, Tid0, Ts0] = Ends[0];
    auto [Ph1, Pid1, Tid1, Ts1] = Ends[1];
    CHECK(Ph0 == "s");
    CHECK(Ph1 == "f");
    CHECK(Pid0 == Pid1);
    if (Pid0 == Pid)
      Got.insert({Tid0, Ts0, Tid1, Ts1});
  }
  CHECK(!Want.empty());
  CHECK(Got == Want);
}

/// The JSON the page's script draws from.
std::string pageData(const std::string &Html) {
  std::string Open = "<script type=\"application/json\" id=\"dd-data\">";
  size_t B = Html.find(Open);
  REQUIRE(B != std::string::npos);
  B += Open.size();
  size_t E = Html.find("</script>", B);
  REQUIRE(E != std::string::npos);
  return Html.substr(B, E - B);
}

} // namespace

TEST_CASE("timeline: measured and replayed side by side, with memory") {
  auto R = prepare("tracelens/h100_bert_small_inference.json.gz");
  const report::RunData &D = R->D;
  REQUIRE(D.Memory);
  Timeline TL(report::renderTimeline(D));

  REQUIRE(TL.Processes.size() == 2);
  std::string Label = D.G->Iterations[D.Reported.front()].Label;
  CHECK(TL.Processes[1].rfind("measured: " + Label, 0) == 0);
  CHECK(TL.Processes[2].rfind("replayed: " + Label, 0) == 0);
  // No thread is shared between the processes (Perfetto keys them by tid).
  std::set<int64_t> Tids[3];
  for (const auto &[Key, Name] : TL.Threads)
    Tids[Key.first].insert(Key.second);
  for (int64_t Tid : Tids[1])
    CHECK(!Tids[2].count(Tid));

  checkProcess(TL, D, 1, D.Measured);
  checkProcess(TL, D, 2, D.Replayed);

  // A memory counter per process, peaking where the memory model says.
  const memory::MemoryModel &M = *D.Memory;
  memory::Profile Replayed = M.profile({D.Replayed.Start, D.Replayed.End});
  size_t Pools = 0;
  for (memory::PoolId P = 0; P < M.Pools.size(); ++P) {
    if (!M.Pools[P].isDevice())
      continue;
    ++Pools;
    std::string Name = M.Pools[P].label() + " memory";
    report::Span MW = windowOf(D, D.Measured), RW = windowOf(D, D.Replayed);
    auto Max = [&](int64_t Pid) {
      const std::vector<int64_t> &V = TL.Counters[{Pid, Name}];
      REQUIRE(!V.empty());
      return *std::max_element(V.begin(), V.end());
    };
    CHECK(Max(1) == memory::peakIn(M.measured(P), MW.Begin, MW.End).Bytes);
    CHECK(Max(2) == memory::peakIn(Replayed.Curves[P], RW.Begin, RW.End).Bytes);
  }
  CHECK(Pools > 0);
}

TEST_CASE("timeline: the tasks a model scaled, inserted and removed") {
  auto R = prepare(
      "hta/gpu_user_annotation_steps.json.gz",
      std::string(DD_TEST_DATA) + "/../report/models/insert_remove.dd", "2");
  const report::RunData &D = R->D;
  const graph::Graph &G = *D.G;
  Timeline TL(report::renderTimeline(D));
  CHECK(TL.Processes[2].rfind("predicted: ", 0) == 0);
  checkProcess(TL, D, 1, D.Measured);
  checkProcess(TL, D, 2, *D.Predicted);

  size_t Changed = 0, Inserted = 0, Removed = 0;
  for (int64_t Pid : {1, 2})
    for (const Slice &X : TL.Slices[Pid]) {
      if (X.Cat == "iteration")
        continue;
      graph::TaskId T = graph::TaskId(uint64_t(X.Args["task"]));
      uint8_t F = G.Flags[T];
      CHECK(flag(X.Args, "inserted") == bool(F & graph::TF_Inserted));
      CHECK(flag(X.Args, "removed") == bool(F & graph::TF_Removed));
      // Inserted tasks are only predicted; removed ones only measured.
      if (F & graph::TF_Inserted) {
        CHECK(Pid == 2);
        ++Inserted;
      }
      if (F & graph::TF_Removed) {
        CHECK(Pid == 1);
        ++Removed;
      }
      bool Scaled =
          (F & graph::TF_Changed) && G.MeasuredDur[T] != graph::NoTime;
      CHECK(flag(X.Args, "changed") == Scaled);
      if (!Scaled || Pid != 2)
        continue;
      ++Changed;
      CHECK(nsOf(X.Args["original_dur_us"]) == G.MeasuredDur[T]);
      if (G.isLeaf(T) && G.MeasuredDur[T] > 0) {
        double Factor = X.Args["factor"];
        CHECK(Factor ==
              doctest::Approx(double(G.Dur[T]) / double(G.MeasuredDur[T]))
                  .epsilon(1e-3));
        CHECK(X.Dur == G.Dur[T]);
      }
    }
  CHECK(Changed > 0);
  CHECK(Inserted == 1);
  CHECK(Removed > 0);
}

TEST_CASE("timeline and page: the same bytes for the same input") {
  for (const char *Model : {"", "/../report/models/amp.dd"}) {
    std::string Path = *Model ? std::string(DD_TEST_DATA) + Model : "";
    auto A = prepare("hta/gpu_user_annotation_steps.json.gz", Path);
    auto B = prepare("hta/gpu_user_annotation_steps.json.gz", Path);
    CHECK(report::renderTimeline(A->D) == report::renderTimeline(B->D));
    CHECK(report::renderHtml(A->D) == report::renderHtml(B->D));
  }
}

TEST_CASE("page: a sweep's points reach the plot's data") {
  auto R = prepare("tracelens/h100_bert_small_inference.json.gz");
  std::string Without = report::renderHtml(R->D);
  CHECK(Without.find("id=\"sweep\"") == std::string::npos);
  {
    simdjson::dom::parser P;
    simdjson::dom::element Data = P.parse(pageData(Without));
    CHECK(Data["sweep"].is_null());
  }

  report::Sweep S;
  S.Params = {"bandwidth", "overlap"};
  S.BaselineNs = 5000000;
  for (const char *Overlap : {"on", "off"})
    for (double Gbps : {100.0, 200.0, 400.0}) {
      report::SweepPoint Pt;
      Pt.Values = {{std::to_string(int(Gbps)) + "GB/s", Gbps}, {Overlap, {}}};
      Pt.PredictedNs = int64_t(1e9 / Gbps) + (Overlap[1] == 'n' ? 0 : 7);
      S.Points.push_back(Pt);
    }
  R->D.SweepResults = S;
  std::string Html = report::renderHtml(R->D);
  CHECK(Html.find("<section id=\"sweep\"><h2>Sweep: predicted time against "
                  "bandwidth</h2>") != std::string::npos);

  simdjson::dom::parser P;
  simdjson::dom::element Data = P.parse(pageData(Html));
  simdjson::dom::object Sw = Data["sweep"];
  CHECK(int64_t(Sw["baseline"]) == S.BaselineNs);
  simdjson::dom::array Params = Sw["params"];
  REQUIRE(Params.size() == 2);
  CHECK(std::string_view(Params.at(0)) == "bandwidth");
  simdjson::dom::array Points = Sw["points"];
  REQUIRE(Points.size() == S.Points.size());
  size_t I = 0;
  for (simdjson::dom::object Pt : Points) {
    const report::SweepPoint &Want = S.Points[I++];
    CHECK(int64_t(Pt["ns"]) == Want.PredictedNs);
    simdjson::dom::array Text = Pt["text"], Number = Pt["number"];
    REQUIRE(Text.size() == 2);
    CHECK(std::string_view(Text.at(0)) == Want.Values[0].Text);
    CHECK(std::string_view(Text.at(1)) == Want.Values[1].Text);
    CHECK(double(Number.at(0)) == *Want.Values[0].Number);
    CHECK(Number.at(1).is_null());
  }
}

TEST_CASE("page: opportunities and a comparison reach the page") {
  auto R = prepare("tracelens/h100_bert_small_inference.json.gz");
  {
    std::string Html = report::renderHtml(R->D);
    CHECK(Html.find("id=\"opportunities\"") == std::string::npos);
    CHECK(Html.find("id=\"compare\"") == std::string::npos);
    simdjson::dom::parser P;
    simdjson::dom::element Data = P.parse(pageData(Html));
    CHECK(Data["opportunities"].is_null());
    CHECK(Data["compare"].is_null());
  }

  // Names as a trace may have them: markup, quotes, the end of a script.
  const std::string Odd = "layer <b>&\"x\"</script> 2x faster";
  report::OpportunityList L;
  L.BaselineNs = 4'000'000;
  L.Entries = {{Odd, "shrink (select gpu) by 2", 3'000'000, 1'000'000},
               {"slower", "remove (select runtime)", 4'100'000, -100'000}};
  R->D.Opportunities = L;
  report::Comparison C;
  C.Before = {"a.json", "ProfilerStep#3", 4'000'000};
  C.After = {"b.json", "ProfilerStep#9", 3'200'000};
  C.ModelPath = "m.dd";
  C.PredictedNs = 3'000'000;
  using Kind = report::Comparison::RowKind;
  C.Rows = {{Kind::Sum, "GPU work (sum)", 10, 20, 30},
            {Kind::Part, Odd, 1, 2, 3},
            {Kind::Heading, "GPU work by layer (the 1 largest)", 0, 0, 0},
            {Kind::Part, "layer conv2d#1", 7, 5, 6}};
  R->D.Compared = C;
  std::string Html = report::renderHtml(R->D);
  CHECK(Html.find(Odd) == std::string::npos);
  CHECK(Html.find("<td>layer &lt;b&gt;&amp;&quot;x&quot;&lt;/script&gt; 2x "
                  "faster</td>") != std::string::npos);
  CHECK(Html.find("<tr data-opportunity=\"2\"><td class=\"num\">2</td><td>"
                  "slower</td><td class=\"num\" data-ns=\"4100000\">4.100 "
                  "ms</td><td class=\"num\">0.976x</td><td class=\"num\" "
                  "data-ns=\"-100000\">-100.000 us</td><td class=\"num\">"
                  "-2.5%</td>") != std::string::npos);
  CHECK(Html.find("<span id=\"compare-error\">-6.25%</span>") !=
        std::string::npos);
  CHECK(Html.find("<span id=\"compare-same-error\">+25.00%</span>") !=
        std::string::npos);
  CHECK(Html.find("<tr class=\"heading\"><th colspan=\"6\">GPU work by "
                  "layer (the 1 largest)</th></tr>") != std::string::npos);
  CHECK(Html.find("<tr class=\"part\" data-what=\"layer conv2d#1\"><td>"
                  "layer conv2d#1</td><td class=\"num\" data-ns=\"7\">7 "
                  "ns</td><td class=\"num\" data-ns=\"5\">5 ns</td><td "
                  "class=\"num\" data-ns=\"-2\">-2 ns</td><td class=\"num\" "
                  "data-ns=\"6\">6 ns</td><td class=\"num\" data-ns=\"1\">+1 "
                  "ns</td></tr>") != std::string::npos);

  simdjson::dom::parser P;
  simdjson::dom::element Data = P.parse(pageData(Html));
  simdjson::dom::object Op = Data["opportunities"];
  CHECK(int64_t(Op["baseline"]) == L.BaselineNs);
  simdjson::dom::array Entries = Op["entries"];
  REQUIRE(Entries.size() == 2);
  simdjson::dom::object First = Entries.at(0);
  CHECK(std::string_view(First["what"]) == Odd);
  CHECK(std::string_view(First["model"]) == L.Entries[0].Model);
  CHECK(int64_t(First["ns"]) == 3'000'000);
  CHECK(int64_t(First["gain"]) == 1'000'000);
  simdjson::dom::object Cmp = Data["compare"];
  CHECK(int64_t(Cmp["before"]["ns"]) == 4'000'000);
  CHECK(std::string_view(Cmp["after"]["label"]) == "ProfilerStep#9");
  CHECK(std::string_view(Cmp["model"]) == "m.dd");
  CHECK(int64_t(Cmp["predicted"]) == 3'000'000);
  simdjson::dom::array Rows = Cmp["rows"];
  REQUIRE(Rows.size() == 4);
  simdjson::dom::object Second = Rows.at(1), Heading = Rows.at(2);
  CHECK(std::string_view(Second["what"]) == Odd);
  CHECK(std::string_view(Second["kind"]) == "part");
  CHECK(int64_t(Second["predicted"]) == 3);
  CHECK(std::string_view(Heading["kind"]) == "heading");
  CHECK(Heading["before"].error() == simdjson::NO_SUCH_FIELD);

  // A plain diff: no prediction, no predicted column.
  R->D.Compared->PredictedNs.reset();
  R->D.Compared->ModelPath.clear();
  Html = report::renderHtml(R->D);
  CHECK(Html.find("id=\"compare-predicted\"") == std::string::npos);
  CHECK(Html.find("<th colspan=\"4\">") != std::string::npos);
  simdjson::dom::parser P2;
  simdjson::dom::element Plain = P2.parse(pageData(Html));
  CHECK(Plain["compare"]["predicted"].is_null());
  simdjson::dom::array PlainRows = Plain["compare"]["rows"];
  simdjson::dom::object Sum = PlainRows.at(0);
  CHECK(Sum["predicted"].is_null());
}

TEST_CASE("page: the summary holds the run's numbers") {
  auto R = prepare("hta/gpu_user_annotation_steps.json.gz",
                   std::string(DD_TEST_DATA) + "/../report/models/amp.dd");
  const report::RunData &D = R->D;
  std::string Html = report::renderHtml(D);
  size_t It = D.Reported.front();
  for (auto [Id, S] :
       {std::pair{"measured", &D.Measured}, std::pair{"replayed", &D.Replayed},
        std::pair{"predicted", &*D.Predicted}}) {
    const char *Name = Id; // clang 14 cannot capture a structured binding
    CAPTURE(Name);
    std::string Cell = std::string("<td id=\"") + Name +
                       "\" class=\"num\" data-ns=\"" +
                       std::to_string(S->Iterations[It].length()) + "\">";
    CHECK(Html.find(Cell) != std::string::npos);
  }
  // Self-contained: nothing to fetch.
  for (const char *Bad : {" src=", " href=", "url(", "@import", "fetch("})
    CHECK_MESSAGE(Html.find(Bad) == std::string::npos, Bad);
}

TEST_CASE("page: run's replay has the critical path replay finds") {
  // The model changes the graph after the replay; the replay's path must
  // still be the unchanged graph's.
  const char *Trace = "hta/gpu_user_annotation_steps.json.gz";
  auto Run = prepare(
      Trace, std::string(DD_TEST_DATA) + "/../report/models/insert_remove.dd",
      "2");
  auto Replay = prepare(Trace, "", "2");
  const report::Schedule &A = Run->D.Replayed, &B = Replay->D.Replayed;
  REQUIRE(A.Paths.size() == 1);
  REQUIRE(B.Paths.size() == 1);
  CHECK(A.Paths[0].Length == B.Paths[0].Length);
  CHECK(A.Paths[0].Length <= A.Iterations[Run->D.Reported[0]].length());
  REQUIRE(A.PathShares[0].size() == B.PathShares[0].size());
  for (size_t I = 0; I < A.PathShares[0].size(); ++I) {
    CHECK(A.PathShares[0][I].Label == B.PathShares[0][I].Label);
    CHECK(A.PathShares[0][I].Time == B.PathShares[0][I].Time);
  }
  std::string Want = "<td id=\"critical-before\" class=\"num\" data-ns=\"" +
                     std::to_string(B.Paths[0].Length) + "\">";
  CHECK(report::renderHtml(Run->D).find(Want) != std::string::npos);
}

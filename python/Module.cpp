//===- Module.cpp - ddscript's Python module (_ddscript) ------------------===//
//
// The compiled half of `import ddscript`: the commands of the CLI, called as
// the CLI calls them, with --format json and their output captured
// (driver/Console.h): what a command would print as JSON is kept as values
// (support/Format.h: JsonValue) and turned into Python's, with no text
// written or parsed. Each call answers a tuple (ok, values, messages); the
// Python half (ddscript/__init__.py) raises ddscript.Error from the
// messages. The GIL is released while a command runs.
//
// `reduce` writes a job's ranks as their graphs (.ddg), which load() takes
// in place of the traces: a scheduler (dask.distributed) maps it over the
// ranks, and one process joins them.
//
// A trace is set up once (read, its graph built, replayed: what `run`
// starts from) and every run changes a copy of its graph. replay, inspect
// and opportunities read the trace as their commands do (replay reads only
// the reported iteration and its neighbours), and so does every call on a
// job.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"
#include "driver/Console.h"
#include "driver/JobRun.h"
#include "driver/Outputs.h"
#include "driver/Predict.h"
#include "driver/Run.h"
#include "driver/Session.h"
#include "driver/Sweep.h"
#include "graph/KernelClass.h"
#include "job/Job.h"
#include "sim/CriticalPath.h"
#include "whatif/JobPredict.h"
#include "whatif/Replay.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace dd;
using namespace dd::driver;

namespace {

/// \p S as a Python str, each byte that is not valid UTF-8 replaced by
/// U+FFFD (as the JSON text has it).
py::object text(std::string_view S) {
  PyObject *O = PyUnicode_DecodeUTF8(
      S.data(), static_cast<Py_ssize_t>(S.size()), "replace");
  if (!O)
    throw py::error_already_set();
  return py::reinterpret_steal<py::object>(O);
}

/// \p V as Python values: dicts, lists, str, int, float, bool, None.
py::object toPython(const JsonValue &V) {
  switch (V.K) {
  case JsonValue::Kind::Null:
    return py::none();
  case JsonValue::Kind::Bool:
    return py::bool_(V.Bool);
  case JsonValue::Kind::Int:
    return py::int_(V.Int);
  case JsonValue::Kind::UInt:
    return py::int_(V.UInt);
  case JsonValue::Kind::Double:
    return py::float_(V.Double);
  case JsonValue::Kind::String:
    return text(V.String);
  case JsonValue::Kind::Array: {
    py::list L(V.Items.size());
    for (size_t I = 0; I < V.Items.size(); ++I)
      L[I] = toPython(V.Items[I]);
    return L;
  }
  case JsonValue::Kind::Object: {
    py::dict D;
    for (size_t I = 0; I < V.Items.size(); ++I)
      D[text(V.Keys[I])] = toPython(V.Items[I]);
    return D;
  }
  }
  return py::none();
}

/// What a call answers: (ok, the JSON documents it wrote, as Python values,
/// its errors and warnings as (severity, file, line, column, message,
/// rendered)).
py::tuple reply(bool Ok, const Captured &C) {
  py::list Values;
  for (const JsonValue &V : C.Values)
    Values.append(toPython(V));
  py::list Messages;
  for (const Message &M : C.Messages)
    Messages.append(
        py::make_tuple(M.Level == Severity::Error ? "error" : "warning", M.File,
                       M.Line, M.Column, M.Text, M.Rendered));
  return py::make_tuple(Ok, Values, Messages);
}

/// Runs \p Command (returning its exit status) without the GIL, what it
/// prints kept in \p C.
template <typename Fn> int captured(Fn &&Command, Captured &C) {
  py::gil_scoped_release NoGil;
  Capture Cap;
  int Rc = Command();
  C = Cap.take();
  return Rc;
}

/// \p Command run as captured() runs it, answered as reply() answers.
template <typename Fn> py::tuple call(Fn &&Command) {
  Captured C;
  return reply(captured(Command, C) == ExitOk, C);
}

/// A graph's tasks as columns (what `Trace.tasks()` returns): \p Which
/// "all", "kernels" (GPU work: kernels, copies, sets, communication) or
/// "ops" (CPU operators); measured times on the trace's clock, replayed
/// ones from \p R (put on the same clock); with \p J, each task's rank.
struct Columns {
  std::vector<uint32_t> Id;
  std::vector<std::string> Name, Kind, Class, Layer, Phase, Resource;
  std::vector<int64_t> Iteration, Rank, Start, Duration, ReplayedStart,
      ReplayedDuration;
  std::vector<double> Flops, Bytes;
  std::vector<bool> Container;
};

Columns columnsOf(const graph::Graph &G, const sim::SimResult &R,
                  const job::Job *J, std::string_view Which) {
  Columns C;
  std::vector<double> Flops = graph::taskFlops(G);
  std::vector<double> Moved = graph::taskMovedBytes(G);
  size_t RankIndex = 0;
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    if (G.isRemoved(T))
      continue;
    bool Gpu = G.isGpu(T);
    if ((Which == "kernels" && !Gpu) ||
        (Which == "ops" && G.Kind[T] != graph::TaskKind::CpuOp))
      continue;
    C.Id.push_back(T);
    C.Name.emplace_back(G.name(T));
    C.Kind.emplace_back(graph::taskKindName(G.Kind[T]));
    C.Class.emplace_back(
        Gpu ? graph::kernelClassName(graph::kernelClassOf(G, T)) : "");
    C.Layer.emplace_back(G.LayerOf[T] == graph::NoLayer
                             ? std::string()
                             : G.Layers[G.LayerOf[T]].Name);
    C.Phase.emplace_back(graph::phaseName(G.PhaseOf[T]));
    C.Resource.emplace_back(G.Res[T] == graph::NoResource
                                ? std::string()
                                : G.Resources[G.Res[T]].Name);
    C.Iteration.push_back(
        G.IterationOf[T] < 0 ? -1 : G.Iterations[G.IterationOf[T]].Number);
    if (J) {
      while (RankIndex + 1 < J->Ranks.size() &&
             T >= J->Ranks[RankIndex].EndTask)
        ++RankIndex;
      C.Rank.push_back(J->Ranks[RankIndex].Rank);
    }
    // A task a model inserted was never measured (-1: None).
    bool Measured = G.MeasuredStart[T] != graph::NoTime;
    C.Start.push_back(Measured ? G.MeasuredStart[T] : -1);
    C.Duration.push_back(Measured ? G.MeasuredDur[T] : -1);
    bool Timed = T < R.Start.size() && R.Start[T] != graph::NoTime &&
                 R.End[T] != graph::NoTime;
    C.ReplayedStart.push_back(Timed ? R.Start[T] + G.Origin : -1);
    C.ReplayedDuration.push_back(Timed ? R.End[T] - R.Start[T] : -1);
    C.Flops.push_back(Flops[T]);
    C.Bytes.push_back(Moved[T]);
    C.Container.push_back(G.isContainer(T));
  }
  return C;
}

/// \p C as a dict of Python lists; None for what is unknown (no class,
/// layer or iteration; NaN FLOPs and bytes; -1 replayed times).
py::dict toPython(const Columns &C, const char *Simulated = "replayed") {
  py::dict D;
  auto Text = [](const std::vector<std::string> &V) {
    py::list L;
    for (const std::string &S : V)
      L.append(S.empty() ? py::object(py::none()) : py::object(py::str(S)));
    return L;
  };
  auto Ints = [](const std::vector<int64_t> &V, bool NoneBelowZero) {
    py::list L;
    for (int64_t X : V)
      L.append(NoneBelowZero && X < 0 ? py::object(py::none())
                                      : py::object(py::int_(X)));
    return L;
  };
  auto Reals = [](const std::vector<double> &V) {
    py::list L;
    for (double X : V)
      L.append(std::isnan(X) ? py::object(py::none())
                             : py::object(py::float_(X)));
    return L;
  };
  D["id"] = py::cast(C.Id);
  D["name"] = py::cast(C.Name);
  D["kind"] = py::cast(C.Kind);
  D["class"] = Text(C.Class);
  D["layer"] = Text(C.Layer);
  D["phase"] = py::cast(C.Phase);
  D["resource"] = Text(C.Resource);
  D["iteration"] = Ints(C.Iteration, true);
  if (!C.Rank.empty())
    D["rank"] = py::cast(C.Rank);
  D["start_ns"] = Ints(C.Start, true);
  D["duration_ns"] = Ints(C.Duration, true);
  D[py::str(std::string(Simulated) + "_start_ns")] =
      Ints(C.ReplayedStart, true);
  D[py::str(std::string(Simulated) + "_duration_ns")] =
      Ints(C.ReplayedDuration, true);
  D["flops"] = Reals(C.Flops);
  D["bytes"] = Reals(C.Bytes);
  D["container"] = py::cast(C.Container);
  return D;
}

/// The critical path of a replayed iteration as columns, in time order:
/// each segment a task running, the gap before it on its resource, or a
/// dependency's delay, on the trace's clock.
py::dict pathColumns(const graph::Graph &G, const sim::CriticalPath &P,
                     const job::Job *J) {
  py::list Kind, Task, Name, Resource, Edge, Begin, End, Duration, Rank;
  for (size_t K = P.Segments.size(); K-- > 0;) {
    const sim::PathSegment &S = P.Segments[K];
    Kind.append(S.Kind == sim::SegmentKind::Run   ? "run"
                : S.Kind == sim::SegmentKind::Gap ? "gap"
                                                  : "delay");
    Task.append(S.Task);
    Name.append(std::string(G.name(S.Task)));
    Resource.append(G.Res[S.Task] == graph::NoResource
                        ? py::object(py::none())
                        : py::object(py::str(G.Resources[G.Res[S.Task]].Name)));
    Edge.append(
        S.Kind == sim::SegmentKind::Delay
            ? py::object(py::str(graph::edgeKindName(G.Lowered[S.Edge].Kind)))
            : py::object(py::none()));
    Begin.append(S.Begin + G.Origin);
    End.append(S.End + G.Origin);
    Duration.append(S.End - S.Begin);
    if (J)
      Rank.append(J->Ranks[job::rankIndexOf(*J, S.Task)].Rank);
  }
  py::dict D;
  D["kind"] = Kind;
  D["task"] = Task;
  D["name"] = Name;
  D["resource"] = Resource;
  D["dependency"] = Edge;
  if (J)
    D["rank"] = Rank;
  D["start_ns"] = Begin;
  D["end_ns"] = End;
  D["duration_ns"] = Duration;
  return D;
}

/// A trace, or a job's traces, as ddscript.load gives them.
class Trace {
public:
  /// Resolves \p Paths (files, directories, globs) as --trace does and,
  /// for one trace, sets it up for runs: ExitOk, or the error printed.
  int load(std::vector<std::string> Paths, std::string Iteration,
           std::string Window, std::string Calibration, std::string Clock,
           std::string UnprofiledText) {
    O.TracePaths = std::move(Paths);
    O.Iteration = std::move(Iteration);
    O.Window = std::move(Window);
    O.Calibration = std::move(Calibration);
    O.Clock = std::move(Clock);
    O.Format = OutputFormat::Json;
    Unprofiled = std::move(UnprofiledText);
    if (!resolveTraces(O, "load", /*Job=*/true))
      return ExitBadInput;
    ProfilerRequest Target;
    if (!parseUnprofiled(Unprofiled, O, Target))
      return ExitBadInput;
    if (isJob()) {
      // The commands read a job's ranks each time; a missing one is told
      // now, in the reader's words.
      for (const std::string &P : O.TracePaths) {
        std::error_code EC;
        if (std::filesystem::exists(P, EC))
          continue;
        auto In = loadTrace(P);
        if (!In) {
          reportError(P, llvm::toString(In.takeError()));
          return ExitBadInput;
        }
      }
      return ExitOk;
    }
    // The profiler fit's warnings are about predictions: told at each run,
    // not by a load that may only replay or inspect.
    RunSetupResult R = setupRun(O, Target, /*TellFit=*/false);
    Setup = std::move(R.Setup);
    return R.Rc;
  }

  bool isJob() const { return O.Job; }
  const std::vector<std::string> &paths() const { return O.TracePaths; }

  /// The options of one command: this trace's, with the --timeline and
  /// --report files to write ("" for none).
  TraceOptions options(const std::string &Timeline,
                       const std::string &Report) const {
    TraceOptions T = O;
    T.TimelinePath = Timeline;
    T.ReportPath = Report;
    return T;
  }

  /// The commands that take one trace say so for a job, as the CLI does.
  bool oneTrace(std::string_view Command) const {
    TraceOptions T = O;
    return resolveTraces(T, Command, /*Job=*/false);
  }

  int inspect() const {
    if (!oneTrace("inspect"))
      return ExitBadInput;
    return runInspect(options("", ""));
  }

  int replay(const std::string &Timeline, const std::string &Report) const {
    TraceOptions T = options(Timeline, Report);
    return isJob() ? runJobReplay(T) : runReplay(T);
  }

  int run(const std::string &Model, std::vector<std::string> Settings,
          uint64_t MaxSteps, const std::string &Timeline,
          const std::string &Report) {
    ModelOptions M;
    M.Model = Model;
    M.Settings = std::move(Settings);
    M.MaxSteps = MaxSteps;
    M.Unprofiled = Unprofiled;
    TraceOptions T = options(Timeline, Report);
    if (isJob())
      return runModel(M, T);
    auto P = prepareModel(M);
    if (!P)
      return ExitBadInput;
    if (!checkRun(*P, T))
      return ExitBadInput;
    for (const std::string &W : Setup->Fit.Warnings)
      reportWarning(O.TracePath, W);
    return runPrepared(M, T, *P, *Setup, /*KeepGraph=*/true);
  }

  int memory(unsigned Top) const {
    if (!oneTrace("memory"))
      return ExitBadInput;
    TraceOptions T = options("", "");
    T.Top = Top;
    return runMemory(T);
  }

  /// `ddscript compare THIS AFTER [--model M --set ...]`.
  int compare(const std::string &After, const std::string &Model,
              std::vector<std::string> Settings,
              const std::string &Report) const {
    if (!oneTrace("compare"))
      return ExitBadInput;
    CompareOptions C;
    C.Before = O.TracePath;
    C.After = After;
    C.Model = Model;
    C.Settings = std::move(Settings);
    TraceOptions T = options("", Report);
    TraceOptions Read = T;
    Read.TracePaths = {C.Before, C.After};
    if (!checkOutputPaths(Read))
      return ExitBadInput;
    return runCompare(C, T);
  }

  /// `ddscript export --format chakra -o OUT [--model M --set ...]`.
  int exportChakra(const std::string &Out, const std::string &Model,
                   std::vector<std::string> Settings, uint64_t MaxSteps) const {
    ExportOptions E;
    E.OutDir = Out;
    E.Model = Model;
    E.Settings = std::move(Settings);
    E.MaxSteps = MaxSteps;
    return runExport(E, options("", ""));
  }

  int opportunities(double Factor, size_t Top, const std::string &Report) {
    if (!oneTrace("opportunities"))
      return ExitBadInput;
    OpportunityOptions Opp;
    Opp.Factor = Factor;
    Opp.Top = Top;
    Opp.Unprofiled = Unprofiled;
    return runOpportunities(Opp, options("", Report));
  }

  /// The tasks as columns (columnsOf): one trace's graph and replay as
  /// loaded; a job's ranks read, joined and replayed, as `replay` does.
  /// False, the error printed, where the job cannot be.
  bool tasks(std::string_view Which, Columns &Out) const {
    if (!isJob()) {
      // The graph as `replay` replays it: the profiler's cost as recorded
      // (the runs' setup takes it out), every iteration.
      auto R = loadReplayed(O);
      if (!R)
        return false;
      Out = columnsOf(R->G, R->Base, nullptr, Which);
      return true;
    }
    auto L = loadJobFor(O);
    if (!L)
      return false;
    auto R = sim::simulate(L->Job.G);
    if (!R) {
      reportError("ddscript", llvm::toString(R.takeError()));
      return false;
    }
    Out = columnsOf(L->Job.G, *R, &L->Job, Which);
    return true;
  }

  /// The tasks of the graph \p Model changes (one trace), as columns, with
  /// the prediction's times: the run `run` makes (its setup: the
  /// profiler's cost taken out), on a copy of the graph.
  bool predictedTasks(const std::string &Model,
                      std::vector<std::string> Settings, uint64_t MaxSteps,
                      std::string_view Which, Columns &Out) {
    ModelOptions M;
    M.Model = Model;
    M.Settings = std::move(Settings);
    M.MaxSteps = MaxSteps;
    auto P = prepareModel(M);
    if (!P || !checkRun(*P, O))
      return false;
    if (combinationCount(P->Axes) > 1) {
      reportError("ddscript", "a sweep's tables: give each parameter one "
                              "value");
      return false;
    }
    if (isJob())
      return predictedJobTasks(*P, MaxSteps, Which, Out);
    graph::Graph G = Setup->G;
    Prediction Pr = predict(Setup->baseline(), G, P->Model.Program,
                            combination(P->Axes, 0), RunMemory(), MaxSteps);
    if (!Pr.R.Ok) {
      reportDiagnostic(P->SM, Pr.R.Error);
      return false;
    }
    if (!Pr.SimError.empty() || !Pr.Pred) {
      reportError(P->Path, Pr.SimError);
      return false;
    }
    Out = columnsOf(G, *Pr.Pred, nullptr, Which);
    return true;
  }

  /// predictedTasks on a job: the run `run` makes (whatif::predictJob), its
  /// changed job's tasks with their ranks.
  bool predictedJobTasks(PreparedModel &P, uint64_t MaxSteps,
                         std::string_view Which, Columns &Out) const {
    ProfilerRequest Profiler;
    if (!parseUnprofiled(Unprofiled, O, Profiler))
      return false;
    auto L = loadRanksFor(O);
    if (!L)
      return false;
    whatif::JobPrediction J = whatif::predictJob(
        std::move(*L),
        jobModelRequest(P.Model, P.Path, P.Axes, MaxSteps, Profiler, O));
    if (reportJobFailure(J, P.SM) != ExitOk)
      return false;
    Out = columnsOf(J.Job->G, *J.Run, &*J.Job, Which);
    return true;
  }

  /// The critical path of the reported iteration (the first, with
  /// iteration="all") as `replay` finds it (the same read, graph and
  /// replay); on a job, the job's. The graph it runs through is \p G's or
  /// \p J's.
  bool criticalPath(sim::CriticalPath &Out, std::optional<graph::Graph> &G,
                    std::optional<job::Job> &J) const {
    if (!isJob()) {
      auto In = loadInputFor(O, /*Focus=*/true);
      if (!In)
        return false;
      G = buildGraphFor(O, *In);
      if (!G)
        return false;
      auto Chosen = chooseIterations(*G, O.Iteration);
      if (!Chosen) {
        reportError(O.TracePath, llvm::toString(Chosen.takeError()));
        return false;
      }
      auto R = whatif::replay(*G, {Chosen->front()});
      if (!R) {
        reportError(O.TracePath, llvm::toString(R.takeError()));
        return false;
      }
      Out = std::move(R->Iterations.front().Path);
      return true;
    }
    auto L = loadJobFor(O);
    if (!L)
      return false;
    auto Chosen = chooseJobIterations(L->Job, L->Iteration, L->DefaultFrom);
    if (!Chosen)
      return false;
    auto R = sim::simulate(L->Job.G);
    if (!R) {
      reportError("ddscript", llvm::toString(R.takeError()));
      return false;
    }
    Out = job::criticalPath(L->Job, *R, L->Job.Iterations[Chosen->front()]);
    J = std::move(L->Job);
    return true;
  }

private:
  TraceOptions O;
  std::string Unprofiled;
  std::unique_ptr<RunSetup> Setup; ///< one trace's, shared by its runs
};

} // namespace

PYBIND11_MODULE(_ddscript, M) {
  M.doc() = "ddscript's commands; use the ddscript package, not this module";

  py::class_<Trace>(M, "Trace")
      .def_property_readonly("paths", &Trace::paths)
      .def_property_readonly("is_job", &Trace::isJob)
      .def("inspect",
           [](const Trace &T) { return call([&] { return T.inspect(); }); })
      .def("replay",
           [](const Trace &T, const std::string &Timeline,
              const std::string &Report) {
             return call([&] { return T.replay(Timeline, Report); });
           })
      .def("run",
           [](Trace &T, const std::string &Model,
              std::vector<std::string> Settings, uint64_t MaxSteps,
              const std::string &Timeline, const std::string &Report) {
             return call([&] {
               return T.run(Model, std::move(Settings), MaxSteps, Timeline,
                            Report);
             });
           })
      .def("tasks",
           [](const Trace &T, const std::string &Which) {
             Columns C;
             py::tuple R = call([&] {
               return T.tasks(Which, C) ? static_cast<int>(ExitOk)
                                        : static_cast<int>(ExitBadInput);
             });
             py::object Cols = py::none();
             if (R[0].cast<bool>())
               Cols = toPython(C);
             return py::make_tuple(R[0], R[1], R[2], Cols);
           })
      .def("predicted_tasks",
           [](Trace &T, const std::string &Model,
              std::vector<std::string> Settings, uint64_t MaxSteps,
              const std::string &Which) {
             Columns C;
             py::tuple R = call([&] {
               return T.predictedTasks(Model, std::move(Settings), MaxSteps,
                                       Which, C)
                          ? static_cast<int>(ExitOk)
                          : static_cast<int>(ExitBadInput);
             });
             py::object Cols = py::none();
             if (R[0].cast<bool>())
               Cols = toPython(C, "predicted");
             return py::make_tuple(R[0], R[1], R[2], Cols);
           })
      .def("critical_path",
           [](const Trace &T) {
             sim::CriticalPath P;
             std::optional<graph::Graph> G;
             std::optional<job::Job> J;
             py::tuple R = call([&] {
               return T.criticalPath(P, G, J) ? static_cast<int>(ExitOk)
                                              : static_cast<int>(ExitBadInput);
             });
             py::object Cols = py::none();
             if (R[0].cast<bool>())
               Cols = pathColumns(J ? J->G : *G, P, J ? &*J : nullptr);
             return py::make_tuple(R[0], R[1], R[2], Cols);
           })
      .def("opportunities",
           [](Trace &T, double Factor, size_t Top, const std::string &Report) {
             return call([&] { return T.opportunities(Factor, Top, Report); });
           })
      .def("memory",
           [](const Trace &T, unsigned Top) {
             return call([&] { return T.memory(Top); });
           })
      .def("compare",
           [](const Trace &T, const std::string &After,
              const std::string &Model, std::vector<std::string> Settings,
              const std::string &Report) {
             return call([&] {
               return T.compare(After, Model, std::move(Settings), Report);
             });
           })
      .def("export_chakra",
           [](const Trace &T, const std::string &Out, const std::string &Model,
              std::vector<std::string> Settings, uint64_t MaxSteps) {
             return call([&] {
               return T.exportChakra(Out, Model, std::move(Settings), MaxSteps);
             });
           });

  // (ok, stdout, messages, trace): the trace only where it loaded.
  M.def("load", [](std::vector<std::string> Paths, std::string Iteration,
                   std::string Window, std::string Calibration,
                   std::string Clock, std::string Unprofiled) {
    auto T = std::make_unique<Trace>();
    py::tuple R = call([&] {
      return T->load(std::move(Paths), std::move(Iteration), std::move(Window),
                     std::move(Calibration), std::move(Clock),
                     std::move(Unprofiled));
    });
    py::object Handle = py::none();
    if (R[0].cast<bool>())
      Handle = py::cast(std::move(T));
    return py::make_tuple(R[0], R[1], R[2], Handle);
  });

  // `ddscript reduce`: each of \p Paths' ranks written as a .ddg (\p Output
  // a .ddg for one trace, a folder for several).
  M.def("reduce", [](std::vector<std::string> Paths, std::string Output,
                     std::string Iteration, std::string Calibration) {
    return call([&] {
      TraceOptions O;
      O.TracePaths = std::move(Paths);
      O.Iteration = std::move(Iteration);
      O.Calibration = std::move(Calibration);
      O.Format = OutputFormat::Json;
      if (!resolveTraces(O, "reduce", /*Job=*/true))
        return static_cast<int>(ExitBadInput);
      ReduceOptions R;
      R.Output = std::move(Output);
      return runReduce(R, O);
    });
  });

  // `ddscript convert IN -o OUT`: the trace as Chrome-trace JSON.
  M.def("convert", [](std::string Input, std::string Output) {
    return call([&] {
      ConvertOptions O;
      O.Input = std::move(Input);
      O.Output = std::move(Output);
      O.Format = OutputFormat::Json;
      return runConvert(O);
    });
  });

  // `ddscript record -o OUT -- COMMAND...`: the command run under the
  // collector (its own output goes where the process's goes). A command
  // that fails after a trace was written answers ok false with the trace's
  // values and a warning, as the CLI prints both.
  M.def("record", [](std::vector<std::string> Command, std::string Output,
                     int Skip, int Iterations, bool ProfilerApi) {
    return call([&] {
      RecordOptions O;
      O.Command = std::move(Command);
      O.Output = std::move(Output);
      O.Skip = Skip;
      O.Iterations = Iterations;
      O.ProfilerApi = ProfilerApi;
      O.Format = OutputFormat::Json;
      return runRecord(O);
    });
  });

  // `ddscript disasm MODEL`: (ok, the listing, messages).
  M.def("disasm", [](const std::string &Model) {
    Captured C;
    int Rc = captured([&] { return runDisasm(Model); }, C);
    py::tuple R = reply(Rc == ExitOk, C);
    return py::make_tuple(R[0], text(C.Out), R[2]);
  });

  M.def("check", [](std::vector<std::string> Models) {
    return call([&] { return runCheck(Models, OutputFormat::Json); });
  });
  M.def("models",
        [] { return call([] { return runModels(OutputFormat::Json); }); });
}

#include "driver/Session.h"
#include "job/RankFile.h"

#include "driver/Focus.h"
#include "driver/Outputs.h"
#include "driver/Progress.h"
#include "support/Error.h"
#include "support/FileIO.h"
#include "support/Work.h"
#include "trace/Numbers.h"
#include "trace/TraceReader.h"

#include <fmt/format.h>

#include <glob.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

using namespace dd;
using namespace dd::driver;

/// Whether \p Name looks like a trace file a directory holds.
static bool isTraceFileName(const std::string &Name) {
  auto Ends = [&](std::string_view S) {
    return Name.size() >= S.size() &&
           Name.compare(Name.size() - S.size(), S.size(), S) == 0;
  };
  return Ends(".json") || Ends(".json.gz") || Ends(".cupti") || Ends(".ddg");
}

bool dd::driver::resolveTraces(TraceOptions &O, std::string_view Command,
                               bool Job) {
  std::vector<std::string> Out;
  for (const std::string &P : O.TracePaths) {
    std::error_code EC;
    if (std::filesystem::is_directory(P, EC)) {
      std::vector<std::string> In;
      // Hidden files are not the job's ranks (an editor's or a copy's
      // temporary, a rank set aside), as a shell's glob leaves them out.
      for (const auto &E : std::filesystem::directory_iterator(P, EC)) {
        std::string Name = E.path().filename().string();
        if (E.is_regular_file(EC) && !Name.empty() && Name[0] != '.' &&
            isTraceFileName(Name))
          In.push_back(E.path().string());
      }
      if (In.empty()) {
        reportError(P, "a directory without traces (.json, .json.gz or "
                       ".cupti files) or reduced ranks (.ddg)");
        return false;
      }
      std::sort(In.begin(), In.end());
      Out.insert(Out.end(), In.begin(), In.end());
      continue;
    }
    if (P.find_first_of("*?[") != std::string::npos &&
        !std::filesystem::exists(P, EC)) {
      glob_t G;
      int Rc = ::glob(P.c_str(), 0, nullptr, &G);
      if (Rc == 0)
        Out.insert(Out.end(), G.gl_pathv, G.gl_pathv + G.gl_pathc);
      globfree(&G);
      if (Rc != 0) {
        reportError(P, Rc == GLOB_NOMATCH ? "no file matches this pattern"
                                          : "cannot expand this pattern");
        return false;
      }
      continue;
    }
    Out.push_back(P);
  }
  std::vector<std::string> Seen = Out;
  std::sort(Seen.begin(), Seen.end());
  auto Dup = std::adjacent_find(Seen.begin(), Seen.end());
  if (Dup != Seen.end()) {
    reportError(*Dup, "given twice: a job takes one trace per rank");
    return false;
  }
  if (Out.size() > 1 && !Job) {
    reportError("ddscript",
                fmt::format("`{}` takes one trace, got {}; `replay` and "
                            "`run` read the ranks of a job together",
                            Command, Out.size()));
    return false;
  }
  // A reduced rank holds a job's rank as its graph: the commands of one
  // trace read the trace itself (its events and memory records).
  bool Reduced = false;
  for (const std::string &P : Out)
    if (job::isRankFilePath(P)) {
      if (!Job) {
        reportError(P, fmt::format("a reduced rank (ddscript reduce): `{}` "
                                   "reads the trace itself; give the trace "
                                   "(replay, run and export read reduced "
                                   "ranks)",
                                   Command));
        return false;
      }
      Reduced = true;
    }
  O.Job = Out.size() > 1 || Reduced;
  O.TracePaths = std::move(Out);
  if (!O.TracePaths.empty())
    O.TracePath = O.TracePaths.front();
  return true;
}

bool dd::driver::checkOutputPaths(const std::vector<NamedPath> &Outputs,
                                  const std::vector<NamedPath> &Inputs) {
  // Each path is resolved once (a stat, or where it would be made) and
  // looked up by what it resolved to: comparing every output with every
  // input made a job's export stat each rank's trace once per rank.
  std::map<FileIdentity, size_t> FirstInput, FirstOutput;
  bool InputsResolved = false;
  uint64_t Resolved = 0;
  for (size_t I = 0; I < Outputs.size(); ++I) {
    const NamedPath &Out = Outputs[I];
    ++Resolved;
    if (Out.Path.empty() || isSpecialFile(Out.Path))
      continue;
    if (!InputsResolved) {
      InputsResolved = true;
      Resolved += Inputs.size();
      for (size_t K = 0; K < Inputs.size(); ++K)
        FirstInput.try_emplace(fileIdentity(Inputs[K].Path), K);
    }
    ++Resolved;
    FileIdentity Id = fileIdentity(Out.Path);
    if (auto It = FirstInput.find(Id); It != FirstInput.end()) {
      const NamedPath &In = Inputs[It->second];
      reportError("ddscript",
                  fmt::format("{} {} is {}{}: writing there would "
                              "overwrite it; give another file",
                              Out.What, Out.Path, In.What,
                              In.Path == Out.Path
                                  ? ""
                                  : " (" + In.Path + ", the same file)"));
      return false;
    }
    // (An earlier output that is a device never matches: this one would
    // be that device too, and skipped above.)
    auto [It, New] = FirstOutput.try_emplace(std::move(Id), I);
    if (!New) {
      reportError("ddscript",
                  fmt::format("{} and {} name one file ({}): give each "
                              "its own",
                              Outputs[It->second].What, Out.What, Out.Path));
      return false;
    }
  }
  work::add(work::Counter::PathChecks, Resolved);
  return true;
}

llvm::Expected<trace::Trace> dd::driver::loadTrace(const std::string &Path) {
  PhaseTimer Timer("load");
  Progress P("loading " + Path);
  auto T = trace::readTrace(Path, [&](double F) { P.update(F); });
  P.done();
  return T;
}

std::optional<graph::BuildOptions>
dd::driver::buildOptionsFor(const TraceOptions &O) {
  graph::BuildOptions BO;
  if (!O.Window.empty()) {
    auto W = parseWindow(O.Window);
    if (!W) {
      reportError("ddscript", llvm::toString(W.takeError()));
      return std::nullopt;
    }
    BO.Window = *W;
  }
  if (O.Calibration == "typical")
    BO.Delays = graph::BuildOptions::Calibration::Typical;
  return BO;
}

std::optional<CommandInput> dd::driver::loadInputFor(const TraceOptions &O,
                                                     bool Focus) {
  auto Opts = buildOptionsFor(O);
  if (!Opts)
    return std::nullopt;
  CommandInput In{*Opts, {}, {}};
  {
    PhaseTimer Timer("load");
    Progress P("loading " + O.TracePath);
    auto Update = [&](double F) { P.update(F); };
    auto F = readTraceFor(O.TracePath, Focus && !Opts->Window, O.Iteration,
                          wantsOutputs(O), Update);
    if (!F) {
      P.done();
      reportError(O.TracePath, llvm::toString(F.takeError()));
      return std::nullopt;
    }
    In.Trace = std::move(F->Trace);
    In.Span = F->Span;
  }
  for (const std::string &W : In.Trace.Warnings)
    reportWarning(O.TracePath, W);
  return In;
}

llvm::Expected<graph::Graph>
dd::driver::buildGraphTimed(const CommandInput &In, graph::BuildStats *Stats) {
  PhaseTimer Timer("graph");
  auto G = graph::buildGraph(In.Trace, In.Build, Stats);
  if (G)
    G->Span = In.Span;
  return G;
}

std::optional<graph::Graph>
dd::driver::buildGraphFor(const TraceOptions &O, const CommandInput &In,
                          graph::BuildStats *Stats) {
  auto G = buildGraphTimed(In, Stats);
  if (!G) {
    reportError(O.TracePath, llvm::toString(G.takeError()));
    return std::nullopt;
  }
  return std::move(*G);
}

llvm::Expected<std::pair<int64_t, int64_t>>
dd::driver::parseWindow(std::string_view S) {
  size_t Colon = S.find(':');
  auto Bad = [&]() {
    return makeError("invalid --window '" + llvm::Twine(S) +
                     "': expected START:END in microseconds from the start "
                     "of the trace, e.g. 1200:85000");
  };
  if (Colon == std::string_view::npos)
    return Bad();
  auto A = trace::parseMicrosAsNanos(S.substr(0, Colon));
  auto B = trace::parseMicrosAsNanos(S.substr(Colon + 1));
  if (!A || !B)
    return Bad();
  if (*A < 0 || *B <= *A)
    return makeError("invalid --window '" + llvm::Twine(S) +
                     "': need 0 <= START < END");
  // Times add to the trace's start: a window ends within 2^62 ns of it.
  if (*B > graph::MaxTime)
    return makeError("invalid --window '" + llvm::Twine(S) +
                     "': END is more than 146 years after the trace's start");
  return std::make_pair(*A, *B);
}

size_t dd::driver::defaultIteration(llvm::ArrayRef<int64_t> Lengths,
                                    llvm::ArrayRef<uint8_t> Busy) {
  // The iterations that hold GPU work, or all when none does.
  std::vector<size_t> Pool;
  for (size_t I = 0; I < Lengths.size(); ++I)
    if (Busy.empty() || Busy[I])
      Pool.push_back(I);
  if (Pool.empty())
    for (size_t I = 0; I < Lengths.size(); ++I)
      Pool.push_back(I);
  // Lengths.size() - 1 when there is none (as before: callers check).
  if (Pool.size() <= 2)
    return Pool.empty() ? Lengths.size() - 1 : Pool.back();
  // The first and the last are warm-up and tail.
  std::vector<size_t> Mid(Pool.begin() + 1, Pool.end() - 1);
  std::stable_sort(Mid.begin(), Mid.end(),
                   [&](size_t A, size_t B) { return Lengths[A] < Lengths[B]; });
  return Mid[(Mid.size() - 1) / 2];
}

std::vector<uint8_t>
dd::driver::iterationsWithWork(llvm::ArrayRef<int64_t> Begin,
                               llvm::ArrayRef<int64_t> End,
                               std::vector<int64_t> WorkStarts) {
  std::sort(WorkStarts.begin(), WorkStarts.end());
  std::vector<uint8_t> Busy;
  for (size_t I = 0; I < Begin.size(); ++I) {
    auto First =
        std::lower_bound(WorkStarts.begin(), WorkStarts.end(), Begin[I]);
    Busy.push_back(First != WorkStarts.end() && *First < End[I]);
  }
  return Busy;
}

std::vector<std::string> dd::driver::markerWarnings(
    llvm::ArrayRef<int64_t> Numbers, llvm::ArrayRef<int64_t> Begin,
    llvm::ArrayRef<int64_t> End, llvm::ArrayRef<uint8_t> Busy) {
  std::vector<std::string> Out;
  size_t N = Numbers.size();
  size_t Overlaps = 0, FirstOverlap = 0;
  for (size_t I = 1; I < N; ++I)
    if (Begin[I] < End[I - 1] && Overlaps++ == 0)
      FirstOverlap = I;
  if (Overlaps)
    Out.push_back(fmt::format(
        "{} iteration marker{} begin{} before the one before ends (nested or "
        "repeated markers; the first: ProfilerStep#{} inside ProfilerStep#{}): "
        "each is taken as an iteration, so iterations overlap",
        Overlaps, Overlaps == 1 ? "" : "s", Overlaps == 1 ? "s" : "",
        Numbers[FirstOverlap], Numbers[FirstOverlap - 1]));
  llvm::DenseMap<int64_t, size_t> Count;
  for (int64_t Number : Numbers)
    ++Count[Number];
  size_t Repeated = 0;
  int64_t FirstRepeated = 0;
  for (int64_t Number : Numbers)
    if (Count[Number] > 1 && Repeated++ == 0)
      FirstRepeated = Number;
  if (Repeated)
    Out.push_back(fmt::format(
        "{} iteration markers share a number with another (the first: "
        "ProfilerStep#{}, {} times): --iteration {} reports each of them",
        Repeated, FirstRepeated, Count[FirstRepeated], FirstRepeated));
  size_t Idle = 0, FirstIdle = 0;
  for (size_t I = 0; I < Busy.size(); ++I)
    if (!Busy[I] && Idle++ == 0)
      FirstIdle = I;
  if (Idle && Idle < Busy.size())
    Out.push_back(fmt::format(
        "{} of {} iteration markers {} no GPU work (the first: "
        "ProfilerStep#{}); the default iteration is one of those that do",
        Idle, Busy.size(), Idle == 1 ? "holds" : "hold", Numbers[FirstIdle]));
  return Out;
}

llvm::Expected<std::vector<size_t>> dd::driver::chooseIterations(
    llvm::ArrayRef<int64_t> Numbers, llvm::ArrayRef<int64_t> Lengths,
    std::string_view Choice, llvm::ArrayRef<uint8_t> Busy) {
  std::vector<size_t> Out;
  if (Choice.empty()) {
    Out.push_back(defaultIteration(Lengths, Busy));
    return Out;
  }
  if (Choice == "all") {
    for (size_t I = 0; I < Numbers.size(); ++I)
      Out.push_back(I);
    return Out;
  }
  std::string Known;
  for (int64_t Number : Numbers)
    Known += (Known.empty() ? "" : ", ") + std::to_string(Number);
  // An iteration's number as the trace writes it (ProfilerStep#12): digits
  // alone, without a sign, an exponent or a leading zero, which 1e1, +11
  // and 011 would otherwise pass for 10 and 11.
  bool Plain = !Choice.empty() && Choice.size() <= 18 &&
               (Choice == "0" || Choice.front() != '0') &&
               std::all_of(Choice.begin(), Choice.end(),
                           [](char C) { return C >= '0' && C <= '9'; });
  auto N = Plain ? trace::parseScaledDecimal(Choice, 0) : std::nullopt;
  if (!N)
    return makeError("invalid --iteration '" + llvm::Twine(Choice) +
                     "': expected an iteration's number as the trace writes "
                     "it (digits, like 12) or 'all' (the trace has " +
                     Known + ")");
  for (size_t I = 0; I < Numbers.size(); ++I)
    if (Numbers[I] == *N)
      Out.push_back(I);
  if (Out.empty())
    return makeError("the trace has no iteration " + llvm::Twine(*N) +
                     " (it has " + Known + ")");
  return Out;
}

IterationLists dd::driver::iterationLists(const graph::Graph &G) {
  IterationLists L;
  std::vector<int64_t> Begin, End, GpuStarts;
  for (graph::TaskId X = 0; X < G.numTasks(); ++X)
    if (G.isGpu(X))
      GpuStarts.push_back(G.MeasuredStart[X]);
  for (const graph::Iteration &It : G.Iterations) {
    L.Numbers.push_back(It.Number);
    L.Lengths.push_back(It.measured());
    Begin.push_back(It.MeasuredBegin);
    End.push_back(It.MeasuredEnd);
  }
  L.Busy = iterationsWithWork(Begin, End, std::move(GpuStarts));
  return L;
}

size_t dd::driver::defaultIteration(const graph::Graph &G) {
  if (G.Span.TraceIterations) {
    int64_t S = G.Span.Steady;
    return S >= 0 && size_t(S) < G.Iterations.size() ? size_t(S)
                                                     : G.Iterations.size();
  }
  IterationLists L = iterationLists(G);
  return defaultIteration(L.Lengths, L.Busy);
}

llvm::Expected<std::vector<size_t>>
dd::driver::chooseIterations(const graph::Graph &G, std::string_view Choice) {
  if (Choice.empty())
    return std::vector<size_t>{defaultIteration(G)};
  IterationLists L = iterationLists(G);
  return chooseIterations(L.Numbers, L.Lengths, Choice, L.Busy);
}

int64_t dd::driver::gpuBusy(const graph::Graph &G,
                            const std::vector<int64_t> &Start,
                            const std::vector<int64_t> &End, int64_t Begin,
                            int64_t End_) {
  std::vector<std::pair<int64_t, int64_t>> Iv;
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    if (!G.isGpu(T) || G.isRemoved(T) || Start[T] == graph::NoTime)
      continue;
    int64_t B = std::max(Start[T], Begin), E = std::min(End[T], End_);
    if (E > B)
      Iv.push_back({B, E});
  }
  std::sort(Iv.begin(), Iv.end());
  int64_t Busy = 0, CurB = INT64_MIN, CurE = INT64_MIN;
  for (auto [B, E] : Iv) {
    if (B > CurE) {
      if (CurE > CurB)
        Busy += CurE - CurB;
      CurB = B;
      CurE = E;
    } else {
      CurE = std::max(CurE, E);
    }
  }
  if (CurE > CurB)
    Busy += CurE - CurB;
  return Busy;
}

void dd::driver::measuredTimes(const graph::Graph &G,
                               std::vector<int64_t> &Start,
                               std::vector<int64_t> &End) {
  Start.assign(G.numTasks(), graph::NoTime);
  End.assign(G.numTasks(), graph::NoTime);
  for (graph::TaskId T = 0; T < G.numTasks(); ++T) {
    if (G.MeasuredStart[T] == graph::NoTime)
      continue;
    Start[T] = G.MeasuredStart[T] - G.Origin;
    End[T] = Start[T] + G.MeasuredDur[T];
  }
}

int64_t dd::driver::measuredPointTime(const graph::Graph &G,
                                      const graph::Iteration::Point &P,
                                      const std::vector<int64_t> &End) {
  using PK = graph::Iteration::PointKind;
  switch (P.Kind) {
  case PK::Origin:
    return 0;
  case PK::TaskStart:
    return G.MeasuredStart[P.Task] - G.Origin;
  case PK::TaskEnd:
    return End[P.Task];
  case PK::Makespan: {
    // As the simulator counts it: over the tasks it runs (leaves).
    int64_t M = 0;
    for (graph::TaskId T = 0; T < G.numTasks(); ++T)
      if (End[T] != graph::NoTime && G.isLeaf(T) && !G.isRemoved(T))
        M = std::max(M, End[T]);
    return M;
  }
  }
  return 0;
}

bool dd::driver::oneIteration(const TraceOptions &O, std::string_view Command) {
  if (O.Iteration != "all")
    return true;
  reportError("ddscript", fmt::format("{} reports one iteration: give "
                                      "--iteration N, or leave it out for a "
                                      "steady-state one",
                                      Command));
  return false;
}

std::optional<Replayed> dd::driver::loadReplayed(const TraceOptions &O) {
  auto In = loadInputFor(O);
  if (!In)
    return std::nullopt;
  auto G = buildGraphFor(O, *In);
  if (!G)
    return std::nullopt;
  auto Chosen = chooseIterations(*G, O.Iteration);
  if (!Chosen) {
    reportError(O.TracePath, llvm::toString(Chosen.takeError()));
    return std::nullopt;
  }
  auto R = sim::simulate(*G);
  if (!R) {
    reportError(O.TracePath, llvm::toString(R.takeError()));
    return std::nullopt;
  }
  return Replayed{std::move(*In), std::move(*G), std::move(*Chosen),
                  std::move(*R)};
}

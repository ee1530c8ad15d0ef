#include "driver/Session.h"
#include "job/RankFile.h"

#include "driver/Outputs.h"
#include "support/Error.h"
#include "support/FileIO.h"
#include "support/Progress.h"
#include "support/Work.h"
#include "trace/Numbers.h"
#include "trace/TraceReader.h"
#include "whatif/Focus.h"

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
  auto In = whatif::readInput(
      {O.TracePath, *Opts, O.Iteration, Focus, wantsOutputs(O)});
  if (!In) {
    reportError(O.TracePath, llvm::toString(In.takeError()));
    return std::nullopt;
  }
  for (const std::string &W : In->Trace.Warnings)
    reportWarning(O.TracePath, W);
  return std::move(*In);
}

llvm::Expected<graph::Graph>
dd::driver::buildGraphTimed(const CommandInput &In, graph::BuildStats *Stats) {
  return whatif::buildGraph(In, Stats);
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
  auto Opts = buildOptionsFor(O);
  if (!Opts)
    return std::nullopt;
  return reported(whatif::loadReplayed(
      {O.TracePath, *Opts, O.Iteration, false, wantsOutputs(O)}));
}

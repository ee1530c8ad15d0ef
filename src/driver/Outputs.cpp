//===- Outputs.cpp - --timeline and --report of the commands --------------===//

#include "driver/Outputs.h"

#include "driver/Session.h"
#include "sim/Simulator.h"
#include "support/FileIO.h"

#include <fmt/format.h>

#include <filesystem>

#include <string_view>

using namespace dd;
namespace fs = std::filesystem;
using namespace dd::driver;

bool dd::driver::checkOutputPaths(const TraceOptions &O,
                                  const SourceManager *Model) {
  std::vector<NamedPath> Inputs;
  for (const std::string &P : O.TracePaths)
    Inputs.push_back({O.Job || O.TracePaths.size() > 1 ? "a trace being read"
                                                       : "the trace being read",
                      P});
  if (O.TracePaths.empty() && !O.TracePath.empty())
    Inputs.push_back({"the trace being read", O.TracePath});
  // Buffer 0 is the model, the others the modules it imports.
  for (BufferId B = 0; Model && B < Model->size(); ++B)
    Inputs.push_back(
        {B == 0 ? "the model being read" : "a module the model imports",
         Model->name(B)});
  return checkOutputPaths(
      {{"--timeline", O.TimelinePath}, {"--report", O.ReportPath}}, Inputs);
}

std::optional<memory::MemoryModel>
dd::driver::memoryForOutputs(const trace::Trace &T, const graph::Graph &G) {
  bool Device = false;
  for (const trace::MemoryRecord &M : T.Memory)
    Device |= M.DeviceType != 0 && M.Bytes != 0;
  if (!Device)
    return std::nullopt;
  auto M = memory::MemoryModel::build(T, G);
  if (!M) {
    // No record inside the replayed window: nothing to draw.
    llvm::consumeError(M.takeError());
    return std::nullopt;
  }
  if (!M->hasDeviceRecords())
    return std::nullopt;
  return std::move(*M);
}

report::Schedule dd::driver::measuredSchedule(const graph::Graph &G,
                                              const std::vector<int64_t> &Start,
                                              const std::vector<int64_t> &End) {
  report::Schedule S;
  S.Label = "measured";
  S.Start = Start;
  S.End = End;
  for (const graph::Iteration &It : G.Iterations)
    S.Iterations.push_back({measuredPointTime(G, It.Begin, End),
                            measuredPointTime(G, It.End, End)});
  return S;
}

report::Schedule
dd::driver::simulatedSchedule(std::string Label, const graph::Graph &G,
                              const sim::SimResult &R,
                              const std::vector<size_t> &Reported) {
  report::Schedule S;
  S.Label = std::move(Label);
  S.Start = R.Start;
  S.End = R.End;
  S.Simulated = true;
  for (const graph::Iteration &It : G.Iterations) {
    auto [Begin, End] = sim::iterationSpan(G, R, It);
    S.Iterations.push_back({Begin, End});
  }
  for (size_t I : Reported) {
    S.Paths.push_back(
        sim::criticalPath(G, R, G.Iterations[I].End, S.Iterations[I].Begin));
    S.PathShares.push_back(sim::sharesByActivity(G, S.Paths.back()));
  }
  return S;
}

int dd::driver::writeOutputs(const TraceOptions &O, const trace::Trace &T,
                             const std::vector<size_t> &Reported,
                             report::RunData &D) {
  D.TracePath = O.TracePath;
  if (O.Job) {
    // A job: its folder when the ranks' traces share one.
    std::string Dir = fs::path(O.TracePaths.front()).parent_path().string();
    bool Shared = true;
    for (const std::string &P : O.TracePaths)
      Shared &= fs::path(P).parent_path().string() == Dir;
    D.TracePath =
        fmt::format("{} ({} traces, one per rank)",
                    Shared && !Dir.empty() ? Dir + "/" : O.TracePath + " ...",
                    O.TracePaths.size());
  }
  D.Reported = Reported;
  D.SteadyState = defaultIteration(*D.G);
  for (const trace::DeviceInfo &Dev : T.Devices)
    D.DeviceMemory.push_back({Dev.Id, Dev.TotalGlobalMem});
  if (!T.Devices.empty())
    D.DeviceName = T.Devices.front().Name;
  // The file is the command's output, not its input: the error names it
  // in the message ("ddscript: error: cannot write 'x': reason").
  auto Write = [&](const std::string &Path, const std::string &Text) {
    auto Written = writeFileMaybeGzip(Path, Text);
    if (Written)
      return true;
    std::string Why = llvm::toString(Written.takeError());
    std::string_view Prefix = "cannot write: ";
    if (std::string_view(Why).substr(0, Prefix.size()) == Prefix)
      Why.erase(0, Prefix.size());
    reportError("ddscript", fmt::format("cannot write '{}': {}", Path, Why));
    return false;
  };
  if (!O.TimelinePath.empty() &&
      !Write(O.TimelinePath, report::renderTimeline(D)))
    return ExitBadInput;
  if (!O.ReportPath.empty() && !Write(O.ReportPath, report::renderHtml(D)))
    return ExitBadInput;
  return ExitOk;
}

std::vector<int64_t> dd::driver::profiledReplays(const whatif::ProfilerFit &F,
                                                 size_t Reported) {
  std::vector<int64_t> Out;
  if (F.PerEvent)
    for (size_t K = 0; K < Reported; ++K)
      Out.push_back(F.profiledReplay(K));
  return Out;
}

//===- Predict.cpp - A model run on a trace, for the commands -------------===//

#include "driver/Predict.h"
#include "driver/Outputs.h"

#include "support/Units.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::driver;

RunSetupResult dd::driver::setupRun(const TraceOptions &T,
                                    const ProfilerRequest &Req, bool TellFit) {
  RunSetupResult Out;
  Out.Rc = ExitBadInput;
  auto Opts = buildOptionsFor(T);
  if (!Opts)
    return Out;
  auto Setup = reported(
      whatif::setupRun(
          {T.TracePath, *Opts, T.Iteration, false, wantsOutputs(T)}, Req),
      Out.Rc);
  if (!Setup)
    return Out;
  Out.Setup = std::move(*Setup);
  if (TellFit)
    for (const std::string &W : Out.Setup->Fit.Warnings)
      reportWarning(T.TracePath, W);
  return Out;
}

void dd::driver::writeChanges(JsonWriter &W, const vm::ChangeStats &C) {
  W.beginObject();
  W.field("selected", C.Selected);
  W.field("scaled", C.Scaled);
  W.field("inserted", C.Inserted);
  W.field("removed", C.Removed);
  W.field("dependencies", C.Dependencies);
  W.field("schedules", C.Scheduled);
  W.key("moved_ns_by_phase").beginObject();
  for (unsigned P = 0; P < graph::NumPhases; ++P)
    W.field(graph::phaseName(graph::Phase(P)), C.MovedByPhase[P]);
  W.endObject();
  W.endObject();
}

std::vector<std::pair<std::string, std::string>>
dd::driver::describeChanges(const vm::ChangeStats &C) {
  std::vector<std::pair<std::string, std::string>> Out = {
      {"tasks selected", formatCount(C.Selected)},
      {"tasks scaled", formatCount(C.Scaled)},
      {"tasks inserted", formatCount(C.Inserted)},
      {"tasks removed", formatCount(C.Removed)},
      {"dependencies added", formatCount(C.Dependencies)},
      {"resources rescheduled", formatCount(C.Scheduled)}};
  for (unsigned P = 0; P < graph::NumPhases; ++P)
    if (C.MovedByPhase[P])
      Out.push_back({fmt::format("task time in {} (all iterations)",
                                 graph::phaseName(graph::Phase(P))),
                     (C.MovedByPhase[P] > 0 ? "+" : "") +
                         formatDuration(C.MovedByPhase[P])});
  return Out;
}

void dd::driver::writeBacklog(JsonWriter &W, const char *Key,
                              const Backlog &B) {
  W.key(Key);
  if (!B.piling()) {
    W.null();
    return;
  }
  W.beginObject()
      .field("resource", B.Resource)
      .field("work_per_iteration_ns", B.PerIteration)
      .field("growth_per_iteration_ns", B.Growth)
      .field("iteration_ns", B.IterationTime)
      .field("window", B.Window)
      .endObject();
}

bool dd::driver::parseUnprofiled(const std::string &Text, const TraceOptions &T,
                                 ProfilerRequest &Out) {
  // By default the profiler's cost is taken out per event, of one trace or
  // of each rank of a job.
  if (Text.empty()) {
    Out.PerEventNs = DefaultPerEventNs;
    Out.ByDefault = true;
    return true;
  }
  // --profiled: the trace's CPU work as recorded, the profiled run.
  if (Text == "profiled")
    return true;
  std::string_view Mode = Text;
  if (T.Job && Mode.substr(0, 9) != "per-event") {
    reportError("ddscript", "--unprofiled " + Text +
                                ": a job's ranks each ran their own time; "
                                "give per-event[=COST] (the default) or "
                                "--profiled");
    return false;
  }
  if (Mode.substr(0, 9) == "per-event") {
    Out.PerEventNs = DefaultPerEventNs;
    std::string_view Rest = Mode.substr(9);
    if (Rest.empty())
      return true;
    auto V = Rest.front() == '='
                 ? parseQuantity(std::string(Rest.substr(1)), Dim::duration())
                 : std::nullopt;
    if (!V || *V < 1 || !(*V < 1e9)) {
      reportError("ddscript",
                  "--unprofiled " + Text +
                      ": per-event takes the profiler's cost per recorded "
                      "CPU event as a duration above zero and below 1 s, "
                      "like per-event=4us");
      return false;
    }
    Out.PerEventNs = std::llround(*V);
    return true;
  }
  auto V = parseQuantity(Text, Dim::duration());
  // At most a million seconds an iteration: the fit's sums stay exact.
  if (!V || *V < 1 || !(*V <= 1e15)) {
    reportError("ddscript", "--unprofiled " + Text +
                                ": give the iteration time measured without "
                                "the profiler as a duration above zero and at "
                                "most 1000000s, like 35.5ms, or per-event "
                                "(the profiler's cost per recorded event "
                                "taken out)");
    return false;
  }
  Out.Target = std::llround(*V);
  return true;
}

std::optional<ProfilerFit>
dd::driver::applyProfiler(Replayed &R, const ProfilerRequest &Req,
                          const std::string &TracePath) {
  auto Fit = whatif::applyProfiler(R, Req);
  if (!Fit) {
    reportError(TracePath, llvm::toString(Fit.takeError()));
    return std::nullopt;
  }
  for (const std::string &W : Fit->Warnings)
    reportWarning(TracePath, W);
  return std::move(*Fit);
}

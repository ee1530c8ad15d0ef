//===- main.cpp - The ddscript command line -------------------------------===//
//
// The only file that includes CLI11 (it is slow to compile).
//
//===----------------------------------------------------------------------===//

#include "DDVersion.h"
#include "driver/Commands.h"
#include "driver/Console.h"
#include "driver/Outputs.h"
#include "driver/Session.h"
#include "support/Exit.h"
#include "support/FileIO.h"
#include "support/HugePages.h"
#include "support/Progress.h"
#include "support/Work.h"

#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

using namespace dd::driver;

namespace {

/// A whole number from Min to Max, said plainly when it is not one.
CLI::Validator wholeNumber(uint64_t Min, uint64_t Max) {
  return CLI::Validator(
      [Min, Max](std::string &S) -> std::string {
        uint64_t V = 0;
        bool Ok = !S.empty() && S.size() <= 20;
        for (char Ch : S)
          Ok = Ok && Ch >= '0' && Ch <= '9';
        if (Ok) {
          errno = 0;
          V = std::strtoull(S.c_str(), nullptr, 10);
          Ok = errno == 0;
        }
        if (Ok && V >= Min && V <= Max)
          return {};
        return "expected a whole number from " + std::to_string(Min) + " to " +
               std::to_string(Max) + ", got '" + S + "'";
      },
      "NUMBER");
}

/// Whether an argument names a file whose content will take tens of MB: 16
/// MB of JSON, or 2 MB of gzip. Only then does the restart with huge pages
/// (support/HugePages.h) pay for itself (about 10 ms).
bool namesLargeFile(int argc, char **argv) {
  for (int I = 1; I < argc; ++I) {
    std::string_view A = argv[I];
    if (A.substr(0, 8) == "--trace=")
      A.remove_prefix(8);
    struct stat St;
    if (A.empty() || A[0] == '-' || ::stat(std::string(A).c_str(), &St) != 0 ||
        !S_ISREG(St.st_mode) || St.st_size < (2 << 20))
      continue;
    if (St.st_size >= (16 << 20))
      return true;
    char Magic[2];
    if (std::FILE *F = std::fopen(std::string(A).c_str(), "rb")) {
      size_t Got = std::fread(Magic, 1, 2, F);
      std::fclose(F);
      if (dd::isGzip(std::string_view(Magic, Got)))
        return true;
    }
  }
  return false;
}

/// Where DDSCRIPT_WORK_COUNTS says to write the work counts, or null.
const char *WorkCountsPath = nullptr;

/// Writes the work counts (support/Work.h) when the command exits: commands
/// end in std::exit, which runs this and not the destructors of main's
/// locals.
void writeWorkCounts() {
  if (auto Err = dd::writeFileAtomically(WorkCountsPath, dd::work::toJson()))
    reportWarning(WorkCountsPath, "cannot write the work counts: " +
                                      llvm::toString(std::move(Err)));
}

/// --format: text or json, in any case.
CLI::Validator formatName() {
  return CLI::Validator(
      [](std::string &S) -> std::string {
        std::string L = CLI::detail::to_lower(S);
        if (L == "text" || L == "json") {
          S = std::to_string(static_cast<int>(
              L == "json" ? OutputFormat::Json : OutputFormat::Text));
          return {};
        }
        return "expected text or json, got '" + S + "'";
      },
      "text|json");
}

/// Usage errors in the one-line error format, with where to find help.
std::string usageError(const CLI::App *App, const CLI::Error &E) {
  // The message is the top command's; the help to point at is that of the
  // command the user gave.
  std::string Cmd = "ddscript";
  const CLI::App *At = App;
  while (!At->get_subcommands().empty()) {
    At = At->get_subcommands().front();
    Cmd += " " + At->get_name();
  }
  std::string Msg = E.what();
  if (At == App && App->get_subcommands().empty()) {
    std::string Commands;
    for (const CLI::App *Sub : App->get_subcommands({}))
      Commands += (Commands.empty() ? "" : ", ") + Sub->get_name();
    std::vector<std::string> Rest = App->remaining();
    if (!Rest.empty() && !Rest.front().empty() && Rest.front()[0] != '-')
      Msg =
          "unknown command '" + Rest.front() + "' (commands: " + Commands + ")";
    else if (Msg == "A subcommand is required")
      Msg = "give a command: " + Commands;
  }
  return "ddscript: error: " + Msg + "\n(see '" + Cmd + " --help')\n";
}

/// \p Format: whether --format is the output's (text or json); `export`
/// takes it for what it writes.
void addTraceOptions(CLI::App *Cmd, TraceOptions &O, bool Iterations,
                     bool Format = true) {
  Cmd->add_option("--trace,-t", O.TracePaths,
                  "Trace file: PyTorch profiler JSON (.json, .json.gz) or "
                  "run.cupti from `ddscript record`; for `replay`, several "
                  "files, a directory or a glob: a job, one trace per rank")
      ->required();
  if (Iterations)
    Cmd->add_option("--iteration,-i", O.Iteration,
                    "Iteration to report: its number as the trace numbers "
                    "it (ProfilerStep#N), or 'all'; default: a steady-state "
                    "one");
  Cmd->add_option("--window", O.Window,
                  "Replay this window instead of the trace's iterations: "
                  "START:END in microseconds from the trace start");
  Cmd->add_option("--calibration", O.Calibration,
                  "Dependency delays: exact (measured, the default) or "
                  "typical (each kind's typical delay; the replay error then "
                  "shows how much the dependencies explain)")
      ->check(CLI::IsMember({"exact", "typical"}));
  if (Format)
    Cmd->add_option("--format", O.Format, "Output format: text or json")
        ->transform(formatName());
}

/// --report, with what the command adds to the page (\p Also, or empty).
void addReportOption(CLI::App *Cmd, TraceOptions &O, const char *Also = "") {
  Cmd->add_option("--report", O.ReportPath,
                  std::string("Write a self-contained HTML report: ") + Also +
                      "numbers, timelines, phases and layers, memory, "
                      "critical path");
}

void addOutputOptions(CLI::App *Cmd, TraceOptions &O) {
  Cmd->add_option("--timeline", O.TimelinePath,
                  "Write the reported iterations, measured and replayed or "
                  "predicted, as Chrome-trace JSON for Perfetto or "
                  "chrome://tracing (gzip-compressed if FILE ends in .gz)");
  addReportOption(Cmd, O);
}

/// --profiled is --unprofiled's "profiled"; the two together are refused.
bool profiledFlag(bool Profiled, std::string &Unprofiled) {
  if (!Profiled)
    return true;
  if (!Unprofiled.empty()) {
    reportError("ddscript", "--profiled keeps the profiler's cost and "
                            "--unprofiled " +
                                Unprofiled + " takes it out: give one of them");
    return false;
  }
  Unprofiled = "profiled";
  return true;
}

} // namespace

int main(int argc, char **argv) {
  dd::restartWithHugePages(argv, namesLargeFile(argc, argv));
  dd::installExitHandlers();
  // After the restart, which would lose a handler registered before it.
  WorkCountsPath = std::getenv("DDSCRIPT_WORK_COUNTS");
  if (WorkCountsPath && *WorkCountsPath)
    std::atexit(writeWorkCounts);
  // `ddscript record [options] -- CMD ARGS...`: the command after "--" is
  // the user's, not ours to parse.
  RecordOptions Record;
  for (int I = 1; I < argc; ++I) {
    std::string_view A = argv[I];
    if (A == "--" && I > 1 && std::string_view(argv[1]) == "record") {
      Record.Command.assign(argv + I + 1, argv + argc);
      argc = I;
      break;
    }
  }

  CLI::App App{"ddscript: predict what an optimization does to DNN training "
               "time, from one profiled run"};
  App.failure_message(usageError);
  App.require_subcommand(1);
  App.set_version_flag("--version", "ddscript " DD_VERSION);
  App.fallthrough();
  App.add_flag_callback(
      "--timings", [] { dd::PhaseTimer::enable(); },
      "Print each phase's wall time and the peak memory so far on stderr");

  TraceOptions Inspect;
  CLI::App *InspectCmd = App.add_subcommand(
      "inspect", "Show what a trace holds: iterations, threads, streams, "
                 "GPU busy time, top kernels, layers");
  addTraceOptions(InspectCmd, Inspect, false);
  InspectCmd->callback([&] {
    std::exit(resolveTraces(Inspect, "inspect", false) ? runInspect(Inspect)
                                                       : ExitBadInput);
  });

  TraceOptions Replay;
  CLI::App *ReplayCmd = App.add_subcommand(
      "replay", "Replay iterations of a trace: measured vs replayed time and "
                "the critical path");
  addTraceOptions(ReplayCmd, Replay, true);
  ReplayCmd
      ->add_option("--diverging", Replay.Diverging,
                   "Also list the first N tasks whose replayed start "
                   "differs from the trace, with what bound them")
      ->check(wholeNumber(0, UINT32_MAX));
  ReplayCmd
      ->add_option("--clock", Replay.Clock,
                   "A job's clocks: collectives (each rank's offset "
                   "estimated from matched collectives, the default) or "
                   "trace (the traces' clocks as they are)")
      ->check(CLI::IsMember({"collectives", "trace"}));
  addOutputOptions(ReplayCmd, Replay);
  ReplayCmd->callback([&] {
    if (!resolveTraces(Replay, "replay", true))
      std::exit(ExitBadInput);
    std::exit(Replay.Job ? runJobReplay(Replay) : runReplay(Replay));
  });

  ModelOptions RunModel;
  TraceOptions RunTrace;
  CLI::App *RunCmd = App.add_subcommand(
      "run", "Run an optimization model (.dd) against a trace: measured, "
             "replayed and predicted iteration time");
  RunCmd
      ->add_option("model", RunModel.Model,
                   "The model: a .dd file, or the name of a standard model "
                   "(amp, fused_adam, ...)")
      ->required();
  addTraceOptions(RunCmd, RunTrace, true);
  RunCmd->add_option("--set", RunModel.Settings,
                     "Set a parameter: NAME=VALUE (repeatable)");
  RunCmd
      ->add_option("--max-steps", RunModel.MaxSteps,
                   "Stop a model after this many VM steps")
      ->check(wholeNumber(1, UINT64_MAX / 2));
  RunCmd->add_option(
      "--unprofiled", RunModel.Unprofiled,
      "Take the profiler's overhead out of the trace's CPU work before the "
      "model runs: per-event (its cost per recorded CPU event, 5.5us, fitted "
      "on H200 and H100 runs; per-event=4us for another) or the iteration "
      "time measured without the profiler (like 35.5ms: CPU work scaled to "
      "match it)");
  bool RunProfiled = false;
  RunCmd->add_flag("--profiled", RunProfiled,
                   "Keep the profiler's cost in the trace's CPU work: "
                   "predict the profiled run (by default the cost per "
                   "recorded event is taken out)");
  addOutputOptions(RunCmd, RunTrace);
  RunCmd->callback([&] {
    if (!profiledFlag(RunProfiled, RunModel.Unprofiled))
      std::exit(ExitBadInput);
    std::exit(resolveTraces(RunTrace, "run", true)
                  ? runModel(RunModel, RunTrace)
                  : ExitBadInput);
  });

  OpportunityOptions Opp;
  TraceOptions OppTrace;
  CLI::App *OppCmd = App.add_subcommand(
      "opportunities",
      "Rank simulated what-ifs: each kernel class, phase and top layer "
      "faster, data loading gone, communication faster, syncs removed, the "
      "optimizer fused");
  addTraceOptions(OppCmd, OppTrace, true);
  OppCmd->add_option(
      "--factor", Opp.Factor,
      "How much faster each what-if makes its tasks (default 2)");
  OppCmd->add_option("--top", Opp.Top, "How many to list (default 10)")
      ->check(wholeNumber(1, 1000));
  OppCmd->add_option("--unprofiled", Opp.Unprofiled,
                     "per-event[=COST], or the iteration time measured "
                     "without the profiler (like 35.5ms): the what-ifs start "
                     "from the trace with the profiler's CPU overhead taken "
                     "out, as run's");
  bool OppProfiled = false;
  OppCmd->add_flag("--profiled", OppProfiled,
                   "Keep the profiler's cost in the trace's CPU work, as "
                   "run's --profiled");
  addReportOption(OppCmd, OppTrace, "the ranked what-ifs, with the replay's ");
  OppCmd->callback([&] {
    if (!profiledFlag(OppProfiled, Opp.Unprofiled))
      std::exit(ExitBadInput);
    std::exit(resolveTraces(OppTrace, "opportunities", false)
                  ? runOpportunities(Opp, OppTrace)
                  : ExitBadInput);
  });

  CompareOptions Cmp;
  TraceOptions CmpTrace;
  CLI::App *CmpCmd = App.add_subcommand(
      "compare",
      "Back-test: two traces before and after a change, side by side; with "
      "--model, the model's prediction from BEFORE against AFTER");
  CmpCmd->add_option("before", Cmp.Before, "The trace before the change")
      ->required();
  CmpCmd->add_option("after", Cmp.After, "The trace after the change")
      ->required();
  CmpCmd->add_option("--model,-m", Cmp.Model,
                     "A model of the change (a .dd file or a standard "
                     "model's name), run on BEFORE");
  CmpCmd->add_option("--set", Cmp.Settings,
                     "Set a model parameter: NAME=VALUE (repeatable)");
  CmpCmd->add_option("--iteration,-i", CmpTrace.Iteration,
                     "BEFORE's iteration (default: a steady-state one; "
                     "AFTER's is its own steady-state one)");
  CmpCmd
      ->add_option("--calibration", CmpTrace.Calibration,
                   "Dependency delays: exact or typical")
      ->check(CLI::IsMember({"exact", "typical"}));
  CmpCmd->add_option("--format", CmpTrace.Format, "Output format: text or json")
      ->transform(formatName());
  addReportOption(CmpCmd, CmpTrace,
                  "the two traces side by side, with BEFORE's ");
  CmpCmd->callback([&] {
    // --report must not be either trace.
    TraceOptions Read = CmpTrace;
    Read.TracePaths = {Cmp.Before, Cmp.After};
    std::exit(checkOutputPaths(Read) ? runCompare(Cmp, CmpTrace)
                                     : ExitBadInput);
  });

  std::vector<std::string> CheckModels;
  CLI::App *CheckCmd = App.add_subcommand(
      "check", "Check models without running them (no trace needed)");
  CheckCmd->add_option("models", CheckModels, "Models (.dd files or names)")
      ->required();
  OutputFormat CheckFormat = OutputFormat::Text;
  CheckCmd
      ->add_option("--format", CheckFormat,
                   "Output format: text, or json (each model's diagnostics "
                   "with file, line and column, for editors)")
      ->transform(formatName());
  CheckCmd->callback([&] { std::exit(runCheck(CheckModels, CheckFormat)); });

  std::string DisasmModel;
  CLI::App *DisasmCmd =
      App.add_subcommand("disasm", "Print the bytecode a model compiles to");
  DisasmCmd->add_option("model", DisasmModel, "The model")->required();
  DisasmCmd->callback([&] { std::exit(runDisasm(DisasmModel)); });

  OutputFormat ModelsFormat = OutputFormat::Text;
  CLI::App *ModelsCmd = App.add_subcommand(
      "models", "List the models `ddscript run NAME` finds (the standard "
                "library and DDSCRIPT_PATH), with their parameters");
  ModelsCmd->add_option("--format", ModelsFormat, "Output format: text or json")
      ->transform(formatName());
  ModelsCmd->callback([&] { std::exit(runModels(ModelsFormat)); });

  TraceOptions Memory;
  CLI::App *MemoryCmd = App.add_subcommand(
      "memory", "Peak device memory and where it happens: measured and "
                "replayed, live blocks by class, per-iteration pattern, "
                "headroom");
  addTraceOptions(MemoryCmd, Memory, true);
  MemoryCmd
      ->add_option("--top", Memory.Top,
                   "How many of the largest blocks live at the peak to "
                   "list (default 10)")
      ->check(wholeNumber(0, 1'000'000));
  MemoryCmd->callback([&] {
    std::exit(resolveTraces(Memory, "memory", false) ? runMemory(Memory)
                                                     : ExitBadInput);
  });
  CLI::App *RecordCmd = App.add_subcommand(
      "record", "Run a command under ddscript's CUPTI collector and write a "
                "run.cupti trace: ddscript record -o run.cupti [--skip N] "
                "[--iterations K] -- CMD ARGS...");
  RecordCmd->add_option("-o,--output", Record.Output,
                        "The trace to write (default run.cupti)");
  RecordCmd
      ->add_option("--skip", Record.Skip,
                   "Skip the first N iterations (NVTX ranges named "
                   "ProfilerStep#N)")
      ->check(wholeNumber(0, INT32_MAX));
  RecordCmd
      ->add_option("--iterations", Record.Iterations,
                   "Record K iterations, then stop (default: until "
                   "the command exits)")
      ->check(wholeNumber(1, INT32_MAX));
  RecordCmd->add_flag("--profiler-api", Record.ProfilerApi,
                      "Record only between cudaProfilerStart and "
                      "cudaProfilerStop (torch.cuda.profiler.start/stop)");
  RecordCmd
      ->add_option("--format", Record.Format,
                   "How to describe the trace written: text or json")
      ->transform(formatName());
  // Without "--", the command starts at the first word that is no option.
  RecordCmd->prefix_command();
  RecordCmd->callback([&] {
    if (Record.Command.empty())
      Record.Command = RecordCmd->remaining();
    std::exit(runRecord(Record));
  });

  ExportOptions Export;
  TraceOptions ExportTrace;
  CLI::App *ExportCmd = App.add_subcommand(
      "export", "Write the reported iteration of each rank's graph (after "
                "--model) for another tool: Chakra execution traces for "
                "ASTRA-sim");
  addTraceOptions(ExportCmd, ExportTrace, true, /*Format=*/false);
  ExportCmd
      ->add_option("--format", Export.Format,
                   "What to write: chakra (one DIR/chakra.RANK.et per rank)")
      ->check(CLI::Validator(
          [](std::string &S) -> std::string {
            if (S == "chakra")
              return {};
            if (CLI::detail::to_lower(S) == "json" ||
                CLI::detail::to_lower(S) == "text")
              return "export's --format is what it writes (chakra); "
                     "--print " +
                     CLI::detail::to_lower(S) +
                     " says how it reports what was written";
            return "expected chakra, got '" + S + "'";
          },
          "{chakra}"));
  ExportCmd->add_option("-o,--output", Export.OutDir, "The folder to write")
      ->required();
  ExportCmd->add_option("--model", Export.Model,
                        "Apply this model first (a .dd file or a standard "
                        "model's name)");
  ExportCmd->add_option("--set", Export.Settings,
                        "Set a parameter of the model: NAME=VALUE "
                        "(repeatable)");
  OutputFormat ExportFormat = OutputFormat::Text;
  ExportCmd
      ->add_option("--print", ExportFormat,
                   "How to report what was written: text or json")
      ->transform(formatName());
  ExportCmd->callback([&] {
    ExportTrace.Format = ExportFormat;
    std::exit(resolveTraces(ExportTrace, "export", true)
                  ? runExport(Export, ExportTrace)
                  : ExitBadInput);
  });

  ReduceOptions Reduce;
  TraceOptions ReduceTrace;
  CLI::App *ReduceCmd = App.add_subcommand(
      "reduce", "Read a job's rank once and write its graph (.ddg): the "
                "job's replay, run and export take it in place of the trace, "
                "so each rank can be read by a process of its own");
  addTraceOptions(ReduceCmd, ReduceTrace, true);
  ReduceCmd
      ->add_option("-o,--output", Reduce.Output,
                   "The .ddg to write; a folder for several traces (each "
                   "written as its trace's name, .ddg)")
      ->required();
  ReduceCmd->callback([&] {
    std::exit(resolveTraces(ReduceTrace, "reduce", true)
                  ? runReduce(Reduce, ReduceTrace)
                  : ExitBadInput);
  });

  ConvertOptions Convert;
  CLI::App *ConvertCmd = App.add_subcommand(
      "convert", "Write a trace (run.cupti or Kineto JSON) as Chrome-trace "
                 "JSON for Perfetto; gzip-compressed when OUT ends in .gz");
  ConvertCmd->add_option("trace", Convert.Input, "The trace to convert")
      ->required();
  ConvertCmd->add_option("-o,--output", Convert.Output, "The JSON to write")
      ->required();
  ConvertCmd
      ->add_option("--format", Convert.Format,
                   "How to say what was written: text or json")
      ->transform(formatName());
  ConvertCmd->callback([&] { std::exit(runConvert(Convert)); });

  try {
    App.parse(argc, argv);
  } catch (const CLI::ParseError &E) {
    int Rc = App.exit(E);
    // Help and version are successes; usage errors are bad input.
    return Rc == 0 ? 0 : ExitBadInput;
  } catch (const std::bad_alloc &) {
    dd::exitOutOfMemory();
  }
  return 0;
}

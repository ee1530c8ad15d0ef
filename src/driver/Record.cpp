//===- Record.cpp - ddscript record ---------------------------------------===//
//
// Runs a command with ddscript's CUPTI collector injected into it (through
// CUDA_INJECTION64_PATH; NVTX ranges reach CUPTI through
// NVTX_INJECTION64_PATH) and checks the run.cupti file it leaves. The
// collector library is looked for next to the ddscript binary (the build
// tree), then in the install prefix.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"
#include "driver/Format.h"
#include "driver/Session.h"

#include "support/FileIO.h"
#include "trace/TraceReader.h"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace dd;
using namespace dd::driver;
namespace fs = std::filesystem;

#ifndef DD_CUPTI_COLLECTOR_NAME
#define DD_CUPTI_COLLECTOR_NAME "libddscript_cupti.so"
#endif
#ifndef DD_CUPTI_INSTALL_DIR
#define DD_CUPTI_INSTALL_DIR ""
#endif
#ifndef DD_HAVE_CUPTI
#define DD_HAVE_CUPTI 0
#endif

namespace {

/// The collector library, or "" with the places looked at in \p Looked.
std::string findCollector(std::string &Looked) {
  if (const char *Env = std::getenv("DDSCRIPT_CUPTI_COLLECTOR"); Env && *Env) {
    Looked = Env;
    std::error_code Ec;
    return fs::exists(Env, Ec) ? std::string(Env) : std::string();
  }
  std::vector<fs::path> Candidates;
  std::error_code Ec;
  fs::path Exe = fs::read_symlink("/proc/self/exe", Ec);
  bool HaveExe = !Ec;
  if (HaveExe) {
    Candidates.push_back(Exe.parent_path() / DD_CUPTI_COLLECTOR_NAME);
    Candidates.push_back(Exe.parent_path().parent_path() / "lib" / "ddscript" /
                         DD_CUPTI_COLLECTOR_NAME);
  }
  // In the Python module, the image holding this code is the module
  // (build/python/ddscript/_ddscript*.so): the collector is beside it, or
  // two folders up in a build tree.
  if (std::string Image = codeImagePath();
      !Image.empty() && !(HaveExe && sameFile(Image, Exe.string()))) {
    fs::path Dir = fs::path(Image).parent_path();
    Candidates.push_back(Dir / DD_CUPTI_COLLECTOR_NAME);
    Candidates.push_back(Dir.parent_path().parent_path() /
                         DD_CUPTI_COLLECTOR_NAME);
  }
  if (*DD_CUPTI_INSTALL_DIR)
    Candidates.push_back(fs::path(DD_CUPTI_INSTALL_DIR) /
                         DD_CUPTI_COLLECTOR_NAME);
  for (const fs::path &P : Candidates) {
    fs::path Norm = P.lexically_normal();
    if (fs::exists(Norm, Ec))
      return Norm.string();
    Looked += (Looked.empty() ? "" : ", ") + Norm.string();
  }
  return "";
}

std::string quoteCommand(const std::vector<std::string> &Cmd) {
  std::string S;
  for (const std::string &A : Cmd) {
    if (!S.empty())
      S += ' ';
    bool Plain =
        !A.empty() && A.find_first_of(" \t\"'$\\") == std::string::npos;
    S += Plain ? A : "'" + A + "'";
  }
  return S;
}

/// Runs \p Cmd with \p Env added; returns its wait status, or -1 with
/// \p Error set when it could not be started.
int runCommand(const std::vector<std::string> &Cmd,
               const std::vector<std::pair<std::string, std::string>> &Env,
               std::string &Error) {
  // A close-on-exec pipe tells the parent whether exec succeeded.
  int Pipe[2];
  if (pipe2(Pipe, O_CLOEXEC) != 0) {
    Error = std::strerror(errno);
    return -1;
  }
  pid_t Child = fork();
  if (Child < 0) {
    Error = std::strerror(errno);
    return -1;
  }
  if (Child == 0) {
    close(Pipe[0]);
    for (const auto &[K, V] : Env)
      setenv(K.c_str(), V.c_str(), 1);
    std::vector<char *> Argv;
    for (const std::string &A : Cmd)
      Argv.push_back(const_cast<char *>(A.c_str()));
    Argv.push_back(nullptr);
    execvp(Argv[0], Argv.data());
    int E = errno;
    (void)!write(Pipe[1], &E, sizeof(E));
    _exit(127);
  }
  close(Pipe[1]);
  // Ctrl-C is for the command; ddscript waits and reports.
  struct sigaction Ignore {
  }, OldInt{}, OldQuit{};
  Ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &Ignore, &OldInt);
  sigaction(SIGQUIT, &Ignore, &OldQuit);
  int ExecErrno = 0;
  ssize_t N;
  do
    N = read(Pipe[0], &ExecErrno, sizeof(ExecErrno));
  while (N < 0 && errno == EINTR);
  close(Pipe[0]);
  int Status = 0;
  while (waitpid(Child, &Status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &OldInt, nullptr);
  sigaction(SIGQUIT, &OldQuit, nullptr);
  if (N == static_cast<ssize_t>(sizeof(ExecErrno))) {
    Error = std::strerror(ExecErrno);
    return -1;
  }
  return Status;
}

std::string describeStatus(int Status) {
  if (WIFSIGNALED(Status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(Status),
                       strsignal(WTERMSIG(Status)));
  return fmt::format("exited with status {}", WEXITSTATUS(Status));
}

} // namespace

int dd::driver::runRecord(const RecordOptions &O) {
  if (O.Command.empty()) {
    reportError("ddscript", "no command to record: ddscript record -o "
                            "run.cupti [--skip N] [--iterations K] -- CMD "
                            "ARGS...");
    return ExitBadInput;
  }
  if (O.Command.front().size() > 1 && O.Command.front()[0] == '-') {
    reportError("ddscript", "unknown record option '" + O.Command.front() +
                                "' (put the command after --)");
    return ExitBadInput;
  }
  if (O.ProfilerApi && (O.Skip >= 0 || O.Iterations >= 0)) {
    reportError("ddscript", "--profiler-api and --skip/--iterations choose "
                            "different recording windows; give one");
    return ExitBadInput;
  }
  if (O.Output.empty() || O.Output.find("%p") != std::string::npos) {
    reportError("ddscript", "-o needs a plain file name (a second CUDA "
                            "process of the command writes NAME.PID.cupti "
                            "beside it)");
    return ExitBadInput;
  }

  // An old -o is deleted before the command runs: never a file the command
  // names (its script, its data).
  std::vector<NamedPath> Named;
  for (const std::string &A : O.Command)
    Named.push_back({"a file the recorded command names", A});
  if (!checkOutputPaths({{"-o", O.Output}}, Named))
    return ExitBadInput;

  // The folder is checked before the command runs: a training run is not
  // spent on a trace that has nowhere to go.
  {
    std::error_code Ec;
    fs::path Dir = fs::path(O.Output).parent_path();
    if (!Dir.empty() && !fs::is_directory(Dir, Ec)) {
      reportError(O.Output, "no folder " + Dir.string() +
                                " to write the trace into: make it first");
      return ExitBadInput;
    }
  }

  std::string Looked;
  std::string Collector = findCollector(Looked);
  if (Collector.empty()) {
    reportError("ddscript",
                std::string(DD_HAVE_CUPTI
                                ? "the CUPTI collector is missing"
                                : "this ddscript was built without the CUPTI "
                                  "collector (CUPTI was not found, or "
                                  "DD_CUPTI=OFF); rebuild with a CUDA toolkit "
                                  "that has CUPTI") +
                    " (looked for " DD_CUPTI_COLLECTOR_NAME " at " + Looked +
                    ")");
    return ExitBadInput;
  }

  std::error_code Ec;
  fs::path Out = fs::absolute(O.Output, Ec);
  if (Ec) {
    reportError(O.Output, Ec.message());
    return ExitBadInput;
  }
  // The collector will not overwrite a file (a second CUDA process of the
  // same run writes beside it), so an old trace goes first.
  fs::remove(Out, Ec);
  if (Ec) {
    reportError(Out.string(), "cannot replace: " + Ec.message());
    return ExitBadInput;
  }

  std::vector<std::pair<std::string, std::string>> Env{
      {"CUDA_INJECTION64_PATH", Collector},
      {"DDSCRIPT_CUPTI_OUTPUT", Out.string()}};
  // NVTX ranges (ProfilerStep#N, layers) reach CUPTI when libcupti is the
  // NVTX injection library. It must be the very copy of libcupti the
  // collector subscribed to: PyTorch's wheels load their own libcupti, and a
  // second copy named by path would take the ranges where the collector
  // never sees them (seen on an H200 with torch 2.11+cu130: 0 ranges). So
  // the injection library is the collector itself: NVTX looks
  // InitializeInjectionNvtx2 up through it, which dlsym resolves in the
  // libcupti it is linked to, whichever one the process already holds. A
  // setting of the user's wins.
  const char *Nvtx = std::getenv("NVTX_INJECTION64_PATH");
  if (!Nvtx || !*Nvtx)
    Env.push_back({"NVTX_INJECTION64_PATH", Collector});
  if (O.Skip >= 0 || O.Iterations >= 0) {
    Env.push_back({"DDSCRIPT_CUPTI_SKIP", std::to_string(std::max(O.Skip, 0))});
    Env.push_back({"DDSCRIPT_CUPTI_ITERATIONS",
                   std::to_string(std::max(O.Iterations, 0))});
  }
  if (O.ProfilerApi)
    Env.push_back({"DDSCRIPT_CUPTI_PROFILER_API", "1"});

  std::string Error;
  int Status = runCommand(O.Command, Env, Error);
  std::string Cmd = quoteCommand(O.Command);
  if (Status < 0) {
    reportError(O.Command.front(), "cannot run: " + Error);
    return ExitBadInput;
  }
  bool CommandFailed = !WIFEXITED(Status) || WEXITSTATUS(Status) != 0;
  int CommandRc =
      WIFSIGNALED(Status) ? 128 + WTERMSIG(Status) : WEXITSTATUS(Status);

  if (!fs::exists(Out, Ec)) {
    reportError(Out.string(),
                "no trace was written: `" + Cmd + "` " +
                    describeStatus(Status) +
                    (CommandFailed ? "" : " without initialising CUDA") +
                    " (the collector starts when a process first uses "
                    "CUDA)");
    return ExitBadInput;
  }
  auto T = trace::readTrace(Out.string());
  if (!T) {
    std::string Why = llvm::toString(T.takeError());
    if (CommandFailed)
      Why += " (`" + Cmd + "` " + describeStatus(Status) + ")";
    reportError(Out.string(), Why);
    return ExitBadInput;
  }
  for (const std::string &W : T->Warnings)
    reportWarning(Out.string(), W);

  uint64_t Kernels = 0, Steps = 0;
  int64_t FirstStep = INT64_MAX, LastStep = INT64_MIN;
  for (trace::EventId E = 0; E < T->numEvents(); ++E) {
    if (T->Kind[E] == trace::EventKind::Kernel)
      ++Kernels;
    std::string_view N = T->name(E);
    if (T->Kind[E] == trace::EventKind::Marker &&
        N.substr(0, 13) == "ProfilerStep#") {
      ++Steps;
      int64_t K = std::atoll(std::string(N.substr(13)).c_str());
      FirstStep = std::min(FirstStep, K);
      LastStep = std::max(LastStep, K);
    }
  }
  uint64_t Bytes = fs::file_size(Out, Ec);
  if (O.Format == OutputFormat::Json) {
    writeJson([&](JsonWriter &W) {
      W.beginObject().field("output", Out.string()).field("command", Cmd);
      W.field("exit_status", CommandRc);
      W.field("events", static_cast<uint64_t>(T->numEvents()));
      W.field("kernels", Kernels).field("iterations", Steps);
      if (Steps) // the ProfilerStep#N numbers recorded
        W.field("first_step", FirstStep).field("last_step", LastStep);
      else
        W.key("first_step").null().key("last_step").null();
      W.field("bytes", Bytes).endObject();
    });
  } else {
    std::string Iters =
        Steps ? fmt::format(", {} iterations (ProfilerStep#{} to #{})", Steps,
                            FirstStep, LastStep)
              : std::string();
    writeOut(fmt::format("{}: {} events, {} kernels{}, {}\n", Out.string(),
                         formatCount(T->numEvents()), formatCount(Kernels),
                         Iters, formatBytes(static_cast<int64_t>(Bytes))));
  }
  if (CommandFailed) {
    reportWarning(O.Command.front(), "`" + Cmd + "` " + describeStatus(Status));
    return CommandRc;
  }
  return ExitOk;
}

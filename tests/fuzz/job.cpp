//===- job.cpp - libFuzzer target: a job folder of ranks ------------------===//
//
// A folder of a job's rank traces, as `ddscript replay --trace DIR` and
// `ddscript export --format chakra --trace DIR` read it. The ranks are made
// here (each a small data-parallel training step: a GEMM per iteration and
// all-reduces on a communication stream, with distributedInfo); the input
// says how many and how to damage them, three bytes an operation: a rank
// missing, duplicated or hidden; its rank number, world size or clock
// changed; iterations missing or numbered apart; collectives missing, more,
// or of another kind (AllGather against AllReduce); distributedInfo gone;
// the file cut short or a byte changed.
//
// Errors are fine: every command must exit 0 or 2 (exit 3 is an internal
// error and aborts), and export must refuse every folder replay refuses
// (export once wrote files for jobs replay would not take). Crashes,
// sanitizer reports and hangs are bugs. DD_FUZZ_VERBOSE=1 keeps the
// commands' output (stdout is otherwise /dev/null) and prints the files.
//
//===----------------------------------------------------------------------===//

#include "driver/Commands.h"
#include "driver/Session.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace dd;
namespace fs = std::filesystem;

namespace {

struct RankSpec {
  int64_t Rank = 0, World = 0;
  int64_t Offset = 0; ///< µs added to every time
  int Iterations = 3, FirstIteration = 1;
  int Collectives = 2; ///< per iteration
  int Dropped = -1;    ///< this iteration's first collective is missing
  const char *Kind = "AllReduce";
  bool Distributed = true, Missing = false, Hidden = false;
  int Copies = 1;
  unsigned CutAt = 0, FlipAt = 0; ///< of 256ths of the file; 0: no
  char FlipTo = 0;
};

std::string rankTrace(const RankSpec &R) {
  std::ostringstream S;
  S << R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, )"
    << R"("name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85000000000, )"
    << R"("numSms": 108}],)";
  if (R.Distributed)
    S << R"( "distributedInfo": {"backend": "nccl", "rank": )" << R.Rank
      << R"(, "world_size": )" << R.World << "},";
  S << "\n \"traceEvents\": [\n";
  bool First = true;
  int Corr = 1;
  auto X = [&](const char *Cat, const std::string &Name, int Tid, long Ts,
               long Dur, const std::string &Args = "") {
    S << (First ? "" : ",\n") << R"({"ph": "X", "cat": ")" << Cat
      << R"(", "name": ")" << Name << R"(", "pid": )" << (Tid >= 7 ? 0 : 1)
      << R"(, "tid": )" << Tid << R"(, "ts": )" << Ts + R.Offset
      << R"(, "dur": )" << Dur;
    if (!Args.empty())
      S << R"(, "args": {)" << Args << "}";
    S << "}";
    First = false;
  };
  auto Launch = [&](long Ts, const std::string &Name, int Stream, long Start,
                    long Dur, const std::string &Extra = "") {
    std::string C = R"("correlation": )" + std::to_string(Corr++);
    X("cuda_runtime", "cudaLaunchKernel", 1, Ts, 4, C);
    X("kernel", Name, Stream, Start, Dur,
      C + R"(, "stream": )" + std::to_string(Stream) + R"(, "device": 0)" +
          Extra);
  };
  for (int I = 0; I < R.Iterations; ++I) {
    long T = 1000 + I * 500;
    X("user_annotation", "ProfilerStep#" + std::to_string(R.FirstIteration + I),
      1, T, 480);
    X("cpu_op", "aten::mm", 1, T + 5, 20);
    Launch(T + 6, "ampere_sgemm_128x64_tn", 7, T + 20, 100);
    for (int C = 0; C < R.Collectives; ++C) {
      if (I == R.Dropped && C == 0)
        continue;
      long B = T + 40 + C * 60;
      X("cpu_op", "nccl:all_reduce", 1, B, 10);
      Launch(B + 2, std::string("ncclKernel_") + R.Kind + "_RING_LL_Sum_float",
             20, B + 130, 40, R"(, "In msg nelems": 262144)");
    }
    X("cuda_runtime", "cudaDeviceSynchronize", 1, T + 400, 50,
      R"("correlation": )" + std::to_string(Corr++));
  }
  S << "\n]}\n";
  std::string Out = S.str();
  if (R.FlipAt)
    Out[Out.size() * R.FlipAt / 256] = R.FlipTo;
  if (R.CutAt)
    Out.resize(Out.size() * R.CutAt / 256);
  return Out;
}

std::vector<RankSpec> specs(const uint8_t *Data, size_t Size) {
  size_t N = 2 + (Size ? Data[0] % 5 : 0);
  std::vector<RankSpec> Ranks(N);
  for (size_t I = 0; I < N; ++I) {
    Ranks[I].Rank = static_cast<int64_t>(I);
    Ranks[I].World = static_cast<int64_t>(N);
  }
  const char *Kinds[] = {"AllGather", "ReduceScatter", "Broadcast",
                         "AllReduce"};
  for (size_t At = 1; At + 3 <= Size; At += 3) {
    RankSpec &R = Ranks[Data[At + 1] % N];
    unsigned P = Data[At + 2];
    switch (Data[At] % 14) {
    case 0:
      R.Missing = true;
      break;
    case 1:
      R.Copies = 2;
      break;
    case 2:
      R.Rank = P == 255 ? (int64_t(1) << 31) : P % 8;
      break;
    case 3:
      R.World = P == 255 ? (int64_t(1) << 32) + 2 : P % 9;
      break;
    case 4:
      R.Offset = P == 255   ? int64_t(1) << 50
                 : P == 254 ? -(int64_t(1) << 40)
                            : (static_cast<int64_t>(P) - 128) * 1000;
      break;
    case 5:
      R.Iterations = P % 5;
      break;
    case 6:
      R.FirstIteration = P % 4;
      break;
    case 7:
      R.Collectives = P % 4;
      break;
    case 8:
      R.Kind = Kinds[P % 4];
      break;
    case 9:
      R.Distributed = false;
      break;
    case 10:
      R.Dropped = P % 3;
      break;
    case 11:
      R.CutAt = P;
      break;
    case 12:
      R.FlipAt = P;
      R.FlipTo = "{}[]\",:0-9e\\ "[Data[At + 1] % 14];
      break;
    case 13:
      R.Hidden = true;
      break;
    }
  }
  return Ranks;
}

std::string &folder() {
  static std::string Dir = [] {
    char Tmpl[] = "/tmp/dd_fuzz_job.XXXXXX";
    if (!::mkdtemp(Tmpl))
      std::abort();
    return std::string(Tmpl);
  }();
  return Dir;
}

bool verbose() { return std::getenv("DD_FUZZ_VERBOSE") != nullptr; }

int command(const char *Name, const std::string &Dir, const std::string &Out) {
  driver::TraceOptions O;
  O.TracePaths = {Dir};
  if (!driver::resolveTraces(O, Name, true))
    return 2;
  O.TracePath = O.TracePaths.front();
  if (std::string(Name) == "replay")
    return O.TracePaths.size() > 1 ? driver::runJobReplay(O)
                                   : driver::runReplay(O);
  driver::ExportOptions E;
  E.OutDir = Out;
  return driver::runExport(E, O);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  if (!verbose()) {
    int Null = ::open("/dev/null", O_WRONLY);
    if (Null >= 0)
      ::dup2(Null, 1);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  const std::string &Root = folder();
  std::error_code Ec;
  fs::remove_all(Root, Ec);
  fs::create_directories(Root + "/ranks", Ec);
  std::string Dir = Root + "/ranks", Out = Root + "/out";
  size_t Written = 0;
  std::vector<RankSpec> Ranks = specs(Data, Size);
  for (size_t I = 0; I < Ranks.size(); ++I) {
    const RankSpec &R = Ranks[I];
    if (R.Missing)
      continue;
    std::string Text = rankTrace(R);
    for (int C = 0; C < R.Copies; ++C) {
      std::string Name = (R.Hidden ? "." : "") + std::string("rank") +
                         std::to_string(I) + (C ? "_copy" : "") + ".json";
      std::ofstream(Dir + "/" + Name, std::ios::binary) << Text;
      if (verbose())
        std::fprintf(stderr, "--- %s\n%s\n", Name.c_str(), Text.c_str());
      Written += R.Hidden ? 0 : 1;
    }
  }
  int Replay = command("replay", Dir, Out);
  int Export = command("export", Dir, Out);
  if ((Replay != 0 && Replay != 2) || (Export != 0 && Export != 2)) {
    std::fprintf(stderr,
                 "job fuzz target: replay exit %d, export exit %d "
                 "(only 0 and 2 are taken)\n",
                 Replay, Export);
    std::abort();
  }
  if (Replay == 2 && Export == 0) {
    std::fprintf(stderr,
                 "job fuzz target: export wrote a job replay "
                 "refuses (%zu rank files)\n",
                 Written);
    std::abort();
  }
  return 0;
}

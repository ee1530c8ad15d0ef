//===- vm.cpp - libFuzzer target: the VM running compiled models ----------===//
//
// The VM on its own: a model that compiles, with --set values, run as
// `ddscript run` runs it (driver::predict: the VM, the memory what-ifs, the
// predicted replay under the model's schedule, the steady state) against a
// small graph with memory records, a data-parallel rank and layers, within a
// small step budget. The input is .dd text whose "// set: NAME=VALUE" lines
// are --set values, as in the golden tests (tests/lang). Input that does not
// compile, or whose settings are refused, is rejected from the corpus
// (libFuzzer's -1): the front end has a target of its own (dd.cpp), and this
// one keeps to programs that run.
//
// Each input runs twice, on two copies of the graph: the VM and the replay
// are deterministic, so the two runs must print, fail, count and predict
// exactly alike (a difference aborts). Errors are fine; crashes, sanitizer
// reports, hangs and differences are not. With DD_FUZZ_VERBOSE set, what
// the model printed and its error go to stderr (to replay an input).
//
//===----------------------------------------------------------------------===//

#include "vm/VM.h"
#include "builder/GraphBuilder.h"
#include "compiler/Compiler.h"
#include "driver/Console.h"
#include "driver/Predict.h"
#include "sim/Simulator.h"
#include "trace/TraceReader.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace dd;

namespace {

/// The fixture trace, made here rather than read: rank 0 of two in a DDP
/// job on a V100, three ProfilerStep iterations, each with a DataLoader
/// call and its host-to-device copy, a forward pass through two nn.Modules
/// (a GEMM and an elementwise kernel each), a backward pass on the
/// autograd thread (a GEMM, AccumulateGrad with its shape, and an
/// all-reduce on a communication stream, per layer), an
/// optimizer step, a synchronization, and [memory] records: weights
/// allocated before the first step and kept, an activation per layer freed
/// in backward, gradients, and the batch.
std::string fixtureTrace() {
  std::ostringstream S;
  S << R"J({"schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-16GB",
   "totalGlobalMem": 16000000000, "numSms": 80}],
 "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
 "traceEvents": [
)J";
  int Corr = 1;
  bool First = true;
  auto Ev = [&](const std::string &E) {
    S << (First ? "" : ",\n") << E;
    First = false;
  };
  auto X = [&](const char *Cat, const std::string &Name, int Tid, long Ts,
               long Dur, const std::string &Args = "") {
    std::ostringstream E;
    E << R"({"ph": "X", "cat": ")" << Cat << R"(", "name": ")" << Name
      << R"(", "pid": )" << (Tid >= 7 ? 0 : 1) << R"(, "tid": )" << Tid
      << R"(, "ts": )" << Ts << R"(, "dur": )" << Dur;
    if (!Args.empty())
      E << R"(, "args": {)" << Args << "}";
    E << "}";
    Ev(E.str());
  };
  auto Mem = [&](long Ts, long Addr, long Bytes, long Total) {
    std::ostringstream E;
    E << R"({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]",)"
      << R"( "pid": 1, "tid": 1, "s": "t", "ts": )" << Ts
      << R"(, "args": {"Addr": )" << Addr << R"(, "Bytes": )" << Bytes
      << R"(, "Total Allocated": )" << Total
      << R"(, "Total Reserved": 67108864, "Device Type": 1, "Device Id": 0}})";
    Ev(E.str());
  };
  // A launch at Ts on thread Tid of kernel Name on Stream, Dur long.
  auto Launch = [&](int Tid, long Ts, const char *Kind, const char *Name,
                    int Stream, long Start, long Dur,
                    const std::string &Extra = "") {
    int C = Corr++;
    std::string Corrs = R"("correlation": )" + std::to_string(C);
    X("cuda_runtime",
      std::string(Kind) == "kernel" ? "cudaLaunchKernel" : "cudaMemcpyAsync",
      Tid, Ts, 4, Corrs);
    X(Kind, Name, Stream, Start, Dur,
      Corrs + R"(, "stream": )" + std::to_string(Stream) + R"(, "device": 0)" +
          Extra);
  };
  const long Weights = 4 << 20, Act = 1 << 20, Grad = 4 << 20, Batch = 1 << 19;
  long Total = 2 * Weights;
  Mem(900, 0x7f0000000000, Weights, Weights);
  Mem(901, 0x7f0000400000, Weights, Total);
  for (int It = 0; It < 3; ++It) {
    long T = 1000 + It * 400;
    X("user_annotation", "ProfilerStep#" + std::to_string(It + 1), 1, T, 390);
    X("user_annotation",
      "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1, T + 2,
      20);
    Mem(T + 24, 0x7f0001000000, Batch, Total += Batch);
    Launch(1, T + 25, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7,
           T + 30, 12, R"(, "bytes": 524288)");
    X("user_annotation", "## forward ##", 1, T + 40, 120);
    for (int L = 0; L < 2; ++L) {
      long B = T + 42 + L * 55;
      std::string Layer = "nn.Module: Linear_" + std::to_string(L);
      X("python_function", Layer, 1, B, 52);
      X("cpu_op", "aten::linear", 1, B + 1, 30,
        R"("Input Dims": [[64, 512], [512, 512], [512]], )"
        R"("Input type": ["float", "float", "float"])");
      Mem(B + 2, 0x7f0002000000 + L * Act, Act, Total += Act);
      Launch(1, B + 3, "kernel", "volta_sgemm_128x64_tn", 7, B + 45, 30);
      X("cpu_op", "aten::relu", 1, B + 34, 15);
      Launch(1, B + 36, "kernel",
             "void at::native::vectorized_elementwise_kernel<4>", 7, B + 76, 6);
    }
    // Backward on the autograd thread, the layers in reverse.
    for (int L = 1; L >= 0; --L) {
      long B = T + 170 + (1 - L) * 60;
      X("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 2, B,
        28);
      Launch(2, B + 2, "kernel", "volta_sgemm_64x64_nt", 7, B + 20, 40);
      Mem(B + 10, 0x7f0002000000 + L * Act, -Act, Total -= Act);
      Mem(B + 11, 0x7f0003000000 + L * Grad, Grad, Total += Grad);
      X("cpu_op",
        "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
        2, B + 30, 12);
      X("cpu_op", "torch::autograd::AccumulateGrad", 2, B + 31, 10,
        R"("Input Dims": [[512, 512]], "Input type": ["float"])");
      Launch(2, B + 33, "kernel",
             "void at::native::vectorized_elementwise_kernel<4>", 7, B + 62, 5);
      X("cpu_op", "nccl:all_reduce", 2, B + 44, 10);
      Launch(2, B + 46, "kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 20,
             B + 70, 25, R"(, "In msg nelems": 262144)");
    }
    X("user_annotation", "Optimizer.step#SGD.step", 1, T + 300, 40);
    Launch(1, T + 302, "kernel", "multi_tensor_apply_kernel", 7, T + 345, 15);
    for (int L = 0; L < 2; ++L)
      Mem(T + 365 + L, 0x7f0003000000 + L * Grad, -Grad, Total -= Grad);
    Mem(T + 367, 0x7f0001000000, -Batch, Total -= Batch);
    X("cuda_runtime", "cudaDeviceSynchronize", 1, T + 368, 20,
      R"("correlation": )" + std::to_string(Corr++));
  }
  S << "\n]}";
  return S.str();
}

struct Fixture {
  trace::Trace T;
  graph::Graph G;
  sim::SimResult Base;
  driver::Baseline B;
};

const Fixture &fixture() {
  static const Fixture *F = [] {
    auto T = trace::parseTrace(fixtureTrace(), "fuzz.json");
    if (!T) {
      std::fprintf(stderr, "vm fuzz target: its trace does not read: %s\n",
                   llvm::toString(T.takeError()).c_str());
      std::abort();
    }
    auto G = graph::buildGraph(*T);
    if (!G || G->Iterations.size() != 3) {
      std::fprintf(stderr, "vm fuzz target: its trace builds no graph\n");
      std::abort();
    }
    auto R = sim::simulate(*G);
    if (!R) {
      std::fprintf(stderr, "vm fuzz target: its graph does not replay\n");
      std::abort();
    }
    auto *Out = new Fixture{std::move(*T), std::move(*G), std::move(*R), {}};
    Out->B.Tr = &Out->T;
    Out->B.TracePath = "fuzz.json";
    Out->B.G = &Out->G;
    Out->B.Chosen = {1};
    Out->B.Base = &Out->Base;
    Out->B.BaseSteady = driver::steadyStates(Out->G, Out->Base, Out->B.Chosen);
    return Out;
  }();
  return *F;
}

/// The "// set: NAME=VALUE" lines of \p Text, at most 16.
std::vector<vm::Setting> settingsOf(const std::string &Text) {
  std::vector<vm::Setting> Out;
  std::istringstream In(Text);
  std::string Line;
  while (std::getline(In, Line) && Out.size() < 16) {
    size_t At = Line.find("// set:");
    if (At == std::string::npos)
      continue;
    std::string V = Line.substr(At + 7);
    size_t B = V.find_first_not_of(' ');
    V = B == std::string::npos ? "" : V.substr(B);
    while (!V.empty() && (V.back() == ' ' || V.back() == '\r'))
      V.pop_back();
    size_t Eq = V.find('=');
    if (Eq == std::string::npos)
      continue;
    Out.push_back({V.substr(0, Eq), V.substr(Eq + 1)});
  }
  return Out;
}

/// What one run gave, for comparing two runs.
std::string summary(const driver::Prediction &P) {
  std::ostringstream S;
  const vm::ChangeStats &C = P.R.Stats;
  S << P.R.Ok << '|' << P.R.Error.Message << '|' << P.R.Output << '|'
    << P.R.Steps << '|' << P.SimError << '|' << C.Selected << ' ' << C.Scaled
    << ' ' << C.Inserted << ' ' << C.Removed << ' ' << C.Dependencies << ' '
    << C.Scheduled << ' ' << C.Resized << ' ' << C.Freed << ' ' << C.Offloaded
    << ' ' << C.Allocated << '|';
  for (int64_t M : C.MovedByPhase)
    S << M << ' ';
  for (const driver::Outcome &O : P.Out)
    S << '|' << O.Predicted << ' ' << O.PredictedSpan;
  if (P.Mem.model())
    S << "|peak " << P.Mem.predictedPeak();
  return S.str();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  std::vector<vm::Setting> Settings = settingsOf(Text);
  SourceManager SM;
  DiagEngine Diags;
  compiler::CompileOptions Opts;
  Opts.StdlibDirs.push_back(DD_STDLIB_SOURCE_DIR);
  auto M = compiler::compileSource("fuzz.dd", std::move(Text), Opts, SM, Diags);
  if (!M)
    return -1;
  const Fixture &F = fixture();
  driver::Capture Quiet; // what the model prints stays here
  std::string First;
  for (int Run = 0; Run < 2; ++Run) {
    std::vector<vm::Setting> S = Settings;
    driver::RunMemory Mem;
    if (Mem.takeSettings(S, M->Program) || vm::checkSettings(M->Program, S))
      return -1;
    graph::Graph G = F.G;
    driver::Prediction P =
        driver::predict(F.B, G, M->Program, S, std::move(Mem), 100'000);
    std::string Error = P.R.Ok ? P.SimError : renderDiagnostic(SM, P.R.Error);
    if (Run == 0 && std::getenv("DD_FUZZ_VERBOSE"))
      std::fprintf(stderr, "%s%s\n", P.R.Output.c_str(), Error.c_str());
    std::string Got = summary(P);
    if (Run == 0) {
      First = std::move(Got);
    } else if (Got != First) {
      std::fprintf(stderr,
                   "vm fuzz target: two runs differ\n--- first ---\n%s\n"
                   "--- second ---\n%s\n",
                   First.c_str(), Got.c_str());
      std::abort();
    }
  }
  return 0;
}

//===- LanguageBench.cpp - select + shrink + re-simulate at scale ---------===//
//
// Times the language's set-level operations on a synthetic graph of a
// million tasks shaped like a training trace (a CPU thread launching GPU
// kernels of a hundred distinct names, one stream, launch edges, iteration
// markers), and the same loops written directly in C++ for reference:
//
//   select+shrink   run stdlib/amp.dd (two selects, a set difference, two
//                   shrinks) through the compiler and the VM
//   simulate        re-simulate the changed graph
//   C++ reference   the same selection and scaling with std::regex and
//                   graph::scaleTasks, no language
//
// Prints the median of several runs and the ratio to the C++ reference.
// Usage: dd_bench [TASKS] (default 1,000,000).
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "graph/Edit.h"
#include "graph/Graph.h"
#include "sim/Simulator.h"
#include "vm/VM.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

using namespace dd;
using Clock = std::chrono::steady_clock;

namespace {

graph::Graph makeGraph(size_t Tasks) {
  graph::Graph G;
  graph::ResourceId Cpu =
      G.addResource(graph::ResourceKind::CpuThread, -1, 1, "thread 1");
  graph::ResourceId Gpu =
      G.addResource(graph::ResourceKind::GpuStream, 0, 7, "GPU 0 stream 7");
  std::vector<std::string> Names;
  for (int I = 0; I < 100; ++I) {
    static const char *Families[] = {
        "volta_sgemm_128x64_nn", "cudnn::detail::wgrad_alg0_engine",
        "at::native::vectorized_elementwise_kernel",
        "at::native::reduce_kernel", "cudnn::bn_fw_tr_1C11_kernel"};
    Names.push_back(std::string(Families[I % 5]) + "_" + std::to_string(I));
  }
  size_t Pairs = Tasks / 2;
  uint64_t Rng = 12345;
  auto Next = [&]() {
    Rng = Rng * 6364136223846793005ull + 1442695040888963407ull;
    return Rng >> 33;
  };
  int64_t Time = 0;
  for (size_t I = 0; I < Pairs; ++I) {
    graph::TaskId L =
        G.addTask(graph::TaskKind::Runtime, "cudaLaunchKernel", Cpu, 5000);
    G.Gap[L] = 3000;
    G.OrderKey[L] = Time;
    G.MeasuredStart[L] = Time;
    G.MeasuredDur[L] = 5000;
    graph::TaskId K =
        G.addTask(graph::TaskKind::Kernel, Names[Next() % 100], Gpu,
                  2000 + static_cast<int64_t>(Next() % 40000));
    G.Gap[K] = 1000;
    G.OrderKey[K] = Time + 6000;
    G.MeasuredStart[K] = Time + 6000;
    G.MeasuredDur[K] = G.Dur[K];
    G.Launcher[K] = L;
    G.addEdge(L, K, graph::EdgeKind::Launch, graph::Anchor::StartToStart, 6000);
    Time += 8000;
  }
  // One iteration over everything, measured by the makespan.
  graph::Iteration It;
  It.Label = "all";
  It.Begin.Kind = graph::Iteration::PointKind::Origin;
  It.End.Kind = graph::Iteration::PointKind::Makespan;
  G.Iterations.push_back(It);
  G.finalize();
  return G;
}

double ms(Clock::duration D) {
  return std::chrono::duration<double, std::milli>(D).count();
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  size_t Tasks = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  SourceManager SM;
  DiagEngine Diags;
  compiler::CompileOptions Opts;
  auto M = compiler::compileFile(std::string(DD_STDLIB_SOURCE_DIR) + "/amp.dd",
                                 Opts, SM, Diags);
  if (!M) {
    std::fputs(renderDiagnostics(SM, Diags).c_str(), stderr);
    return 1;
  }
  const int Runs = 5;
  std::vector<double> Script, Sim, Total, Ref;
  for (int R = 0; R < Runs; ++R) {
    graph::Graph G = makeGraph(Tasks);
    vm::RunEnv Env;
    Env.G = &G;
    auto T0 = Clock::now();
    vm::RunResult Res = vm::run(M->Program, Env, {});
    auto T1 = Clock::now();
    if (!Res.Ok) {
      std::fprintf(stderr, "run failed: %s\n", Res.Error.Message.c_str());
      return 1;
    }
    auto S = sim::simulate(G, &Res.Policy);
    auto T2 = Clock::now();
    if (!S)
      return 1;
    Script.push_back(ms(T1 - T0));
    Sim.push_back(ms(T2 - T1));
    Total.push_back(ms(T2 - T0));

    // The same transformation without the language.
    graph::Graph H = makeGraph(Tasks);
    auto C0 = Clock::now();
    // The families of stdlib/amp.dd, matched in the name before any
    // template arguments, fbgemm_gpu's kernels excepted.
    std::regex Mma(
        "^(void "
        ")?[^<(]*(gemm|conv|wgrad|dgrad|fprop|winograd|cutlass|xmma|scudnn|"
        "nvjet|Cijk_|triton_tem|bmm_|flash_fwd|flash_bwd|fmha)");
    std::regex Fbgemm("^(void )?fbgemm_gpu::");
    llvm::BitVector Tensor(H.numTasks()), Other(H.numTasks());
    std::vector<int8_t> NameHit(H.Strings.size(), -1);
    for (graph::TaskId X = 0; X < H.numTasks(); ++X) {
      if (H.Kind[X] != graph::TaskKind::Kernel)
        continue;
      int8_t &Hit = NameHit[H.Name[X]];
      if (Hit < 0)
        Hit = std::regex_search(std::string(H.name(X)), Mma) &&
                      !std::regex_search(std::string(H.name(X)), Fbgemm)
                  ? 1
                  : 0;
      (Hit ? Tensor : Other).set(X);
    }
    graph::scaleTasks(H, Tensor, 3.0, true);
    graph::scaleTasks(H, Other, 2.0, true);
    auto C1 = Clock::now();
    Ref.push_back(ms(C1 - C0));
    if (H.Dur != G.Dur) {
      std::fprintf(stderr, "the model and the C++ reference disagree\n");
      return 1;
    }
  }
  std::printf("tasks                    %zu\n", Tasks);
  std::printf("select+shrink (amp.dd)   %8.1f ms   (C++ reference %.1f ms, "
              "ratio %.2f)\n",
              median(Script), median(Ref), median(Script) / median(Ref));
  std::printf("re-simulate              %8.1f ms\n", median(Sim));
  std::printf("select+shrink+simulate   %8.1f ms\n", median(Total));
  return 0;
}

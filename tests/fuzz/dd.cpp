//===- dd.cpp - libFuzzer target: a .dd model
//------------------------------===//
//
// Model text through the whole front end as `ddscript run` takes it: parse,
// checks (sema), code generation (compiler::compileSource, imports of the
// standard library included), then the compiled model run by the VM against
// a small graph built from the trace below, within a step budget, and the
// changed graph replayed under the model's schedule. Errors are fine;
// crashes, sanitizer reports and hangs are not.
//
//===----------------------------------------------------------------------===//

#include "builder/GraphBuilder.h"
#include "compiler/Compiler.h"
#include "sim/Simulator.h"
#include "trace/TraceReader.h"
#include "vm/VM.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace dd;

namespace {

/// Two threads, two streams, three ProfilerStep iterations: operators,
/// launches, kernels, a copy, a synchronization, a flow.
const char *const Trace = R"J({"schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-16GB",
   "totalGlobalMem": 16000000000, "numSms": 80}],
 "traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 1001, "dur": 40,
  "args": {"Input Dims": [[8, 3, 32, 32], [16, 3, 3, 3]], "Input type": ["float", "float"]}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1002, "dur": 3, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 1006, "dur": 20, "args": {"correlation": 1, "stream": 7, "device": 0}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 1050, "dur": 10},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1051, "dur": 3, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "at::native::vectorized_elementwise_kernel", "pid": 0, "tid": 7, "ts": 1055, "dur": 5, "args": {"correlation": 2, "stream": 7, "device": 0}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 1062, "dur": 4, "args": {"correlation": 3}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 8, "ts": 1066, "dur": 6, "args": {"correlation": 3, "stream": 8, "device": 0, "bytes": 4096}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 1067, "dur": 8, "args": {"correlation": 4}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::to", "pid": 1, "tid": 2, "ts": 1010, "dur": 30},
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 1101, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 1102, "dur": 40},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1103, "dur": 3, "args": {"correlation": 5}},
 {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 1107, "dur": 20, "args": {"correlation": 5, "stream": 7, "device": 0}},
 {"ph": "X", "cat": "cpu_op", "name": "Optimizer.step#SGD.step", "pid": 1, "tid": 1, "ts": 1150, "dur": 30},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1151, "dur": 3, "args": {"correlation": 6}},
 {"ph": "X", "cat": "kernel", "name": "multi_tensor_apply_kernel", "pid": 0, "tid": 7, "ts": 1155, "dur": 8, "args": {"correlation": 6, "stream": 7, "device": 0}},
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 1202, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::conv2d", "pid": 1, "tid": 1, "ts": 1203, "dur": 40},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1204, "dur": 3, "args": {"correlation": 7}},
 {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 1208, "dur": 20, "args": {"correlation": 7, "stream": 7, "device": 0}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1, "tid": 1, "ts": 1250, "dur": 10, "args": {"correlation": 8}}
]})J";

graph::Graph *baseGraph() {
  static graph::Graph *G = [] {
    auto T = trace::parseTrace(Trace, "fuzz.json");
    if (!T) {
      std::fprintf(stderr, "dd fuzz target: its trace does not read: %s\n",
                   llvm::toString(T.takeError()).c_str());
      std::abort();
    }
    auto B = graph::buildGraph(*T);
    if (!B || B->Iterations.empty()) {
      std::fprintf(stderr, "dd fuzz target: its trace builds no graph\n");
      std::abort();
    }
    return new graph::Graph(std::move(*B));
  }();
  return G;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  SourceManager SM;
  DiagEngine Diags;
  compiler::CompileOptions Opts;
  Opts.StdlibDirs.push_back(DD_STDLIB_SOURCE_DIR);
  auto M = compiler::compileSource("fuzz.dd", std::move(Text), Opts, SM, Diags);
  if (!M) {
    (void)renderDiagnostics(SM, Diags);
    return 0;
  }
  graph::Graph G = *baseGraph();
  size_t Report = G.Iterations.size() / 2;
  vm::RunEnv Env;
  Env.G = &G;
  Env.TracePath = "fuzz.json";
  Env.ReportIteration = Report;
  Env.Simulate =
      [&G, Report](const sim::SchedulePolicy &P) -> llvm::Expected<int64_t> {
    auto R = sim::simulate(G, &P);
    if (!R)
      return R.takeError();
    return sim::iterationTime(G, *R, G.Iterations[Report]);
  };
  vm::RunOptions RO;
  RO.MaxSteps = 200'000;
  vm::RunResult R = vm::run(M->Program, Env, RO);
  if (!R.Ok)
    return 0;
  auto S = sim::simulate(G, &R.Policy);
  if (!S)
    llvm::consumeError(S.takeError());
  return 0;
}

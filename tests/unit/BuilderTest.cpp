#include "builder/GraphBuilder.h"
#include "graph/KernelClass.h"
#include "sim/Simulator.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <string>

using namespace dd;
using namespace dd::graph;

namespace {

/// Writes Kineto-style JSON for tests; times in microseconds.
struct TraceWriter {
  std::string Events;
  int64_t Corr = 1;
  void add(const std::string &E) {
    if (!Events.empty())
      Events += ",\n";
    Events += E;
  }
  void cpu(const char *Cat, std::string_view Name, double Ts, double Dur,
           int Tid = 1, const std::string &Args = "{}") {
    add(fmt::format(R"({{"ph":"X","cat":"{}","name":"{}","pid":1,"tid":{},)"
                    R"("ts":{},"dur":{},"args":{}}})",
                    Cat, Name, Tid, Ts, Dur, Args));
  }
  /// A runtime call launching one GPU op; returns its correlation id.
  int64_t launch(std::string_view Call, double Ts, double Dur,
                 std::string_view Kernel, double KTs, double KDur,
                 int Stream = 7, int Tid = 1, const char *Cat = "kernel") {
    int64_t C = Corr++;
    cpu("cuda_runtime", Call, Ts, Dur, Tid,
        fmt::format(R"({{"correlation":{}}})", C));
    add(fmt::format(R"({{"ph":"X","cat":"{}","name":"{}","pid":0,"tid":{},)"
                    R"("ts":{},"dur":{},"args":{{"device":0,"stream":{},)"
                    R"("correlation":{}}}}})",
                    Cat, Kernel, Stream, KTs, KDur, Stream, C));
    return C;
  }
  std::string json() const { return "{\"traceEvents\":[\n" + Events + "]}"; }
};

struct Built {
  trace::Trace T;
  Graph G;
  BuildStats Stats;
};

Built build(const TraceWriter &W, BuildOptions O = {}) {
  std::string Json = W.json();
  auto T = trace::parseKinetoJson(Json, "synthetic.json");
  REQUIRE(static_cast<bool>(T));
  Built B{std::move(*T), {}, {}};
  auto G = buildGraph(B.T, O, &B.Stats);
  if (!G)
    FAIL(llvm::toString(G.takeError()));
  B.G = std::move(*G);
  return B;
}

TaskId named(const Graph &G, std::string_view Name, unsigned Nth = 0) {
  for (TaskId T = 0; T < G.numTasks(); ++T)
    if (G.name(T) == Name && Nth-- == 0)
      return T;
  FAIL("no task " << Name);
  return NoTask;
}

TaskId wakerOf(const Graph &G, TaskId X) {
  for (const Edge &E : G.Edges)
    if (E.Kind == EdgeKind::Wake && E.Dst == X)
      return E.Src;
  return NoTask;
}

TraceWriter twoStepsWith(const std::function<void(TraceWriter &)> &Fill) {
  TraceWriter W;
  W.cpu("user_annotation", "ProfilerStep#1", 0, 50000);
  W.launch("cudaLaunchKernel", 10, 5, "k1", 20, 10);
  Fill(W);
  W.cpu("user_annotation", "ProfilerStep#2", 50000, 1000);
  W.launch("cudaLaunchKernel", 50010, 5, "k2", 50020, 10);
  return W;
}
int64_t iterationTime(const Graph &G, size_t I) {
  auto R = sim::simulate(G);
  REQUIRE(static_cast<bool>(R));
  return sim::iterationTime(G, *R, G.Iterations[I]);
}

/// Two training steps: forward (one kernel), backward on an autograd
/// thread, optimizer, and a sync at the end of each step.
TraceWriter trainingSteps() {
  TraceWriter W;
  for (int Step = 0; Step < 2; ++Step) {
    double B = 1000.0 * Step;
    W.cpu("user_annotation", fmt::format("ProfilerStep#{}", Step + 1), B, 1000);
    W.cpu("cpu_op", "aten::linear", B + 10, 40, 1,
          R"({"Sequence number": )" + std::to_string(10 + Step) +
              R"(, "Fwd thread id": 0})");
    W.launch("cudaLaunchKernel", B + 20, 5, "sgemm_fwd", B + 30, 200);
    W.cpu("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0",
          B + 300, 50, 2,
          R"({"Sequence number": )" + std::to_string(10 + Step) +
              R"(, "Fwd thread id": 1})");
    W.launch("cudaLaunchKernel", B + 310, 5, "sgemm_bwd", B + 320, 500, 7, 2);
    W.cpu("user_annotation", "Optimizer.step#SGD.step", B + 700, 60);
    W.launch("cudaLaunchKernel", B + 710, 5, "sgd_update", B + 821, 30);
    W.cpu("cuda_runtime", "cudaDeviceSynchronize", B + 800, 100, 1, "{}");
  }
  return W;
}

} // namespace

TEST_CASE("a training trace becomes a graph that replays it exactly") {
  Built B = build(trainingSteps());
  const Graph &G = B.G;
  REQUIRE(G.Iterations.size() == 2);
  CHECK(G.Iterations[0].Label == "ProfilerStep#1");
  CHECK(B.Stats.IterationSource == "ProfilerStep#");
  // The step and the ops that contain calls are containers.
  CHECK(G.isContainer(named(G, "ProfilerStep#1")));
  CHECK(G.isContainer(named(G, "aten::linear")));
  CHECK(G.isLeaf(named(G, "cudaLaunchKernel")));
  // Launch edges by correlation.
  TaskId K = named(G, "sgemm_fwd");
  CHECK(G.Launcher[K] == named(G, "cudaLaunchKernel"));
  // The device sync waits for the last kernel of the step; the second also
  // follows the first (addDeviceSync).
  CHECK(B.Stats.EdgesByKind[unsigned(EdgeKind::Sync)] == 3);
  CHECK((G.Flags[named(G, "cudaDeviceSynchronize")] & TF_Blocking) != 0);
  for (size_t I = 0; I < 2; ++I)
    CHECK(iterationTime(G, I) == G.Iterations[I].measured());
}

TEST_CASE("GPU ids at the edges of their range") {
  // Device -1 with stream -1 once packed into the key a map reserves, and
  // the trace crashed; now it is one more stream, apart from device 0's -1.
  TraceWriter W = twoStepsWith([](TraceWriter &W) {
    W.add(R"({"ph":"X","cat":"kernel","name":"k_nodev","pid":0,"tid":1,)"
          R"("ts":100,"dur":5,"args":{"device":-1,"stream":-1}})");
    W.add(R"({"ph":"X","cat":"kernel","name":"k_dev0","pid":0,"tid":1,)"
          R"("ts":200,"dur":5,"args":{"device":0,"stream":-1}})");
    // A correlation id of 2^63 - 1 is no one's: it reads as absent.
    W.add(R"({"ph":"X","cat":"kernel","name":"k_corr","pid":0,"tid":7,)"
          R"("ts":300,"dur":5,"args":{"device":0,"stream":7,)"
          R"("correlation":9223372036854775807}})");
  });
  Built B = build(W);
  const Graph &G = B.G;
  CHECK(G.Res[named(G, "k_nodev")] != G.Res[named(G, "k_dev0")]);
  CHECK(G.Resources[G.Res[named(G, "k_nodev")]].Name == "GPU -1 stream -1");
  CHECK(G.Correlation[named(G, "k_corr")] == -1);
  CHECK(B.Stats.GpuWithoutLauncher == 3);

  // A device that is no GPU index is refused, naming the event.
  TraceWriter Far = twoStepsWith([](TraceWriter &W) {
    W.add(R"({"ph":"X","cat":"kernel","name":"k_far","pid":0,"tid":7,)"
          R"("ts":100,"dur":5,"args":{"device":2147483647,"stream":7}})");
  });
  std::string Json = Far.json();
  auto T = trace::parseKinetoJson(Json, "x.json");
  REQUIRE_FALSE(static_cast<bool>(T));
  CHECK(llvm::toString(T.takeError())
            .find("GPU event 'k_far' is on device 2147483647, not a GPU "
                  "index (0 to 65535)") != std::string::npos);
}

TEST_CASE("GPU work overlapping its stream predecessor is counted") {
  CHECK(build(trainingSteps()).Stats.OverlappingGpu == 0);
  // A kernel that starts 130 us before sgemm_fwd, ahead of it on stream 7,
  // ends: a stream runs one kernel at a time, so the trace is damaged (or
  // the kernels use programmatic dependent launch). The replay serialises
  // them, and the count and the largest overlap say why it differs.
  TraceWriter W = trainingSteps();
  W.launch("cudaLaunchKernel", 26, 2, "early_kernel", 100, 10);
  Built B = build(W);
  CHECK(B.Stats.OverlappingGpu == 1);
  CHECK(B.Stats.MaxGpuOverlap == 130000);
  auto R = sim::simulate(B.G);
  REQUIRE(static_cast<bool>(R));
  TaskId Early = named(B.G, "early_kernel"), Fwd = named(B.G, "sgemm_fwd");
  // It waits for sgemm_fwd, less the 2 us kept for clock noise.
  CHECK(R->Start[Early] == R->End[Fwd] - 2000);
}

TEST_CASE("phases and layers follow the operator hierarchy") {
  Built B = build(trainingSteps());
  const Graph &G = B.G;
  CHECK(G.PhaseOf[named(G, "sgemm_fwd")] == Phase::Forward);
  CHECK(G.PhaseOf[named(G, "sgemm_bwd")] == Phase::Backward);
  CHECK(G.PhaseOf[named(G, "sgd_update")] == Phase::Optimizer);
  // The backward kernel belongs to the forward operator's layer.
  LayerId L = G.LayerOf[named(G, "sgemm_fwd")];
  REQUIRE(L != NoLayer);
  CHECK(G.Layers[L].Name == "linear#1");
  CHECK(G.LayerOf[named(G, "sgemm_bwd")] == L);
  // Both iterations map onto the same layers.
  CHECK(G.LayerOf[named(G, "sgemm_fwd", 1)] == L);
  CHECK(G.IterationOf[named(G, "sgemm_fwd", 1)] == 1);
}

TEST_CASE("only the outermost of nested operators names a layer") {
  // aten::outer holds a 2,000-deep nest of aten::inner, with a launch at
  // the bottom; aten::after comes next. The nest is walked once, not once
  // per operator (which took seconds for 100,000 levels).
  TraceWriter W;
  W.cpu("user_annotation", "ProfilerStep#1", 0, 10000);
  W.cpu("cpu_op", "aten::outer", 10, 5000);
  const int Depth = 2000;
  for (int I = 0; I < Depth; ++I)
    W.cpu("cpu_op", "aten::inner", 11 + I * 0.001, 4000 - I * 0.001);
  W.launch("cudaLaunchKernel", 20, 5, "k_outer", 30, 100);
  W.cpu("cpu_op", "aten::after", 6000, 100);
  W.launch("cudaLaunchKernel", 6010, 5, "k_after", 6020, 100);
  W.cpu("user_annotation", "ProfilerStep#2", 10000, 10000);
  W.launch("cudaLaunchKernel", 10010, 5, "k_next", 10020, 100);
  Built B = build(W);
  const Graph &G = B.G;
  LayerId Outer = G.LayerOf[named(G, "aten::outer")];
  REQUIRE(Outer != NoLayer);
  CHECK(G.Layers[Outer].Name == "outer#1");
  CHECK(G.LayerOf[named(G, "aten::inner", Depth - 1)] == Outer);
  CHECK(G.LayerOf[named(G, "k_outer")] == Outer);
  LayerId After = G.LayerOf[named(G, "aten::after")];
  REQUIRE(After != NoLayer);
  CHECK(G.Layers[After].Name == "after#1");
  for (const auto &L : G.Layers)
    CHECK(L.Name.find("inner") == std::string::npos);
}

TEST_CASE("operators carry their input bytes; containers their leaves") {
  TraceWriter W;
  W.cpu("user_annotation", "ProfilerStep#1", 0, 1000);
  // The same shapes thrice (one size worked out, three times used), then
  // the same shapes with another type, and a collective's own size.
  const char *Float = R"({"Input Dims": [[2, 3], [3]], )"
                      R"("Input type": ["float", "float"]})";
  W.cpu("cpu_op", "aten::add", 10, 40, 1, Float);
  W.launch("cudaLaunchKernel", 20, 5, "add_kernel", 30, 20);
  W.cpu("cpu_op", "aten::add", 100, 40, 1, Float);
  W.cpu("cpu_op", "aten::mul", 200, 40, 1, Float);
  W.cpu("cpu_op", "aten::add", 300, 40, 1,
        R"({"Input Dims": [[2, 3], [3]], "Input type": ["c10::Half", )"
        R"("c10::Half"]})");
  W.cpu("cpu_op", "record_param_comms", 400, 40, 1,
        R"({"Input Dims": [[2, 3]], "Input type": ["float"], )"
        R"("In msg nelems": 10, "dtype": "Float"})");
  W.cpu("cpu_op", "aten::empty", 500, 10, 1, "{}");
  Built B = build(W);
  const Graph &G = B.G;
  CHECK(G.Bytes[named(G, "aten::add")] == 36);
  CHECK(G.Bytes[named(G, "aten::add", 1)] == 36);
  CHECK(G.Bytes[named(G, "aten::mul")] == 36);
  CHECK(G.Bytes[named(G, "aten::add", 2)] == 18);
  CHECK(G.Bytes[named(G, "record_param_comms")] == 40);
  CHECK(G.Bytes[named(G, "aten::empty")] == -1);
  // The step holds every call; the first add holds the launch only.
  TaskId Step = named(G, "ProfilerStep#1");
  CHECK(G.FirstLeaf[Step] == named(G, "cudaLaunchKernel"));
  CHECK(G.LastLeaf[Step] == named(G, "aten::empty"));
  TaskId Add = named(G, "aten::add");
  CHECK(G.FirstLeaf[Add] == G.LastLeaf[Add]);
  CHECK(G.Lead[Add] == 10000);
  CHECK(G.Trail[Add] == 25000);
}

TEST_CASE("a faster GPU shortens a step that waits for it, and only by that") {
  Built B = build(trainingSteps());
  Graph &G = B.G;
  int64_t Before = iterationTime(G, 1);
  TaskId Bwd = named(G, "sgemm_bwd", 1);
  G.Dur[Bwd] /= 2; // 250 us less GPU work before the final sync
  int64_t After = iterationTime(G, 1);
  CHECK(After < Before);
  // The optimizer kernel was queued behind it; now it waits for its launch.
  CHECK(Before - After < 250000);
}

TEST_CASE("queue-full: a launch blocks until work deep in the queue ends") {
  TraceWriter W;
  W.cpu("user_annotation", "ProfilerStep#1", 0, 100000);
  // 300 launches, 1 us apart, of 100 us kernels: once 100 are queued, each
  // launch returns only when a kernel finishes.
  double Cpu = 1;
  for (int I = 0; I < 300; ++I) {
    double KStart = 10 + 100.0 * I;
    double Dur = 1;
    if (I >= 100) {
      double Freed = 10 + 100.0 * (I - 100) + 100; // kernel I-100 ends
      Dur = std::max(1.0, Freed + 2 - Cpu);
    }
    W.launch("cudaLaunchKernel", Cpu, Dur, "k", KStart, 100);
    Cpu += Dur + 1;
  }
  W.cpu("cuda_runtime", "cudaDeviceSynchronize", Cpu, 100000 - Cpu - 1, 1,
        "{}");
  Built B = build(W);
  CHECK(B.Stats.QueueCapacityMeasured);
  CHECK(B.Stats.QueueCapacity >= 98);
  CHECK(B.Stats.QueueCapacity <= 101);
  CHECK(iterationTime(B.G, 0) == B.G.Iterations[0].measured());
  // Twice-as-fast kernels: the launches stop blocking so early.
  for (TaskId T = 0; T < B.G.numTasks(); ++T)
    if (B.G.Kind[T] == TaskKind::Kernel)
      B.G.Dur[T] /= 2;
  auto R = sim::simulate(B.G);
  REQUIRE(static_cast<bool>(R));
  TaskId Last = named(B.G, "cudaLaunchKernel", 299);
  // It returns when kernel 199 ends: 200 kernels of 50 us after 10 us.
  CHECK(R->End[Last] >= 10'000'000);
  CHECK(R->End[Last] <= 10'030'000);
}

TEST_CASE("wake: a resumed thread follows the latest end on another thread") {
  Built B = build(twoStepsWith([](TraceWriter &W) {
    W.cpu("cpu_op", "a1", 100, 100, 1);
    W.cpu("cpu_op", "a2", 1000, 50, 1); // idle 800 us: what woke it?
    W.cpu("cpu_op", "b1", 300, 600, 2); // ends at 900
    W.cpu("cpu_op", "c1", 400, 450, 3); // ends at 850
    W.cpu("cpu_op", "d1", 100, 850, 4); // ends at 950: the waker
    W.cpu("cpu_op", "d2", 960, 140, 4); // ends after a2 starts
    W.cpu("cpu_op", "e1", 100, 50, 5);  // ended before a1 did
  }));
  const Graph &G = B.G;
  CHECK(wakerOf(G, named(G, "a2")) == named(G, "d1"));
}

TEST_CASE("wake: thousands of short-lived threads each find their waker") {
  // Thread 100+i runs one op at 100+13*i us: each follows the one before
  // it (the first, the step's launch), and the main thread, idle until
  // 40 ms, follows the last.
  const int N = 3000;
  Built B = build(twoStepsWith([&](TraceWriter &W) {
    for (int I = 0; I < N; ++I)
      W.cpu("cpu_op", fmt::format("op{}", I), 100 + 13 * I, 5, 100 + I);
    W.cpu("cpu_op", "main_resumes", 40000, 10, 1);
  }));
  const Graph &G = B.G;
  CHECK(wakerOf(G, named(G, "op0")) == named(G, "cudaLaunchKernel"));
  for (int I : {1, 2, 1500, N - 1})
    CHECK(wakerOf(G, named(G, fmt::format("op{}", I))) ==
          named(G, fmt::format("op{}", I - 1)));
  CHECK(wakerOf(G, named(G, "main_resumes")) ==
        named(G, fmt::format("op{}", N - 1)));
  CHECK(B.Stats.EdgesByKind[unsigned(EdgeKind::Wake)] == N + 1);
}

TEST_CASE("event record and stream wait link two streams") {
  TraceWriter W;
  W.cpu("user_annotation", "ProfilerStep#1", 0, 1000);
  W.launch("cudaLaunchKernel", 10, 5, "producer", 20, 300, 7);
  W.cpu("cuda_runtime", "cudaEventRecord", 16, 1, 1, R"({"correlation": 900})");
  W.cpu("cuda_runtime", "cudaStreamWaitEvent", 18, 1, 1,
        R"({"correlation": 901})");
  W.launch("cudaLaunchKernel", 20, 5, "consumer", 321, 50, 40);
  W.cpu("cuda_runtime", "cudaDeviceSynchronize", 30, 400, 1, "{}");
  Built B = build(W);
  CHECK(B.Stats.EdgesByKind[unsigned(EdgeKind::EventWait)] == 1);
  Graph &G = B.G;
  CHECK(iterationTime(G, 0) == G.Iterations[0].measured());
  G.Dur[named(G, "producer")] = 100'000;
  auto R = sim::simulate(G);
  REQUIRE(static_cast<bool>(R));
  CHECK(R->Start[named(G, "consumer")] >= R->End[named(G, "producer")]);
}

TEST_CASE("iterations from optimizer steps, or from a window") {
  TraceWriter W;
  for (int I = 0; I < 3; ++I) {
    double B = 500.0 * I;
    W.launch("cudaLaunchKernel", B + 10, 5, "k", B + 20, 100);
    W.cpu("user_annotation", "Optimizer.step#Adam.step", B + 300, 50);
  }
  Built B = build(W);
  CHECK(B.Stats.IterationSource == "Optimizer.step");
  REQUIRE(B.G.Iterations.size() == 2);
  CHECK(B.G.Iterations[0].measured() == 500000);

  BuildOptions O;
  O.Window = std::make_pair<int64_t, int64_t>(0, 400000);
  Built Win = build(W, O);
  REQUIRE(Win.G.Iterations.size() == 1);
  CHECK(Win.G.Iterations[0].Label == "window");
  CHECK(iterationTime(Win.G, 0) > 0);
}

TEST_CASE("traces ddscript cannot replay say why") {
  TraceWriter NoSteps;
  NoSteps.launch("cudaLaunchKernel", 10, 5, "k", 20, 100);
  std::string Json = NoSteps.json();
  auto T = trace::parseKinetoJson(Json, "x.json");
  REQUIRE(static_cast<bool>(T));
  auto G = buildGraph(*T);
  REQUIRE_FALSE(static_cast<bool>(G));
  CHECK(llvm::toString(G.takeError()).find("no complete iteration") !=
        std::string::npos);

  TraceWriter CpuOnly;
  CpuOnly.cpu("user_annotation", "ProfilerStep#1", 0, 100);
  Json = CpuOnly.json();
  T = trace::parseKinetoJson(Json, "x.json");
  REQUIRE(static_cast<bool>(T));
  CHECK_FALSE(hasGpuWork(*T));
  G = buildGraph(*T);
  REQUIRE_FALSE(static_cast<bool>(G));
  CHECK(llvm::toString(G.takeError()).find("CPU-only") != std::string::npos);

  // A damaged timestamp: a kernel of 5e15 us (158 years) is more than the
  // simulator's times can hold. The graph is refused, naming the kernel,
  // rather than built for a replay that would fail as an internal error.
  TraceWriter Long = trainingSteps();
  Long.launch("cudaLaunchKernel", 1500, 5, "stuck_kernel", 1510, 5e15);
  Json = Long.json();
  T = trace::parseKinetoJson(Json, "x.json");
  REQUIRE(static_cast<bool>(T));
  G = buildGraph(*T);
  REQUIRE_FALSE(static_cast<bool>(G));
  std::string E = llvm::toString(G.takeError());
  CHECK(E.find("more than the 146 years ddscript can simulate") !=
        std::string::npos);
  CHECK(E.find("kernel 'stuck_kernel' on GPU 0 stream 7 lasts 5e+09 s") !=
        std::string::npos);
}

TEST_CASE("a kernel takes the work of the operator that launched it") {
  TraceWriter W;
  W.cpu("user_annotation", "ProfilerStep#1", 0, 5000);
  // aten::linear around aten::addmm, which launches its GEMM and a copy of
  // the bias into the output; then an aten::add_ inside the linear.
  W.cpu("cpu_op", "aten::linear", 10, 400, 1,
        R"({"Input Dims": [[32, 2048], [1000, 2048], [1000]], )"
        R"("Input type": ["float", "float", "float"]})");
  W.cpu("cpu_op", "aten::addmm", 20, 100, 1,
        R"({"Input Dims": [[1000], [32, 2048], [2048, 1000], [], []], )"
        R"("Input type": ["float", "float", "float", "Scalar", "Scalar"]})");
  W.launch("cudaLaunchKernel", 30, 5,
           "void at::native::vectorized_elementwise_kernel<4, "
           "at::native::direct_copy_kernel_cuda>()",
           100, 10);
  W.launch("cudaLaunchKernel", 50, 5, "sm90_xmma_gemm_f32f32_tf32f32_f32_tn",
           120, 90);
  W.cpu("cpu_op", "aten::add_", 200, 50, 1,
        R"({"Input Dims": [[32, 1000], [32, 1000], []], )"
        R"("Input type": ["float", "float", "Scalar"]})");
  W.launch("cudaLaunchKernel", 210, 5,
           "void at::native::vectorized_elementwise_kernel<4, "
           "at::native::CUDAFunctor_add<float>>()",
           300, 10);
  // A sized aten::mul around an unsized cast: the cast's kernel is not the
  // multiply's.
  W.cpu("cpu_op", "aten::mul", 500, 100, 1,
        R"({"Input Dims": [[32, 1000], [32, 1000]], )"
        R"("Input type": ["float", "float"]})");
  W.cpu("cpu_op", "aten::to", 510, 50, 1, "{}");
  W.launch("cudaLaunchKernel", 520, 5,
           "void at::native::unrolled_elementwise_kernel<at::native::"
           "direct_copy_kernel_cuda>()",
           600, 10);
  // The optimizer step: aten::add_ sized (optimizer class, its own
  // work); a foreach update whose lists are not recorded is not.
  W.cpu("user_annotation", "Optimizer.step#Adam.step", 1000, 500);
  W.cpu("cpu_op", "aten::add_", 1010, 50, 1,
        R"({"Input Dims": [[1000, 2048], [1000, 2048], []], )"
        R"("Input type": ["float", "float", "Scalar"]})");
  W.launch("cudaLaunchKernel", 1020, 5,
           "void at::native::vectorized_elementwise_kernel<4, "
           "at::native::CUDAFunctor_add<float>>()",
           1100, 10);
  W.cpu("cpu_op", "aten::_foreach_add_", 1100, 50, 1,
        R"({"Input Dims": [[], []], "Input type": ["TensorList", "Scalar"]})");
  W.launch("cudaLaunchKernel", 1110, 5,
           "void at::native::multi_tensor_apply_kernel<>()", 1200, 10);
  Built B = build(W);
  const Graph &G = B.G;
  std::vector<double> Flops = taskFlops(G);
  std::vector<double> Moved = taskMovedBytes(G);
  auto Kernel = [&](unsigned Nth) {
    unsigned Seen = 0;
    for (TaskId T = 0; T < G.numTasks(); ++T)
      if (G.Kind[T] == TaskKind::Kernel && Seen++ == Nth)
        return T;
    FAIL("no kernel " << Nth);
    return NoTask;
  };
  TaskId Copy = Kernel(0), Gemm = Kernel(1), Add = Kernel(2), Cast = Kernel(3),
         StepAdd = Kernel(4), Foreach = Kernel(5);
  // addmm's FLOPs, not linear's: the GEMM and the bias copy (a pointwise
  // kernel of a GEMM operator is classed as its GEMM work) share them by
  // time, 90 to 10, as before elementwise work was sized.
  CHECK(kernelClassName(kernelClassOf(G, Gemm)) == "gemm");
  CHECK(kernelClassName(kernelClassOf(G, Copy)) == "gemm");
  CHECK(Flops[Gemm] == doctest::Approx(0.9 * 2 * 32 * 2048 * 1000));
  CHECK(Flops[Copy] + Flops[Gemm] ==
        doctest::Approx(double(G.Flops[named(G, "aten::addmm")])));
  CHECK(Moved[Copy] + Moved[Gemm] ==
        doctest::Approx(double(G.Moved[named(G, "aten::addmm")])));
  // The add_ inside linear: its own work, 32 x 1000.
  CHECK(kernelClassName(kernelClassOf(G, Add)) == "elementwise");
  CHECK(Flops[Add] == doctest::Approx(32.0 * 1000));
  CHECK(Moved[Add] == doctest::Approx(4.0 * 3 * 32 * 1000));
  // The cast under aten::to: aten::to records no shapes, and the multiply
  // around it is not what it did.
  CHECK(G.Flops[named(G, "aten::mul")] == 32 * 1000);
  CHECK(std::isnan(Flops[Cast]));
  CHECK(std::isnan(Moved[Cast]));
  // In the optimizer step: add_'s kernel is the optimizer's, sized by it;
  // the foreach kernel is not sized.
  CHECK(kernelClassName(kernelClassOf(G, StepAdd)) == "optimizer");
  CHECK(Flops[StepAdd] == doctest::Approx(1000.0 * 2048));
  CHECK(kernelClassName(kernelClassOf(G, Foreach)) == "optimizer");
  CHECK(std::isnan(Flops[Foreach]));
  CHECK(std::isnan(Moved[Foreach]));
}

TEST_CASE("a device sync waits for the streams launched onto since the "
          "previous one, and through it for the rest") {
  // One thread: a long kernel, a device sync that waits for it, a short
  // kernel on another stream, a second device sync. The second needs an
  // edge from the short kernel and one from the first sync, not one from
  // every stream (issue 19: streams x syncs edges). Removing the first
  // sync must leave the second waiting for the long kernel.
  TraceWriter W;
  W.cpu("user_annotation", "ProfilerStep#1", 0, 1200);
  W.launch("cudaLaunchKernel", 10, 5, "long", 20, 1000, 7);
  W.cpu("cuda_runtime", "cudaDeviceSynchronize", 30, 995, 1, "{}");
  W.launch("cudaLaunchKernel", 1030, 5, "short", 1036, 4, 8);
  W.cpu("cuda_runtime", "cudaDeviceSynchronize", 1050, 5, 1, "{}");
  Built B = build(W);
  Graph &G = B.G;
  TaskId Long = named(G, "long"), Short = named(G, "short");
  TaskId First = named(G, "cudaDeviceSynchronize", 0);
  TaskId Second = named(G, "cudaDeviceSynchronize", 1);
  std::vector<TaskId> Into;
  for (const Edge &E : G.Edges)
    if (E.Kind == EdgeKind::Sync && E.Dst == Second)
      Into.push_back(E.Src);
  std::sort(Into.begin(), Into.end());
  std::vector<TaskId> Expect{First, Short};
  std::sort(Expect.begin(), Expect.end());
  CHECK(Into == Expect);
  CHECK(iterationTime(G, 0) == G.Iterations[0].measured());

  llvm::BitVector Set(G.numTasks());
  Set.set(First);
  G.removeTasks(Set);
  REQUIRE(G.finalize());
  auto R = sim::simulate(G);
  REQUIRE(static_cast<bool>(R));
  CHECK(R->End[Second] >= R->End[Long]);
  // Without the first sync the thread runs ahead: the second sync starts
  // long before the long kernel ends, and waits there.
  CHECK(R->Start[Second] < R->End[Long]);
}

// Memory what-ifs written in the language: they agree with the same
// what-ifs made through the C++ API, and the shipped models move the peak
// the way they should on the traces with memory records.

#include "builder/GraphBuilder.h"
#include "compiler/Compiler.h"
#include "memory/MemoryModel.h"
#include "sim/Simulator.h"
#include "trace/TraceReader.h"
#include "vm/VM.h"

#include <doctest/doctest.h>

using namespace dd;
using namespace dd::memory;

namespace {

const char *const Resnet = "kineto/resnet50_v100_workers0.pt.trace.json.gz";

struct Run {
  trace::Trace T;
  graph::Graph G;
  MemoryModel M;
  uint32_t Pool = 0;
  size_t Report = 1;
  int64_t BaselineNs = 0, BaselinePeak = 0;
  int64_t PredictedNs = 0, PredictedPeak = 0;
};

/// Loads \p Rel, runs \p Source (a model's text, "std.NAME" for a standard
/// model or "models/NAME" for one of models/) with \p Settings against it and
/// predicts the reported iteration's time and peak.
std::unique_ptr<Run> run(const char *Rel, const std::string &Source,
                         std::vector<vm::Setting> Settings = {}) {
  auto R = std::make_unique<Run>();
  auto T = trace::readTrace(std::string(DD_TEST_DATA) + "/" + Rel);
  REQUIRE(static_cast<bool>(T));
  R->T = std::move(*T);
  auto G = graph::buildGraph(R->T);
  REQUIRE(static_cast<bool>(G));
  R->G = std::move(*G);
  auto M = MemoryModel::build(R->T, R->G);
  REQUIRE(static_cast<bool>(M));
  R->M = std::move(*M);
  R->Pool = vm::reportedPool(R->M);
  R->Report = R->G.Iterations.size() > 2 ? 1 : 0;
  const graph::Iteration &It = R->G.Iterations[R->Report];
  auto Base = sim::simulate(R->G);
  REQUIRE(static_cast<bool>(Base));
  R->BaselineNs = sim::iterationTime(R->G, *Base, It);
  R->BaselinePeak = vm::iterationPeak(R->M, R->Pool, R->G, *Base, It);

  SourceManager SM;
  DiagEngine Diags;
  compiler::CompileOptions Opts;
  Opts.StdlibDirs = {DD_STDLIB_SOURCE_DIR};
  std::string Text = Source;
  if (Source.rfind("std.", 0) == 0)
    Text = "import " + Source;
  else if (Source.rfind("models/", 0) == 0)
    Text =
        "import \"" + std::string(DD_MODELS_DIR) + Source.substr(6) + ".dd\"";
  auto Model = compiler::compileSource("test.dd", Text, Opts, SM, Diags);
  REQUIRE_MESSAGE(Model.has_value(), renderDiagnostics(SM, Diags));
  vm::RunEnv Env;
  Env.G = &R->G;
  Env.Mem = &R->M;
  Env.MemPool = R->Pool;
  Env.BaselinePeak = R->BaselinePeak;
  Env.ReportIteration = R->Report;
  Env.Device.PcieBandwidth = vm::estimatePcieBandwidth(R->G);
  // simulate(), as driver::predict gives it (std.amp times GradScaler).
  graph::Graph *GP = &R->G;
  size_t Report = R->Report;
  Env.Simulate =
      [GP, Report](const sim::SchedulePolicy &P) -> llvm::Expected<int64_t> {
    auto S = sim::simulate(*GP, &P);
    if (!S)
      return S.takeError();
    return sim::iterationTime(*GP, *S, GP->Iterations[Report]);
  };
  vm::RunOptions RO;
  RO.Settings = std::move(Settings);
  vm::RunResult Res = vm::run(Model->Program, Env, RO);
  REQUIRE_MESSAGE(Res.Ok, Res.Error.Message);
  auto Pred = sim::simulate(R->G, &Res.Policy);
  REQUIRE(static_cast<bool>(Pred));
  R->PredictedNs = sim::iterationTime(R->G, *Pred, It);
  R->PredictedPeak = vm::iterationPeak(R->M, R->Pool, R->G, *Pred, It);
  return R;
}

} // namespace

TEST_CASE("memory language: resize equals scaleBlocks, byte for byte") {
  auto ByModel = run(Resnet, "resize (select block where class == "
                             "activation) by 0.5");
  // The same what-if through the C++ API, on a fresh block table.
  auto ByApi = run(Resnet, "");
  ByApi->M.reset();
  REQUIRE(!ByApi->M.scaleBlocks(ByApi->M.blocksOfClass(BlockClass::Activation),
                                0.5));
  CHECK(ByModel->M.Size == ByApi->M.Size);
  auto R = sim::simulate(ByApi->G);
  REQUIRE(static_cast<bool>(R));
  CHECK(vm::iterationPeak(ByApi->M, ByApi->Pool, ByApi->G, *R,
                          ByApi->G.Iterations[ByApi->Report]) ==
        ByModel->PredictedPeak);
  CHECK(ByModel->PredictedPeak < ByModel->BaselinePeak);
}

TEST_CASE("memory language: AMP (activations halved) lowers the peak") {
  // Every training trace with memory records: the peak is in backward,
  // where activations are live.
  for (const char *Rel : {Resnet, "hta/ddp2_v100_df_index_resolver.json.gz"}) {
    CAPTURE(Rel);
    auto R = run(Rel, "std.amp");
    CHECK(R->PredictedPeak < R->BaselinePeak);
    CHECK(R->PredictedPeak >= R->BaselinePeak / 2);
  }
  // Inference keeps no activations: nothing to halve.
  auto Inf = run("tracelens/h100_bert_small_inference.json.gz", "std.amp");
  CHECK(Inf->PredictedPeak == Inf->BaselinePeak);
}

TEST_CASE("memory language: checkpointing lowers the peak, more segments "
          "lower it more") {
  auto Four = run(Resnet, "models/checkpointing");
  CHECK(Four->PredictedPeak < Four->BaselinePeak);
  // Recomputation costs GPU time; this trace's GPU waits for data loading,
  // so the iteration is no shorter (and here no longer).
  CHECK(Four->PredictedNs >= Four->BaselineNs);
  auto Eight = run(Resnet, "models/checkpointing", {{"segments", "8"}});
  CHECK(Eight->PredictedPeak < Four->PredictedPeak);
}

TEST_CASE("memory language: vDNN offload trades time for memory") {
  auto Slow = run(Resnet, "models/vdnn_offload");
  CHECK(Slow->PredictedPeak < Slow->BaselinePeak);
  CHECK(Slow->PredictedNs > Slow->BaselineNs);
}

// Properties of the shipped models (stdlib/): the direction and bounds of
// their predictions, on the training fixtures they apply to.

#include "ModelFixture.h"

#include "compiler/Compiler.h"
#include "driver/Predict.h"
#include "vm/VM.h"

#include <doctest/doctest.h>

#include <map>
#include <memory>

using namespace dd;

namespace {

struct Prediction {
  int64_t Baseline = 0, Predicted = 0;
  std::string Output;
};

/// A trace set up once per test binary as `ddscript run` sets it up
/// (driver::setupRun: the trace read, its graph built, the default
/// iteration chosen, the replay).
const driver::RunSetup &fixture(const std::string &Rel) {
  static std::map<std::string, std::unique_ptr<driver::RunSetup>> Cache;
  auto It = Cache.find(Rel);
  if (It == Cache.end()) {
    driver::TraceOptions O;
    O.TracePath = std::string(DD_TEST_DATA) + "/" + Rel;
    O.TracePaths = {O.TracePath};
    driver::RunSetupResult S = driver::setupRun(O, driver::ProfilerRequest());
    REQUIRE_MESSAGE(static_cast<bool>(S.Setup), Rel);
    It = Cache.emplace(Rel, std::move(S.Setup)).first;
  }
  return *It->second;
}

/// What `ddscript run MODEL --trace REL --set ...` predicts for the default
/// iteration (driver::predict on a copy of the trace's graph, as a sweep
/// runs each point): the replay's and the prediction's steady state.
Prediction predict(const std::string &Rel, const std::string &Model,
                   std::vector<vm::Setting> Settings = {}) {
  const driver::RunSetup &S = fixture(Rel);
  compiler::CompiledModel M = test::compileModel(
      std::string(DD_STDLIB_SOURCE_DIR) + "/" + Model + ".dd");
  driver::RunMemory Mem;
  REQUIRE_FALSE(Mem.takeSettings(Settings, M.Program).has_value());
  graph::Graph G = S.G;
  driver::Prediction P = driver::predict(S.baseline(), G, M.Program, Settings,
                                         std::move(Mem), vm::DefaultMaxSteps);
  REQUIRE_MESSAGE(P.R.Ok, P.R.Error.Message);
  REQUIRE_MESSAGE(P.SimError.empty(), P.SimError);
  const driver::Outcome &O = P.Out.front();
  return {O.BaselineSteady, O.Predicted, P.R.Output};
}

const char *const R50 = "kineto/resnet50_v100_workers0.pt.trace.json.gz";

/// Communication at no cost: no latency, a bandwidth nothing can use up.
std::vector<vm::Setting> freeNetwork(std::vector<vm::Setting> More = {}) {
  std::vector<vm::Setting> S = {{"gbps", "1e9Gbps"},
                                {"intra_gbps", "1e9GBps"},
                                {"latency", "0us"},
                                {"intra_latency", "0us"}};
  S.insert(S.end(), More.begin(), More.end());
  return S;
}

} // namespace

TEST_CASE("amp's GPU side never predicts a slower iteration, and its CPU "
          "side never a faster one") {
  for (const char *Rel :
       {R50, "kineto/resnet50_2021-01_workers0.pt.trace.json.gz",
        "hta/v100_ns_resolution_rank0.json.gz",
        "hta/ddp2_a100_nccl_data.json.gz", "hta/a100_16rank_rank0.json.gz",
        "param/resnet_2080ti_no_steps.json.gz",
        "hta/gpu_user_annotation_steps.json.gz"}) {
    CAPTURE(Rel);
    Prediction P = predict(
        Rel, "amp", {{"insert_casts", "false"}, {"grad_scaler", "false"}});
    CHECK(P.Predicted <= P.Baseline);
    Prediction Casts = predict(Rel, "amp", {{"grad_scaler", "false"}});
    CHECK(Casts.Predicted >= P.Predicted);
    Prediction All = predict(Rel, "amp");
    CHECK(All.Predicted >= Casts.Predicted);
  }
}

TEST_CASE("restructure_bn never predicts a slower iteration") {
  for (const char *Rel : {R50, "hta/v100_ns_resolution_rank0.json.gz",
                          "param/resnet_2080ti_no_steps.json.gz"}) {
    CAPTURE(Rel);
    Prediction P = predict(Rel, "restructure_bn");
    CHECK(P.Predicted <= P.Baseline);
    CHECK(P.Output.find("fused into BN: ") != std::string::npos);
  }
}

/// Single-GPU training traces: what ddp and p3 start from.
const char *const SingleGpu[] = {
    R50, "kineto/resnet50_2021-01_workers0.pt.trace.json.gz",
    "hta/v100_ns_resolution_rank0.json.gz",
    "param/resnet_2080ti_no_steps.json.gz"};
/// And traces of real data-parallel jobs, their own communication removed
/// (ddp would otherwise reuse their all-reduces; p3 always removes them).
const char *const MultiGpu[] = {"hta/ddp2_a100_nccl_data.json.gz",
                                "hta/ddp2_v100_df_index_resolver.json.gz",
                                "hta/a100_16rank_rank0.json.gz"};

TEST_CASE("ddp with free communication equals the single-GPU baseline") {
  // The optimizer's wait for the all-reduces costs nothing when they do:
  // the last bucket is ready when backward's last gradient is, and the
  // optimizer's first kernel follows backward on the stream anyway.
  for (const char *Rel : SingleGpu) {
    CAPTURE(Rel);
    Prediction P = predict(Rel, "ddp", freeNetwork());
    CHECK(P.Predicted == P.Baseline);
    // A real network costs time once it cannot hide behind backward.
    Prediction Slow = predict(Rel, "ddp", {{"gbps", "1Gbps"}});
    CHECK(Slow.Predicted > P.Baseline);
  }
}

TEST_CASE("more machines at the same bandwidth never make ddp faster") {
  for (const char *Rel : SingleGpu) {
    CAPTURE(Rel);
    int64_t Last = 0;
    for (const char *Machines : {"1", "2", "4", "8"}) {
      CAPTURE(Machines);
      Prediction P = predict(
          Rel, "ddp",
          {{"machines", Machines}, {"gbps", "5Gbps"}, {"intra_gbps", "5GBps"}});
      CHECK(P.Predicted >= Last);
      Last = P.Predicted;
    }
  }
}

TEST_CASE("p3 is never slower than ddp at the same bandwidth") {
  // Without latency: slicing costs P3 one latency per slice, which at 5 us
  // and a ring over 16 GPUs outweighs what its order wins (models.md).
  auto Check = [](const char *Rel, std::initializer_list<const char *> Rates) {
    for (const char *Gbps : Rates) {
      CAPTURE(Rel);
      CAPTURE(Gbps);
      std::vector<vm::Setting> S = {
          {"gbps", Gbps}, {"latency", "0us"}, {"intra_latency", "0us"}};
      std::vector<vm::Setting> Modelled = S;
      Modelled.push_back({"existing", "remove"});
      Prediction Ddp = predict(Rel, "ddp", Modelled);
      Prediction P3 = predict(Rel, "p3", S);
      CHECK(P3.Predicted <= Ddp.Predicted);
    }
  };
  Check(R50, {"1Gbps", "5Gbps", "10Gbps", "100Gbps"});
  for (const char *Rel : SingleGpu)
    Check(Rel, {"10Gbps"});
  for (const char *Rel : MultiGpu)
    Check(Rel, {"10Gbps"});
  // Single-GPU traces have no communication to remove: P3 only adds work.
  for (const char *Rel : SingleGpu) {
    CAPTURE(Rel);
    Prediction P3 = predict(Rel, "p3", {{"gbps", "10Gbps"}});
    CHECK(P3.Predicted >= P3.Baseline);
  }
}

TEST_CASE("fused_adam replaces the optimizer step and keeps its waits") {
  Prediction P = predict(R50, "fused_adam");
  // ResNet-50's SGD launches 483 kernels from 161 parameters: fused, 5.
  CHECK(P.Output.find("fused: 5 kernels for 161 gradients of 97.49 MiB") !=
        std::string::npos);
  CHECK(P.Predicted < P.Baseline);
  // Removing the step must not drop its wait for backward: with launches
  // and kernels that cost nothing, the iteration cannot end before the
  // backward pass does, so it is never shorter than without the optimizer.
  Prediction Free = predict(R50, "fused_adam",
                            {{"launch_cost", "0us"}, {"traffic", "0.000001"}});
  CHECK(Free.Predicted <= P.Predicted);
  CHECK(Free.Predicted > P.Baseline / 2);
}

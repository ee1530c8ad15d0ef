// The what-if library (src/whatif) used as a library: no command line, no
// printing; what stops a call comes back as a value.

#include "compiler/Compiler.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#include "whatif/Compare.h"
#include "whatif/JobLoad.h"
#include "whatif/JobPredict.h"
#include "whatif/Load.h"
#include "whatif/MemoryReport.h"
#include "whatif/Replay.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

using namespace dd;

namespace {

std::string data(const std::string &Rel) {
  return std::string(DD_TEST_DATA) + "/" + Rel;
}

const char *Resnet = "kineto/resnet50_v100_workers0.pt.trace.json.gz";

whatif::Replayed replayed(const std::string &Rel) {
  whatif::Result<whatif::Replayed> L =
      whatif::loadReplayed({data(Rel), {}, "", false, true});
  REQUIRE(!L.Failed);
  REQUIRE(L.Value);
  return std::move(*L.Value);
}

compiler::CompiledModel compile(const std::string &Text) {
  SourceManager SM;
  DiagEngine Diags;
  auto M = compiler::compileSource("test.dd", Text, {}, SM, Diags);
  REQUIRE(M);
  return std::move(*M);
}

} // namespace

TEST_CASE("whatif: a trace loads and replays exactly, as values") {
  whatif::Replayed R = replayed(Resnet);
  auto Rp = whatif::replay(R.G, R.Chosen);
  REQUIRE(Rp);
  REQUIRE(Rp->Iterations.size() == 1);
  const whatif::IterationReplay &It = Rp->Iterations.front();
  CHECK(It.Measured > 0);
  // Exact calibration: the unchanged graph replays what the trace measured.
  CHECK(It.Replayed == It.Measured);
  CHECK(It.error() == 0.0);
  CHECK(It.Path.Length > 0);
  CHECK(It.ReplayedBusy > 0);
  CHECK(It.ReplayedBusy <= It.Replayed);
}

TEST_CASE("whatif: what stops a load is a value naming the file") {
  std::string Missing = data("no/such/trace.json.gz");
  whatif::Result<whatif::Replayed> L =
      whatif::loadReplayed({Missing, {}, "", false, false});
  CHECK(!L.Value);
  REQUIRE(L.Failed);
  CHECK(L.Failed->File == Missing);
  CHECK(!L.Failed->Message.empty());
  CHECK(!L.Failed->Internal);
  // An iteration the trace does not have.
  L = whatif::loadReplayed({data(Resnet), {}, "99", false, false});
  REQUIRE(L.Failed);
  CHECK(L.Failed->Message.find("no iteration 99") != std::string::npos);
}

TEST_CASE("whatif: memory of a replay, and a trace without device records") {
  whatif::Replayed R = replayed(Resnet);
  whatif::MemoryReport M =
      whatif::reportMemory(R.In.Trace, R.G, data(Resnet), "", 3);
  REQUIRE(!M.Failed);
  REQUIRE(M.Devices.size() == 1);
  const whatif::DeviceReport &D = M.Devices.front();
  CHECK(D.Measured.Bytes > 0);
  CHECK(D.Top.size() == 3);
  CHECK(std::abs(D.error()) < 0.01);
  whatif::MemoryReport None =
      whatif::reportMemory(R.In.Trace, R.G, data(Resnet), "99", 3);
  REQUIRE(None.Failed);
  CHECK(None.Failed->File == data(Resnet));
}

TEST_CASE("whatif: compare two runs, with and without a model") {
  const char *B = "kineto/resnet50_2021-01_workers0.pt.trace.json.gz";
  const char *A =
      "kineto/resnet50_2021-01_profiler_api_workers4.pt.trace.json.gz";
  whatif::Replayed Before = replayed(B), After = replayed(A);
  whatif::Comparison C = whatif::compare(Before, data(B), After, data(A),
                                         nullptr, {}, whatif::RunMemory());
  CHECK(C.Change == whatif::relative(C.After.Measured, C.Before.Measured));
  CHECK(!C.Run);
  auto Sum = std::find_if(C.Rows.begin(), C.Rows.end(), [](const auto &R) {
    return R.Label == "GPU work (sum)";
  });
  REQUIRE(Sum != C.Rows.end());
  CHECK(Sum->Before > 0);
  CHECK(Sum->After > 0);
  // A model that halves every kernel: the GPU sum predicted is half.
  compiler::CompiledModel M = compile("shrink (select kernel) by 2\n");
  whatif::Comparison P = whatif::compare(Before, data(B), After, data(A),
                                         &M.Program, {}, whatif::RunMemory());
  REQUIRE(P.Run);
  REQUIRE(P.Run->ok());
  REQUIRE(P.Predicted);
  CHECK(P.Predicted->Predicted < P.Predicted->BaselineSteady);
  auto PSum = std::find_if(P.Rows.begin(), P.Rows.end(), [](const auto &R) {
    return R.Label == "GPU work (sum)";
  });
  REQUIRE(PSum != P.Rows.end());
  CHECK(PSum->Predicted < PSum->Before);
}

TEST_CASE("whatif: a job's ranks load and a model runs on them") {
  std::vector<std::string> Paths;
  for (const auto &E :
       std::filesystem::directory_iterator(data("param/dlrm_8rank")))
    Paths.push_back(E.path().string());
  std::sort(Paths.begin(), Paths.end());
  whatif::Result<whatif::LoadedRanks> L =
      whatif::loadRanks({Paths, {}, "exact", ""});
  REQUIRE(!L.Failed);
  REQUIRE(L.Value);
  CHECK(L.Value->Graphs.size() == 8);
  CHECK(L.Value->RanksFromTraces);
  compiler::CompiledModel M = compile("shrink (select comm) by 2\n");
  whatif::JobModelRequest Req;
  Req.Program = &M.Program;
  Req.ModelPath = "test.dd";
  whatif::JobPrediction P = whatif::predictJob(std::move(*L.Value), Req);
  REQUIRE(!P.Failed);
  REQUIRE(P.Predicted.size() == 1);
  CHECK(P.Predicted[0].JobSteady < P.Replayed[0].JobSteady);
  CHECK(P.Predicted[0].Ranks.size() == 8);
  // A rank missing: the load stops on it, and says which.
  Paths.push_back(data("param/dlrm_8rank/worker8_step_12.pt.trace.json.gz"));
  whatif::Result<whatif::LoadedRanks> Bad =
      whatif::loadRanks({Paths, {}, "exact", ""});
  REQUIRE(Bad.Failed);
  CHECK(Bad.Failed->File == Paths.back());
}

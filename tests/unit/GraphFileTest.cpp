// A graph written and read back (graph/GraphFile.h, job/RankFile.h): every
// column, table and simulated time the same; damaged bytes an error, never
// a crash or a graph that breaks later.

#include "graph/GraphFile.h"
#include "builder/GraphBuilder.h"
#include "job/RankFile.h"
#include "sim/Simulator.h"
#include "support/ByteStream.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>

#include <random>
#include <string>

using namespace dd;

namespace {

graph::Graph built(const char *Rel) {
  auto T = trace::readTrace(std::string(DD_TEST_DATA) + "/" + Rel);
  REQUIRE(static_cast<bool>(T));
  auto G = graph::buildGraph(*T, graph::BuildOptions(), nullptr);
  REQUIRE(static_cast<bool>(G));
  std::string Error;
  REQUIRE(G->finalize(&Error));
  return std::move(*G);
}

std::string encode(const graph::Graph &G) {
  ByteWriter W;
  graph::writeGraph(G, W);
  return std::move(W.bytes());
}

void checkSame(const graph::Graph &A, const graph::Graph &B) {
#define GRAPH_COLUMN(Member, Encoding, Bound)                                  \
  CHECK_MESSAGE(A.Member == B.Member, #Member);
#include "graph/GraphColumns.def"
  REQUIRE(A.Strings.size() == B.Strings.size());
  for (StringId S = 0; S < A.Strings.size(); ++S)
    CHECK(A.Strings.str(S) == B.Strings.str(S));
  REQUIRE(A.Resources.size() == B.Resources.size());
  for (size_t R = 0; R < A.Resources.size(); ++R) {
    CHECK(A.Resources[R].Name == B.Resources[R].Name);
    CHECK(A.Resources[R].Kind == B.Resources[R].Kind);
    CHECK(A.Resources[R].Id == B.Resources[R].Id);
    CHECK(A.Resources[R].Device == B.Resources[R].Device);
    CHECK(A.Resources[R].TypicalGap == B.Resources[R].TypicalGap);
  }
  REQUIRE(A.Edges.size() == B.Edges.size());
  for (size_t E = 0; E < A.Edges.size(); ++E) {
    CHECK(A.Edges[E].Src == B.Edges[E].Src);
    CHECK(A.Edges[E].Dst == B.Edges[E].Dst);
    CHECK(A.Edges[E].Kind == B.Edges[E].Kind);
    CHECK(A.Edges[E].At == B.Edges[E].At);
    CHECK(A.Edges[E].Delay == B.Edges[E].Delay);
  }
  REQUIRE(A.Layers.size() == B.Layers.size());
  for (size_t L = 0; L < A.Layers.size(); ++L) {
    CHECK(A.Layers[L].Name == B.Layers[L].Name);
    CHECK(A.Layers[L].Parent == B.Layers[L].Parent);
  }
  REQUIRE(A.Iterations.size() == B.Iterations.size());
  for (size_t I = 0; I < A.Iterations.size(); ++I) {
    CHECK(A.Iterations[I].Label == B.Iterations[I].Label);
    CHECK(A.Iterations[I].MeasuredBegin == B.Iterations[I].MeasuredBegin);
    CHECK(A.Iterations[I].End.Task == B.Iterations[I].End.Task);
  }
  CHECK(A.Origin == B.Origin);
  CHECK(A.CommGroups.size() == B.CommGroups.size());
  CHECK(A.CommGroupOf.size() == B.CommGroupOf.size());
  auto SA = sim::simulate(A), SB = sim::simulate(B);
  REQUIRE(static_cast<bool>(SA));
  REQUIRE(static_cast<bool>(SB));
  CHECK(SA->Start == SB->Start);
  CHECK(SA->End == SB->End);
}

} // namespace

TEST_CASE("a built graph reads back the same, and replays the same") {
  for (const char *Rel : {"param/dlrm_8rank/worker0_step_12.pt.trace.json.gz",
                          "hta/ddp2_a100_nccl_data.json.gz"}) {
    CAPTURE(Rel);
    graph::Graph G = built(Rel);
    std::string Bytes = encode(G);
    ByteReader R(Bytes);
    auto Back = graph::readGraph(R);
    REQUIRE(static_cast<bool>(Back));
    CHECK(R.atEnd());
    checkSame(G, *Back);
    // Written again, the same bytes: nothing is lost or reordered.
    CHECK(encode(*Back) == Bytes);
  }
}

TEST_CASE("damaged graph bytes are an error or a graph that replays") {
  graph::Graph G = built("param/dlrm_8rank/worker1_step_12.pt.trace.json.gz");
  std::string Bytes = encode(G);
  std::mt19937 Rng(38);
  size_t Errors = 0;
  for (int Trial = 0; Trial < 400; ++Trial) {
    std::string Bad = Bytes;
    if (Trial % 4 == 0) {
      Bad.resize(Rng() % Bad.size());
    } else {
      for (int K = 0; K < 1 + Trial % 3; ++K)
        Bad[Rng() % Bad.size()] ^= static_cast<char>(1 + Rng() % 255);
    }
    ByteReader R(Bad);
    auto Back = graph::readGraph(R);
    if (!Back) {
      CHECK(!llvm::toString(Back.takeError()).empty());
      ++Errors;
      continue;
    }
    // What reads back is a graph every id of which is in bounds: it
    // replays, or the simulator refuses it with an error.
    auto S = sim::simulate(*Back);
    if (!S)
      llvm::consumeError(S.takeError());
  }
  CHECK(Errors > 100);
}

TEST_CASE("a byte reader refuses counts its bytes cannot hold") {
  ByteWriter W;
  W.uvar(1'000'000'000);
  ByteReader R(W.bytes());
  CHECK(R.count() == 0);
  CHECK(R.failed());
  CHECK(R.error().find("a count of 1000000000 items") != std::string::npos);
  ByteWriter V;
  for (int64_t X : {int64_t(0), int64_t(-1), int64_t(1), INT64_MIN, INT64_MAX})
    V.svar(X);
  ByteReader S(V.bytes());
  for (int64_t X : {int64_t(0), int64_t(-1), int64_t(1), INT64_MIN, INT64_MAX})
    CHECK(S.svar() == X);
  CHECK(S.atEnd());
}

TEST_CASE("a rank file names its version and refuses others") {
  job::ReducedRank R;
  R.Source = "rank0.json.gz";
  R.Rank = 3;
  R.WorldSize = 8;
  R.Calibration = "exact";
  R.Warnings = {"a warning"};
  R.G = built("param/dlrm_8rank/worker3_step_12.pt.trace.json.gz");
  auto Bytes = job::encodeRankFile(R);
  REQUIRE(static_cast<bool>(Bytes));
  CHECK(job::isRankFile(*Bytes));
  CHECK(static_cast<uint8_t>((*Bytes)[8]) == job::RankFileVersion);
  CHECK(!job::isRankFile("{\"traceEvents\": []}"));
}

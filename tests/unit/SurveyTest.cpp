// The light first pass over a Kineto document (trace/Survey.h) and the
// documents it cuts out of one: where each element lies, when it starts,
// what sort it is, read as the Kineto reader reads the same text.

#include "TraceDump.h"

#include "support/FileIO.h"
#include "support/InputStream.h"
#include "trace/Survey.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace dd;
using namespace dd::trace;

namespace {

llvm::Expected<TraceSurvey> surveyOf(std::string_view Doc,
                                     unsigned Threads = 1) {
  auto In = InputStream::fromMemory(Doc);
  return surveyKinetoJson(*In, nullptr, Threads);
}

std::string excerptOf(std::string_view Doc, const TraceSurvey &S,
                      llvm::function_ref<bool(size_t)> Keep) {
  auto In = InputStream::fromMemory(Doc);
  auto E = excerptKinetoJson(*In, Doc.size(), S, Keep);
  REQUIRE_MESSAGE(static_cast<bool>(E), llvm::toString(E.takeError()));
  return std::move(*E);
}

std::vector<std::string> dumpOf(std::string_view Doc) {
  auto T = parseKinetoJson(Doc, "t.json");
  REQUIRE_MESSAGE(static_cast<bool>(T), llvm::toString(T.takeError()));
  return dd::test::dumpTrace(*T);
}

// Strings that hold braces, brackets, quotes and escapes; a name whose
// escape spells a marker; keys repeated inside "args"; a time as a string
// and one that is no time; metadata, memory and flow events.
const char *const Tricky = R"({"schemaVersion": 1,
 "deviceProperties": [{"id": 0, "name": "GPU \"A\" {0}"}],
 "traceEvents": [
  {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "main {x} ]["}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 2, "ts": 100.5, "dur": 50},
  {"ph": "X", "cat": "kernel", "name": "k}{\"],[", "pid": 0, "tid": 7, "ts": 120, "dur": 5, "args": {"ts": 1, "name": "ProfilerStep#9", "correlation": 4}},
  {"ph": "i", "name": "[memory]", "pid": 1, "tid": 2, "ts": 101, "args": {"Bytes": 4}},
  {"name": "\u0050rofiler\u0053tep#4", "ph": "X", "cat": "cpu_op", "ts": "160", "dur": 10, "pid": 1, "tid": 2},
  {"ph": "f", "cat": "ac2g", "id": 1, "pid": 0, "tid": 7, "ts": 120, "bp": "e"},
  {"ph": "X", "cat": "cpu_op", "name": "PyTorch op", "pid": 1, "tid": 2, "ts": 130, "dur": 2},
  {"p\u0068": "X", "a long key, \u0041": 0, "cat": "cpu_op", "name": "keys", "pid": 1, "tid": 2, "t\u0073": 140, "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "late ts", "pid": 1, "tid": 2, "ts": "soon", "dur": 2}
 ],
 "traceName": "t {]"})";

} // namespace

TEST_CASE("survey: each element's place, start and sort") {
  auto S = surveyOf(Tricky);
  REQUIRE_MESSAGE(static_cast<bool>(S), llvm::toString(S.takeError()));
  REQUIRE(S->numElements() == 9);
  std::string_view Doc = Tricky;
  for (size_t I = 0; I < S->numElements(); ++I) {
    CAPTURE(I);
    CHECK(Doc[S->Offset[I]] == '{');
  }
  using F = TraceSurvey::Flag;
  auto Has = [&](size_t I, uint8_t Flag) { return (S->Flags[I] & Flag) != 0; };
  CHECK(Has(0, F::Always));
  CHECK_FALSE(Has(0, F::Timed));
  CHECK(Has(1, F::StepMarker));
  CHECK(Has(1, F::Timed));
  CHECK(S->Start[1] == 100500);
  CHECK_FALSE(Has(1, F::Device));
  CHECK(Has(2, F::Device)); // a kernel; "ts" and the name in args are not its
  CHECK(S->Start[2] == 120000);
  CHECK_FALSE(Has(2, F::StepMarker));
  CHECK(Has(3, F::MemoryRecord)); // a memory record
  CHECK_FALSE(Has(3, F::Always));
  CHECK(Has(4, F::StepMarker)); // its escape spells ProfilerStep#4
  CHECK(S->Start[4] == 160000);
  CHECK(Has(5, F::Device)); // a flow point
  CHECK(S->Flags[6] == F::Timed);
  CHECK(S->Flags[7] == F::Timed); // keys with escapes, read as the reader does
  CHECK(S->Start[7] == 140000);
  CHECK(Has(8, F::Always)); // no time: the reader says what is wrong
  CHECK_FALSE(Has(8, F::Timed));
  CHECK_FALSE(S->AnyPaired);

  REQUIRE(S->Markers.size() == 2);
  CHECK(S->Markers[0].Element == 1);
  CHECK(S->Markers[0].Start == 100500);
  CHECK(S->Markers[0].Dur == 50000);
  CHECK(S->Markers[1].Element == 4);
  CHECK(S->Markers[1].Dur == 10000);

  REQUIRE(S->Fields.size() == 3);
  CHECK(S->Fields[0].first == "schemaVersion");
  CHECK(S->Fields[1].second == R"([{"id": 0, "name": "GPU \"A\" {0}"}])");
  CHECK(S->Fields[2].first == "traceName");
  CHECK(S->Fields[2].second == R"("t {]")");
}

TEST_CASE("survey: begin and end events are noted") {
  const char *Doc = R"({"traceEvents": [
    {"ph": "B", "name": "a", "pid": 1, "tid": 1, "ts": 1},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 2}]})";
  auto S = surveyOf(Doc);
  REQUIRE(static_cast<bool>(S));
  CHECK(S->AnyPaired);
  CHECK((S->Flags[1] & TraceSurvey::Paired) != 0);
}

TEST_CASE("survey: what the reader refuses, the survey does not pass") {
  for (const char *Doc :
       {R"({"traceEvents": [1, 2]})", R"({"traceEvents": [{"ph": "X",)",
        R"({"schemaVersion": 1})", R"([{"ph": "X", "ts": }])"}) {
    CAPTURE(Doc);
    auto S = surveyOf(Doc);
    CHECK_FALSE(static_cast<bool>(S));
    if (!S)
      llvm::consumeError(S.takeError());
  }
}

TEST_CASE("excerpt: a document of some elements reads as those elements") {
  auto S = surveyOf(Tricky);
  REQUIRE(static_cast<bool>(S));
  // Every element but the one without a time: the trace of the document
  // without it.
  std::string Some = excerptOf(Tricky, *S, [](size_t I) { return I != 8; });
  std::string Without = Tricky;
  size_t Cut = Without.find(R"(,
  {"ph": "X", "cat": "cpu_op", "name": "late ts")");
  REQUIRE(Cut != std::string::npos);
  Without.erase(Cut, Without.find("\n ]", Cut) - Cut);
  CHECK(dumpOf(Some) == dumpOf(Without));
  // The reader reads escaped keys as the survey does.
  auto W = parseKinetoJson(Without, "t.json");
  REQUIRE(static_cast<bool>(W));
  bool Found = false;
  for (EventId E = 0; E < W->numEvents(); ++E)
    if (W->name(E) == "keys") {
      Found = true;
      CHECK(W->Start[E] == 140000);
      CHECK(W->Kind[E] == EventKind::CpuOp);
    }
  CHECK(Found);
  // Runs of one and two elements; none at all.
  std::string Runs = excerptOf(Tricky, *S, [](size_t I) {
    return I == 1 || I == 2 || I == 4 || I == 6;
  });
  auto T = parseKinetoJson(Runs, "t.json");
  REQUIRE(static_cast<bool>(T));
  CHECK(T->numEvents() == 4);
  CHECK(T->Flows.empty());
  std::string None = excerptOf(Tricky, *S, [](size_t) { return false; });
  CHECK(None.find(R"("traceEvents":[])") != std::string::npos);
  // The last element, and what follows the array, cut off cleanly.
  std::string Last = excerptOf(Tricky, *S, [](size_t I) { return I == 8; });
  CHECK(Last.find(R"("dur": 2}])") != std::string::npos);
}

TEST_CASE("excerpt: every fixture, kept whole, reads as the fixture") {
  // Offsets, runs and the ranges between them on real traces, read again
  // from memory and from an uncompressed file.
  std::vector<std::string> Files;
  for (const auto &E :
       std::filesystem::recursive_directory_iterator(DD_TEST_DATA))
    if (E.path().string().size() > 8 &&
        E.path().string().substr(E.path().string().size() - 8) == ".json.gz")
      Files.push_back(E.path().string());
  std::sort(Files.begin(), Files.end());
  REQUIRE(Files.size() >= 10);
  size_t Compared = 0;
  for (const std::string &Path : Files) {
    CAPTURE(Path);
    auto Doc = readFileMaybeGzip(Path);
    if (!Doc) {
      llvm::consumeError(Doc.takeError());
      continue;
    }
    auto Whole = parseKinetoJson(*Doc, Path);
    if (!Whole) {
      llvm::consumeError(Whole.takeError());
      continue;
    }
    for (unsigned Threads : {1u, 2u}) {
      auto S = surveyOf(*Doc, Threads);
      REQUIRE_MESSAGE(static_cast<bool>(S), llvm::toString(S.takeError()));
      CHECK(S->numElements() >= Whole->numEvents());
      std::string All = excerptOf(*Doc, *S, [](size_t) { return true; });
      CHECK(dumpOf(All) == dd::test::dumpTrace(*Whole));
    }
    ++Compared;
  }
  CHECK(Compared >= 10);

  // From a file: the elements are read again with pread, in blocks.
  auto Doc = readFileMaybeGzip(std::string(DD_TEST_DATA) +
                               "/hta/v100_ns_resolution_rank0.json.gz");
  REQUIRE(static_cast<bool>(Doc));
  std::string Plain =
      (std::filesystem::temp_directory_path() / "ddscript_survey_test.json")
          .string();
  std::ofstream(Plain, std::ios::binary) << *Doc;
  auto In = InputStream::open(Plain);
  REQUIRE(static_cast<bool>(In));
  auto S = surveyKinetoJson(**In);
  REQUIRE(static_cast<bool>(S));
  auto Again = InputStream::open(Plain);
  REQUIRE(static_cast<bool>(Again));
  auto All = excerptKinetoJson(**Again, Doc->size(), *S,
                               [](size_t I) { return I % 3 != 1; });
  REQUIRE(static_cast<bool>(All));
  auto FromMemory = excerptOf(*Doc, *S, [](size_t I) { return I % 3 != 1; });
  CHECK(*All == FromMemory);
  std::filesystem::remove(Plain);
}

TEST_CASE("survey: an element larger than a window") {
  // The walker reads an element that ends past its window again, in a
  // larger one: the survey must not count it before it is whole. A name of
  // 3 MB and args of 2 MB, with "}, {" inside both.
  std::string Big = R"({"schemaVersion": 1, "traceEvents": [)";
  for (int I = 0; I < 2000; ++I)
    Big +=
        R"({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": )" +
        std::to_string(I) + R"(, "dur": 1},)" + "\n";
  std::string Filler(3u << 20, 'x');
  for (size_t I = 1000; I + 10 < Filler.size(); I += 100000)
    Filler.replace(I, 5, "}, {a");
  Big += R"({"ph": "X", "cat": "cpu_op", "name": ")" + Filler +
         R"(", "pid": 1, "tid": 1, "ts": 5000, "dur": 1, "args": {"a": [)";
  for (int I = 0; I < 200000; ++I)
    Big += R"({"k": 1}, )";
  Big += R"({"k": 2}]}},)"
         "\n";
  for (int I = 0; I < 2000; ++I)
    Big +=
        R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" +
        std::to_string(6000 + I) + R"(, "dur": 1},)" + "\n";
  Big +=
      R"({"ph": "M", "name": "thread_name", "pid": 1, "tid": 1}], "traceName": "t"})";
  for (unsigned Threads : {1u, 2u}) {
    CAPTURE(Threads);
    auto S = surveyOf(Big, Threads);
    REQUIRE_MESSAGE(static_cast<bool>(S), llvm::toString(S.takeError()));
    CHECK(S->numElements() == 4002);
    CHECK(S->Start[2000] == 5000000);
    CHECK(dumpOf(excerptOf(Big, *S, [](size_t) { return true; })) ==
          dumpOf(Big));
  }
}

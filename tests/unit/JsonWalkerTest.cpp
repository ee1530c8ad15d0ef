// The Kineto reader parses a trace window by window (trace/JsonWalker).
// Whatever the window size, the model must be the one a single pass over
// the whole text gives, and errors must be the same errors at the same
// places: windows that end inside strings, inside nested values, or before
// an element larger than themselves are the cases that matter.

#include "TraceDump.h"

#include "support/InputStream.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace dd;
using namespace dd::trace;

namespace {

/// One thread: the walk as it is (ThreadedReaderTest.cpp compares the
/// threaded one with it).
llvm::Expected<Trace> readWith(std::string_view Json, size_t Window,
                               unsigned Threads = 1) {
  auto In = InputStream::fromMemory(Json);
  return readKinetoJson(*In, "test.json", nullptr, Window, Threads);
}

/// Reads \p Json in one window and in each of \p Windows, and checks that
/// all give the same model (or the same error).
void checkWindows(const std::string &Json,
                  std::initializer_list<size_t> Windows) {
  auto Whole = readWith(Json, Json.size() + 1024);
  std::string WholeError = Whole ? "" : llvm::toString(Whole.takeError());
  for (size_t W : Windows) {
    CAPTURE(W);
    auto T = readWith(Json, W);
    if (!WholeError.empty()) {
      REQUIRE_FALSE(static_cast<bool>(T));
      CHECK(llvm::toString(T.takeError()) == WholeError);
      continue;
    }
    if (!T)
      FAIL(llvm::toString(T.takeError()));
    test::checkSameTrace(*Whole, *T);
    CHECK(T->Warnings == Whole->Warnings);
    CHECK(T->SkippedCategories == Whole->SkippedCategories);
    CHECK(T->SchemaVersion == Whole->SchemaVersion);
  }
}

std::string kernel(const std::string &Name, int Ts, const char *Args = "") {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + Name +
         R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(Ts) +
         R"(, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": )" +
         std::to_string(Ts) + Args + "}}";
}

/// Events whose text holds the pattern windows are cut at ("}" "," "{")
/// inside strings and nested values, an element larger than the small
/// windows, B/E pairs, and top-level values after the events.
std::string adversarial() {
  std::string J = R"J({"schemaVersion": 1, "traceEvents": [)J";
  J += kernel(R"(tricky},{\"ph\": \"X\"}, {x)", 10) + ",\n";
  J += kernel("nested", 20,
              R"J(, "grid": [{"a": 1}, {"b": 2}], "x": {"y": {}})J") +
       ",";
  J +=
      R"J({"ph": "B", "cat": "cpu_op", "name": "outer}, {", "pid": 1, "tid": 1, "ts": 30},)J";
  J += kernel(std::string(3000, 'k'), 40) + " , \n ";
  for (int I = 0; I < 40; ++I)
    J += kernel("k" + std::to_string(I), 50 + I) + ",";
  J += R"J({"ph": "E", "pid": 1, "tid": 1, "ts": 95},)J";
  J +=
      R"J({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 96,
          "args": {"Addr": 123, "Bytes": 512, "Total Allocated": 512, "Device Type": 1, "Device Id": 0}},)J";
  J +=
      R"J({"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "thread 1 (main)"}})J";
  J +=
      R"J(], "deviceProperties": [{"id": 0, "name": "G},{PU", "numSms": 4}, {"id": 1, "name": "x"}],
          "baseTimeNanoseconds": 1000})J";
  return J;
}

} // namespace

TEST_CASE("windows: the model does not depend on the window size") {
  std::string J = adversarial();
  checkWindows(J, {16, 64, 100, 128, 257, 1000, 4096});
  auto T = readWith(J, 64);
  REQUIRE(static_cast<bool>(T));
  CHECK(T->numEvents() == 44);
  CHECK(T->Devices.size() == 2);
  CHECK(T->Devices[0].Name == "G},{PU");
  CHECK(T->BaseTimeNs == 1000);
  CHECK(T->Memory.size() == 1);
}

TEST_CASE("windows: a bare array of events") {
  std::string J = "[";
  for (int I = 0; I < 30; ++I)
    J += (I ? "," : "") + kernel("k},{" + std::to_string(I), I);
  J += "]";
  checkWindows(J, {16, 50, 200, 999});
}

// The first window of the array's data starts the walker's buffer: the byte
// borrowed before it is the buffer's slack, reached without an index that
// wraps around (UBSan reported a pointer overflow; .ci/sanitize, the kineto
// fuzz target).
TEST_CASE("windows: the array's first window at the start of the buffer") {
  std::string J =
      R"J({"traceEvents": [{"ph": "X", "cat": "frame", "name": "draw", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]})J";
  checkWindows(J, {16, 64, 100});
}

TEST_CASE("windows: errors are the same, at the same line") {
  std::string Good = adversarial();
  // A broken event deep in the array.
  std::string Broken = Good;
  size_t At = Broken.find(R"J("name": "k20")J");
  REQUIRE(At != std::string::npos);
  Broken.insert(At, "\n,,");
  checkWindows(Broken, {16, 64, 300, 4096});
  auto E = readWith(Broken, 64);
  REQUIRE_FALSE(static_cast<bool>(E));
  // Named by the line where the broken event starts.
  size_t Start = Broken.rfind('{', At);
  std::string Line =
      "line " +
      std::to_string(1 +
                     std::count(Broken.begin(), Broken.begin() + Start, '\n')) +
      ",";
  CHECK(llvm::toString(E.takeError()).find(Line) != std::string::npos);
  // Cut short anywhere: inside a string, a number, between events.
  for (size_t Cut : {Good.size() / 3, Good.size() / 2 + 7, Good.size() - 20,
                     Good.size() - 2}) {
    CAPTURE(Cut);
    checkWindows(Good.substr(0, Cut), {16, 64, 4096});
    auto T = readWith(Good.substr(0, Cut), 64);
    REQUIRE_FALSE(static_cast<bool>(T));
    CHECK(llvm::toString(T.takeError()).find("truncated") != std::string::npos);
  }
}

TEST_CASE("windows: real traces read the same in small windows") {
  for (const char *Name :
       {"kineto/resnet50_2021-01_workers0.pt.trace.json.gz",
        "hta/ddp2_a100_nccl_data.json.gz",
        "param/dlrm_8rank/worker0_step_12.pt.trace.json.gz"}) {
    CAPTURE(Name);
    std::string Path = std::string(DD_TEST_DATA) + "/" + Name;
    auto In = InputStream::open(Path);
    REQUIRE(static_cast<bool>(In));
    auto Json = (*In)->readAll();
    REQUIRE(static_cast<bool>(Json));
    auto Whole = readWith(*Json, Json->size() + 1024);
    REQUIRE(static_cast<bool>(Whole));
    for (size_t W : {size_t(4096), size_t(1) << 20}) {
      CAPTURE(W);
      auto Again = InputStream::open(Path);
      REQUIRE(static_cast<bool>(Again));
      auto T = readKinetoJson(**Again, Path, nullptr, W, 1);
      REQUIRE(static_cast<bool>(T));
      test::checkSameTrace(*Whole, *T);
    }
  }
}

TEST_CASE(
    "windows: a stale closing bracket after the last window is not read") {
  // simdjson looks at the byte after a document that ends in ']'. After
  // the last window that byte was whatever an earlier, longer window had
  // left in the buffer, and when it was a ']' a valid trace failed ("the
  // JSON ends early", at line 1), now and then. Elements full of ']' and
  // tails of every length put one there for some window sizes.
  std::string Args = R"J(, "grid": [[1]], "block": [[[2]]], "x": ")J" +
                     std::string(60, ']') + "\"";
  for (int N = 2; N <= 40; N += 3) {
    CAPTURE(N);
    std::string J = R"({"traceEvents": [)";
    for (int I = 0; I < 3; ++I)
      J += (I ? "," : "") + kernel("k" + std::to_string(I), I, Args.c_str());
    J += R"(], "pad": ")" + std::string(N * 7, 'p') +
         R"(", "baseTimeNanoseconds": 7})";
    auto Whole = readWith(J, J.size() + 1024);
    REQUIRE(static_cast<bool>(Whole));
    for (size_t W = 16; W < J.size(); W += 5) {
      CAPTURE(W);
      auto T = readWith(J, W);
      if (!T)
        FAIL(llvm::toString(T.takeError()));
      test::checkSameTrace(*Whole, *T);
      for (unsigned Threads : {2u, 4u}) {
        CAPTURE(Threads);
        auto P = readWith(J, W, Threads);
        if (!P)
          FAIL(llvm::toString(P.takeError()));
        test::checkSameTrace(*Whole, *P);
      }
    }
  }
}

TEST_CASE("windows: a string left open after the array is refused in any "
          "window") {
  // Found by dd_fuzz_kineto: after "traceEvents" closes, a top-level value
  // whose quotes do not pair. The whole read refused it (the last window
  // held both), 64-byte windows read it.
  std::string Path = std::string(DD_TEST_DATA) +
                     "/../fuzz/corpus/kineto/unclosed_string_after_array.json";
  auto In = InputStream::open(Path);
  REQUIRE(static_cast<bool>(In));
  auto Text = (*In)->readAll(0);
  REQUIRE(static_cast<bool>(Text));
  for (size_t W : {size_t(64), size_t(256), size_t(1024), size_t(100000)}) {
    CAPTURE(W);
    for (unsigned Threads : {1u, 2u}) {
      CAPTURE(Threads);
      auto T = readWith(*Text, W, Threads);
      REQUIRE_FALSE(static_cast<bool>(T));
      llvm::consumeError(T.takeError());
    }
  }
}

// Reading a Kineto trace on several threads (trace/JsonWalkerThreads.cpp)
// must give the trace one thread gives: every column, every string and
// track id, the warnings, or the same error at the same line and column.
// One thread is the reference; windows are made small so that many
// windows, and pieces of windows, are in flight at once, and so that the
// threaded walk's guesses about where windows end are often wrong.

#include "TraceDump.h"

#include "support/InputStream.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

using namespace dd;
using namespace dd::trace;

namespace {

/// A trace or the error that reading it gave.
struct Reading {
  std::optional<Trace> T;
  std::string Error;
};

Reading take(llvm::Expected<Trace> T) {
  Reading R;
  if (T)
    R.T.emplace(std::move(*T));
  else
    R.Error = llvm::toString(T.takeError());
  return R;
}

Reading readJson(const std::string &Json, size_t Window, unsigned Threads) {
  auto In = InputStream::fromMemory(Json);
  return take(readKinetoJson(*In, "test.json", nullptr, Window, Threads));
}

Reading readFile(const std::string &Path, size_t Window, unsigned Threads) {
  auto In = InputStream::open(Path);
  if (!In)
    return take(In.takeError());
  return take(readKinetoJson(**In, Path, nullptr, Window, Threads));
}

void checkSame(const Reading &Ref, const Reading &Got) {
  if (!Ref.T) {
    CHECK_FALSE(Got.T.has_value());
    CHECK(Got.Error == Ref.Error);
    return;
  }
  if (!Got.T)
    FAIL(Got.Error);
  CHECK(test::firstDifference(*Ref.T, *Got.T) == "");
}

/// Reads with one thread and with 2 and 4, in each of \p Windows:
/// Read(window, threads).
template <typename ReadFn>
void checkThreadsWith(ReadFn Read, const std::vector<size_t> &Windows) {
  for (size_t W : Windows) {
    CAPTURE(W);
    Reading Ref = Read(W, 1u);
    for (unsigned Threads : {2u, 4u}) {
      CAPTURE(Threads);
      checkSame(Ref, Read(W, Threads));
    }
  }
}

/// Reads \p Json with one thread and with 2 and 4, in each of \p Windows.
void checkThreads(const std::string &Json,
                  std::initializer_list<size_t> Windows) {
  checkThreadsWith(
      [&](size_t W, unsigned Threads) { return readJson(Json, W, Threads); },
      Windows);
}

std::string kernel(const std::string &Name, int Ts, const char *Args = "") {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + Name +
         R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(Ts) +
         R"(, "dur": 3, "args": {"device": 0, "stream": 7, "correlation": )" +
         std::to_string(Ts) + Args + "}}";
}

std::string cpuOp(int I) {
  return R"({"ph": "X", "cat": "cpu_op", "name": "aten::op)" +
         std::to_string(I % 7) + R"(", "pid": 1, "tid": )" +
         std::to_string(1 + I % 3) + R"(, "ts": )" + std::to_string(100 + I) +
         R"(.5, "dur": 0.25, "args": {"External id": )" + std::to_string(I) +
         R"(, "Input Dims": [[1, 2], [3]], "Input type": ["float", "c10::\"Half\""]}})";
}

/// Events whose text holds the pattern windows and pieces are cut at ("}"
/// "," "{") inside strings and nested values, an element larger than small
/// windows, B/E pairs far apart, escapes, and top-level values after the
/// events, one of them with the pattern in a string.
std::string adversarial(int Copies) {
  std::string J = R"J({"schemaVersion": 1, "traceEvents": [)J";
  J +=
      R"J({"ph": "B", "cat": "cpu_op", "name": "outer}, {", "pid": 1, "tid": 1, "ts": 30},)J";
  for (int C = 0; C < Copies; ++C) {
    J += kernel(R"(tricky},{\"ph\": \"X\"}, {x)", 10 + C) + ",\n";
    J += kernel("nested", 20 + C,
                R"J(, "grid": [{"a": 1}, {"b": 2}], "x": {"y": {}})J") +
         ",";
    J += kernel(std::string(700, 'k'), 40 + C) + " , \n ";
    for (int I = 0; I < 12; ++I)
      J += cpuOp(C * 12 + I) + ",";
    J +=
        R"J({"ph": "s", "id": "a},{b", "pid": 1, "tid": 2, "ts": 41, "cat": "ac2g", "name": "x"},)J";
    J +=
        R"J({"ph": "f", "id": 7, "pid": 0, "tid": 7, "ts": 42, "cat": "ac2g", "name": "x", "bp": "e"},)J";
    J +=
        R"J({"ph": "python_function", "cat": "python_function", "name": "nn.Module: L\u00e9vy"},)J";
    J +=
        R"J({"ph": "X", "cat": "python_function", "name": "nn.Module: L\u00e9vy", "pid": 1, "tid": 1, "ts": 43, "dur": -1},)J";
    J +=
        R"J({"ph": "X", "cat": "mystery", "name": "m", "pid": "Spans", "tid": "x}, {y", "ts": 44, "dur": 1},)J";
  }
  // Escaped keys and values: simdjson unescapes them.
  J +=
      R"J({"ph": "X", "c\u0061t": "cpu_op", "n\u0061me": "esc\taped", "pid": "\u0031", "tid": 1, "ts": 90, "dur": 1},)J";
  J += R"J({"ph": "E", "pid": 1, "tid": 1, "ts": 95},)J";
  J += R"J({"ph": "E", "pid": 9, "tid": 9, "ts": 96},)J";
  J +=
      R"J({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 96,
          "args": {"Addr": 123, "Bytes": 512, "Total Allocated": 512, "Device Type": 1, "Device Id": 0}},)J";
  J +=
      R"J({"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "thread 1 (main)"}})J";
  J +=
      R"J(], "deviceProperties": [{"id": 0, "name": "G},{PU", "numSms": 4}, {"id": 1, "name": "x"}],
          "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
          "baseTimeNanoseconds": 1000})J";
  return J;
}

/// The JSON fixtures, plain and gzip-compressed, malformed ones included.
std::vector<std::string> fixtures() {
  std::vector<std::string> Paths;
  for (const auto &E :
       std::filesystem::recursive_directory_iterator(DD_TEST_DATA)) {
    std::string P = E.path().string();
    if (E.is_regular_file() &&
        (P.ends_with(".json") || P.ends_with(".json.gz")))
      Paths.push_back(P);
  }
  std::sort(Paths.begin(), Paths.end());
  return Paths;
}

} // namespace

TEST_CASE("threads: every fixture reads the same on 1, 2 and 4 threads") {
  std::vector<std::string> Paths = fixtures();
  REQUIRE(Paths.size() >= 25);
  for (const std::string &Path : Paths) {
    CAPTURE(Path);
    uint64_t Bytes = std::filesystem::file_size(Path);
    bool Compressed = Path.ends_with(".gz");
    // Small windows (many in flight, each cut into pieces) for all but the
    // largest files, whose default windows are many already.
    std::vector<size_t> Windows = {DefaultWindowBytes, size_t(256) << 10};
    if (Bytes * (Compressed ? 10 : 1) < (size_t(8) << 20))
      Windows.push_back(size_t(8) << 10);
    if (Bytes < 4096)
      Windows.push_back(64);
    checkThreadsWith(
        [&](size_t W, unsigned Threads) { return readFile(Path, W, Threads); },
        Windows);
  }
}

TEST_CASE("threads: windows whose guessed ends are wrong read the same") {
  std::string J = adversarial(6);
  checkThreads(J, {16, 64, 100, 128, 257, 1000, 2048, 4096, 100000});
  Reading T = readJson(J, 257, 4);
  REQUIRE(T.T.has_value());
  CHECK(T.T->numEvents() == 6 * 16 + 2);
  CHECK(T.T->name(T.T->numEvents() - 2) == "esc\taped");
  CHECK(T.T->track(T.T->numEvents() - 2).Pid == 1);
  CHECK(T.T->Devices.size() == 2);
  CHECK(T.T->Devices[0].Name == "G},{PU");
  CHECK(T.T->BaseTimeNs == 1000);
  CHECK(T.T->Memory.size() == 1);
  CHECK(T.T->Warnings.size() == 2);
  // A bare array of events.
  std::string Bare = "[";
  for (int I = 0; I < 300; ++I)
    Bare += (I ? "," : "") + (I % 5 ? cpuOp(I) : kernel("k},{", I));
  Bare += "]";
  checkThreads(Bare, {16, 50, 200, 999, 5000});
}

TEST_CASE("threads: the first error in document order is the one reported") {
  std::vector<std::string> Events;
  for (int I = 0; I < 400; ++I)
    Events.push_back(cpuOp(I));
  auto Join = [&](const std::vector<std::string> &E) {
    std::string J = "{\"traceEvents\": [\n";
    for (size_t I = 0; I < E.size(); ++I)
      J += (I ? ",\n" : "") + E[I];
    return J + "\n]}";
  };
  const std::string NotJson = R"({"ph": "X", "name": , "ts": 1})";
  const std::string BadTime =
      R"({"ph": "X", "cat": "cpu_op", "name": "t", "pid": 1, "tid": 1, "ts": "soon", "dur": 1})";
  const std::string NoTs =
      R"({"ph": "X", "cat": "cpu_op", "name": "n", "pid": 1, "tid": 1})";
  // Each kind of error early, another kind late: the early one wins, on
  // every thread count, as it does on one thread.
  struct Case {
    std::string Early, Late, Expect;
  };
  for (const Case &C : {Case{NotJson, BadTime, "invalid JSON"},
                        Case{BadTime, NotJson, "is not a time"},
                        Case{NoTs, NotJson, "has no \"ts\""},
                        Case{BadTime, NoTs, "is not a time"},
                        Case{"42", NotJson, "is not an object"}}) {
    CAPTURE(C.Early);
    std::vector<std::string> E = Events;
    E[40] = C.Early;
    E[350] = C.Late;
    std::string J = Join(E);
    for (size_t W : {size_t(256), size_t(2048), size_t(8192)}) {
      CAPTURE(W);
      Reading Ref = readJson(J, W, 1);
      REQUIRE_FALSE(Ref.T.has_value());
      CHECK(Ref.Error.find(C.Expect) != std::string::npos);
      // Named by the early event's line (line 1 is the opening brace).
      CHECK(Ref.Error.find("line 42,") != std::string::npos);
      for (unsigned Threads : {2u, 4u}) {
        CAPTURE(Threads);
        checkSame(Ref, readJson(J, W, Threads));
      }
    }
  }
  // An error between elements, and content cut short, late: the early
  // element still wins.
  std::vector<std::string> E = Events;
  E[40] = BadTime;
  std::string J = Join(E);
  size_t At = J.rfind("},\n{");
  std::string MissingComma = J.substr(0, At + 1) + "\n" + J.substr(At + 2);
  checkThreads(MissingComma, {256, 4096});
  checkThreads(J.substr(0, J.size() - 300), {256, 4096});
  Reading Cut = readJson(J.substr(0, J.size() - 300), 256, 4);
  CHECK(Cut.Error.find("is not a time") != std::string::npos);
  // Alone, the late errors are found too.
  checkThreads(Join(Events).substr(0, J.size() / 2), {256, 4096});
  checkThreads(MissingComma.replace(MissingComma.find("\"soon\""), 6, "1"),
               {256, 4096});
}

TEST_CASE("threads: readings are deterministic") {
  std::string J = adversarial(20);
  Reading A = readJson(J, 100, 4), B = readJson(J, 100, 4),
          C = readJson(J, 333, 2);
  REQUIRE(A.T.has_value());
  REQUIRE(B.T.has_value());
  REQUIRE(C.T.has_value());
  CHECK(test::firstDifference(*A.T, *B.T) == "");
  CHECK(test::firstDifference(*A.T, *C.T) == "");
  std::string Path = std::string(DD_TEST_DATA) +
                     "/kineto/resnet50_v100_workers0.pt.trace.json.gz";
  Reading X = readFile(Path, size_t(64) << 10, 4),
          Y = readFile(Path, size_t(64) << 10, 4);
  REQUIRE(X.T.has_value());
  REQUIRE(Y.T.has_value());
  CHECK(test::firstDifference(*X.T, *Y.T) == "");
}

TEST_CASE("threads: the comparison sees every kind of difference") {
  // The checks above are only as good as firstDifference: each change
  // below, however small, must be reported.
  Reading R = readJson(adversarial(3), 4096, 1);
  REQUIRE(R.T.has_value());
  const Trace &T = *R.T;
  REQUIRE(T.numEvents() > 10);
  CHECK(test::firstDifference(T, T) == "");
  auto Differs = [&](auto Change) {
    Trace U = T;
    Change(U);
    return !test::firstDifference(T, U).empty();
  };
  CHECK(Differs([](Trace &U) { U.Start[3] += 1; }));
  CHECK(Differs([](Trace &U) { U.Dur[5] = 0; }));
  CHECK(Differs([](Trace &U) { std::swap(U.Name[0], U.Name[1]); }));
  CHECK(Differs([](Trace &U) { U.TrackOf[2] ^= 1; }));
  CHECK(Differs([](Trace &U) { U.Correlation[0] = 12345; }));
  CHECK(Differs([](Trace &U) { U.ExternalId.back() = 1; }));
  CHECK(Differs([](Trace &U) { U.Args[0].Value += 1; }));
  CHECK(Differs([](Trace &U) { U.Tracks[0].Name = 0; }));
  CHECK(Differs([](Trace &U) { U.Strings.intern("one more"); }));
  CHECK(Differs([](Trace &U) { U.Flows[0].Ts += 1; }));
  CHECK(Differs([](Trace &U) { U.Memory[0].Bytes = 1; }));
  CHECK(Differs([](Trace &U) { U.Warnings.pop_back(); }));
  CHECK(Differs([](Trace &U) { U.SkippedCategories[0].second += 1; }));
  CHECK(Differs([](Trace &U) { U.Devices[1].Name = "y"; }));
  // The same strings with other ids: dumpTrace cannot see it, this can.
  Trace Renumbered;
  Renumbered.Strings.intern("first");
  Renumbered.Strings.intern("second");
  Trace Other;
  Other.Strings.intern("second");
  Other.Strings.intern("first");
  CHECK_FALSE(test::firstDifference(Renumbered, Other).empty());
}

TEST_CASE("threads: DDSCRIPT_THREADS sets the default") {
  const char *Old = std::getenv("DDSCRIPT_THREADS");
  std::string Saved = Old ? Old : "";
  setenv("DDSCRIPT_THREADS", "3", 1);
  CHECK(defaultLoadThreads() == 3);
  setenv("DDSCRIPT_THREADS", "1", 1);
  CHECK(defaultLoadThreads() == 1);
  setenv("DDSCRIPT_THREADS", "zero", 1);
  unsigned Default = defaultLoadThreads();
  CHECK(Default >= 1);
  CHECK(Default <= 4);
  unsetenv("DDSCRIPT_THREADS");
  CHECK(defaultLoadThreads() == Default);
  if (Old)
    setenv("DDSCRIPT_THREADS", Saved.c_str(), 1);
}

TEST_CASE("threads: a damaged gzip stream after a JSON fault reports the "
          "fault") {
  // Found by dd_fuzz_kineto: the JSON has an unescaped control character,
  // and the deflate data is damaged further on. One thread meets the JSON
  // fault first; two threads cut windows ahead into the damaged stream
  // and must still report what one thread reports.
  std::string Path = std::string(DD_TEST_DATA) +
                     "/../fuzz/corpus/kineto/gzip_error_after_json_fault.gz";
  for (size_t W : {size_t(64), size_t(256), size_t(1024)}) {
    CAPTURE(W);
    Reading Ref = readFile(Path, W, 1);
    REQUIRE_FALSE(Ref.T.has_value());
    CHECK(Ref.Error.find("gzip") == std::string::npos);
    for (unsigned Threads : {2u, 3u, 4u}) {
      CAPTURE(Threads);
      checkSame(Ref, readFile(Path, W, Threads));
    }
  }
}

TEST_CASE("threads: a byte order mark, trailing data, two documents and a "
          "key twice read as on one thread") {
  std::string J = "{\"traceEvents\": [\n";
  for (int I = 0; I < 300; ++I)
    J += (I ? ",\n" : "") + cpuOp(I);
  J += "\n], \"schemaVersion\": 1}";
  // A byte order mark is skipped: the same trace as without it.
  Reading Plain = readJson(J, 256, 1);
  REQUIRE(Plain.T.has_value());
  Reading Bom = readJson("\xEF\xBB\xBF" + J, 256, 1);
  REQUIRE(Bom.T.has_value());
  CHECK(test::firstDifference(*Plain.T, *Bom.T) == "");
  checkThreads("\xEF\xBB\xBF" + J, {256, 4096});
  // Anything but blanks after the document is refused, at its place.
  struct Case {
    std::string Json, Expect;
  };
  for (const Case &C :
       {Case{J + "\n\n  x", "at line 304, column 3: the file goes on after"},
        Case{J + J, "at line 302, column 23: the file goes on after"},
        Case{"[" + cpuOp(1) + "] [", "the file goes on after"},
        Case{J.substr(0, J.size() - 1) + ", \"traceEvents\": []}",
             "the key \"traceEvents\" appears twice"},
        Case{"{\"a\": 1, \"a\": 2, \"traceEvents\": []}",
             "the key \"a\" appears twice"}}) {
    CAPTURE(C.Json.substr(C.Json.size() - 40));
    for (size_t W : {size_t(0), size_t(256), size_t(4096)}) {
      CAPTURE(W);
      Reading R = readJson(C.Json, W, 1);
      REQUIRE_FALSE(R.T.has_value());
      CAPTURE(R.Error);
      CHECK(R.Error.find(C.Expect) != std::string::npos);
      for (unsigned Threads : {2u, 4u})
        checkSame(R, readJson(C.Json, W, Threads));
    }
  }
}

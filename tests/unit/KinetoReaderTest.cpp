#include "trace/TraceReader.h"

#include <doctest/doctest.h>

using namespace dd::trace;

namespace {

llvm::Expected<Trace> parse(std::string Json) {
  return parseKinetoJson(Json, "test.json");
}

std::string errorOf(std::string Json) {
  auto T = parse(std::move(Json));
  if (T)
    return "";
  return llvm::toString(T.takeError());
}

EventId find(const Trace &T, std::string_view Name) {
  for (EventId E = 0; E < T.numEvents(); ++E)
    if (T.name(E) == Name)
      return E;
  return NoEvent;
}

} // namespace

TEST_CASE("current Kineto schema: events, links, metadata in any order") {
  auto T = parse(R"J({
    "schemaVersion": 1,
    "deviceProperties": [{"id": 0, "name": "NVIDIA A100", "totalGlobalMem": 42505273344,
                          "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
    "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7,
       "ts": 4458676983543.183, "dur": 41.407,
       "args": {"External id": 12, "device": 0, "stream": 7, "correlation": 57541,
                "grid": [512, 1, 1], "Comms Id": 10159970886766084423}},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 2910249,
       "tid": "2910249", "ts": 4458676983526.767, "dur": 5.5,
       "args": {"External id": 12, "cbid": 211, "correlation": 57541}},
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 2910249, "tid": 2910249,
       "ts": 4458676983520.0, "dur": 30,
       "args": {"External id": 12, "Sequence number": 99, "Fwd thread id": 0,
                "Input Dims": [[64, 128], [128, 256]], "Input type": ["float", "float"]}},
      {"ph": "s", "id": 57541, "pid": 2910249, "tid": 2910249, "ts": 4458676983526.767,
       "cat": "ac2g", "name": "ac2g"},
      {"ph": "f", "id": 57541, "pid": 0, "tid": 7, "ts": 4458676983543.183, "cat": "ac2g",
       "name": "ac2g", "bp": "e"},
      {"ph": "f", "id": 999, "pid": 2910249, "tid": 2910249, "ts": 4458676983600,
       "cat": "ac2g", "name": "ac2g", "bp": "e"},
      {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 2910249,
       "tid": 2910249, "ts": 4458676983521,
       "args": {"Addr": 139926520725504, "Bytes": -5242880, "Total Allocated": 5435638784,
                "Total Reserved": 12782141440, "Device Type": 1, "Device Id": 0}},
      {"name": "thread_name", "ph": "M", "ts": 1, "pid": 2910249, "tid": 2910249,
       "args": {"name": "thread 2910249 (pt_main_thread)"}},
      {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
       "tid": "PyTorch Profiler", "ts": 1, "dur": 2}
    ],
    "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
    "baseTimeNanoseconds": 1712000000000000000
  })J");
  REQUIRE(static_cast<bool>(T));
  CHECK(T->Format == SourceFormat::KinetoJson);
  CHECK(T->numEvents() == 3);
  CHECK(T->BaseTimeNs == 1712000000000000000);
  REQUIRE(T->Devices.size() == 1);
  CHECK(T->Devices[0].NumSms == 108);
  CHECK(T->Distributed.Present);
  CHECK(T->Distributed.Rank == 1);
  CHECK(T->Distributed.WorldSize == 2);

  EventId K = find(*T, "sgemm"), L = find(*T, "cudaLaunchKernel"),
          Op = find(*T, "aten::mm");
  REQUIRE(K != NoEvent);
  REQUIRE(L != NoEvent);
  REQUIRE(Op != NoEvent);
  CHECK(T->Kind[K] == EventKind::Kernel);
  CHECK(T->Start[K] == 4458676983543183);
  CHECK(T->Dur[K] == 41407);
  CHECK(T->Correlation[K] == 57541);
  CHECK(T->Correlation[L] == 57541);
  CHECK(T->track(K).IsDevice);
  CHECK(T->track(K).Stream == 7);
  CHECK(T->intArg(L, ArgKey::Cbid) == 211);
  CHECK(T->SeqNumber[Op] == 99);
  CHECK(T->FwdThread[Op] == 0);
  CHECK(T->strArg(Op, ArgKey::InputDims) == "[[64, 128], [128, 256]]");
  // A string tid and a numeric one name the same thread.
  CHECK(T->TrackOf[L] == T->TrackOf[Op]);
  CHECK(T->str(T->track(Op).Name) == "pt_main_thread");

  REQUIRE(T->Memory.size() == 1);
  CHECK(T->Memory[0].Addr == 139926520725504ull);
  CHECK(T->Memory[0].Bytes == -5242880);
  CHECK(T->Memory[0].TotalAllocated == 5435638784);
  CHECK(T->Memory[0].DeviceType == 1);
  CHECK(T->Flows.size() == 3); // a flow end without a start is kept as is
}

TEST_CASE("2021 schema: Operator/Runtime/Kernel, string stream rows") {
  auto T = parse(R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "aten::empty", "pid": 25738, "tid": "25738",
     "ts": 1623142623460111, "dur": 25, "args": {"External id": 2}},
    {"ph": "X", "cat": "Runtime", "name": "cudaMemcpyAsync", "pid": 25738, "tid": "25738",
     "ts": 1623142623529088, "dur": 2022,
     "args": {"cbid": 41, "correlation": 34417, "external id": 537}},
    {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
     "tid": "stream 7", "ts": 1623142623529248, "dur": 1940,
     "args": {"device": 0, "context": 1, "stream": 7, "correlation": 34417,
              "external id": 537, "bytes": 19267584}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 25738, "tid": 25738,
     "ts": 1623142623460121, "args": {"Device Type": 0, "Device Id": -1, "Bytes": 4}}
  ]})J");
  REQUIRE(static_cast<bool>(T));
  CHECK(T->Format == SourceFormat::KinetoJsonLegacy);
  EventId M = find(*T, "Memcpy HtoD (Pageable -> Device)");
  REQUIRE(M != NoEvent);
  CHECK(T->Kind[M] == EventKind::Memcpy);
  CHECK(T->Bytes[M] == 19267584);
  CHECK(T->ExternalId[M] == 537);
  CHECK(T->track(M).Stream == 7);
  CHECK(T->Memory.size() == 1);
  CHECK(T->Memory[0].DeviceType == 0);
}

TEST_CASE("a bare array, B/E pairs, and only module-level Python frames") {
  auto T = parse(R"J([
    {"ph": "B", "cat": "cpu_op", "name": "outer", "pid": 1, "tid": 1, "ts": 10},
    {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": 1,
     "tid": 1, "ts": 11, "dur": 1},
    {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1,
     "tid": 1, "ts": 11, "dur": 1},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 14.5}
  ])J");
  REQUIRE(static_cast<bool>(T));
  EventId Outer = find(*T, "outer");
  REQUIRE(Outer != NoEvent);
  CHECK(T->Dur[Outer] == 4500);
  CHECK(find(*T, "nn.Module: Linear_0") != NoEvent);
  CHECK(find(*T, "train.py(12): step") == NoEvent);
}

TEST_CASE("malformed input gets one precise reason") {
  CHECK(errorOf("") == "empty file");
  CHECK(errorOf("hello").find("not JSON") != std::string::npos);
  CHECK(errorOf(R"J({"schemaVersion": 1})J").find("no \"traceEvents\"") !=
        std::string::npos);
  CHECK(errorOf(R"J({"traceEvents": {}})J").find("not an array") !=
        std::string::npos);
  std::string Truncated =
      R"J({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur)J";
  std::string E = errorOf(Truncated);
  CHECK(E.find("invalid JSON") != std::string::npos);
  CHECK(E.find("truncated") != std::string::npos);
  CHECK(errorOf(R"J({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k",
                   "ts": "soon", "dur": 1}]})J")
            .find("\"ts\" value 'soon'") != std::string::npos);
  CHECK(errorOf(R"J({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k",
                   "ts": 99999999999999999999, "dur": 1}]})J")
            .find("fits in 64-bit") != std::string::npos);
  std::string Unknown = errorOf(
      R"J({"traceEvents": [{"ph": "X", "cat": "frobnicate", "name": "k", "ts": 1}]})J");
  CHECK(Unknown.find("unsupported schema") != std::string::npos);
  CHECK(Unknown.find("frobnicate") != std::string::npos);
  CHECK(errorOf(R"J({"traceEvents": []})J").find("event list is empty") !=
        std::string::npos);
}

TEST_CASE("errors name the line where parsing stopped") {
  std::string E = errorOf("{\n\"traceEvents\": [\n{\"ph\": \"X\",,}\n]}");
  CHECK(E.find("line 3") != std::string::npos);
}

TEST_CASE("flow ids: numbers below 2^63 as they are, anything else apart") {
  auto T = parse(R"({"traceEvents":[
    {"ph":"s","cat":"fwdbwd","id":5,"pid":1,"tid":1,"ts":1},
    {"ph":"s","cat":"fwdbwd","id":"5","pid":1,"tid":1,"ts":2},
    {"ph":"s","cat":"fwdbwd","id":9223372036854775813,"pid":1,"tid":1,"ts":3},
    {"ph":"s","cat":"fwdbwd","id":18446744073709551615,"pid":1,"tid":1,"ts":4},
    {"ph":"s","cat":"fwdbwd","id":-1,"pid":1,"tid":1,"ts":5},
    {"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":9}]})");
  REQUIRE(static_cast<bool>(T));
  REQUIRE(T->Flows.size() == 5);
  // A quoted "5" is the number 5 (the text is what is read).
  CHECK(T->Flows[0].Id == 5);
  CHECK(T->Flows[1].Id == 5);
  // 2^63 + 5 must not meet the interned id 5; 2^64 - 1 and -1 must not be
  // the keys a DenseMap reserves (a fuzzed trace put them there).
  for (size_t I = 2; I < 5; ++I) {
    CAPTURE(I);
    CHECK((T->Flows[I].Id >> 63) == 1);
    CHECK(T->Flows[I].Id < ~uint64_t(0) - 1);
  }
  CHECK(T->Flows[2].Id != T->Flows[3].Id);
  CHECK(T->Flows[3].Id != T->Flows[4].Id);
}

// The CUPTI collector, without a GPU: CUPTI records built here are walked
// with the code path real activity buffers take (walkBuffer ->
// ActivityEncoder -> RecordWriter), read back with the run.cupti reader,
// and the injection library is loaded the way the CUDA driver loads it.
// Built only when CUPTI is found (dd_cupti_tests).

#include "ActivityEncoder.h"

#include <cupti.h>

#include "trace/CuptiFormat.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace dd;
using namespace dd::trace;
namespace cf = dd::cuptifmt;

namespace {

/// An activity buffer laid out as CUPTI lays one out: 8-byte aligned
/// records, each padded to a multiple of 8.
class Buffer {
public:
  template <class R> R &add(CUpti_ActivityKind Kind) {
    size_t Size = (sizeof(R) + 7) & ~size_t(7);
    size_t At = Used;
    Used += Size;
    REQUIRE(Used <= sizeof(Bytes));
    auto *Rec = reinterpret_cast<R *>(Bytes + At);
    std::memset(Rec, 0, Size);
    Rec->kind = Kind;
    return *Rec;
  }
  uint8_t *data() { return Bytes; }
  size_t size() const { return Used; }

private:
  alignas(8) uint8_t Bytes[1 << 14];
  size_t Used = 0;
};

constexpr uint32_t Pid = 77, Tid = 78;
constexpr uint64_t T0 = 5'000'000'000ull;

std::string noThreadName(uint32_t, uint32_t) { return ""; }
std::string fixedThreadName(uint32_t, uint32_t T) {
  return T == Tid ? "trainer" : "";
}

CUpti_ActivityAPI &api(Buffer &B, CUpti_ActivityKind Kind, uint32_t Cbid,
                       uint64_t Start, uint64_t Dur, uint32_t Corr) {
  auto &A = B.add<CUpti_ActivityAPI>(Kind);
  A.cbid = Cbid;
  A.start = Start;
  A.end = Start + Dur;
  A.processId = Pid;
  A.threadId = Tid;
  A.correlationId = Corr;
  return A;
}

CUpti_ActivityMarker2 &marker(Buffer &B, CUpti_ActivityFlag Flags, uint64_t Ts,
                              uint32_t Id, const char *Name,
                              uint32_t Thread = Tid) {
  auto &M = B.add<CUpti_ActivityMarker2>(CUPTI_ACTIVITY_KIND_MARKER);
  M.flags = Flags;
  M.timestamp = Ts;
  M.id = Id;
  M.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  M.objectId.pt.processId = Pid;
  M.objectId.pt.threadId = Thread;
  M.name = Name;
  return M;
}

EventId find(const Trace &T, std::string_view Name) {
  for (EventId E = 0; E < T.numEvents(); ++E)
    if (T.name(E) == Name)
      return E;
  return NoEvent;
}

} // namespace

TEST_CASE("collector: CUPTI records in a buffer become the trace model") {
  cupti::RecordWriter W;
  cf::ProcessRecord P;
  P.Pid = Pid;
  W.add(P);
  cupti::ActivityEncoder E(W, Pid);
  E.setThreadNamer(fixedThreadName);
  E.openWindow(T0, cf::WholeRun);

  Buffer B;
  auto &Dev = B.add<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
  Dev.id = 0;
  Dev.name = "NVIDIA H100";
  Dev.globalMemorySize = 80ull << 30;
  Dev.numMultiprocessors = 132;
  Dev.computeCapabilityMajor = 9;
  auto &Ctx = B.add<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
  Ctx.contextId = 1;
  Ctx.deviceId = 0;
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_START, T0 + 100, 1, "ProfilerStep#0");
  api(B, CUPTI_ACTIVITY_KIND_RUNTIME,
      CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, T0 + 1'000, 4'000, 11);
  auto &K =
      B.add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  K.start = T0 + 9'000;
  K.end = T0 + 19'000;
  K.deviceId = 0;
  K.contextId = 1;
  K.streamId = 7;
  K.correlationId = 11;
  K.name = "_Z11volta_sgemmPKfPfi";
  K.gridX = 64;
  auto &X = B.add<CUpti_ActivityExternalCorrelation>(
      CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  X.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  X.correlationId = 11;
  X.externalId = 4242;
  api(B, CUPTI_ACTIVITY_KIND_RUNTIME,
      CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, T0 + 6'000, 1'000, 12);
  auto &Ev = B.add<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
  Ev.correlationId = 12;
  Ev.contextId = 1;
  Ev.streamId = 7;
  Ev.eventId = 9;
  Ev.deviceId = 0;
  Ev.cudaEventSyncId = 555;
  api(B, CUPTI_ACTIVITY_KIND_RUNTIME,
      CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, T0 + 7'000, 2'000, 13);
  auto &Mc = B.add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  Mc.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  Mc.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  Mc.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  Mc.bytes = 4096;
  Mc.start = T0 + 20'000;
  Mc.end = T0 + 21'000;
  Mc.streamId = 7;
  Mc.contextId = 1;
  Mc.correlationId = 13;
  api(B, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
      T0 + 22'000, 1'000, 14);
  auto &Ms = B.add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  Ms.bytes = 256;
  Ms.start = T0 + 24'000;
  Ms.end = T0 + 24'500;
  Ms.streamId = 13;
  Ms.correlationId = 14;
  Ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  api(B, CUPTI_ACTIVITY_KIND_RUNTIME,
      CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, T0 + 25'000, 1'000,
      15);
  auto &Sy = B.add<CUpti_ActivitySynchronization2>(
      CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  Sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  Sy.start = T0 + 25'000;
  Sy.end = T0 + 26'000;
  Sy.correlationId = 15;
  Sy.contextId = 1;
  Sy.streamId = 13;
  Sy.cudaEventId = 9;
  Sy.cudaEventSyncId = 555;
  auto &Mem = B.add<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
  Mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  Mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  Mem.correlationId = 13;
  Mem.address = 0xabc000;
  Mem.bytes = 1 << 16;
  Mem.timestamp = T0 + 8'000;
  Mem.processId = Pid;
  auto &O = B.add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  O.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  O.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  O.objectId.pt.processId = Pid;
  O.objectId.pt.threadId = Tid;
  O.start = T0 + 30'000;
  O.end = T0 + 31'000;
  auto &P2P = B.add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  P2P.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  P2P.srcKind = P2P.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  P2P.start = T0 + 32'000;
  P2P.end = T0 + 33'000;
  P2P.bytes = 1 << 20;
  P2P.deviceId = 0;
  P2P.srcDeviceId = 0;
  P2P.dstDeviceId = 1;
  P2P.streamId = 7;
  P2P.correlationId = 13;
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_END, T0 + 40'000, 1, nullptr);
  // A kind the encoder does not convert.
  B.add<CUpti_ActivityStream>(CUPTI_ACTIVITY_KIND_STREAM);

  CHECK(cupti::walkBuffer(B.data(), B.size(), E) == 19);
  CHECK(E.unknownRecords() == 1);
  E.dropped(3);
  E.finish();
  W.finish({});

  auto Data = parseCupti(W.data(), "c.cupti");
  REQUIRE(static_cast<bool>(Data));
  Trace &T = *Data;
  REQUIRE(T.Devices.size() == 1);
  CHECK(T.Devices[0].Name == "NVIDIA H100");
  CHECK(T.Devices[0].NumSms == 132);
  // Names come from CUPTI itself (cuptiGetCallbackName).
  EventId Launch = find(T, "cudaLaunchKernel");
  REQUIRE(Launch != NoEvent);
  CHECK(T.Kind[Launch] == EventKind::Runtime);
  CHECK(T.ExternalId[Launch] == 4242);
  CHECK(T.str(T.track(Launch).Name) == "trainer");
  EventId Memset = find(T, "cuMemsetD8Async");
  REQUIRE(Memset != NoEvent);
  CHECK(T.Kind[Memset] == EventKind::Driver);
  EventId Kern = find(T, "volta_sgemm(float const*, float*, int)");
  REQUIRE(Kern != NoEvent);
  CHECK(T.Dur[Kern] == 10'000);
  CHECK(T.Correlation[Kern] == 11);
  CHECK(T.ExternalId[Kern] == 4242);
  CHECK(T.track(Kern).Stream == 7);
  EventId Copy = find(T, "Memcpy HtoD (Pageable -> Device)");
  REQUIRE(Copy != NoEvent);
  CHECK(T.Bytes[Copy] == 4096);
  CHECK(find(T, "Memcpy PtoP (Device -> Device)") != NoEvent);
  EventId Set = find(T, "Memset (Device)");
  REQUIRE(Set != NoEvent);
  CHECK(T.track(Set).Stream == 13);
  EventId Wait = find(T, "Stream Wait Event");
  REQUIRE(Wait != NoEvent);
  CHECK(T.intArg(Wait, ArgKey::WaitOnStream) == 7);
  CHECK(T.intArg(Wait, ArgKey::WaitOnEventCorr) == 12);
  CHECK(T.intArg(Wait, ArgKey::WaitOnEventId) == 9);
  CHECK(T.track(Wait).Device == 0);
  EventId Step = find(T, "ProfilerStep#0");
  REQUIRE(Step != NoEvent);
  CHECK(T.Kind[Step] == EventKind::Marker);
  CHECK(T.Dur[Step] == 39'900);
  REQUIRE(T.Memory.size() == 1);
  CHECK(T.Memory[0].Bytes == -(1 << 16));
  CHECK(find(T, "Buffer Flush") != NoEvent);
  REQUIRE(T.Warnings.size() == 1);
  CHECK(T.Warnings[0].find("CUPTI dropped 3 activity records") == 0);
}

TEST_CASE("collector: NVTX ranges are kept when they begin in a window") {
  cupti::RecordWriter W;
  cf::ProcessRecord P;
  P.Pid = Pid;
  W.add(P);
  cupti::ActivityEncoder E(W, Pid);
  E.setThreadNamer(noThreadName);
  Buffer B;
  // Before the window: dropped, with its end.
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_START, 500, 1, "ProfilerStep#2");
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_END, 900, 1, nullptr);
  // The range that opened the window, stamped just before the boundary.
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_START, 990, 2, "ProfilerStep#3");
  // Another thread, also just before the boundary: not the window's.
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_START, 995, 3, "ProfilerStep#3", 99);
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_START, 2'000, 4, "nn.Module: conv1");
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_END, 3'000, 4, nullptr);
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_END, 4'990, 2, nullptr);
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_END, 4'995, 3, nullptr);
  // A range begun in the window and never ended.
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_START, 4'000, 5, "epoch");
  // The range that closed it, stamped just before the boundary: not kept.
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_START, 4'999, 6, "ProfilerStep#4");
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_END, 9'000, 6, nullptr);
  marker(B, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 6'000, 7, "late");

  E.openWindow(1'000, cf::Iteration, Tid, "ProfilerStep#3", 3);
  E.countIteration();
  E.closeWindow(5'000, Tid, "ProfilerStep#4");
  CHECK(!E.windowOpen());
  cupti::walkBuffer(B.data(), B.size(), E);
  E.finish();
  W.finish({});

  std::vector<cf::MarkerRecord> Kept;
  std::vector<cf::WindowRecord> Windows;
  std::vector<std::string> Strings{""};
  const std::string &D = W.data();
  const auto *Bytes = reinterpret_cast<const unsigned char *>(D.data());
  for (size_t Off = cf::HeaderSize; Off < D.size();) {
    auto Ty = static_cast<cf::RecordType>(cf::getLE<uint16_t>(Bytes + Off));
    uint32_t Size = cf::getLE<uint32_t>(Bytes + Off + 4);
    const unsigned char *Pl = Bytes + Off + cf::FrameSize;
    if (Ty == cf::RecordType::Marker) {
      cf::MarkerRecord M;
      cf::decode(Pl, Size, M);
      Kept.push_back(M);
    } else if (Ty == cf::RecordType::String) {
      cf::StringRecord S;
      cf::decode(Pl, Size, S);
      Strings.push_back(S.Text);
    } else if (Ty == cf::RecordType::Window) {
      cf::WindowRecord Wi;
      cf::decode(Pl, Size, Wi);
      Windows.push_back(Wi);
    }
    Off += cf::FrameSize + Size;
  }
  REQUIRE(Kept.size() == 3);
  CHECK(Strings[Kept[0].NameStr] == "nn.Module: conv1");
  CHECK(Kept[0].Start == 2'000);
  CHECK(Kept[0].End == 3'000);
  CHECK(Strings[Kept[1].NameStr] == "ProfilerStep#3");
  CHECK(Kept[1].Start == 990);
  CHECK(Kept[1].End == 4'990);
  CHECK(Kept[1].Tid == Tid);
  CHECK(Strings[Kept[2].NameStr] == "epoch");
  CHECK(Kept[2].Flags == cf::MarkerUnfinished);
  REQUIRE(Windows.size() == 1);
  CHECK(Windows[0].Open == 1'000);
  CHECK(Windows[0].Close == 5'000);
  CHECK(Windows[0].FirstIteration == 3);
  CHECK(Windows[0].Iterations == 1);
}

TEST_CASE("collector: the injection library loads and fails soft without a "
          "GPU") {
  char Dir[] = "/tmp/ddscript-collector-XXXXXX";
  REQUIRE(mkdtemp(Dir));
  std::string Out = std::string(Dir) + "/probe-%p.cupti";
  setenv("DDSCRIPT_CUPTI_OUTPUT", Out.c_str(), 1);
  setenv("DDSCRIPT_CUPTI_QUIET", "1", 1);
  void *Lib = dlopen(DD_CUPTI_COLLECTOR_PATH, RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(Lib, dlerror());
  auto *Init = reinterpret_cast<int (*)()>(dlsym(Lib, "InitializeInjection"));
  bool Found = Init != nullptr;
  REQUIRE(Found);
  // Nothing else is visible.
  CHECK(dlsym(Lib, "_ZN2dd5cupti10walkBufferEPhmRNS0_15ActivityEncoderE") ==
        nullptr);
  CHECK(Init() == 1);
  CHECK(Init() == 1); // once only

  std::string Path =
      std::string(Dir) + "/probe-" + std::to_string(getpid()) + ".cupti";
  std::ifstream F(Path, std::ios::binary);
  REQUIRE(F.good());
  std::stringstream SS;
  SS << F.rdbuf();
  std::string Data = SS.str();
  REQUIRE(isCuptiData(Data));
  auto T = parseCupti(Data, Path);
  REQUIRE(!T);
  std::string Why = llvm::toString(T.takeError());
  CAPTURE(Why);
  if (Why.find("no End record") == std::string::npos) {
    // No GPU: CUPTI refused, the collector said why and completed the file.
    CHECK(Why.find("nothing was recorded: cannot") == 0);
    CHECK(Why.find("CUPTI_ERROR") != std::string::npos);
    std::remove(Path.c_str());
    rmdir(Dir);
  }
  // With a GPU the collector is recording; it completes the file at exit.
}

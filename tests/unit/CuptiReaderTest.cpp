// The run.cupti reader: files written with the collector's RecordWriter
// (no CUPTI needed) are read into the trace model, and damaged files are
// refused with one line.

#include "CuptiSynth.h"

#include "builder/GraphBuilder.h"
#include "sim/Simulator.h"
#include "support/FileIO.h"
#include "trace/CuptiFormat.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <unistd.h>

using namespace dd;
using namespace dd::trace;
namespace cf = dd::cuptifmt;

namespace {

std::string synthetic(test::SynthRun &S) {
  cupti::RecordWriter W;
  test::writeSyntheticRun(W, S);
  return W.data();
}

Trace readOk(const std::string &Data) {
  auto T = parseCupti(Data, "run.cupti");
  if (!T)
    FAIL(llvm::toString(T.takeError()));
  return std::move(*T);
}

std::string errorOf(const std::string &Data) {
  auto T = parseCupti(Data, "bad.cupti");
  if (T)
    return "";
  return llvm::toString(T.takeError());
}

std::vector<EventId> named(const Trace &T, std::string_view Name) {
  std::vector<EventId> R;
  for (EventId E = 0; E < T.numEvents(); ++E)
    if (T.name(E) == Name)
      R.push_back(E);
  return R;
}

std::vector<EventId> ofKind(const Trace &T, EventKind K) {
  std::vector<EventId> R;
  for (EventId E = 0; E < T.numEvents(); ++E)
    if (T.Kind[E] == K)
      R.push_back(E);
  return R;
}

uint64_t skipped(const Trace &T, std::string_view Category) {
  for (auto &[C, N] : T.SkippedCategories)
    if (C == Category)
      return N;
  return 0;
}

/// Offsets of the records of a file, with their types.
std::vector<std::pair<size_t, cf::RecordType>> records(const std::string &D) {
  std::vector<std::pair<size_t, cf::RecordType>> R;
  const auto *P = reinterpret_cast<const unsigned char *>(D.data());
  for (size_t Off = cf::HeaderSize; Off + cf::FrameSize <= D.size();) {
    R.push_back(
        {Off, static_cast<cf::RecordType>(cf::getLE<uint16_t>(P + Off))});
    Off += cf::FrameSize + cf::getLE<uint32_t>(P + Off + 4);
  }
  return R;
}

} // namespace

TEST_CASE("run.cupti: records fill the same model as Kineto JSON") {
  test::SynthRun S;
  Trace T = readOk(synthetic(S));
  CHECK(T.Format == SourceFormat::Cupti);
  CHECK(T.SchemaVersion == 1);
  // Unix time = CUPTI time + 1000 ns; relative to the whole second below.
  REQUIRE(T.BaseTimeNs.has_value());
  int64_t Unix0 =
      int64_t(test::SynthRun::Base) + test::SynthRun::UnixMinusCupti;
  CHECK(*T.BaseTimeNs == Unix0 / 1'000'000'000 * 1'000'000'000);
  auto Rel = [&](uint64_t Cupti) {
    return int64_t(Cupti) + test::SynthRun::UnixMinusCupti - *T.BaseTimeNs;
  };
  REQUIRE(T.Devices.size() == 1);
  CHECK(T.Devices[0].Name == "NVIDIA Test GPU");
  CHECK(T.Devices[0].NumSms == 108);
  CHECK(T.Devices[0].ComputeMajor == 8);
  CHECK(T.Devices[0].TotalGlobalMem == int64_t(80) << 30);

  // Kernels: demangled names, (device, stream) rows, times.
  auto Gemm = named(T, "gemm(float*, float*, int)");
  REQUIRE(Gemm.size() == 3u * S.Iterations);
  CHECK(T.Kind[Gemm[0]] == EventKind::Kernel);
  CHECK(T.track(Gemm[0]).IsDevice);
  CHECK(T.track(Gemm[0]).Device == 0);
  CHECK(T.track(Gemm[0]).Stream == 7);
  CHECK(T.Start[Gemm[0]] == Rel(S.FirstKernelStart));
  CHECK(T.Dur[Gemm[0]] == 15'000);

  // API calls: CUPTI's version suffix dropped; cbid kept; on their thread,
  // named from the Thread record.
  auto Launches = named(T, "cudaLaunchKernel");
  REQUIRE(Launches.size() == 4u * S.Iterations);
  CHECK(T.Kind[Launches[0]] == EventKind::Runtime);
  CHECK(T.intArg(Launches[0], ArgKey::Cbid) == 211);
  CHECK(T.str(T.track(Launches[0]).Name) == "python");
  CHECK(T.track(Launches[0]).Tid == test::SynthRun::MainTid);
  CHECK(named(T, "cudaMalloc").size() == 1 + size_t(S.Iterations));
  CHECK(named(T, "cudaFree").size() == size_t(S.Iterations));

  // The driver call inside the first launch is part of it: dropped, and the
  // kernel it launched belongs to the runtime call (with its external id).
  CHECK(ofKind(T, EventKind::Driver).empty());
  CHECK(skipped(T, "cuda_driver calls made inside a runtime call") == 1);
  CHECK(T.Correlation[Gemm[0]] == S.FirstLaunchCorrelation);
  CHECK(T.Correlation[Launches[0]] == S.FirstLaunchCorrelation);
  CHECK(T.ExternalId[Launches[0]] == 77);
  CHECK(T.ExternalId[Gemm[0]] == 77);

  // Synchronisation: Kineto's names and argument keys, exact event links.
  auto Waits = named(T, "Stream Wait Event");
  REQUIRE(Waits.size() == size_t(S.Iterations));
  EventId W = Waits[0];
  CHECK(T.Kind[W] == EventKind::CudaSync);
  CHECK(T.strArg(W, ArgKey::SyncKind) == "Stream Wait Event");
  CHECK(T.track(W).Stream == 13);
  CHECK(T.Correlation[W] == S.StreamWaitCorrelation);
  CHECK(T.intArg(W, ArgKey::WaitOnStream) == 7);
  CHECK(T.intArg(W, ArgKey::WaitOnEventCorr) == S.EventRecordCorrelation);
  CHECK(T.intArg(W, ArgKey::WaitOnEventId) == 3);
  auto Syncs = named(T, "Stream Sync");
  REQUIRE(Syncs.size() == size_t(S.Iterations));
  CHECK(T.track(Syncs[0]).Stream == 7);
  CHECK(!T.intArg(Syncs[0], ArgKey::WaitOnStream));
  auto Events = ofKind(T, EventKind::CudaEvent);
  REQUIRE(Events.size() == size_t(S.Iterations));
  CHECK(T.intArg(Events[0], ArgKey::CudaEventId) == 3);
  CHECK(T.Correlation[Events[0]] == S.EventRecordCorrelation);

  // Copies in Kineto's naming, with their size.
  auto Copies = named(T, "Memcpy DtoH (Device -> Pinned)");
  REQUIRE(Copies.size() == size_t(S.Iterations));
  CHECK(T.Bytes[Copies[0]] == 4);

  // NVTX ranges on their threads; instants, process ranges and ranges left
  // open are counted, not modelled.
  auto Steps = named(T, "ProfilerStep#10");
  REQUIRE(Steps.size() == 1);
  CHECK(T.Kind[Steps[0]] == EventKind::Marker);
  CHECK(T.Dur[Steps[0]] == 899'000);
  CHECK(T.track(Steps[0]).Tid == test::SynthRun::MainTid);
  auto Bwd = named(T, "nn.Module: fc (backward)");
  REQUIRE(!Bwd.empty());
  CHECK(T.str(T.track(Bwd[0]).Name) == "pt_autograd_0");
  CHECK(skipped(T, "NVTX marks (instants)") == 1);
  CHECK(skipped(T, "NVTX ranges without an end") == 1);
  CHECK(skipped(T, "NVTX process ranges (not tied to a thread)") == 1);

  // GPU work launched while API tracing was off is not the window's.
  CHECK(named(T, "later()").empty());
  CHECK(skipped(T, "GPU work launched outside the recording window") == 1);

  // MEMORY2 allocations, on the thread of the allocating call.
  REQUIRE(T.Memory.size() == 1 + 2 * size_t(S.Iterations));
  CHECK(T.Memory[0].Bytes == 1 << 20);
  CHECK(T.Memory[0].Addr == 0x7f0000000000ull);
  CHECK(T.Memory[0].DeviceType == 1);
  CHECK(T.Memory[0].TotalAllocated == NoValue);
  CHECK(T.Memory[0].Track == T.TrackOf[named(T, "cudaMalloc")[0]]);
  // A release is a negative size, on the thread that freed.
  CHECK(T.Memory[2].Bytes == -int64_t(test::SynthRun::ActivationBytes));
  CHECK(T.Memory[2].Track == T.TrackOf[named(T, "cudaFree")[0]]);

  auto Overheads = ofKind(T, EventKind::Overhead);
  REQUIRE(Overheads.size() == size_t(S.Iterations));
  CHECK(T.name(Overheads[0]) == "Buffer Flush");
  CHECK(T.Warnings.empty());
}

TEST_CASE("run.cupti: NVTX ranges give iterations and layers; replay is "
          "exact") {
  test::SynthRun S;
  S.Iterations = 5;
  Trace T = readOk(synthetic(S));
  graph::BuildStats Stats;
  auto G = graph::buildGraph(T, {}, &Stats);
  if (!G)
    FAIL(llvm::toString(G.takeError()));
  CHECK(Stats.IterationSource == "ProfilerStep#");
  CHECK(Stats.HasCudaSyncEvents);
  CHECK(Stats.GpuWithoutLauncher == 0);
  REQUIRE(G->Iterations.size() == 5);
  CHECK(G->Iterations[0].Label == "ProfilerStep#10");
  CHECK(G->Iterations[4].Number == 14);
  // Module ranges are layers; the backward range joins its forward layer.
  bool SawFcBackward = false;
  for (graph::TaskId X = 0; X < G->numTasks(); ++X) {
    if (G->name(X) != "gemm_bwd(float*, float*, int)")
      continue;
    REQUIRE(G->LayerOf[X] != graph::NoLayer);
    CHECK(G->Layers[G->LayerOf[X]].Name == "fc");
    CHECK(G->PhaseOf[X] == graph::Phase::Backward);
    SawFcBackward = true;
  }
  CHECK(SawFcBackward);
  auto R = sim::simulate(*G);
  REQUIRE(static_cast<bool>(R));
  for (const graph::Iteration &It : G->Iterations)
    CHECK(sim::iterationTime(*G, *R, It) == It.measured());
}

TEST_CASE("run.cupti: damaged files are refused with one line") {
  test::SynthRun S;
  std::string Good = synthetic(S);
  auto Recs = records(Good);
  REQUIRE(Recs.size() > 10);
  REQUIRE(Recs.back().second == cf::RecordType::End);
  auto Check = [&](const std::string &Data, std::string_view Expect) {
    std::string E = errorOf(Data);
    CAPTURE(E);
    CHECK(E.find(Expect) != std::string::npos);
    CHECK(E.find('\n') == std::string::npos);
  };
  Check(Good.substr(0, 10), "shorter than the 16-byte header");
  // Cut inside a record, and between records before the End record.
  Check(Good.substr(0, Recs[8].first + 11), "runs past the end of the file");
  Check(Good.substr(0, Recs[8].first + 3),
        "ends inside the header of a record");
  Check(Good.substr(0, Recs.back().first), "no End record after");

  std::string V2 = Good;
  V2[8] = 2;
  Check(V2, "unsupported run.cupti version 2.0");
  std::string Extra =
      Good + Good.substr(Recs[1].first, Recs[2].first - Recs[1].first);
  Check(Extra, "bytes follow the End record");
  // The End record counts one record less than the file holds.
  std::string Count = Good;
  size_t EndPayload = Recs.back().first + cf::FrameSize;
  Count[EndPayload] = static_cast<char>(Count[EndPayload] - 1);
  Check(Count, "the End record counts");
  // A record shorter than its fields.
  std::string Short = Good;
  size_t Kernel = 0;
  for (auto [Off, Ty] : Recs)
    if (Ty == cf::RecordType::Kernel) {
      Kernel = Off;
      break;
    }
  REQUIRE(Kernel);
  uint32_t Size = cf::getLE<uint32_t>(
      reinterpret_cast<const unsigned char *>(Short.data()) + Kernel + 4);
  // Move 10 payload bytes into a new record of an unknown type, so the
  // framing stays intact and only the Kernel record is short.
  std::string Patched = Short.substr(0, Kernel);
  cf::putLE<uint16_t>(Patched, static_cast<uint16_t>(cf::RecordType::Kernel));
  cf::putLE<uint16_t>(Patched, 0);
  cf::putLE<uint32_t>(Patched, Size - 18);
  Patched += Short.substr(Kernel + cf::FrameSize, Size - 18);
  cf::putLE<uint16_t>(Patched, 999);
  cf::putLE<uint16_t>(Patched, 0);
  cf::putLE<uint32_t>(Patched, 10);
  Patched += Short.substr(Kernel + cf::FrameSize + Size - 18);
  Check(Patched, "a Kernel record of");
  // Ids no real run has: a device that is no GPU index, a correlation id
  // that maps here reserve. (A Kernel record's payload: four 64-bit times,
  // then device, context, stream and correlation, 32 bits each.)
  auto PatchKernel = [&](size_t At, uint32_t V) {
    std::string D = Good;
    for (int I = 0; I < 4; ++I)
      D[Kernel + cf::FrameSize + At + I] = static_cast<char>(V >> (8 * I));
    return D;
  };
  Check(PatchKernel(32, 0x80000000u),
        "device 2147483648 is not a GPU index (0 to 65535)");
  Check(PatchKernel(44, 0xffffffffu), "correlation id 4294967295 is out of "
                                      "range");
  Check(PatchKernel(36, 0xfffffffeu), "context id 4294967294 is out of range");
  // A string id used before its String record.
  std::string Early = Good.substr(0, cf::HeaderSize);
  cf::ProcessRecord P;
  cf::encode(P, Early);
  cf::ThreadRecord Th;
  Th.NameStr = 5;
  cf::encode(Th, Early);
  Check(Early, "string id 5 is used before a String record defines it");
  // A record before the Process record.
  std::string First = Good.substr(0, cf::HeaderSize);
  cf::encode(Th, First);
  Check(First, "a Thread record comes before the Process record");
  CHECK(errorOf("{\"traceEvents\": []}").find("not a run.cupti file") !=
        std::string::npos);
}

TEST_CASE("run.cupti: a newer minor version's additions are skipped") {
  std::string D;
  cf::encodeHeader(D);
  D[10] = 7; // minor version 7
  cf::ProcessRecord P;
  cf::encode(P, D);
  // A Kernel record with 8 more bytes than this reader knows.
  cf::StringRecord Name;
  Name.Id = 1;
  Name.Text = "_Z3fooi";
  cf::encode(Name, D);
  cf::KernelRecord K;
  K.Start = 1'000'000'000;
  K.End = K.Start + 500;
  K.NameStr = 1;
  K.Stream = 7;
  std::string Rec;
  cf::encode(K, Rec);
  uint32_t Size = cf::getLE<uint32_t>(
      reinterpret_cast<const unsigned char *>(Rec.data()) + 4);
  Rec.replace(
      4, 4, std::string{char((Size + 8) & 0xff), char((Size + 8) >> 8), 0, 0});
  Rec += std::string(8, '\x5a');
  D += Rec;
  // A record type this reader does not know.
  cf::putLE<uint16_t>(D, 4000);
  cf::putLE<uint16_t>(D, 0);
  cf::putLE<uint32_t>(D, 3);
  D += "abc";
  cf::EndRecord E;
  E.Records = 4;
  cf::encode(E, D);
  Trace T = readOk(D);
  REQUIRE(T.numEvents() == 1);
  CHECK(T.name(0) == "foo(int)");
  CHECK(T.Dur[0] == 500);
  CHECK(skipped(T, "records of a newer run.cupti version") == 1);
}

TEST_CASE("run.cupti: a file without activity says why") {
  cupti::RecordWriter W;
  cf::ProcessRecord P;
  P.WindowMode = cf::Iteration;
  P.Skip = 10;
  W.add(P);
  W.finish({});
  std::string E = errorOf(W.data());
  CHECK(E.find("the recording window never opened") != std::string::npos);
  CHECK(E.find("after 10 ProfilerStep#N") != std::string::npos);

  cupti::RecordWriter W2;
  W2.add(P);
  cf::NoteRecord N;
  N.Severity = cf::NoteError;
  N.Text = "cannot enable CUPTI activity kind RUNTIME: CUPTI_ERROR_UNKNOWN";
  W2.add(N);
  W2.finish({});
  CHECK(errorOf(W2.data()) ==
        "nothing was recorded: cannot enable CUPTI activity kind RUNTIME: "
        "CUPTI_ERROR_UNKNOWN");
}

TEST_CASE("run.cupti: readTrace tells it from JSON, also gzipped") {
  test::SynthRun S;
  std::string Data = synthetic(S);
  char Dir[] = "/tmp/ddscript-cupti-XXXXXX";
  REQUIRE(mkdtemp(Dir));
  std::string Plain = std::string(Dir) + "/run.cupti";
  std::string Packed = std::string(Dir) + "/run.cupti.gz";
  REQUIRE(static_cast<bool>(writeFileMaybeGzip(Plain, Data)));
  REQUIRE(static_cast<bool>(writeFileMaybeGzip(Packed, Data)));
  for (const std::string &Path : {Plain, Packed}) {
    auto T = readTrace(Path);
    REQUIRE(static_cast<bool>(T));
    CHECK(T->Format == SourceFormat::Cupti);
    CHECK(T->numEvents() == readOk(Data).numEvents());
  }
  std::remove(Plain.c_str());
  std::remove(Packed.c_str());
  rmdir(Dir);
}

TEST_CASE("run.cupti: version-1 record layouts are pinned") {
  // docs/trace-format.md lists these sizes; changing a layout needs a new
  // version (appending fields: a minor one).
  CHECK(cf::minSize<cf::ProcessRecord>() == 40);
  CHECK(cf::minSize<cf::StringRecord>() == 4);
  CHECK(cf::minSize<cf::DeviceRecord>() == 48);
  CHECK(cf::minSize<cf::ContextRecord>() == 12);
  CHECK(cf::minSize<cf::ThreadRecord>() == 12);
  CHECK(cf::minSize<cf::ApiRecord>() == 41);
  CHECK(cf::minSize<cf::KernelRecord>() == 101);
  CHECK(cf::minSize<cf::MemcpyRecord>() == 56);
  CHECK(cf::minSize<cf::MemsetRecord>() == 52);
  CHECK(cf::minSize<cf::SyncRecord>() == 48);
  CHECK(cf::minSize<cf::CudaEventRecord>() == 36);
  CHECK(cf::minSize<cf::ExternalCorrelationRecord>() == 16);
  CHECK(cf::minSize<cf::MarkerRecord>() == 40);
  CHECK(cf::minSize<cf::MemoryRecord>() == 68);
  CHECK(cf::minSize<cf::OverheadRecord>() == 36);
  CHECK(cf::minSize<cf::DroppedRecord>() == 8);
  CHECK(cf::minSize<cf::WindowRecord>() == 32);
  CHECK(cf::minSize<cf::NoteRecord>() == 4);
  CHECK(cf::minSize<cf::EndRecord>() == 32);
  // Little-endian on every host.
  std::string S;
  cf::putLE<uint32_t>(S, 0x01020304);
  CHECK(S == std::string("\x04\x03\x02\x01", 4));
  std::string H;
  cf::encodeHeader(H);
  CHECK(H == std::string("DDCUPTI\0\x01\0\0\0\x10\0\0\0", 16));
}

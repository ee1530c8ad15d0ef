//===- CuptiSynth.h - A synthetic run.cupti for tests -----------*- C++ -*-===//
//
// Writes, with the collector's own RecordWriter, what the collector would
// record for a small training loop on one GPU: ProfilerStep#N and module
// NVTX ranges, kernel launches on two streams joined by an event wait, a
// device-to-host copy and a stream synchronisation, allocations (one before
// the iterations, never freed; one per iteration in forward, freed in
// backward), a driver
// call made inside a runtime call, an external correlation, and GPU work
// launched after the window. Times are consistent (work starts after its
// launch, a synchronisation ends after what it waits for), so the unchanged
// graph must replay exactly. The unit tests and the CLI fixtures share it.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TESTS_CUPTISYNTH_H
#define DD_TESTS_CUPTISYNTH_H

#include "RecordWriter.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace dd::test {

struct SynthRun {
  static constexpr uint32_t Pid = 4242, MainTid = 4242, BwdTid = 4250;
  static constexpr uint64_t Base = 1'700'000'000'000'123'456ull; ///< CUPTI
  static constexpr int64_t UnixMinusCupti = 1000;
  static constexpr uint64_t IterationNs = 1'000'000;
  static constexpr int FirstStep = 10;
  int Iterations = 4;
  /// Filled while writing: what the tests check against.
  uint32_t FirstLaunchCorrelation = 0, NestedDriverCorrelation = 0;
  uint32_t EventRecordCorrelation = 0, StreamWaitCorrelation = 0;
  uint32_t MallocCorrelation = 0;
  /// Each iteration allocates this in forward and frees it in backward; the
  /// first iteration's first allocation (1 MiB) is never freed.
  static constexpr uint64_t ActivationBytes = 8 << 20;
  uint64_t FirstKernelStart = 0;
  /// The device-to-host copy of this iteration (-1: none) is recorded as
  /// starting at CopyStart (a time CUPTI gives, 0 allowed) instead of after
  /// its launch and the work before it: damaged times, which a reader must
  /// take without a crash or an internal error.
  int DamagedCopyIteration = -1;
  uint64_t CopyStart = 0;
  /// The size of the first iteration's first allocation (a damaged one is
  /// beyond what a reader takes).
  uint64_t FirstAllocationBytes = 1 << 20;
};

/// Writes \p S as the collector would (Process first, End last).
inline void writeSyntheticRun(cupti::RecordWriter &W, SynthRun &S) {
  namespace cf = dd::cuptifmt;
  uint32_t Corr = 100;
  cf::ProcessRecord P;
  P.Pid = SynthRun::Pid;
  P.CuptiVersion = 130001;
  P.SyncCuptiNs = SynthRun::Base;
  P.SyncUnixNs = SynthRun::Base + SynthRun::UnixMinusCupti;
  P.WindowMode = cf::Iteration;
  P.Skip = 10;
  P.Iterations = static_cast<uint32_t>(S.Iterations);
  P.CommandStr = W.string("python train.py");
  W.add(P);

  cf::DeviceRecord D;
  D.Id = 0;
  D.NameStr = W.string("NVIDIA Test GPU");
  D.GlobalMemorySize = 80ull << 30;
  D.NumSms = 108;
  D.ComputeMajor = 8;
  W.add(D);
  cf::ContextRecord Ctx;
  Ctx.Context = 1;
  Ctx.Device = 0;
  Ctx.NullStream = 7;
  W.add(Ctx);
  cf::ThreadRecord Th;
  Th.Pid = SynthRun::Pid;
  Th.Tid = SynthRun::MainTid;
  Th.NameStr = W.string("python");
  W.add(Th);
  Th.Tid = SynthRun::BwdTid;
  Th.NameStr = W.string("pt_autograd_0");
  W.add(Th);

  auto Api = [&](uint32_t Tid, const char *Name, uint64_t Start, uint64_t Dur,
                 uint8_t Domain = cf::RuntimeApi) {
    cf::ApiRecord A;
    A.Start = Start;
    A.End = Start + Dur;
    A.Pid = SynthRun::Pid;
    A.Tid = Tid;
    A.Correlation = ++Corr;
    A.Cbid = Domain == cf::RuntimeApi ? 211 : 307;
    A.NameStr = W.string(Name);
    A.Domain = Domain;
    W.add(A);
    return A;
  };
  auto Kernel = [&](const char *Name, uint32_t Stream, uint64_t Start,
                    uint64_t Dur, uint32_t Correlation) {
    cf::KernelRecord K;
    K.Start = Start;
    K.End = Start + Dur;
    K.Device = 0;
    K.Context = 1;
    K.Stream = Stream;
    K.Correlation = Correlation;
    K.NameStr = W.string(Name);
    K.GridX = 128, K.GridY = K.GridZ = 1;
    K.BlockX = 256, K.BlockY = K.BlockZ = 1;
    W.add(K);
    return K.End;
  };
  auto Marker = [&](uint32_t Tid, const char *Name, uint64_t Start,
                    uint64_t End, uint32_t Flags = 0) {
    static uint32_t Id = 0;
    cf::MarkerRecord M;
    M.Start = Start;
    M.End = End;
    M.Pid = SynthRun::Pid;
    M.Tid = Tid;
    M.NameStr = W.string(Name);
    M.Id = ++Id;
    M.Flags = Flags;
    W.add(M);
  };

  uint64_t StreamFree7 = 0, StreamFree13 = 0;
  for (int I = 0; I < S.Iterations; ++I) {
    uint64_t T = SynthRun::Base + I * SynthRun::IterationNs;
    std::string Step =
        "ProfilerStep#" + std::to_string(SynthRun::FirstStep + I);
    Marker(SynthRun::MainTid, Step.c_str(), T + 1'000, T + 900'000);
    Marker(SynthRun::MainTid, "nn.Module: fc", T + 2'000, T + 100'000);
    if (I == 0) {
      cf::ApiRecord M =
          Api(SynthRun::MainTid, "cudaMalloc_v3020", T + 3'000, 4'000);
      S.MallocCorrelation = M.Correlation;
      cf::MemoryRecord Mem;
      Mem.Timestamp = T + 5'000;
      Mem.Address = 0x7f0000000000ull;
      Mem.Bytes = S.FirstAllocationBytes;
      Mem.Operation = 1;
      Mem.MemoryKind = 3; // device
      Mem.Correlation = M.Correlation;
      Mem.Pid = SynthRun::Pid;
      W.add(Mem);
    }
    // An activation: allocated in forward, freed in backward.
    auto Memory = [&](cf::ApiRecord Call, uint64_t At, uint32_t Op) {
      cf::MemoryRecord Mem;
      Mem.Timestamp = At;
      Mem.Address = 0x7f1000000000ull;
      Mem.Bytes = SynthRun::ActivationBytes;
      Mem.Operation = Op;
      Mem.MemoryKind = 3;
      Mem.Stream = 7; // stream-ordered (cudaMallocAsync)
      Mem.Correlation = Call.Correlation;
      Mem.Pid = SynthRun::Pid;
      W.add(Mem);
    };
    Memory(Api(SynthRun::MainTid, "cudaMalloc_v3020", T + 60'000, 4'000),
           T + 62'000, 1);
    Memory(Api(SynthRun::BwdTid, "cudaFree_v3020", T + 300'000, 3'000),
           T + 301'000, 2);
    // Forward: three kernels on stream 7.
    for (int K = 0; K < 3; ++K) {
      uint64_t L = T + 10'000 + K * 20'000;
      cf::ApiRecord A =
          Api(SynthRun::MainTid, "cudaLaunchKernel_v7000", L, 5'000);
      uint32_t KernelCorr = A.Correlation;
      if (I == 0 && K == 0) {
        // The driver call inside it; CUPTI may tie the kernel to either.
        cf::ApiRecord Dr = Api(SynthRun::MainTid, "cuLaunchKernel", L + 1'000,
                               3'000, cf::DriverApi);
        S.FirstLaunchCorrelation = A.Correlation;
        S.NestedDriverCorrelation = Dr.Correlation;
        KernelCorr = Dr.Correlation;
        cf::ExternalCorrelationRecord X;
        X.Kind = 3; // CUSTOM0
        X.Correlation = A.Correlation;
        X.ExternalId = 77;
        W.add(X);
      }
      uint64_t Start = std::max(L + 8'000, StreamFree7 + 1'000);
      if (I == 0 && K == 0)
        S.FirstKernelStart = Start;
      StreamFree7 = Kernel("_Z4gemmPfS_i", 7, Start, 15'000, KernelCorr);
    }
    // The backward thread waits for the forward stream through an event.
    cf::ApiRecord Rec =
        Api(SynthRun::MainTid, "cudaEventRecord_v3020", T + 80'000, 2'000);
    cf::CudaEventRecord Ev;
    Ev.Correlation = Rec.Correlation;
    Ev.Context = 1;
    Ev.Stream = 7;
    Ev.EventId = 3;
    Ev.Device = 0;
    Ev.CudaEventSyncId = 1000 + I;
    W.add(Ev);
    Marker(SynthRun::BwdTid, "nn.Module: fc (backward)", T + 120'000,
           T + 400'000);
    cf::ApiRecord Wait =
        Api(SynthRun::BwdTid, "cudaStreamWaitEvent_v3020", T + 130'000, 2'000);
    cf::SyncRecord Sy;
    Sy.Start = Wait.Start;
    Sy.End = Wait.End;
    Sy.SyncType = 2; // stream wait event
    Sy.Correlation = Wait.Correlation;
    Sy.Context = 1;
    Sy.Stream = 13;
    Sy.CudaEventId = 3;
    Sy.CudaEventSyncId = 1000 + I;
    W.add(Sy);
    if (I == 0) {
      S.EventRecordCorrelation = Rec.Correlation;
      S.StreamWaitCorrelation = Wait.Correlation;
    }
    cf::ApiRecord Bwd =
        Api(SynthRun::BwdTid, "cudaLaunchKernel_v7000", T + 140'000, 5'000);
    uint64_t BStart = std::max(
        {Bwd.Start + 8'000, StreamFree7 + 2'000, StreamFree13 + 1'000});
    StreamFree13 =
        Kernel("_Z8gemm_bwdPfS_i", 13, BStart, 40'000, Bwd.Correlation);
    // The loss goes to the host; the main thread waits for it.
    cf::ApiRecord Copy =
        Api(SynthRun::MainTid, "cudaMemcpyAsync_v3020", T + 500'000, 4'000);
    cf::MemcpyRecord Mc;
    Mc.Start = I == S.DamagedCopyIteration
                   ? S.CopyStart
                   : std::max(Copy.Start + 6'000, StreamFree7 + 1'000);
    Mc.End = Mc.Start + 3'000;
    Mc.Bytes = 4;
    Mc.Device = Mc.SrcDevice = Mc.DstDevice = 0;
    Mc.Context = 1;
    Mc.Stream = 7;
    Mc.Correlation = Copy.Correlation;
    Mc.CopyKind = 2; // DtoH
    Mc.SrcKind = 3;  // device
    Mc.DstKind = 2;  // pinned
    W.add(Mc);
    StreamFree7 = std::max(StreamFree7, Mc.End);
    uint64_t SyncEnd = std::max(StreamFree7 + 4'000, T + 509'000);
    cf::ApiRecord Sync = Api(SynthRun::MainTid, "cudaStreamSynchronize_v3020",
                             T + 505'000, SyncEnd - (T + 505'000));
    cf::SyncRecord Ss;
    Ss.Start = Sync.Start;
    Ss.End = Sync.End;
    Ss.SyncType = 3; // stream synchronize
    Ss.Correlation = Sync.Correlation;
    Ss.Context = 1;
    Ss.Stream = 7;
    Ss.CudaEventId = cf::InvalidId;
    Ss.CudaEventSyncId = cf::InvalidId;
    W.add(Ss);
    cf::OverheadRecord O;
    O.Start = T + 600'000;
    O.End = T + 601'000;
    O.OverheadKind = 1 << 16; // buffer flush
    O.ObjectKind = 2;
    O.ObjectId0 = SynthRun::Pid;
    O.ObjectId1 = SynthRun::MainTid;
    W.add(O);
  }
  uint64_t End = SynthRun::Base + S.Iterations * SynthRun::IterationNs;
  // After the window: an NVTX mark, a range left open, a process range and
  // a kernel launched while API tracing was off.
  Marker(SynthRun::MainTid, "checkpoint", End + 10, End + 10,
         cf::MarkerInstant);
  Marker(SynthRun::MainTid, "epoch", End + 20, 0, cf::MarkerUnfinished);
  Marker(0, "data", End + 30, End + 40, cf::MarkerProcessRange);
  Kernel("_Z5laterv", 7, End + 50'000, 1'000, 999'999);

  cf::WindowRecord Win;
  Win.Open = SynthRun::Base;
  Win.Close = End;
  Win.Mode = cf::Iteration;
  Win.FirstIteration = SynthRun::FirstStep;
  Win.Iterations = static_cast<uint32_t>(S.Iterations);
  W.add(Win);
  cf::EndRecord E;
  E.SyncCuptiNs = End + 1'000'000;
  E.SyncUnixNs = E.SyncCuptiNs + SynthRun::UnixMinusCupti;
  W.finish(E);
}

} // namespace dd::test

#endif

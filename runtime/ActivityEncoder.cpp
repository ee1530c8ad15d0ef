//===- ActivityEncoder.cpp - CUPTI activity records to run.cupti ----------===//

#include "ActivityEncoder.h"

#include <cupti_callbacks.h>

#include <cstdio>
#include <cstring>

using namespace dd;
using namespace dd::cupti;
namespace cf = dd::cuptifmt;

std::string dd::cupti::procThreadName(uint32_t Pid, uint32_t Tid) {
  char Path[64];
  std::snprintf(Path, sizeof(Path), "/proc/%u/task/%u/comm", Pid, Tid);
  FILE *F = std::fopen(Path, "r");
  if (!F)
    return "";
  char Buf[64] = {0};
  size_t N = std::fread(Buf, 1, sizeof(Buf) - 1, F);
  std::fclose(F);
  while (N && (Buf[N - 1] == '\n' || Buf[N - 1] == '\r'))
    --N;
  return std::string(Buf, N);
}

ActivityEncoder::ActivityEncoder(RecordWriter &W, uint32_t Pid)
    : W(W), Pid(Pid), ThreadName(procThreadName) {}

void ActivityEncoder::openWindow(uint64_t Ts, uint32_t Mode, uint32_t Tid,
                                 std::string Name, int64_t FirstIteration) {
  if (windowOpen())
    return;
  Window Win;
  Win.Rec.Open = Ts;
  Win.Rec.Mode = Mode;
  Win.Rec.FirstIteration = FirstIteration;
  Win.OpenTid = Tid;
  Win.OpenName = std::move(Name);
  // The range that opens the window stays unmatched (and so never kept
  // by that rule) when no range opened it.
  Win.OpenMatched = Win.OpenName.empty();
  Windows.push_back(std::move(Win));
}

void ActivityEncoder::closeWindow(uint64_t Ts, uint32_t Tid, std::string Name) {
  if (!windowOpen())
    return;
  Window &Win = Windows.back();
  Win.Closed = true;
  Win.Rec.Close = Ts;
  Win.CloseTid = Tid;
  Win.CloseName = std::move(Name);
  Win.CloseMatched = Win.CloseName.empty();
}

void ActivityEncoder::countIteration() {
  if (windowOpen())
    ++Windows.back().Rec.Iterations;
}

bool ActivityEncoder::keepRangeStart(uint64_t Ts, uint32_t Tid,
                                     const std::string &Name) {
  // A boundary's own range is recognised by thread and name within a
  // millisecond of the boundary: CUPTI may stamp it on either side.
  constexpr uint64_t Near = 1'000'000;
  auto Close = [&](uint64_t A, uint64_t B) {
    return (A > B ? A - B : B - A) < Near;
  };
  for (Window &Win : Windows) {
    if (!Win.OpenMatched && Win.OpenTid == Tid && Win.OpenName == Name &&
        Close(Ts, Win.Rec.Open)) {
      Win.OpenMatched = true;
      return true;
    }
    if (Win.Closed && !Win.CloseMatched && Win.CloseTid == Tid &&
        Win.CloseName == Name && Close(Ts, Win.Rec.Close)) {
      Win.CloseMatched = true;
      return false;
    }
  }
  for (const Window &Win : Windows)
    if (Ts >= Win.Rec.Open && (!Win.Closed || Ts < Win.Rec.Close))
      return true;
  return false;
}

void ActivityEncoder::sawThread(uint32_t ProcessId, uint32_t Tid) {
  uint64_t Key = (static_cast<uint64_t>(ProcessId) << 32) | Tid;
  if (!Threads.try_emplace(Key, true).second || ProcessId != Pid)
    return;
  std::string Name = ThreadName ? ThreadName(ProcessId, Tid) : "";
  if (Name.empty())
    return;
  cf::ThreadRecord R;
  R.Pid = ProcessId;
  R.Tid = Tid;
  R.NameStr = W.string(Name);
  W.add(R);
}

uint32_t ActivityEncoder::apiName(uint8_t Domain, uint32_t Cbid) {
  uint64_t Key = (static_cast<uint64_t>(Domain) << 32) | Cbid;
  auto [It, New] = ApiNames.try_emplace(Key, 0);
  if (New) {
    const char *Name = nullptr;
    CUpti_CallbackDomain D = Domain == cf::RuntimeApi
                                 ? CUPTI_CB_DOMAIN_RUNTIME_API
                                 : CUPTI_CB_DOMAIN_DRIVER_API;
    if (cuptiGetCallbackName(D, Cbid, &Name) == CUPTI_SUCCESS && Name)
      It->second = W.string(Name);
  }
  return It->second;
}

void ActivityEncoder::addApi(const CUpti_ActivityAPI *A, uint8_t Domain) {
  sawThread(A->processId, A->threadId);
  cf::ApiRecord R;
  R.Start = A->start;
  R.End = A->end;
  R.Pid = A->processId;
  R.Tid = A->threadId;
  R.Correlation = A->correlationId;
  R.Cbid = A->cbid;
  R.NameStr = apiName(Domain, A->cbid);
  R.ReturnValue = A->returnValue;
  R.Domain = Domain;
  W.add(R);
}

void ActivityEncoder::addMarker(const CUpti_ActivityMarker2 *M) {
  bool Thread = M->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD;
  uint32_t ProcessId = M->objectId.pt.processId;
  uint32_t Tid = Thread ? M->objectId.pt.threadId : 0;
  if (M->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto It = OpenRanges.find(M->id);
    if (It == OpenRanges.end())
      return; // begun outside the windows
    It->second.End = M->timestamp;
    W.add(It->second);
    OpenRanges.erase(It);
    return;
  }
  bool Instant = M->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
  if (!Instant && !(M->flags & CUPTI_ACTIVITY_FLAG_MARKER_START))
    return; // synchronisation markers
  std::string Name = M->name ? M->name : "";
  if (!keepRangeStart(M->timestamp, Tid, Name))
    return;
  if (Thread)
    sawThread(ProcessId, Tid);
  cf::MarkerRecord R;
  R.Start = R.End = M->timestamp;
  R.Pid = ProcessId;
  R.Tid = Tid;
  R.NameStr = W.string(Name);
  R.DomainStr = W.string(M->domain ? M->domain : "");
  R.Id = M->id;
  R.Flags = (Instant ? uint32_t(cf::MarkerInstant) : 0u) |
            (Thread ? 0u : uint32_t(cf::MarkerProcessRange));
  if (Instant)
    W.add(R);
  else
    OpenRanges[M->id] = R;
}

void ActivityEncoder::add(const CUpti_Activity *Rec) {
  switch (Rec->kind) {
  case CUPTI_ACTIVITY_KIND_RUNTIME:
    addApi(reinterpret_cast<const CUpti_ActivityAPI *>(Rec), cf::RuntimeApi);
    return;
  case CUPTI_ACTIVITY_KIND_DRIVER:
    addApi(reinterpret_cast<const CUpti_ActivityAPI *>(Rec), cf::DriverApi);
    return;
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const auto *K = reinterpret_cast<const CUpti_ActivityKernel10 *>(Rec);
    cf::KernelRecord R;
    R.Start = K->start;
    R.End = K->end;
    R.Queued = K->queued == CUPTI_TIMESTAMP_UNKNOWN ? 0 : K->queued;
    R.Submitted = K->submitted == CUPTI_TIMESTAMP_UNKNOWN ? 0 : K->submitted;
    R.Device = K->deviceId;
    R.Context = K->contextId;
    R.Stream = K->streamId;
    R.Correlation = K->correlationId;
    R.NameStr = W.string(K->name ? K->name : "");
    R.GridX = K->gridX, R.GridY = K->gridY, R.GridZ = K->gridZ;
    R.BlockX = K->blockX, R.BlockY = K->blockY, R.BlockZ = K->blockZ;
    R.StaticSharedMemory = K->staticSharedMemory;
    R.DynamicSharedMemory = K->dynamicSharedMemory;
    R.RegistersPerThread = K->registersPerThread;
    R.GraphId = K->graphId;
    R.GraphNodeId = K->graphNodeId;
    R.LaunchType = K->launchType;
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const auto *M = reinterpret_cast<const CUpti_ActivityMemcpy6 *>(Rec);
    cf::MemcpyRecord R;
    R.Start = M->start;
    R.End = M->end;
    R.Bytes = M->bytes;
    R.Device = R.SrcDevice = R.DstDevice = M->deviceId;
    R.Context = M->contextId;
    R.Stream = M->streamId;
    R.Correlation = M->correlationId;
    R.CopyKind = M->copyKind, R.SrcKind = M->srcKind, R.DstKind = M->dstKind;
    R.Flags = M->flags;
    R.GraphId = M->graphId;
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY2: {
    const auto *M = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4 *>(Rec);
    cf::MemcpyRecord R;
    R.Start = M->start;
    R.End = M->end;
    R.Bytes = M->bytes;
    R.Device = M->deviceId;
    R.SrcDevice = M->srcDeviceId;
    R.DstDevice = M->dstDeviceId;
    R.Context = M->contextId;
    R.Stream = M->streamId;
    R.Correlation = M->correlationId;
    R.CopyKind = M->copyKind, R.SrcKind = M->srcKind, R.DstKind = M->dstKind;
    R.Flags = M->flags;
    R.GraphId = M->graphId;
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const auto *M = reinterpret_cast<const CUpti_ActivityMemset4 *>(Rec);
    cf::MemsetRecord R;
    R.Start = M->start;
    R.End = M->end;
    R.Bytes = M->bytes;
    R.Device = M->deviceId;
    R.Context = M->contextId;
    R.Stream = M->streamId;
    R.Correlation = M->correlationId;
    R.Value = M->value;
    R.MemoryKind = M->memoryKind;
    R.Flags = M->flags;
    R.GraphId = M->graphId;
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
    const auto *S =
        reinterpret_cast<const CUpti_ActivitySynchronization2 *>(Rec);
    cf::SyncRecord R;
    R.Start = S->start;
    R.End = S->end;
    R.SyncType = static_cast<uint32_t>(S->type);
    R.Correlation = S->correlationId;
    R.Context = S->contextId;
    R.Stream = S->streamId;
    R.CudaEventId = S->cudaEventId;
    R.CudaEventSyncId = S->cudaEventSyncId;
    R.ReturnValue = S->returnValue;
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
    const auto *E = reinterpret_cast<const CUpti_ActivityCudaEvent2 *>(Rec);
    cf::CudaEventRecord R;
    R.DeviceTimestamp =
        E->deviceTimestamp == CUPTI_TIMESTAMP_UNKNOWN ? 0 : E->deviceTimestamp;
    R.Correlation = E->correlationId;
    R.Context = E->contextId;
    R.Stream = E->streamId;
    R.EventId = E->eventId;
    R.Device = E->deviceId;
    R.CudaEventSyncId = E->cudaEventSyncId;
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
    const auto *E =
        reinterpret_cast<const CUpti_ActivityExternalCorrelation *>(Rec);
    cf::ExternalCorrelationRecord R;
    R.Kind = static_cast<uint32_t>(E->externalKind);
    R.Correlation = E->correlationId;
    R.ExternalId = E->externalId;
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_MARKER:
    addMarker(reinterpret_cast<const CUpti_ActivityMarker2 *>(Rec));
    return;
  case CUPTI_ACTIVITY_KIND_MEMORY2: {
    const auto *M = reinterpret_cast<const CUpti_ActivityMemory4 *>(Rec);
    cf::MemoryRecord R;
    R.Timestamp = M->timestamp;
    R.Address = M->address;
    R.Bytes = M->bytes;
    R.Pc = M->PC;
    R.Operation = static_cast<uint32_t>(M->memoryOperationType);
    R.MemoryKind = static_cast<uint32_t>(M->memoryKind);
    R.Correlation = M->correlationId;
    R.Pid = M->processId;
    R.Device = M->deviceId;
    R.Context = M->contextId;
    R.Stream = M->streamId;
    R.IsAsync = M->isAsync;
    R.MemoryPoolType =
        static_cast<uint32_t>(M->memoryPoolConfig.memoryPoolType);
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_OVERHEAD: {
    const auto *O = reinterpret_cast<const CUpti_ActivityOverhead3 *>(Rec);
    cf::OverheadRecord R;
    R.Start = O->start;
    R.End = O->end;
    R.OverheadKind = static_cast<uint32_t>(O->overheadKind);
    R.ObjectKind = static_cast<uint32_t>(O->objectKind);
    if (O->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS ||
        O->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
      R.ObjectId0 = O->objectId.pt.processId;
      R.ObjectId1 = O->objectId.pt.threadId;
      if (O->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
        sawThread(R.ObjectId0, R.ObjectId1);
    } else {
      R.ObjectId0 = O->objectId.dcs.deviceId;
      R.ObjectId1 = O->objectId.dcs.contextId;
    }
    R.Correlation = O->correlationId;
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_DEVICE: {
    const auto *D = reinterpret_cast<const CUpti_ActivityDevice5 *>(Rec);
    cf::DeviceRecord R;
    R.Id = D->id;
    R.NameStr = W.string(D->name ? D->name : "");
    R.GlobalMemorySize = D->globalMemorySize;
    R.GlobalMemoryBandwidth = D->globalMemoryBandwidth;
    R.NumSms = D->numMultiprocessors;
    R.ComputeMajor = D->computeCapabilityMajor;
    R.ComputeMinor = D->computeCapabilityMinor;
    R.CoreClockKHz = D->coreClockRate;
    R.L2CacheSize = D->l2CacheSize;
    R.MaxThreadsPerBlock = D->maxThreadsPerBlock;
    W.add(R);
    return;
  }
  case CUPTI_ACTIVITY_KIND_CONTEXT: {
    const auto *C = reinterpret_cast<const CUpti_ActivityContext3 *>(Rec);
    cf::ContextRecord R;
    R.Context = C->contextId;
    R.Device = C->deviceId;
    R.NullStream = C->nullStreamId;
    W.add(R);
    return;
  }
  default:
    ++Unknown;
    return;
  }
}

void ActivityEncoder::dropped(uint64_t N) {
  if (!N)
    return;
  cf::DroppedRecord R;
  R.Count = N;
  W.add(R);
}

void ActivityEncoder::note(uint32_t Severity, const std::string &Text) {
  cf::NoteRecord R;
  R.Severity = Severity;
  R.Text = Text;
  W.add(R);
}

void ActivityEncoder::finish() {
  for (auto &[Id, R] : OpenRanges) {
    R.End = 0;
    R.Flags |= cf::MarkerUnfinished;
    W.add(R);
  }
  OpenRanges.clear();
  for (Window &Win : Windows)
    W.add(Win.Rec);
  Windows.clear();
}

size_t dd::cupti::walkBuffer(uint8_t *Buffer, size_t ValidSize,
                             ActivityEncoder &E) {
  size_t N = 0;
  CUpti_Activity *Rec = nullptr;
  while (cuptiActivityGetNextRecord(Buffer, ValidSize, &Rec) == CUPTI_SUCCESS) {
    E.add(Rec);
    ++N;
  }
  return N;
}

#include "trace/Trace.h"

#include "support/Prefault.h"

#include <cassert>
#include <charconv>

using namespace dd;
using namespace dd::trace;

const char *trace::eventKindName(EventKind K) {
  switch (K) {
  case EventKind::CpuOp:
    return "cpu_op";
  case EventKind::UserAnnotation:
    return "user_annotation";
  case EventKind::PythonFunction:
    return "python_function";
  case EventKind::Runtime:
    return "cuda_runtime";
  case EventKind::Driver:
    return "cuda_driver";
  case EventKind::Marker:
    return "marker";
  case EventKind::Overhead:
    return "overhead";
  case EventKind::Kernel:
    return "kernel";
  case EventKind::Memcpy:
    return "gpu_memcpy";
  case EventKind::Memset:
    return "gpu_memset";
  case EventKind::GpuAnnotation:
    return "gpu_user_annotation";
  case EventKind::CudaSync:
    return "cuda_sync";
  case EventKind::CudaEvent:
    return "cuda_event";
  }
  return "?";
}

const char *trace::argKeyName(ArgKey K) {
  static const char *const Names[] = {"cbid",
                                      "cuda_sync_kind",
                                      "wait_on_stream",
                                      "wait_on_cuda_event_record_corr_id",
                                      "wait_on_cuda_event_id",
                                      "event_id",
                                      "Collective name",
                                      "In msg nelems",
                                      "Out msg nelems",
                                      "In msg size",
                                      "Out msg size",
                                      "dtype",
                                      "Group size",
                                      "Process Group Name",
                                      "Input Dims",
                                      "Input type",
                                      "Concrete Inputs",
                                      "Module Hierarchy",
                                      "Record function id",
                                      "graph id",
                                      "Process Group Ranks"};
  static_assert(sizeof(Names) / sizeof(Names[0]) ==
                static_cast<size_t>(ArgKey::Count));
  return Names[static_cast<size_t>(K)];
}

const char *trace::sourceFormatName(SourceFormat F) {
  switch (F) {
  case SourceFormat::KinetoJson:
    return "PyTorch profiler (Kineto JSON)";
  case SourceFormat::KinetoJsonLegacy:
    return "PyTorch profiler (Kineto JSON, 2021 schema)";
  case SourceFormat::Cupti:
    return "ddscript CUPTI collector (run.cupti)";
  }
  return "?";
}

const Arg *Trace::arg(EventId E, ArgKey K) const {
  for (uint32_t I = ArgsBegin[E], End = ArgsBegin[E + 1]; I != End; ++I)
    if (Args[I].Key == K)
      return &Args[I];
  return nullptr;
}

std::optional<int64_t> Trace::intArg(EventId E, ArgKey K) const {
  const Arg *A = arg(E, K);
  if (!A || A->IsString)
    return std::nullopt;
  return A->Value;
}

std::optional<std::string_view> Trace::strArg(EventId E, ArgKey K) const {
  const Arg *A = arg(E, K);
  if (!A || !A->IsString)
    return std::nullopt;
  return Strings.str(static_cast<StringId>(A->Value));
}

static int64_t parseInt(std::string_view S) {
  int64_t V = 0;
  auto [Ptr, Ec] = std::from_chars(S.data(), S.data() + S.size(), V);
  if (Ec != std::errc() || Ptr != S.data() + S.size())
    return NoValue;
  return V;
}

TrackId Trace::internTrack(std::string_view RawPid, std::string_view RawTid) {
  StringId P = Strings.intern(RawPid), T = Strings.intern(RawTid);
  uint64_t Key = (static_cast<uint64_t>(P) << 32) | T;
  auto [It, Inserted] =
      TrackIndex.try_emplace(Key, static_cast<TrackId>(Tracks.size()));
  if (Inserted) {
    Track Tr;
    Tr.RawPid = P;
    Tr.RawTid = T;
    Tr.Pid = parseInt(RawPid);
    Tr.Tid = parseInt(RawTid);
    Tracks.push_back(Tr);
  }
  return It->second;
}

TrackId Trace::deviceTrack(int32_t Device, int64_t Stream) {
  assert(Device >= -1 && Device <= MaxDeviceIndex && "readers check devices");
  auto [It, Inserted] = DeviceTrackIndex.try_emplace(
      {Device, Stream}, static_cast<TrackId>(Tracks.size()));
  if (Inserted) {
    Track Tr;
    Tr.IsDevice = true;
    Tr.Device = Device;
    Tr.Stream = Stream;
    Tr.Pid = Device;
    Tr.Tid = Stream;
    Tracks.push_back(Tr);
  }
  return It->second;
}

void Trace::reserveEvents(size_t N) {
  for (auto *V :
       {&Correlation, &ExternalId, &SeqNumber, &Bytes, &Start, &Dur}) {
    V->reserve(N);
    prefaultCapacity(*V);
  }
  Kind.reserve(N);
  Name.reserve(N);
  TrackOf.reserve(N);
  FwdThread.reserve(N);
  ArgsBegin.reserve(N + 1);
  Args.reserve(N);
  Flows.reserve(N / 2);
  prefaultCapacity(Name);
  prefaultCapacity(TrackOf);
  prefaultCapacity(FwdThread);
  prefaultCapacity(ArgsBegin);
  prefaultCapacity(Args);
  prefaultCapacity(Flows);
}

EventId Trace::addEvent(EventKind K, StringId EvName, TrackId T,
                        int64_t StartNs, int64_t DurNs,
                        llvm::ArrayRef<Arg> EventArgs) {
  EventId Id = static_cast<EventId>(Kind.size());
  Kind.push_back(K);
  Name.push_back(EvName);
  TrackOf.push_back(T);
  Start.push_back(StartNs);
  Dur.push_back(DurNs);
  Correlation.push_back(NoValue);
  ExternalId.push_back(NoValue);
  SeqNumber.push_back(NoValue);
  FwdThread.push_back(-1);
  Bytes.push_back(NoValue);
  Args.insert(Args.end(), EventArgs.begin(), EventArgs.end());
  ArgsBegin.push_back(static_cast<uint32_t>(Args.size()));
  return Id;
}

std::string Trace::trackLabel(TrackId Id) const {
  const Track &T = Tracks[Id];
  std::string Label;
  if (T.IsDevice) {
    Label = "GPU " + std::to_string(T.Device) + " stream " +
            std::to_string(T.Stream);
    return Label;
  }
  Label = "thread ";
  Label += T.Tid != NoValue ? std::to_string(T.Tid)
                            : std::string(Strings.str(T.RawTid));
  if (T.Name) {
    Label += " (";
    Label += Strings.str(T.Name);
    Label += ")";
  }
  return Label;
}

std::string Trace::noMemoryRecordsReason() const {
  if (Format == SourceFormat::Cupti)
    return "the run.cupti file holds no allocation records (the collector "
           "records the device allocations CUPTI sees, cudaMalloc and "
           "cudaFree and their driver forms, from the start of the process; "
           "this process made none, or was recorded by an older collector)";
  if (DroppedMemoryRecords)
    return "the trace's " + std::to_string(DroppedMemoryRecords) +
           " [memory] events were taken out of the file after it was "
           "recorded (its \"ddscriptDroppedMemoryRecords\" says so): give "
           "the trace as recorded";
  return "the trace has no [memory] events (record it with "
         "torch.profiler.profile(profile_memory=True))";
}

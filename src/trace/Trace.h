//===- Trace.h - The in-memory trace model ----------------------*- C++ -*-===//
//
// One normalised, columnar representation of a profiled run, filled by every
// reader (Kineto/PyTorch-profiler JSON, the run.cupti format). Times are
// int64 nanoseconds on the trace's own clock: for Kineto traces written with
// baseTimeNanoseconds the values are relative to it (BaseTimeNs holds it),
// older traces carry absolute epoch times.
//
// Events are "complete" intervals (Chrome ph:X) stored as struct-of-arrays and
// addressed by 32-bit EventId. Rare per-event arguments live in a sparse CSR
// table (ArgsBegin/Args) keyed by ArgKey. Flows, memory records and metadata
// have tables of their own.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_TRACE_H
#define DD_TRACE_TRACE_H

#include "support/StringPool.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dd::trace {

using EventId = uint32_t;
using TrackId = uint32_t;
constexpr EventId NoEvent = ~0u;
constexpr int64_t NoValue = INT64_MIN;
/// The largest GPU index a trace may name; -1 stands for an unknown device.
/// Readers refuse others, so that device ids fit in 32 bits and stay clear
/// of the keys maps keyed by device reserve.
constexpr int64_t MaxDeviceIndex = 65535;

/// What an interval event is. Host-side kinds come first.
enum class EventKind : uint8_t {
  CpuOp,          ///< cpu_op / Operator: an ATen operator or autograd node
  UserAnnotation, ///< user_annotation: record_function ranges, ProfilerStep#N
  PythonFunction, ///< python_function (only nn.Module ranges are kept)
  Runtime,        ///< cuda_runtime / Runtime: a CUDA runtime API call
  Driver,         ///< cuda_driver: a CUDA driver API call
  Marker,         ///< an NVTX range recorded by the CUPTI collector
  Overhead,       ///< profiler overhead (CUPTI buffer flushes and the like)
  Kernel,         ///< a GPU kernel
  Memcpy,         ///< a GPU memory copy
  Memset,         ///< a GPU memory set
  GpuAnnotation,  ///< gpu_user_annotation: an annotation mirrored on a stream
  CudaSync,       ///< cuda_sync: stream/context/event sync, stream wait event
  CudaEvent,      ///< cuda_event: an event record executed on the device
};
constexpr unsigned NumEventKinds = 13;
const char *eventKindName(EventKind K);
inline bool isDeviceKind(EventKind K) { return K >= EventKind::Kernel; }
inline bool isGpuWork(EventKind K) {
  return K == EventKind::Kernel || K == EventKind::Memcpy ||
         K == EventKind::Memset;
}

/// Sparse per-event arguments that only some events carry.
enum class ArgKey : uint8_t {
  Cbid,              ///< CUDA callback id of a runtime/driver call
  SyncKind,          ///< cuda_sync_kind (string)
  WaitOnStream,      ///< stream a Stream Wait Event / Event Sync waits on
  WaitOnEventCorr,   ///< correlation id of the cudaEventRecord waited on
  WaitOnEventId,     ///< CUDA event id waited on
  CudaEventId,       ///< event_id of a cuda_event record
  CollectiveName,    ///< NCCL collective (string)
  InMsgNelems,       ///< elements sent by a collective
  OutMsgNelems,      ///< elements received by a collective
  InMsgSize,         ///< older spelling: bytes sent
  OutMsgSize,        ///< older spelling: bytes received
  Dtype,             ///< element type of a collective (string)
  GroupSize,         ///< process-group size of a collective
  ProcessGroupName,  ///< (string)
  InputDims,         ///< raw JSON of "Input Dims" (string)
  InputTypes,        ///< raw JSON of "Input type" (string)
  ConcreteInputs,    ///< raw JSON of "Concrete Inputs" (string)
  ModuleHierarchy,   ///< "Module Hierarchy" (string)
  RecordFunctionId,  ///< "Record function id"
  GraphId,           ///< CUDA graph id of a kernel launched from a graph
  ProcessGroupRanks, ///< global ranks of a collective's group, "[0, 1]"
  Count
};
const char *argKeyName(ArgKey K);

struct Arg {
  ArgKey Key;
  bool IsString; ///< Value is a StringId
  int64_t Value;
};

/// A timeline row: a CPU thread of a process, or a GPU stream of a device.
struct Track {
  StringId RawPid = 0;      ///< pid as written in the trace (may be a name)
  StringId RawTid = 0;      ///< tid as written in the trace
  int64_t Pid = NoValue;    ///< numeric pid, when it is one
  int64_t Tid = NoValue;    ///< numeric tid, when it is one
  StringId Name = 0;        ///< from thread_name metadata, if any
  bool IsDevice = false;    ///< holds GPU work (kernels, copies, syncs)
  int32_t Device = -1;      ///< GPU index for device tracks
  int64_t Stream = NoValue; ///< CUDA stream id for device tracks
};

enum class FlowKind : uint8_t { Launch, FwdBwd, Other };

/// One end of a Chrome flow arrow (ph s / t / f).
struct FlowPoint {
  FlowKind Kind;
  char Phase;         ///< 's', 't' or 'f'
  bool BindEnclosing; ///< 'f' with bp:"e": binds to the enclosing slice
  uint64_t Id;
  int64_t Ts;
  TrackId Track;
};

/// A caching-allocator record ([memory] instant event or a CUPTI memory
/// record): Bytes > 0 allocates, Bytes < 0 frees.
struct MemoryRecord {
  int64_t Ts;
  TrackId Track;
  uint64_t Addr;
  int64_t Bytes;
  int64_t TotalAllocated; ///< NoValue when absent
  int64_t TotalReserved;  ///< NoValue when absent
  int32_t DeviceType;     ///< 0 CPU, 1 CUDA (PyTorch's c10::DeviceType)
  int32_t DeviceId;
  /// The stream the allocation is for (CUPTI records it, Kineto does not);
  /// NoValue when unknown.
  int64_t Stream = NoValue;
};

struct DeviceInfo {
  int32_t Id = -1;
  std::string Name;
  int64_t TotalGlobalMem = 0;
  int32_t ComputeMajor = 0, ComputeMinor = 0;
  int32_t NumSms = 0;
};

struct DistributedInfo {
  bool Present = false;
  std::string Backend;
  int64_t Rank = -1;
  int64_t WorldSize = -1;
  std::string NcclVersion;
};

enum class SourceFormat : uint8_t { KinetoJson, KinetoJsonLegacy, Cupti };
const char *sourceFormatName(SourceFormat F);

class Trace {
public:
  std::string Path;
  SourceFormat Format = SourceFormat::KinetoJson;
  /// Recorded by ddscript's own collector (run.cupti, or JSON `convert`
  /// wrote from one: its "ddscriptCollector" key), not the PyTorch profiler.
  bool FromCollector = false;
  /// The allocator's records ([memory] events) a tool took out of the file
  /// after it was recorded, by its "ddscriptDroppedMemoryRecords" key
  /// (tests/tools/strip_trace.py --drop-memory): the run was recorded with
  /// profile_memory, and Memory is empty for that reason.
  uint64_t DroppedMemoryRecords = 0;
  int64_t SchemaVersion = 0;
  std::optional<int64_t> BaseTimeNs;
  std::vector<DeviceInfo> Devices;
  DistributedInfo Distributed;
  std::vector<std::string> Warnings;
  /// Events seen but not modelled, by category, for `inspect`.
  std::vector<std::pair<std::string, uint64_t>> SkippedCategories;

  StringPool Strings;
  std::vector<Track> Tracks;

  // Interval events, struct-of-arrays.
  std::vector<EventKind> Kind;
  std::vector<StringId> Name;
  std::vector<TrackId> TrackOf;
  std::vector<int64_t> Start;       ///< ns
  std::vector<int64_t> Dur;         ///< ns, >= 0
  std::vector<int64_t> Correlation; ///< CUPTI correlation id, or NoValue
  std::vector<int64_t> ExternalId;  ///< PyTorch External id, or NoValue
  std::vector<int64_t> SeqNumber;   ///< autograd Sequence number, or NoValue
  std::vector<int32_t> FwdThread;   ///< "Fwd thread id", or -1
  std::vector<int64_t> Bytes;       ///< copy/set size, or NoValue
  std::vector<uint32_t> ArgsBegin;  ///< CSR into Args; size() == events + 1
  std::vector<Arg> Args;

  std::vector<FlowPoint> Flows;
  std::vector<MemoryRecord> Memory;

  Trace() { ArgsBegin.push_back(0); }

  size_t numEvents() const { return Kind.size(); }
  std::string_view str(StringId Id) const { return Strings.str(Id); }
  std::string_view name(EventId E) const { return Strings.str(Name[E]); }
  int64_t end(EventId E) const { return Start[E] + Dur[E]; }
  const Track &track(EventId E) const { return Tracks[TrackOf[E]]; }

  /// The argument \p K of event \p E, if it has one.
  const Arg *arg(EventId E, ArgKey K) const;
  std::optional<int64_t> intArg(EventId E, ArgKey K) const;
  std::optional<std::string_view> strArg(EventId E, ArgKey K) const;

  /// Finds or adds the track written as (pid, tid).
  TrackId internTrack(std::string_view RawPid, std::string_view RawTid);
  /// Finds or adds the device track for (device, stream).
  TrackId deviceTrack(int32_t Device, int64_t Stream);

  /// Makes room for about \p N events (readers that can estimate the count
  /// spare the columns their reallocations; room never touched costs no
  /// memory).
  void reserveEvents(size_t N);

  /// Appends an event; its arguments are \p EventArgs.
  EventId addEvent(EventKind K, StringId EvName, TrackId T, int64_t StartNs,
                   int64_t DurNs, llvm::ArrayRef<Arg> EventArgs = {});

  /// Why a trace has no memory records and how to get them, for messages:
  /// "the trace has no [memory] events (record ...)" for Kineto JSON, what
  /// the collector records for run.cupti files.
  std::string noMemoryRecordsReason() const;

  /// A display label for a track ("thread 123 (pt_main_thread)", "stream 7").
  std::string trackLabel(TrackId T) const;

private:
  llvm::DenseMap<uint64_t, TrackId> TrackIndex; // (RawPid, RawTid)
  /// (device, stream): every stream id a trace can hold, -1 and 2^32 - 1
  /// included, is a key (packed into one integer, some would be the keys the
  /// map reserves).
  std::map<std::pair<int32_t, int64_t>, TrackId> DeviceTrackIndex;
};

} // namespace dd::trace

#endif

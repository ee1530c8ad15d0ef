//===- CuptiFormat.h - The run.cupti file format ----------------*- C++ -*-===//
//
// The one definition of the run.cupti format, shared by its writer (the
// CUPTI collector in runtime/, which runs inside the profiled process and
// must depend on nothing but the C++ standard library) and its reader
// (trace/CuptiReader.cpp). docs/trace-format.md describes the format for
// people; this header is what both sides compile.
//
// A file is a 16-byte header followed by framed records:
//
//   header  char[8] magic "DDCUPTI\0", u16 major, u16 minor, u32 header size
//   record  u16 type, u16 flags (0), u32 payload size, payload
//
// All integers are little-endian and unaligned; there is no padding. Each
// record type's payload is the fields its struct lists in fields(), in that
// order. A newer minor version may append fields to a record (readers ignore
// payload bytes past the fields they know) or add record types (readers skip
// types they do not know); anything else needs a new major version. String
// and Note records end in text and never grow. The last record is End.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_CUPTIFORMAT_H
#define DD_TRACE_CUPTIFORMAT_H

#include <cstdint>
#include <string>
#include <type_traits>

namespace dd::cuptifmt {

constexpr char Magic[8] = {'D', 'D', 'C', 'U', 'P', 'T', 'I', '\0'};
constexpr uint16_t MajorVersion = 1;
constexpr uint16_t MinorVersion = 0;
constexpr uint32_t HeaderSize = 16;
constexpr uint32_t FrameSize = 8;
/// CUPTI's "not applicable" value for stream, event and context ids.
constexpr uint32_t InvalidId = 0xffffffffu;

/// The record types, from CuptiRecords.def (ids there are the format's).
enum class RecordType : uint16_t {
#define DD_CUPTI_RECORD(Name, Id) Name = Id,
#include "trace/CuptiRecords.def"
};

inline const char *recordTypeName(RecordType T) {
  switch (T) {
#define DD_CUPTI_RECORD(Name, Id)                                              \
  case RecordType::Name:                                                       \
    return #Name;
#include "trace/CuptiRecords.def"
  }
  return nullptr;
}

// Each record lists its fields once, in file order, through
// `template <class F> void fields(F &&Field)`: the writer encodes with it,
// the reader decodes with it, and minSize() counts it. A std::string field
// takes the rest of the payload and must come last. String ids refer to
// String records that come earlier in the file; id 0 is "no string".

/// First record: who recorded and how to map CUPTI time to Unix time.
struct ProcessRecord {
  static constexpr RecordType Type = RecordType::Process;
  uint32_t Pid = 0;
  uint32_t CuptiVersion = 0; ///< cuptiGetVersion()
  uint64_t SyncCuptiNs = 0;  ///< cuptiGetTimestamp() ...
  uint64_t SyncUnixNs = 0;   ///< ... and CLOCK_REALTIME, read together
  uint32_t WindowMode = 0;   ///< a WindowMode value
  uint32_t Skip = 0;         ///< iterations skipped (iteration mode)
  uint32_t Iterations = 0;   ///< iterations recorded; 0: until exit
  uint32_t CommandStr = 0;   ///< the process's command line
  template <class F> void fields(F &&Field) {
    Field(Pid), Field(CuptiVersion), Field(SyncCuptiNs), Field(SyncUnixNs),
        Field(WindowMode), Field(Skip), Field(Iterations), Field(CommandStr);
  }
};

enum WindowMode : uint32_t {
  WholeRun = 0,    ///< from CUDA initialisation to exit
  Iteration = 1,   ///< ProfilerStep#N NVTX ranges: skip N, record K
  ProfilerApi = 2, ///< between cuProfilerStart and cuProfilerStop
};

struct StringRecord {
  static constexpr RecordType Type = RecordType::String;
  uint32_t Id = 0; ///< 1, 2, 3... in file order
  std::string Text;
  template <class F> void fields(F &&Field) { Field(Id), Field(Text); }
};

/// CUpti_ActivityDevice5.
struct DeviceRecord {
  static constexpr RecordType Type = RecordType::Device;
  uint32_t Id = 0;
  uint32_t NameStr = 0;
  uint64_t GlobalMemorySize = 0;      ///< bytes
  uint64_t GlobalMemoryBandwidth = 0; ///< KiB/s
  uint32_t NumSms = 0;
  uint32_t ComputeMajor = 0, ComputeMinor = 0;
  uint32_t CoreClockKHz = 0;
  uint32_t L2CacheSize = 0;
  uint32_t MaxThreadsPerBlock = 0;
  template <class F> void fields(F &&Field) {
    Field(Id), Field(NameStr), Field(GlobalMemorySize),
        Field(GlobalMemoryBandwidth), Field(NumSms), Field(ComputeMajor),
        Field(ComputeMinor), Field(CoreClockKHz), Field(L2CacheSize),
        Field(MaxThreadsPerBlock);
  }
};

/// CUpti_ActivityContext3: which device a context id belongs to.
struct ContextRecord {
  static constexpr RecordType Type = RecordType::Context;
  uint32_t Context = 0, Device = 0, NullStream = 0;
  template <class F> void fields(F &&Field) {
    Field(Context), Field(Device), Field(NullStream);
  }
};

/// The name of a CPU thread (from /proc at record time).
struct ThreadRecord {
  static constexpr RecordType Type = RecordType::Thread;
  uint32_t Pid = 0, Tid = 0, NameStr = 0;
  template <class F> void fields(F &&Field) {
    Field(Pid), Field(Tid), Field(NameStr);
  }
};

enum ApiDomain : uint8_t { RuntimeApi = 1, DriverApi = 2 };

/// CUpti_ActivityAPI (RUNTIME and DRIVER kinds). NameStr is CUPTI's own
/// name for the callback id (cuptiGetCallbackName), e.g.
/// "cudaLaunchKernel_v7000".
struct ApiRecord {
  static constexpr RecordType Type = RecordType::Api;
  uint64_t Start = 0, End = 0;
  uint32_t Pid = 0, Tid = 0;
  uint32_t Correlation = 0;
  uint32_t Cbid = 0;
  uint32_t NameStr = 0;
  uint32_t ReturnValue = 0;
  uint8_t Domain = RuntimeApi;
  template <class F> void fields(F &&Field) {
    Field(Start), Field(End), Field(Pid), Field(Tid), Field(Correlation),
        Field(Cbid), Field(NameStr), Field(ReturnValue), Field(Domain);
  }
};

/// CUpti_ActivityKernel10 (CONCURRENT_KERNEL). NameStr is the mangled name.
struct KernelRecord {
  static constexpr RecordType Type = RecordType::Kernel;
  uint64_t Start = 0, End = 0;
  uint64_t Queued = 0, Submitted = 0; ///< 0 unless latency stamps are on
  uint32_t Device = 0, Context = 0, Stream = 0, Correlation = 0;
  uint32_t NameStr = 0;
  int32_t GridX = 0, GridY = 0, GridZ = 0;
  int32_t BlockX = 0, BlockY = 0, BlockZ = 0;
  int32_t StaticSharedMemory = 0, DynamicSharedMemory = 0;
  uint32_t RegistersPerThread = 0;
  uint32_t GraphId = 0;
  uint64_t GraphNodeId = 0;
  uint8_t LaunchType = 0;
  template <class F> void fields(F &&Field) {
    Field(Start), Field(End), Field(Queued), Field(Submitted), Field(Device),
        Field(Context), Field(Stream), Field(Correlation), Field(NameStr),
        Field(GridX), Field(GridY), Field(GridZ), Field(BlockX), Field(BlockY),
        Field(BlockZ), Field(StaticSharedMemory), Field(DynamicSharedMemory),
        Field(RegistersPerThread), Field(GraphId), Field(GraphNodeId),
        Field(LaunchType);
  }
};

/// CUpti_ActivityMemcpy6 (MEMCPY) and CUpti_ActivityMemcpyPtoP4 (MEMCPY2).
struct MemcpyRecord {
  static constexpr RecordType Type = RecordType::Memcpy;
  uint64_t Start = 0, End = 0, Bytes = 0;
  uint32_t Device = 0, Context = 0, Stream = 0, Correlation = 0;
  uint8_t CopyKind = 0, SrcKind = 0, DstKind = 0, Flags = 0;
  uint32_t SrcDevice = 0, DstDevice = 0; ///< = Device unless peer-to-peer
  uint32_t GraphId = 0;
  template <class F> void fields(F &&Field) {
    Field(Start), Field(End), Field(Bytes), Field(Device), Field(Context),
        Field(Stream), Field(Correlation), Field(CopyKind), Field(SrcKind),
        Field(DstKind), Field(Flags), Field(SrcDevice), Field(DstDevice),
        Field(GraphId);
  }
};

/// CUpti_ActivityMemset4.
struct MemsetRecord {
  static constexpr RecordType Type = RecordType::Memset;
  uint64_t Start = 0, End = 0, Bytes = 0;
  uint32_t Device = 0, Context = 0, Stream = 0, Correlation = 0;
  uint32_t Value = 0;
  uint16_t MemoryKind = 0, Flags = 0;
  uint32_t GraphId = 0;
  template <class F> void fields(F &&Field) {
    Field(Start), Field(End), Field(Bytes), Field(Device), Field(Context),
        Field(Stream), Field(Correlation), Field(Value), Field(MemoryKind),
        Field(Flags), Field(GraphId);
  }
};

/// CUpti_ActivitySynchronization2. Type is CUpti_ActivitySynchronizationType
/// (1 event sync, 2 stream wait event, 3 stream sync, 4 context sync);
/// Stream and CudaEventId are InvalidId where they do not apply.
struct SyncRecord {
  static constexpr RecordType Type = RecordType::Sync;
  uint64_t Start = 0, End = 0;
  uint32_t SyncType = 0;
  uint32_t Correlation = 0, Context = 0, Stream = 0, CudaEventId = 0;
  uint64_t CudaEventSyncId = 0; ///< joins the CudaEvent record waited on
  uint32_t ReturnValue = 0;
  template <class F> void fields(F &&Field) {
    Field(Start), Field(End), Field(SyncType), Field(Correlation),
        Field(Context), Field(Stream), Field(CudaEventId),
        Field(CudaEventSyncId), Field(ReturnValue);
  }
};

/// CUpti_ActivityCudaEvent2: a cudaEventRecord and the stream it captured.
struct CudaEventRecord {
  static constexpr RecordType Type = RecordType::CudaEvent;
  uint64_t DeviceTimestamp = 0; ///< 0 when the device did not report it
  uint32_t Correlation = 0, Context = 0, Stream = 0, EventId = 0, Device = 0;
  uint64_t CudaEventSyncId = 0;
  template <class F> void fields(F &&Field) {
    Field(DeviceTimestamp), Field(Correlation), Field(Context), Field(Stream),
        Field(EventId), Field(Device), Field(CudaEventSyncId);
  }
};

/// CUpti_ActivityExternalCorrelation (kind: CUpti_ExternalCorrelationKind).
struct ExternalCorrelationRecord {
  static constexpr RecordType Type = RecordType::ExternalCorrelation;
  uint32_t Kind = 0, Correlation = 0;
  uint64_t ExternalId = 0;
  template <class F> void fields(F &&Field) {
    Field(Kind), Field(Correlation), Field(ExternalId);
  }
};

enum MarkerFlags : uint32_t {
  MarkerInstant = 1,     ///< nvtxMark: End == Start
  MarkerUnfinished = 2,  ///< no end was seen before the process exited
  MarkerProcessRange = 4 ///< nvtxRangeStart/End: not tied to a thread
};

/// An NVTX range: CUPTI's START and END CUpti_ActivityMarker2 records,
/// paired by the collector.
struct MarkerRecord {
  static constexpr RecordType Type = RecordType::Marker;
  uint64_t Start = 0, End = 0;
  uint32_t Pid = 0, Tid = 0;
  uint32_t NameStr = 0, DomainStr = 0;
  uint32_t Id = 0;
  uint32_t Flags = 0;
  template <class F> void fields(F &&Field) {
    Field(Start), Field(End), Field(Pid), Field(Tid), Field(NameStr),
        Field(DomainStr), Field(Id), Field(Flags);
  }
};

/// CUpti_ActivityMemory4 (MEMORY2): Operation 1 allocates, 2 releases;
/// MemoryKind is CUpti_ActivityMemoryKind.
struct MemoryRecord {
  static constexpr RecordType Type = RecordType::Memory;
  uint64_t Timestamp = 0, Address = 0, Bytes = 0, Pc = 0;
  uint32_t Operation = 0, MemoryKind = 0, Correlation = 0;
  uint32_t Pid = 0, Device = 0, Context = 0, Stream = 0;
  uint32_t IsAsync = 0;
  uint32_t MemoryPoolType = 0;
  template <class F> void fields(F &&Field) {
    Field(Timestamp), Field(Address), Field(Bytes), Field(Pc), Field(Operation),
        Field(MemoryKind), Field(Correlation), Field(Pid), Field(Device),
        Field(Context), Field(Stream), Field(IsAsync), Field(MemoryPoolType);
  }
};

/// CUpti_ActivityOverhead3. For a thread object (ObjectKind 2) ObjectId0 is
/// the pid and ObjectId1 the tid; for a process (1) ObjectId0 is the pid;
/// for a device (3) or context (4) ObjectId0 is the device and ObjectId1
/// the context.
struct OverheadRecord {
  static constexpr RecordType Type = RecordType::Overhead;
  uint64_t Start = 0, End = 0;
  uint32_t OverheadKind = 0, ObjectKind = 0, ObjectId0 = 0, ObjectId1 = 0;
  uint32_t Correlation = 0;
  template <class F> void fields(F &&Field) {
    Field(Start), Field(End), Field(OverheadKind), Field(ObjectKind),
        Field(ObjectId0), Field(ObjectId1), Field(Correlation);
  }
};

/// Records CUPTI could not store (cuptiActivityGetNumDroppedRecords).
struct DroppedRecord {
  static constexpr RecordType Type = RecordType::Dropped;
  uint64_t Count = 0;
  template <class F> void fields(F &&Field) { Field(Count); }
};

/// A recording window [Open, Close) in CUPTI time. Close is 0 when the
/// window was still open at exit.
struct WindowRecord {
  static constexpr RecordType Type = RecordType::Window;
  uint64_t Open = 0, Close = 0;
  uint32_t Mode = 0;           ///< WindowMode that opened it
  int64_t FirstIteration = -1; ///< N of the ProfilerStep#N that opened it
  uint32_t Iterations = 0;     ///< ProfilerStep#N ranges begun inside it
  template <class F> void fields(F &&Field) {
    Field(Open), Field(Close), Field(Mode), Field(FirstIteration),
        Field(Iterations);
  }
};

enum NoteSeverity : uint32_t { NoteInfo = 0, NoteWarning = 1, NoteError = 2 };

/// A message from the collector (CUPTI unavailable, nothing recorded...).
struct NoteRecord {
  static constexpr RecordType Type = RecordType::Note;
  uint32_t Severity = NoteInfo;
  std::string Text;
  template <class F> void fields(F &&Field) { Field(Severity), Field(Text); }
};

/// Last record: proves the file is complete.
struct EndRecord {
  static constexpr RecordType Type = RecordType::End;
  uint64_t Records = 0;      ///< records before this one, String included
  uint64_t DroppedTotal = 0; ///< sum of the Dropped records
  uint64_t SyncCuptiNs = 0, SyncUnixNs = 0; ///< a second clock pair
  template <class F> void fields(F &&Field) {
    Field(Records), Field(DroppedTotal), Field(SyncCuptiNs), Field(SyncUnixNs);
  }
};

/// The fixed payload size of \p R (its std::string field counts as empty).
template <class R> uint32_t minSize() {
  uint32_t N = 0;
  R Rec{};
  Rec.fields([&](auto &V) {
    using T = std::remove_reference_t<decltype(V)>;
    if constexpr (!std::is_same_v<T, std::string>)
      N += sizeof(T);
  });
  return N;
}

/// Appends \p V to \p Out, little-endian.
template <class T> inline void putLE(std::string &Out, T V) {
  static_assert(std::is_integral_v<T>);
  using U = std::make_unsigned_t<T>;
  U X = static_cast<U>(V);
  for (size_t I = 0; I < sizeof(T); ++I)
    Out.push_back(static_cast<char>((X >> (8 * I)) & 0xff));
}

/// Reads a little-endian \p T at \p P.
template <class T> inline T getLE(const unsigned char *P) {
  static_assert(std::is_integral_v<T>);
  using U = std::make_unsigned_t<T>;
  U X = 0;
  for (size_t I = 0; I < sizeof(T); ++I)
    X |= static_cast<U>(static_cast<U>(P[I]) << (8 * I));
  return static_cast<T>(X);
}

/// Appends the framed encoding of \p R to \p Out.
template <class R> void encode(R &Rec, std::string &Out) {
  size_t FrameAt = Out.size();
  putLE<uint16_t>(Out, static_cast<uint16_t>(R::Type));
  putLE<uint16_t>(Out, 0);
  putLE<uint32_t>(Out, 0); // patched below
  size_t Begin = Out.size();
  Rec.fields([&](auto &V) {
    using T = std::remove_reference_t<decltype(V)>;
    if constexpr (std::is_same_v<T, std::string>)
      Out.append(V);
    else
      putLE<T>(Out, V);
  });
  uint32_t Size = static_cast<uint32_t>(Out.size() - Begin);
  for (size_t I = 0; I < 4; ++I)
    Out[FrameAt + 4 + I] = static_cast<char>((Size >> (8 * I)) & 0xff);
}

/// Decodes \p Rec from a payload of \p Size bytes; the caller checked that
/// Size >= minSize<R>().
template <class R> void decode(const unsigned char *P, uint32_t Size, R &Rec) {
  const unsigned char *End = P + Size;
  Rec.fields([&](auto &V) {
    using T = std::remove_reference_t<decltype(V)>;
    if constexpr (std::is_same_v<T, std::string>) {
      V.assign(reinterpret_cast<const char *>(P), End - P);
      P = End;
    } else {
      V = getLE<T>(P);
      P += sizeof(T);
    }
  });
}

/// Appends the file header.
inline void encodeHeader(std::string &Out) {
  Out.append(Magic, sizeof(Magic));
  putLE<uint16_t>(Out, MajorVersion);
  putLE<uint16_t>(Out, MinorVersion);
  putLE<uint32_t>(Out, HeaderSize);
}

} // namespace dd::cuptifmt

#endif

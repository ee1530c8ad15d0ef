//===- CuptiReader.cpp - Reader of run.cupti files ------------------------===//
//
// Reads the files ddscript's CUPTI collector writes (trace/CuptiFormat.h,
// docs/trace-format.md) into the same Trace model the Kineto reader fills:
// API records become cuda_runtime/cuda_driver events, GPU records kernel/
// gpu_memcpy/gpu_memset events on their (device, stream) rows,
// synchronisation records cuda_sync events with Kineto's argument keys,
// NVTX ranges marker events on their thread, MEMORY2 records memory records.
//
// Two passes: the first checks the framing and decodes every record (any
// damage ends the read with one line naming the byte offset); the second
// builds the events once everything they refer to is known.
//
//===----------------------------------------------------------------------===//

#include "support/Error.h"
#include "support/Work.h"
#include "trace/CuptiFormat.h"
#include "trace/TraceReader.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Demangle/Demangle.h"

#include <algorithm>
#include <map>

using namespace dd;
using namespace dd::trace;
namespace fmt_ = dd::cuptifmt;

namespace {

using fmt_::RecordType;

/// Records that become events, in file order.
struct Item {
  RecordType Type;
  uint32_t Index; ///< into the vector of that type
};

struct ReadError {
  std::string Msg;
};

class CuptiParser {
public:
  CuptiParser(std::string_view Data, const std::string &Path) : Data(Data) {
    T.Path = Path;
    T.Format = SourceFormat::Cupti;
    T.FromCollector = true;
  }
  llvm::Expected<Trace> run();
  /// run()'s second pass: the records into the trace model.
  llvm::Expected<Trace> convert();

private:
  std::string_view Data;
  Trace T;

  // --- First pass: decoded records. ---
  fmt_::ProcessRecord Process;
  bool SawProcess = false, SawEnd = false;
  fmt_::EndRecord End;
  uint64_t Records = 0, UnknownRecords = 0;
  std::vector<std::string> Strings{""};
  std::vector<fmt_::DeviceRecord> Devices;
  llvm::DenseMap<uint32_t, int32_t> ContextDevice;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> ThreadNames;
  std::vector<fmt_::ApiRecord> Apis;
  std::vector<fmt_::KernelRecord> Kernels;
  std::vector<fmt_::MemcpyRecord> Memcpys;
  std::vector<fmt_::MemsetRecord> Memsets;
  std::vector<fmt_::SyncRecord> Syncs;
  std::vector<fmt_::CudaEventRecord> CudaEvents;
  std::vector<fmt_::MarkerRecord> Markers;
  std::vector<fmt_::MemoryRecord> Memories;
  std::vector<fmt_::OverheadRecord> Overheads;
  std::vector<fmt_::WindowRecord> Windows;
  std::vector<fmt_::NoteRecord> Notes;
  llvm::DenseMap<uint32_t, std::pair<uint32_t, uint64_t>> External;
  uint64_t Dropped = 0;
  std::vector<Item> Order;
  size_t At = 0; ///< offset of the record being decoded

  void readRecords();
  template <class R>
  R decodeAs(RecordType Ty, const unsigned char *P, uint32_t Size);
  void checkString(uint32_t Id) const;
  [[noreturn]] void corrupt(const std::string &Why) const;
  /// Ids a damaged file could set to anything: correlation and context ids
  /// key maps here and must stay clear of the keys those maps reserve, and
  /// a device must be a GPU index.
  template <class R> void checkIds(const R &Rec) const;
  /// A device must be a GPU index.
  void checkDevice(uint64_t Device) const;

  // --- Second pass. ---
  int64_t ClockOffset = 0; ///< Unix ns minus CUPTI ns
  llvm::DenseMap<uint32_t, std::string> Demangled;
  llvm::DenseMap<uint32_t, EventId> ApiByCorrelation;
  llvm::DenseMap<uint32_t, uint32_t> CorrelationAlias;
  llvm::DenseSet<uint32_t> DroppedDriverCalls;
  std::map<std::string, uint64_t> Skipped;
  llvm::DenseMap<uint64_t, uint32_t> EventBySyncId;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> EventsByKey;

  /// The Unix time of CUPTI time \p CuptiNs. Times ddscript represents lie
  /// from 0 to MaxTraceNs (2^62 ns, about the year 2116): a damaged record's
  /// time beyond, or a damaged clock offset, is refused here, so that no
  /// difference or sum of two times overflows downstream.
  int64_t unixNs(uint64_t CuptiNs) const;
  /// The length of [Start, End] (End >= Start was checked), its end checked
  /// as unixNs checks it.
  int64_t spanNs(uint64_t Start, uint64_t End) const {
    (void)unixNs(End);
    return static_cast<int64_t>(End - Start);
  }
  const std::string &str(uint32_t Id) const { return Strings[Id]; }
  TrackId threadTrack(uint32_t Pid, uint32_t Tid);
  int32_t deviceOfContext(uint32_t Context) const;
  void findNestedDriverCalls();
  bool launchedOutsideWindows(uint32_t Correlation) const;
  void addApi(const fmt_::ApiRecord &R);
  void addKernel(const fmt_::KernelRecord &R);
  void addMemcpy(const fmt_::MemcpyRecord &R);
  void addMemset(const fmt_::MemsetRecord &R);
  void addSync(const fmt_::SyncRecord &R);
  void addCudaEvent(const fmt_::CudaEventRecord &R);
  void addMarker(const fmt_::MarkerRecord &R);
  void addOverhead(const fmt_::OverheadRecord &R);
  void addMemory(const fmt_::MemoryRecord &R);
  void linkCorrelations();
  void finish();
  std::string nothingRecordedMessage() const;
};

/// "a Kernel", "an End".
std::string withArticle(std::string_view Name) {
  bool Vowel = !Name.empty() && std::string_view("AEIOUaeiou").find(Name[0]) !=
                                    std::string_view::npos;
  return (Vowel ? "an " : "a ") + std::string(Name);
}

template <class R> void CuptiParser::checkIds(const R &Rec) const {
  constexpr uint32_t Reserved = ~0u - 1; // DenseMap's tombstone, then empty
  if constexpr (requires { Rec.Correlation; })
    if (Rec.Correlation >= Reserved)
      corrupt("correlation id " + std::to_string(Rec.Correlation) +
              " is out of range");
  if constexpr (requires { Rec.Context; })
    if (Rec.Context >= Reserved)
      corrupt("context id " + std::to_string(Rec.Context) + " is out of range");
  // A host allocation's device is not one.
  if constexpr (requires { Rec.Device; } &&
                !std::is_same_v<R, fmt_::MemoryRecord>)
    checkDevice(Rec.Device);
}

void CuptiParser::checkDevice(uint64_t Device) const {
  if (Device > MaxDeviceIndex)
    corrupt("device " + std::to_string(Device) + " is not a GPU index (0 to " +
            std::to_string(MaxDeviceIndex) + ")");
}

constexpr int64_t MaxTraceNs = int64_t(1) << 62;

int64_t CuptiParser::unixNs(uint64_t CuptiNs) const {
  // |ClockOffset| <= MaxTraceNs (run()), so the sum cannot overflow.
  int64_t U = CuptiNs > uint64_t(MaxTraceNs)
                  ? -1
                  : static_cast<int64_t>(CuptiNs) + ClockOffset;
  if (U < 0 || U > MaxTraceNs)
    throw ReadError{"corrupt run.cupti file: a record's time, " +
                    std::to_string(CuptiNs) +
                    " ns on CUPTI's clock, is not between the Unix epoch "
                    "and 2^62 ns after it (a damaged time or clock offset)"};
  return U;
}

void CuptiParser::corrupt(const std::string &Why) const {
  throw ReadError{"corrupt run.cupti file: " + Why + " (record at byte " +
                  std::to_string(At) + ")"};
}

void CuptiParser::checkString(uint32_t Id) const {
  if (Id >= Strings.size())
    corrupt("string id " + std::to_string(Id) +
            " is used before a String record defines it");
}

template <class R>
R CuptiParser::decodeAs(RecordType Ty, const unsigned char *P, uint32_t Size) {
  uint32_t Min = fmt_::minSize<R>();
  if (Size < Min)
    corrupt(withArticle(fmt_::recordTypeName(Ty)) + " record of " +
            std::to_string(Size) + " bytes is shorter than its " +
            std::to_string(Min) + " bytes of fields");
  R Rec;
  fmt_::decode(P, Size, Rec);
  return Rec;
}

void CuptiParser::readRecords() {
  const auto *Bytes = reinterpret_cast<const unsigned char *>(Data.data());
  if (Data.size() < fmt_::HeaderSize)
    throw ReadError{"truncated run.cupti file: " + std::to_string(Data.size()) +
                    " bytes, shorter than the 16-byte header"};
  uint16_t Major = fmt_::getLE<uint16_t>(Bytes + 8);
  uint16_t Minor = fmt_::getLE<uint16_t>(Bytes + 10);
  uint32_t HeaderSize = fmt_::getLE<uint32_t>(Bytes + 12);
  if (Major != fmt_::MajorVersion)
    throw ReadError{"unsupported run.cupti version " + std::to_string(Major) +
                    "." + std::to_string(Minor) + " (this ddscript reads " +
                    std::to_string(fmt_::MajorVersion) +
                    ".x; use a matching ddscript)"};
  if (HeaderSize < fmt_::HeaderSize || HeaderSize > Data.size())
    throw ReadError{"corrupt run.cupti file: header size " +
                    std::to_string(HeaderSize) + " is impossible"};
  T.SchemaVersion = Major;

  size_t Off = HeaderSize;
  while (Off < Data.size()) {
    At = Off;
    if (SawEnd)
      corrupt(std::to_string(Data.size() - Off) +
              " bytes follow the End record");
    if (Data.size() - Off < fmt_::FrameSize)
      throw ReadError{"truncated run.cupti file: it ends inside the header "
                      "of a record at byte " +
                      std::to_string(Off)};
    auto Ty = static_cast<RecordType>(fmt_::getLE<uint16_t>(Bytes + Off));
    uint32_t Size = fmt_::getLE<uint32_t>(Bytes + Off + 4);
    const char *TyName = fmt_::recordTypeName(Ty);
    std::string What = TyName ? withArticle(TyName) + " record"
                              : "a record of unknown type " +
                                    std::to_string(static_cast<unsigned>(Ty));
    if (Data.size() - Off - fmt_::FrameSize < Size)
      throw ReadError{"truncated run.cupti file: " +
                      withArticle(TyName ? TyName : "record") + " of " +
                      std::to_string(Size) + " bytes at byte " +
                      std::to_string(Off) + " runs past the end of the file (" +
                      std::to_string(Data.size()) + " bytes)"};
    if (uint16_t Flags = fmt_::getLE<uint16_t>(Bytes + Off + 2))
      corrupt(What + " has flags " + std::to_string(Flags) + " where version " +
              std::to_string(fmt_::MajorVersion) +
              " writes 0 (written by a newer ddscript?)");
    const unsigned char *P = Bytes + Off + fmt_::FrameSize;
    Off += fmt_::FrameSize + Size;
    // Only the strings the Process record uses may come before it.
    if (!SawProcess && Ty != RecordType::Process && Ty != RecordType::String)
      corrupt(What + " comes before the Process record");
    if (Ty == RecordType::End) {
      End = decodeAs<fmt_::EndRecord>(Ty, P, Size);
      SawEnd = true;
      continue;
    }
    ++Records;
    auto Push = [&](auto &Vec, auto Rec) {
      checkIds(Rec);
      Order.push_back({Ty, static_cast<uint32_t>(Vec.size())});
      Vec.push_back(std::move(Rec));
    };
    switch (Ty) {
    case RecordType::Process:
      if (SawProcess)
        corrupt("a second Process record");
      Process = decodeAs<fmt_::ProcessRecord>(Ty, P, Size);
      SawProcess = true;
      break;
    case RecordType::String: {
      auto R = decodeAs<fmt_::StringRecord>(Ty, P, Size);
      if (R.Id != Strings.size())
        corrupt("String record with id " + std::to_string(R.Id) +
                ", expected " + std::to_string(Strings.size()));
      Strings.push_back(std::move(R.Text));
      break;
    }
    case RecordType::Device: {
      auto R = decodeAs<fmt_::DeviceRecord>(Ty, P, Size);
      checkString(R.NameStr);
      checkDevice(R.Id);
      Devices.push_back(R);
      break;
    }
    case RecordType::Context: {
      auto R = decodeAs<fmt_::ContextRecord>(Ty, P, Size);
      checkIds(R);
      ContextDevice[R.Context] = static_cast<int32_t>(R.Device);
      break;
    }
    case RecordType::Thread: {
      auto R = decodeAs<fmt_::ThreadRecord>(Ty, P, Size);
      checkString(R.NameStr);
      ThreadNames[{R.Pid, R.Tid}] = R.NameStr;
      break;
    }
    case RecordType::Api: {
      auto R = decodeAs<fmt_::ApiRecord>(Ty, P, Size);
      checkString(R.NameStr);
      if (R.End < R.Start)
        corrupt("an API call ends before it starts");
      Push(Apis, R);
      break;
    }
    case RecordType::Kernel: {
      auto R = decodeAs<fmt_::KernelRecord>(Ty, P, Size);
      checkString(R.NameStr);
      if (R.End < R.Start)
        corrupt("a kernel ends before it starts");
      Push(Kernels, R);
      break;
    }
    case RecordType::Memcpy: {
      auto R = decodeAs<fmt_::MemcpyRecord>(Ty, P, Size);
      if (R.End < R.Start)
        corrupt("a copy ends before it starts");
      Push(Memcpys, R);
      break;
    }
    case RecordType::Memset: {
      auto R = decodeAs<fmt_::MemsetRecord>(Ty, P, Size);
      if (R.End < R.Start)
        corrupt("a memset ends before it starts");
      Push(Memsets, R);
      break;
    }
    case RecordType::Sync: {
      auto R = decodeAs<fmt_::SyncRecord>(Ty, P, Size);
      if (R.End < R.Start)
        corrupt("a synchronisation ends before it starts");
      Push(Syncs, R);
      break;
    }
    case RecordType::CudaEvent:
      Push(CudaEvents, decodeAs<fmt_::CudaEventRecord>(Ty, P, Size));
      break;
    case RecordType::ExternalCorrelation: {
      auto R = decodeAs<fmt_::ExternalCorrelationRecord>(Ty, P, Size);
      checkIds(R);
      // Prefer the lowest kind (CUSTOM0 is what PyTorch pushes op ids as).
      auto [It, New] =
          External.try_emplace(R.Correlation, R.Kind, R.ExternalId);
      if (!New && R.Kind < It->second.first)
        It->second = {R.Kind, R.ExternalId};
      break;
    }
    case RecordType::Marker: {
      auto R = decodeAs<fmt_::MarkerRecord>(Ty, P, Size);
      checkString(R.NameStr);
      checkString(R.DomainStr);
      if (R.End < R.Start && !(R.Flags & fmt_::MarkerUnfinished))
        corrupt("an NVTX range ends before it starts");
      Push(Markers, R);
      break;
    }
    case RecordType::Memory: {
      auto R = decodeAs<fmt_::MemoryRecord>(Ty, P, Size);
      // As the Kineto reader bounds "Bytes": sums of sizes stay exact in
      // int64 (and a freed block's size negates).
      if (R.Bytes > (uint64_t(1) << 53))
        corrupt("a memory record's size, " + std::to_string(R.Bytes) +
                " bytes, is not a size up to 2^53 bytes (8 PiB)");
      Push(Memories, R);
      break;
    }
    case RecordType::Overhead: {
      auto R = decodeAs<fmt_::OverheadRecord>(Ty, P, Size);
      if (R.End < R.Start)
        corrupt("an overhead record ends before it starts");
      Push(Overheads, R);
      break;
    }
    case RecordType::Dropped:
      Dropped += decodeAs<fmt_::DroppedRecord>(Ty, P, Size).Count;
      break;
    case RecordType::Window:
      Windows.push_back(decodeAs<fmt_::WindowRecord>(Ty, P, Size));
      break;
    case RecordType::Note:
      Notes.push_back(decodeAs<fmt_::NoteRecord>(Ty, P, Size));
      break;
    default:
      // A record type of a newer minor version.
      ++UnknownRecords;
      break;
    }
  }
  if (!SawProcess)
    throw ReadError{"truncated run.cupti file: it holds no records"};
  if (!SawEnd)
    throw ReadError{"truncated run.cupti file: no End record after " +
                    std::to_string(Records) +
                    " records (the profiled process did not exit normally, "
                    "or the file was cut short)"};
  At = Data.size();
  if (End.Records != Records)
    corrupt("the End record counts " + std::to_string(End.Records) +
            " records, the file holds " + std::to_string(Records));
  if (End.DroppedTotal != Dropped)
    corrupt("the End record counts " + std::to_string(End.DroppedTotal) +
            " dropped records, the Dropped records sum to " +
            std::to_string(Dropped));
}

TrackId CuptiParser::threadTrack(uint32_t Pid, uint32_t Tid) {
  TrackId Tr = T.internTrack(std::to_string(Pid), std::to_string(Tid));
  if (!T.Tracks[Tr].Name) {
    auto It = ThreadNames.find({Pid, Tid});
    if (It != ThreadNames.end())
      T.Tracks[Tr].Name = T.Strings.intern(str(It->second));
  }
  return Tr;
}

int32_t CuptiParser::deviceOfContext(uint32_t Context) const {
  auto It = ContextDevice.find(Context);
  if (It != ContextDevice.end())
    return It->second;
  // Without a Context record, a single-GPU run still says which device.
  return Devices.size() == 1 ? static_cast<int32_t>(Devices[0].Id) : -1;
}

/// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": CUPTI suffixes runtime
/// callback names with the CUDA version that introduced them.
static std::string runtimeName(std::string_view N) {
  size_t V = N.rfind("_v");
  if (V != std::string_view::npos && V + 2 < N.size() &&
      N.find_first_not_of("0123456789", V + 2) == std::string_view::npos)
    N = N.substr(0, V);
  return std::string(N);
}

void CuptiParser::findNestedDriverCalls() {
  // With DRIVER tracing on, CUPTI also reports the driver calls a runtime
  // call makes. They are part of that call, not calls of their own: work
  // they launched belongs to the runtime call.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> ByThread;
  for (uint32_t I = 0; I < Apis.size(); ++I)
    ByThread[{Apis[I].Pid, Apis[I].Tid}].push_back(I);
  for (auto &[Thread, Calls] : ByThread) {
    std::sort(Calls.begin(), Calls.end(), [&](uint32_t A, uint32_t B) {
      if (Apis[A].Start != Apis[B].Start)
        return Apis[A].Start < Apis[B].Start;
      if (Apis[A].End != Apis[B].End)
        return Apis[A].End > Apis[B].End;
      return Apis[A].Domain < Apis[B].Domain; // runtime first
    });
    const fmt_::ApiRecord *Outer = nullptr;
    for (uint32_t I : Calls) {
      const fmt_::ApiRecord &R = Apis[I];
      if (R.Domain == fmt_::RuntimeApi) {
        Outer = &R;
        continue;
      }
      if (Outer && R.Start >= Outer->Start && R.End <= Outer->End) {
        DroppedDriverCalls.insert(I);
        if (R.Correlation != Outer->Correlation)
          CorrelationAlias[R.Correlation] = Outer->Correlation;
      }
    }
  }
  if (!DroppedDriverCalls.empty())
    Skipped["cuda_driver calls made inside a runtime call"] +=
        DroppedDriverCalls.size();
}

bool CuptiParser::launchedOutsideWindows(uint32_t Correlation) const {
  // The collector leaves GPU tracing on a little past a window's end, so
  // that work queued inside it is still recorded; work launched after the
  // window has no API record.
  if (Correlation == 0 || Apis.empty())
    return false;
  uint32_t C = Correlation;
  if (auto It = CorrelationAlias.find(C); It != CorrelationAlias.end())
    C = It->second;
  return !ApiByCorrelation.count(C);
}

void CuptiParser::addApi(const fmt_::ApiRecord &R) {
  bool Runtime = R.Domain == fmt_::RuntimeApi;
  std::string Name = Runtime ? runtimeName(str(R.NameStr)) : str(R.NameStr);
  if (Name.empty())
    Name =
        (Runtime ? "cudaRuntimeApi#" : "cuDriverApi#") + std::to_string(R.Cbid);
  EventId E = T.addEvent(Runtime ? EventKind::Runtime : EventKind::Driver,
                         T.Strings.intern(Name), threadTrack(R.Pid, R.Tid),
                         unixNs(R.Start), spanNs(R.Start, R.End),
                         {{ArgKey::Cbid, false, R.Cbid}});
  T.Correlation[E] = R.Correlation;
}

void CuptiParser::addKernel(const fmt_::KernelRecord &R) {
  if (launchedOutsideWindows(R.Correlation)) {
    ++Skipped["GPU work launched outside the recording window"];
    return;
  }
  auto [It, New] = Demangled.try_emplace(R.NameStr);
  if (New) {
    const std::string &Mangled = str(R.NameStr);
    It->second = Mangled.empty() ? "<unnamed kernel>" : llvm::demangle(Mangled);
  }
  std::vector<Arg> Args;
  if (R.GraphId)
    Args.push_back({ArgKey::GraphId, false, R.GraphId});
  EventId E =
      T.addEvent(EventKind::Kernel, T.Strings.intern(It->second),
                 T.deviceTrack(static_cast<int32_t>(R.Device), R.Stream),
                 unixNs(R.Start), spanNs(R.Start, R.End), Args);
  T.Correlation[E] = R.Correlation;
}

static const char *memcpyKindName(uint8_t K) {
  static const char *const Names[] = {"Unknown", "HtoD", "DtoH", "HtoA",
                                      "AtoH",    "AtoA", "AtoD", "DtoA",
                                      "DtoD",    "HtoH", "PtoP"};
  return K < std::size(Names) ? Names[K] : "Unknown";
}

static const char *memoryKindName(uint32_t K) {
  static const char *const Names[] = {
      "Unknown", "Pageable", "Pinned",        "Device",
      "Array",   "Managed",  "Device Static", "Managed Static"};
  return K < std::size(Names) ? Names[K] : "Unknown";
}

void CuptiParser::addMemcpy(const fmt_::MemcpyRecord &R) {
  if (launchedOutsideWindows(R.Correlation)) {
    ++Skipped["GPU work launched outside the recording window"];
    return;
  }
  // Kineto's names, e.g. "Memcpy HtoD (Pageable -> Device)".
  std::string Name = std::string("Memcpy ") + memcpyKindName(R.CopyKind) +
                     " (" + memoryKindName(R.SrcKind) + " -> " +
                     memoryKindName(R.DstKind) + ")";
  EventId E =
      T.addEvent(EventKind::Memcpy, T.Strings.intern(Name),
                 T.deviceTrack(static_cast<int32_t>(R.Device), R.Stream),
                 unixNs(R.Start), spanNs(R.Start, R.End));
  T.Correlation[E] = R.Correlation;
  T.Bytes[E] = static_cast<int64_t>(R.Bytes);
}

void CuptiParser::addMemset(const fmt_::MemsetRecord &R) {
  if (launchedOutsideWindows(R.Correlation)) {
    ++Skipped["GPU work launched outside the recording window"];
    return;
  }
  std::string Name =
      std::string("Memset (") + memoryKindName(R.MemoryKind) + ")";
  EventId E =
      T.addEvent(EventKind::Memset, T.Strings.intern(Name),
                 T.deviceTrack(static_cast<int32_t>(R.Device), R.Stream),
                 unixNs(R.Start), spanNs(R.Start, R.End));
  T.Correlation[E] = R.Correlation;
  T.Bytes[E] = static_cast<int64_t>(R.Bytes);
}

/// Whether a CUDA event's sync id joins records: 0 and the invalid ids do
/// not, nor 2^64 - 2 (a key EventBySyncId's map reserves).
static bool validSyncId(uint64_t Id) {
  return Id != 0 && Id != fmt_::InvalidId && Id < ~uint64_t(0) - 1;
}

void CuptiParser::addSync(const fmt_::SyncRecord &R) {
  static const char *const Kinds[] = {"Unknown Sync", "Event Sync",
                                      "Stream Wait Event", "Stream Sync",
                                      "Context Sync"};
  const char *Kind =
      R.SyncType < std::size(Kinds) ? Kinds[R.SyncType] : Kinds[0];
  bool OnStream =
      (R.SyncType == 2 || R.SyncType == 3) && R.Stream != fmt_::InvalidId;
  int64_t Stream = OnStream ? static_cast<int64_t>(R.Stream) : -1;
  std::vector<Arg> Args{{ArgKey::SyncKind, true, T.Strings.intern(Kind)}};
  if (R.SyncType == 1 || R.SyncType == 2) {
    if (R.CudaEventId != fmt_::InvalidId)
      Args.push_back({ArgKey::WaitOnEventId, false, R.CudaEventId});
    // The event record waited on: exact through cudaEventSyncId (CUDA
    // 12.8+), else, as Kineto does, the latest record of the same event
    // made before this call.
    const fmt_::CudaEventRecord *Rec = nullptr;
    if (validSyncId(R.CudaEventSyncId)) {
      auto It = EventBySyncId.find(R.CudaEventSyncId);
      if (It != EventBySyncId.end())
        Rec = &CudaEvents[It->second];
    } else {
      auto It = EventsByKey.find({R.Context, R.CudaEventId});
      if (It != EventsByKey.end()) {
        const auto &V = It->second; // by correlation
        auto P = std::partition_point(V.begin(), V.end(), [&](uint32_t I) {
          return CudaEvents[I].Correlation < R.Correlation;
        });
        if (P != V.begin())
          Rec = &CudaEvents[*(P - 1)];
      }
    }
    if (Rec) {
      Args.push_back({ArgKey::WaitOnStream, false, Rec->Stream});
      Args.push_back({ArgKey::WaitOnEventCorr, false, Rec->Correlation});
    }
  }
  EventId E = T.addEvent(EventKind::CudaSync, T.Strings.intern(Kind),
                         T.deviceTrack(deviceOfContext(R.Context), Stream),
                         unixNs(R.Start), spanNs(R.Start, R.End), Args);
  T.Correlation[E] = R.Correlation;
}

void CuptiParser::addCudaEvent(const fmt_::CudaEventRecord &R) {
  int64_t At;
  if (R.DeviceTimestamp) {
    At = unixNs(R.DeviceTimestamp);
  } else {
    // Without a device time stamp: when the recording call was made.
    auto It = ApiByCorrelation.find(R.Correlation);
    if (It == ApiByCorrelation.end()) {
      ++Skipped["cuda_event without a time"];
      return;
    }
    At = T.Start[It->second];
  }
  EventId E =
      T.addEvent(EventKind::CudaEvent, T.Strings.intern("cudaEventRecord"),
                 T.deviceTrack(static_cast<int32_t>(R.Device), R.Stream), At, 0,
                 {{ArgKey::CudaEventId, false, R.EventId}});
  T.Correlation[E] = R.Correlation;
}

void CuptiParser::addMarker(const fmt_::MarkerRecord &R) {
  if (R.Flags & fmt_::MarkerInstant) {
    ++Skipped["NVTX marks (instants)"];
    return;
  }
  if (R.Flags & fmt_::MarkerProcessRange) {
    ++Skipped["NVTX process ranges (not tied to a thread)"];
    return;
  }
  if (R.Flags & fmt_::MarkerUnfinished) {
    ++Skipped["NVTX ranges without an end"];
    return;
  }
  T.addEvent(EventKind::Marker, T.Strings.intern(str(R.NameStr)),
             threadTrack(R.Pid, R.Tid), unixNs(R.Start),
             spanNs(R.Start, R.End));
}

void CuptiParser::addOverhead(const fmt_::OverheadRecord &R) {
  const char *Name = "CUPTI overhead";
  switch (R.OverheadKind) {
  case 1:
    Name = "Driver Compiler";
    break;
  case 1 << 16:
    Name = "Buffer Flush";
    break;
  case 2 << 16:
    Name = "Instrumentation";
    break;
  case 3 << 16:
    Name = "Resource";
    break;
  case 4 << 16:
    Name = "Module Loading";
    break;
  case 5 << 16:
    Name = "Lazy Function Loading";
    break;
  case 6 << 16:
    Name = "Command Buffer Full";
    break;
  case 7 << 16:
    Name = "Activity Buffer Request";
    break;
  default:
    break;
  }
  TrackId Tr = R.ObjectKind == 2
                   ? threadTrack(R.ObjectId0, R.ObjectId1)
                   : T.internTrack(std::to_string(Process.Pid), "overhead");
  EventId E = T.addEvent(EventKind::Overhead, T.Strings.intern(Name), Tr,
                         unixNs(R.Start), spanNs(R.Start, R.End));
  if (R.Correlation)
    T.Correlation[E] = R.Correlation;
}

void CuptiParser::addMemory(const fmt_::MemoryRecord &R) {
  trace::MemoryRecord M;
  M.Ts = unixNs(R.Timestamp);
  // The thread of the call that allocated or freed, when it was traced.
  auto It = ApiByCorrelation.find(R.Correlation);
  M.Track = It != ApiByCorrelation.end()
                ? T.TrackOf[It->second]
                : T.internTrack(std::to_string(R.Pid), std::to_string(R.Pid));
  M.Addr = R.Address;
  int64_t Bytes = static_cast<int64_t>(R.Bytes);
  M.Bytes = R.Operation == 2 ? -Bytes : Bytes;
  M.TotalAllocated = NoValue;
  M.TotalReserved = NoValue;
  bool Host = R.MemoryKind == 1 || R.MemoryKind == 2; // pageable, pinned
  M.DeviceType = Host ? 0 : 1;
  M.DeviceId = Host ? -1 : static_cast<int32_t>(R.Device);
  // CUPTI gives 0 for an allocation that is not stream-ordered.
  M.Stream = R.Stream ? static_cast<int64_t>(R.Stream) : NoValue;
  T.Memory.push_back(M);
}

void CuptiParser::linkCorrelations() {
  // External ids (pushed by a framework around its operators) go on the
  // calls and on the GPU work they launched, as Kineto does.
  for (EventId E = 0; E < T.numEvents(); ++E) {
    if (T.Correlation[E] == NoValue)
      continue;
    uint32_t C = static_cast<uint32_t>(T.Correlation[E]);
    // GPU work of a driver call made inside a runtime call belongs to the
    // runtime call.
    if (T.Kind[E] != EventKind::Runtime && T.Kind[E] != EventKind::Driver)
      if (auto It = CorrelationAlias.find(C); It != CorrelationAlias.end()) {
        C = It->second;
        T.Correlation[E] = C;
      }
    if (auto It = External.find(C); It != External.end())
      T.ExternalId[E] = static_cast<int64_t>(It->second.second);
  }
}

std::string CuptiParser::nothingRecordedMessage() const {
  for (const auto &N : Notes)
    if (N.Severity == fmt_::NoteError)
      return "nothing was recorded: " + N.Text;
  if (Process.WindowMode == fmt_::Iteration && Windows.empty())
    return "nothing was recorded: the recording window never opened (it "
           "opens after " +
           std::to_string(Process.Skip) +
           " ProfilerStep#N NVTX ranges; mark iterations with "
           "runtime/python/ddscript_nvtx.py, or record with --profiler-api)";
  if (Process.WindowMode == fmt_::ProfilerApi && Windows.empty())
    return "nothing was recorded: the process never called "
           "cudaProfilerStart";
  return "nothing was recorded: the file holds no activity records";
}

void CuptiParser::finish() {
  // Times relative to a whole second, as Kineto's baseTimeNanoseconds.
  int64_t Min = INT64_MAX;
  for (int64_t S : T.Start)
    Min = std::min(Min, S);
  for (const trace::MemoryRecord &M : T.Memory)
    Min = std::min(Min, M.Ts);
  if (Min != INT64_MAX) {
    int64_t Base = Min >= 0 ? Min / 1'000'000'000 * 1'000'000'000 : 0;
    T.BaseTimeNs = Base;
    for (int64_t &S : T.Start)
      S -= Base;
    for (trace::MemoryRecord &M : T.Memory)
      M.Ts -= Base;
  }
  for (const fmt_::DeviceRecord &D : Devices) {
    DeviceInfo Info;
    Info.Id = static_cast<int32_t>(D.Id);
    Info.Name = str(D.NameStr);
    Info.TotalGlobalMem = static_cast<int64_t>(D.GlobalMemorySize);
    Info.ComputeMajor = static_cast<int32_t>(D.ComputeMajor);
    Info.ComputeMinor = static_cast<int32_t>(D.ComputeMinor);
    Info.NumSms = static_cast<int32_t>(D.NumSms);
    T.Devices.push_back(std::move(Info));
  }
  std::sort(
      T.Devices.begin(), T.Devices.end(),
      [](const DeviceInfo &A, const DeviceInfo &B) { return A.Id < B.Id; });
  for (auto &[Cat, N] : Skipped)
    T.SkippedCategories.emplace_back(Cat, N);
  if (UnknownRecords)
    T.SkippedCategories.emplace_back("records of a newer run.cupti version",
                                     UnknownRecords);
  if (Dropped)
    T.Warnings.push_back("CUPTI dropped " + std::to_string(Dropped) +
                         " activity records (its buffers were full); the "
                         "trace is incomplete");
  for (const auto &N : Notes)
    if (N.Severity != fmt_::NoteInfo)
      T.Warnings.push_back("collector: " + N.Text);
  if (Process.WindowMode == fmt_::Iteration && Process.Iterations) {
    uint64_t Got = 0;
    for (const auto &W : Windows)
      Got += W.Iterations;
    if (Got < Process.Iterations && !Windows.empty())
      T.Warnings.push_back("recorded " + std::to_string(Got) + " of the " +
                           std::to_string(Process.Iterations) +
                           " iterations asked for (the process stopped "
                           "first)");
  }
}

llvm::Expected<Trace> CuptiParser::run() {
  try {
    readRecords();
  } catch (const ReadError &E) {
    return makeError(E.Msg);
  }
  if (Process.SyncCuptiNs && Process.SyncUnixNs) {
    if (Process.SyncCuptiNs > uint64_t(MaxTraceNs) ||
        Process.SyncUnixNs > uint64_t(MaxTraceNs))
      return makeError("corrupt run.cupti file: the process record's clock "
                       "pair is beyond 2^62 ns");
    ClockOffset = static_cast<int64_t>(Process.SyncUnixNs) -
                  static_cast<int64_t>(Process.SyncCuptiNs);
  }
  try {
    return convert();
  } catch (const ReadError &E) {
    return makeError(E.Msg);
  }
}

llvm::Expected<Trace> CuptiParser::convert() {
  findNestedDriverCalls();
  for (uint32_t I = 0; I < CudaEvents.size(); ++I) {
    const fmt_::CudaEventRecord &C = CudaEvents[I];
    if (validSyncId(C.CudaEventSyncId))
      EventBySyncId.try_emplace(C.CudaEventSyncId, I);
    EventsByKey[{C.Context, C.EventId}].push_back(I);
  }
  for (auto &[Key, V] : EventsByKey)
    std::stable_sort(V.begin(), V.end(), [&](uint32_t A, uint32_t B) {
      return CudaEvents[A].Correlation < CudaEvents[B].Correlation;
    });
  // Calls first, so that GPU work can be checked against them.
  for (uint32_t I = 0; I < Apis.size(); ++I)
    if (!DroppedDriverCalls.count(I))
      ApiByCorrelation.try_emplace(Apis[I].Correlation, 0);
  for (const Item &It : Order) {
    switch (It.Type) {
    case RecordType::Api:
      if (!DroppedDriverCalls.count(It.Index)) {
        addApi(Apis[It.Index]);
        ApiByCorrelation[Apis[It.Index].Correlation] =
            static_cast<EventId>(T.numEvents() - 1);
      }
      break;
    case RecordType::Kernel:
      addKernel(Kernels[It.Index]);
      break;
    case RecordType::Memcpy:
      addMemcpy(Memcpys[It.Index]);
      break;
    case RecordType::Memset:
      addMemset(Memsets[It.Index]);
      break;
    case RecordType::Sync:
      addSync(Syncs[It.Index]);
      break;
    case RecordType::Marker:
      addMarker(Markers[It.Index]);
      break;
    case RecordType::Overhead:
      addOverhead(Overheads[It.Index]);
      break;
    default:
      break;
    }
  }
  // These refer to calls that may come later in the file.
  for (const fmt_::CudaEventRecord &R : CudaEvents)
    addCudaEvent(R);
  for (const fmt_::MemoryRecord &R : Memories)
    addMemory(R);
  linkCorrelations();
  if (T.numEvents() == 0 && T.Memory.empty())
    return makeError(nothingRecordedMessage());
  finish();
  return std::move(T);
}

} // namespace

bool dd::trace::isCuptiData(std::string_view Data) {
  return Data.size() >= sizeof(fmt_::Magic) &&
         Data.substr(0, sizeof(fmt_::Magic)) ==
             std::string_view(fmt_::Magic, sizeof(fmt_::Magic));
}

llvm::Expected<Trace> dd::trace::parseCupti(std::string_view Data,
                                            const std::string &Path) {
  if (!isCuptiData(Data))
    return makeError("not a run.cupti file (no DDCUPTI magic number)");
  CuptiParser P(Data, Path);
  auto T = P.run();
  if (T)
    work::add(work::Counter::TraceEvents, T->numEvents());
  return T;
}

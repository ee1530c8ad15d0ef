//===- KinetoReader.cpp - PyTorch profiler / Kineto JSON reader -----------===//
//
// Reads Chrome-trace JSON as written by Kineto (both the 2021 schema with
// Operator/Runtime/Kernel categories and the current cpu_op/cuda_runtime/
// kernel one) with simdjson's on-demand API: one forward pass, window by
// window (JsonWalker), fields in document order, missing keys are normal.
// Only the fields ddscript models are kept; everything else is skipped
// without being parsed. An event is parsed into a ParsedEvent
// (KinetoEvent.h) and then committed here: interned, given its track,
// paired (B/E), appended. With more than one thread, windows are parsed
// ahead on other threads and committed here in document order, so that the
// trace is the one a single thread reads.
//
//===----------------------------------------------------------------------===//

#include "support/Error.h"
#include "support/InputStream.h"
#include "support/Work.h"
#include "trace/JsonText.h"
#include "trace/JsonWalker.h"
#include "trace/KinetoEvent.h"
#include "trace/Numbers.h"
#include "trace/TraceReader.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <string>

using namespace dd;
using namespace dd::trace;
using namespace dd::trace::kineto;
namespace od = simdjson::ondemand;

namespace {

class KinetoParser : public JsonWalker::Batches {
public:
  KinetoParser(InputStream &In, const std::string &Path,
               const ProgressFn &Progress, size_t WindowBytes, unsigned Threads)
      : In(In), Progress(Progress), WindowBytes(WindowBytes), Threads(Threads) {
    T.Path = Path;
    // Kineto writes about 200 bytes an event, inflated; gzip packs them
    // about 10x.
    uint64_t Content = In.sourceSize() * (In.isCompressed() ? 10 : 1);
    T.reserveEvents(static_cast<size_t>(Content / 200));
  }

  llvm::Expected<Trace> run();

  // JsonWalker::Batches: windows parsed on any thread, committed here.
  void resize(unsigned N) override {
    Ahead.resize(N);
    if (N == 0)
      Ahead.shrink_to_fit();
  }
  void clear(unsigned Batch, size_t Bytes, std::ptrdiff_t Shift) override {
    Ahead[Batch].reset(Bytes, Shift);
  }
  void parse(unsigned Batch, od::value V, uint64_t Offset) override;
  void commit(unsigned Batch) override;

private:
  InputStream &In;
  const ProgressFn &Progress;
  size_t WindowBytes;
  unsigned Threads;
  Trace T;
  bool Legacy = false;
  uint64_t EventsSeen = 0;
  std::map<std::string, uint64_t, std::less<>> Skipped;
  /// A "B" event waiting for its "E": its views re-pointed at copies.
  struct OpenBegin {
    ParsedEvent S;
    std::vector<Arg> Args;
    std::string Cat, Name, Pid, Tid, Ts;
  };
  std::map<TrackId, std::vector<std::unique_ptr<OpenBegin>>> OpenBegins;
  struct ThreadName {
    TrackId Track;
    std::string Name;
  };
  std::vector<ThreadName> ThreadNames;
  uint64_t NegativeDurations = 0;
  uint64_t UnmatchedEnds = 0;
  ParsedEvent Current;           ///< the event being read
  std::vector<Arg> Args;         ///< its arguments
  uint64_t ElementAt = 0;        ///< content offset of the event being read
  std::vector<EventBatch> Ahead; ///< batches of the parallel walk
  /// The track of the last (pid, tid) seen: most events repeat it, and
  /// finding it again skips three hash lookups.
  std::string_view LastPid, LastTid;
  TrackId LastTrack = 0;
  bool HaveLastTrack = false;

  void topLevelField(std::string_view Key, od::value V);
  void element(od::value V, uint64_t Offset);
  void commit(ParsedEvent &S, llvm::ArrayRef<Arg> EventArgs);
  void commitInterval(ParsedEvent &S, llvm::ArrayRef<Arg> EventArgs,
                      int64_t StartNs, int64_t DurNs);
  TrackId track(std::string_view Pid, std::string_view Tid);
  void parseDeviceProperties(od::array A);
  void parseDistributedInfo(od::object O);
  void finish();
};

/// The largest size a [memory] record may give, in bytes (2^53, the
/// language's bound on sizes).
constexpr int64_t MaxMemoryBytes = int64_t(1) << 53;

/// An event's time in nanoseconds, or the error that names its text.
int64_t timeNs(bool Valid, int64_t Ns, std::string_view Text,
               const char *Field) {
  if (Valid)
    return Ns;
  throw ReadError{std::string("\"") + Field + "\" value '" +
                  std::string(Text.substr(0, 40)) +
                  "' is not a time in microseconds that fits in 64-bit "
                  "nanoseconds"};
}

TrackId KinetoParser::track(std::string_view Pid, std::string_view Tid) {
  // internTrack interns both strings and finds the pair; for the pair seen
  // last, all three are already there and give the same track.
  if (HaveLastTrack && Pid == LastPid && Tid == LastTid)
    return LastTrack;
  LastTrack = T.internTrack(Pid, Tid);
  // Views into the pool: they live as long as the trace.
  LastPid = T.str(T.Tracks[LastTrack].RawPid);
  LastTid = T.str(T.Tracks[LastTrack].RawTid);
  HaveLastTrack = true;
  return LastTrack;
}

void KinetoParser::commitInterval(ParsedEvent &S, llvm::ArrayRef<Arg> EventArgs,
                                  int64_t StartNs, int64_t DurNs) {
  Legacy |= S.LegacyCategory;
  EventKind K;
  switch (S.Category) {
  case Cat::CpuOp:
    K = EventKind::CpuOp;
    break;
  case Cat::UserAnnotation:
    K = EventKind::UserAnnotation;
    break;
  case Cat::PythonFunction:
    // Python frames are kept only where they name a module (layer).
    if (S.Name.substr(0, 10) != "nn.Module:") {
      ++Skipped["python_function"];
      return;
    }
    K = EventKind::PythonFunction;
    break;
  case Cat::Runtime:
    K = EventKind::Runtime;
    break;
  case Cat::Driver:
    K = EventKind::Driver;
    break;
  case Cat::Marker:
    K = EventKind::Marker;
    break;
  case Cat::Kernel:
    K = EventKind::Kernel;
    break;
  case Cat::Memcpy:
    K = EventKind::Memcpy;
    break;
  case Cat::Memset:
    K = EventKind::Memset;
    break;
  case Cat::GpuAnnotation:
    K = EventKind::GpuAnnotation;
    break;
  case Cat::CudaSync:
    K = EventKind::CudaSync;
    break;
  case Cat::CudaEvent:
    K = EventKind::CudaEvent;
    break;
  case Cat::Overhead:
    K = EventKind::Overhead;
    break;
  case Cat::Trace:
    return; // the profiler's own span
  default:
    ++Skipped[S.CatText.empty() ? std::string("(no category)")
                                : std::string(S.CatText)];
    return;
  }
  if (DurNs < 0) {
    ++NegativeDurations;
    DurNs = 0;
  }
  TrackId Tr;
  if (isDeviceKind(K)) {
    // GPU rows: pid is the device, tid the stream; args say it exactly.
    int64_t Device = S.Device;
    if (Device == NoValue)
      Device = parseScaledDecimal(S.Pid, 0).value_or(0);
    if (Device < -1 || Device > MaxDeviceIndex)
      throw ReadError{"GPU event '" + std::string(S.Name.substr(0, 60)) +
                      "' is on device " + std::to_string(Device) +
                      ", not a GPU index (0 to " +
                      std::to_string(MaxDeviceIndex) + ")"};
    int64_t Stream = S.Stream;
    if (Stream == NoValue) {
      std::string_view Tid = S.Tid;
      if (Tid.substr(0, 7) == "stream ")
        Tid.remove_prefix(7);
      Stream = parseScaledDecimal(jsontext::trimToken(Tid), 0).value_or(0);
    }
    Tr = T.deviceTrack(static_cast<int32_t>(Device), Stream);
  } else {
    Tr = track(S.Pid, S.Tid);
  }
  EventId E =
      T.addEvent(K, T.Strings.intern(S.Name), Tr, StartNs, DurNs, EventArgs);
  T.Correlation[E] = S.Correlation;
  T.ExternalId[E] = S.ExternalId;
  T.SeqNumber[E] = S.Seq;
  T.FwdThread[E] = S.FwdThread;
  T.Bytes[E] = S.Bytes;
}

void KinetoParser::commit(ParsedEvent &S, llvm::ArrayRef<Arg> EventArgs) {
  ++EventsSeen;
  switch (S.Ph) {
  case 'X': {
    if (!S.HasTs)
      throw ReadError{"complete event '" + std::string(S.Name.substr(0, 60)) +
                      "' has no \"ts\""};
    int64_t Start = timeNs(S.TsValid, S.TsNs, S.Ts, "ts");
    int64_t Dur = S.HasDur ? timeNs(S.DurValid, S.DurNs, S.Dur, "dur") : 0;
    commitInterval(S, EventArgs, Start, Dur);
    return;
  }
  case 'B': {
    if (!S.HasTs)
      throw ReadError{"begin event has no \"ts\""};
    TrackId Tr = track(S.Pid, S.Tid);
    // The event's views die with its window: keep copies.
    auto O = std::make_unique<OpenBegin>();
    O->S = S;
    O->Args.assign(EventArgs.begin(), EventArgs.end());
    O->Cat = S.CatText;
    O->Name = S.Name;
    O->Pid = S.Pid;
    O->Tid = S.Tid;
    O->Ts = S.Ts;
    OpenBegins[Tr].push_back(std::move(O));
    return;
  }
  case 'E': {
    TrackId Tr = track(S.Pid, S.Tid);
    auto &Stack = OpenBegins[Tr];
    if (Stack.empty() || !S.HasTs) {
      ++UnmatchedEnds;
      return;
    }
    std::unique_ptr<OpenBegin> O = std::move(Stack.back());
    Stack.pop_back();
    ParsedEvent &Begin = O->S;
    Begin.CatText = O->Cat;
    Begin.Name = O->Name;
    Begin.Pid = O->Pid;
    Begin.Tid = O->Tid;
    Begin.Bp = Begin.Id = Begin.Dur = Begin.MetaName = {};
    int64_t Start = timeNs(Begin.TsValid, Begin.TsNs, O->Ts, "ts");
    int64_t End = timeNs(S.TsValid, S.TsNs, S.Ts, "ts");
    commitInterval(Begin, O->Args, Start, End - Start);
    return;
  }
  case 'i':
  case 'I': {
    if (S.Name != "[memory]" || !S.HasTs)
      return;
    MemoryRecord M;
    M.Ts = timeNs(S.TsValid, S.TsNs, S.Ts, "ts");
    M.Track = track(S.Pid, S.Tid);
    M.Addr = S.Addr;
    M.Bytes = S.MemBytes == NoValue ? 0 : S.MemBytes;
    M.TotalAllocated = S.TotalAllocated;
    M.TotalReserved = S.TotalReserved;
    // Sizes as the language bounds them (2^53 bytes, 8 PiB), so that sums
    // of live blocks cannot overflow.
    auto Check = [](int64_t V, const char *Field, bool Signed) {
      if (V == NoValue)
        return;
      if (V > MaxMemoryBytes || V < (Signed ? -MaxMemoryBytes : 0))
        throw ReadError{std::string("[memory] \"") + Field + "\" " +
                        std::to_string(V) + " is not a " +
                        (Signed ? "" : "non-negative ") +
                        "size up to 2^53 bytes (8 PiB)"};
    };
    Check(M.Bytes, "Bytes", true);
    Check(M.TotalAllocated, "Total Allocated", false);
    Check(M.TotalReserved, "Total Reserved", false);
    M.DeviceType =
        static_cast<int32_t>(S.DeviceType == NoValue ? 0 : S.DeviceType);
    M.DeviceId = static_cast<int32_t>(S.DeviceId == NoValue ? -1 : S.DeviceId);
    T.Memory.push_back(M);
    return;
  }
  case 's':
  case 't':
  case 'f': {
    if (!S.HasId || !S.HasTs)
      return;
    Cat C = S.Category;
    FlowPoint F;
    F.Kind = C == Cat::FlowLaunch   ? FlowKind::Launch
             : C == Cat::FlowFwdBwd ? FlowKind::FwdBwd
                                    : FlowKind::Other;
    F.Phase = S.Ph;
    F.BindEnclosing = S.Bp == "e";
    // Numeric ids below 2^63 are themselves; others are interned and take
    // the upper half, so the two never meet (nor reach the keys 2^64 - 1
    // and 2^64 - 2, which maps keyed by flow id reserve).
    uint64_t Id = 0;
    auto [P, Ec] = std::from_chars(S.Id.data(), S.Id.data() + S.Id.size(), Id);
    if (Ec != std::errc() || P != S.Id.data() + S.Id.size() || Id >> 63)
      Id = (1ull << 63) | T.Strings.intern(S.Id);
    F.Id = Id;
    F.Ts = timeNs(S.TsValid, S.TsNs, S.Ts, "ts");
    F.Track = track(S.Pid, S.Tid);
    T.Flows.push_back(F);
    return;
  }
  case 'M': {
    if (S.Name == "thread_name" && !S.MetaName.empty()) {
      std::string_view N = S.MetaName;
      // Kineto writes "thread 123 (pt_main_thread)"; keep the part in
      // parentheses when there is one.
      size_t Open = N.find('('), Close = N.rfind(')');
      if (Open != std::string_view::npos && Close != std::string_view::npos &&
          Close > Open)
        N = N.substr(Open + 1, Close - Open - 1);
      while (!N.empty() && N.back() == ' ')
        N.remove_suffix(1);
      ThreadNames.push_back({track(S.Pid, S.Tid), std::string(N)});
    }
    return;
  }
  default:
    return;
  }
}

void KinetoParser::element(od::value V, uint64_t Offset) {
  ElementAt = Offset;
  Args.clear();
  Current = ParsedEvent();
  EventParser(T.Strings, Args).parse(V, Current);
  commit(Current, Args);
}

void KinetoParser::parse(unsigned Batch, od::value V, uint64_t Offset) {
  EventBatch &B = Ahead[Batch];
  B.Events.emplace_back();
  B.Offsets.push_back(Offset);
  EventParser(B).parse(V, B.Events.back());
}

void KinetoParser::commit(unsigned Batch) {
  EventBatch &B = Ahead[Batch];
  for (size_t I = 0, N = B.Events.size(); I < N; ++I) {
    ParsedEvent &E = B.Events[I];
    ElementAt = B.Offsets[I];
    llvm::MutableArrayRef<Arg> EventArgs(B.Args.data() + E.ArgsBegin,
                                         E.ArgsEnd - E.ArgsBegin);
    // Read on their own, string arguments are interned as they are read,
    // before anything the commit interns: the same order here.
    for (Arg &A : EventArgs)
      if (A.IsString)
        A.Value = T.Strings.intern(B.ArgTexts[static_cast<size_t>(A.Value)]);
    commit(E, EventArgs);
  }
}

/// str() and integer() for the top-level values.
using Get = EventParser;

void KinetoParser::parseDeviceProperties(od::array A) {
  for (auto Item : A) {
    od::value V = Item.value();
    if (V.type() != od::json_type::object)
      continue;
    DeviceInfo D;
    for (auto Field : V.get_object()) {
      std::string_view Key = Field.unescaped_key();
      od::value FV = Field.value();
      if (Key == "id")
        D.Id = static_cast<int32_t>(Get::integer(FV).value_or(-1));
      else if (Key == "name")
        D.Name = std::string(Get::str(FV));
      else if (Key == "totalGlobalMem")
        D.TotalGlobalMem = Get::integer(FV).value_or(0);
      else if (Key == "computeMajor")
        D.ComputeMajor = static_cast<int32_t>(Get::integer(FV).value_or(0));
      else if (Key == "computeMinor")
        D.ComputeMinor = static_cast<int32_t>(Get::integer(FV).value_or(0));
      else if (Key == "numSms")
        D.NumSms = static_cast<int32_t>(Get::integer(FV).value_or(0));
    }
    T.Devices.push_back(std::move(D));
  }
}

void KinetoParser::parseDistributedInfo(od::object O) {
  T.Distributed.Present = true;
  for (auto Field : O) {
    std::string_view Key = Field.unescaped_key();
    od::value V = Field.value();
    if (Key == "backend")
      T.Distributed.Backend = std::string(Get::str(V));
    else if (Key == "rank")
      T.Distributed.Rank = Get::integer(V).value_or(-1);
    else if (Key == "world_size")
      T.Distributed.WorldSize = Get::integer(V).value_or(-1);
    else if (Key == "nccl_version")
      T.Distributed.NcclVersion = std::string(Get::str(V));
  }
}

void KinetoParser::topLevelField(std::string_view Key, od::value V) {
  if (Key == "deviceProperties") {
    if (V.type() == od::json_type::array)
      parseDeviceProperties(V.get_array());
  } else if (Key == "distributedInfo") {
    if (V.type() == od::json_type::object)
      parseDistributedInfo(V.get_object());
  } else if (Key == "baseTimeNanoseconds") {
    if (auto B = Get::integer(V))
      T.BaseTimeNs = *B;
  } else if (Key == "schemaVersion") {
    T.SchemaVersion = Get::integer(V).value_or(0);
  } else if (Key == "ddscriptCollector") {
    T.FromCollector = V.type() == od::json_type::boolean && V.get_bool();
  } else if (Key == "ddscriptDroppedMemoryRecords") {
    T.DroppedMemoryRecords =
        uint64_t(std::max<int64_t>(Get::integer(V).value_or(0), 0));
  }
}

void KinetoParser::finish() {
  for (auto &[Track, Name] : ThreadNames)
    T.Tracks[Track].Name = T.Strings.intern(Name);
  T.Format = Legacy ? SourceFormat::KinetoJsonLegacy : SourceFormat::KinetoJson;
  for (auto &[Cat, N] : Skipped)
    T.SkippedCategories.emplace_back(Cat, N);
  if (NegativeDurations)
    T.Warnings.push_back(std::to_string(NegativeDurations) +
                         " events with a negative duration were read as 0");
  if (UnmatchedEnds)
    T.Warnings.push_back(std::to_string(UnmatchedEnds) +
                         " end events (ph E) without a begin were ignored");
}

llvm::Expected<Trace> KinetoParser::run() {
  auto Fail = [&](const std::string &Msg) -> llvm::Error {
    return makeError(Msg);
  };
  JsonWalker W(In, WindowBytes);
  try {
    auto Report = [&](double F) {
      if (Progress)
        Progress(F);
    };
    auto Field = [&](std::string_view Key, od::value V, uint64_t) {
      topLevelField(Key, V);
    };
    auto Element = [&](od::value V, uint64_t Offset) { element(V, Offset); };
    // One thread reads the way it always did; more read the same windows
    // ahead (JsonWalker::Batches) and commit them here, in order.
    llvm::Error E = Threads > 1 ? W.walk("traceEvents", Field, Element, *this,
                                         Threads, Report)
                                : W.walk("traceEvents", Field, Element, Report);
    if (E)
      return E;
  } catch (const ReadError &E) {
    return Fail(E.Msg + " (in the value at " + W.location(ElementAt) + ")");
  }
  bool SawTraceEvents = W.sawArray();
  if (!SawTraceEvents)
    return Fail("not a Chrome/Kineto trace: no \"traceEvents\" array");
  finish();
  if (T.numEvents() == 0 && T.Memory.empty()) {
    std::string Seen;
    for (auto &[C, N] : T.SkippedCategories)
      Seen += (Seen.empty() ? "" : ", ") + C;
    return Fail("no PyTorch-profiler events found (unsupported schema; " +
                (Seen.empty() ? std::string("the event list is empty")
                              : "categories seen: " + Seen) +
                ")");
  }
  return std::move(T);
}

} // namespace

llvm::Expected<Trace> dd::trace::readKinetoJson(InputStream &In,
                                                const std::string &Path,
                                                const ProgressFn &Progress,
                                                size_t WindowBytes,
                                                unsigned Threads) {
  size_t Window = WindowBytes ? WindowBytes : DefaultWindowBytes;
  // (Gzip inflates traces about 10x.)
  if (Threads == 0)
    Threads =
        loadThreadsFor(In.sourceSize() * (In.isCompressed() ? 10 : 1), Window);
  KinetoParser P(In, Path, Progress, Window, Threads);
  auto T = P.run();
  if (T)
    work::add(work::Counter::TraceEvents, T->numEvents());
  return T;
}

llvm::Expected<Trace> dd::trace::parseKinetoJson(std::string_view Data,
                                                 const std::string &Path,
                                                 const ProgressFn &Progress) {
  auto In = InputStream::fromMemory(Data);
  return readKinetoJson(*In, Path, Progress);
}

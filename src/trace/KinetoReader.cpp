//===- KinetoReader.cpp - PyTorch profiler / Kineto JSON reader -----------===//
//
// Reads Chrome-trace JSON as written by Kineto (both the 2021 schema with
// Operator/Runtime/Kernel categories and the current cpu_op/cuda_runtime/
// kernel one) with simdjson's on-demand API: one forward pass, window by
// window (JsonWalker), fields in document order, missing keys are normal.
// Only the fields ddscript models are kept; everything else is skipped
// without being parsed. Views into the JSON live only while their event is
// read: whatever outlives it is interned or copied.
//
//===----------------------------------------------------------------------===//

#include "support/Error.h"
#include "support/InputStream.h"
#include "trace/JsonWalker.h"
#include "trace/Numbers.h"
#include "trace/TraceReader.h"

#include "llvm/ADT/StringSwitch.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <string>

using namespace dd;
using namespace dd::trace;
namespace od = simdjson::ondemand;

namespace {

/// Thrown inside the reader for malformed content; turned into an
/// llvm::Error with a line:column at the boundary.
struct ReadError {
  std::string Msg;
};

enum class Cat : uint8_t {
  None,
  CpuOp,
  UserAnnotation,
  PythonFunction,
  Runtime,
  Driver,
  Marker,
  Kernel,
  Memcpy,
  Memset,
  GpuAnnotation,
  CudaSync,
  CudaEvent,
  Overhead,
  InstantEvent,
  FlowLaunch,
  FlowFwdBwd,
  Trace,
  Unknown
};

Cat classifyCategory(std::string_view C, bool &Legacy) {
  Cat R = llvm::StringSwitch<Cat>(llvm::StringRef(C.data(), C.size()))
              .Case("cpu_op", Cat::CpuOp)
              .Case("Operator", Cat::CpuOp)
              .Case("user_annotation", Cat::UserAnnotation)
              .Case("python_function", Cat::PythonFunction)
              .Case("cuda_runtime", Cat::Runtime)
              .Case("Runtime", Cat::Runtime)
              .Case("cuda_driver", Cat::Driver)
              .Case("marker", Cat::Marker) // NVTX ranges (ddscript convert)
              .Case("kernel", Cat::Kernel)
              .Case("Kernel", Cat::Kernel)
              .Case("gpu_memcpy", Cat::Memcpy)
              .Case("Memcpy", Cat::Memcpy)
              .Case("gpu_memset", Cat::Memset)
              .Case("Memset", Cat::Memset)
              .Case("gpu_user_annotation", Cat::GpuAnnotation)
              .Case("cuda_sync", Cat::CudaSync)
              .Case("cuda_event", Cat::CudaEvent)
              .Case("overhead", Cat::Overhead)
              .Case("Overhead", Cat::Overhead)
              .Case("cpu_instant_event", Cat::InstantEvent)
              .Case("ac2g", Cat::FlowLaunch)
              .Case("async", Cat::FlowLaunch)
              .Case("fwdbwd", Cat::FlowFwdBwd)
              .Case("Trace", Cat::Trace)
              .Default(Cat::Unknown);
  if (C == "Operator" || C == "Runtime" || C == "Kernel" || C == "async")
    Legacy = true;
  return R;
}

std::string_view trimToken(std::string_view S) {
  while (!S.empty() &&
         (S.back() == ' ' || S.back() == '\n' || S.back() == '\r' ||
          S.back() == '\t' || S.back() == ','))
    S.remove_suffix(1);
  return S;
}

/// Everything of one event that ddscript reads, collected in one pass over
/// its fields (their order varies between writers).
struct Scratch {
  char Ph = 0;
  std::string_view Cat, Name, Pid, Tid, Ts, Dur, Id, Bp;
  bool HasPid = false, HasTid = false, HasTs = false, HasDur = false,
       HasId = false;
  int64_t ExternalId = NoValue, Correlation = NoValue, Seq = NoValue,
          Stream = NoValue, Device = NoValue, Bytes = NoValue;
  int32_t FwdThread = -1;
  std::vector<Arg> Extra;
  // [memory] records.
  bool HasAddr = false;
  uint64_t Addr = 0;
  int64_t MemBytes = NoValue, TotalAllocated = NoValue, TotalReserved = NoValue,
          DeviceType = NoValue, DeviceId = NoValue;
  // Metadata events.
  std::string_view MetaName;

  void reset() {
    std::vector<Arg> Keep = std::move(Extra);
    Keep.clear();
    *this = Scratch();
    Extra = std::move(Keep);
  }
};

class KinetoParser {
public:
  KinetoParser(InputStream &In, const std::string &Path,
               const ProgressFn &Progress, size_t WindowBytes)
      : In(In), Progress(Progress), WindowBytes(WindowBytes) {
    T.Path = Path;
    // Kineto writes about 200 bytes an event, inflated; gzip packs them
    // about 10x.
    uint64_t Content = In.sourceSize() * (In.isCompressed() ? 10 : 1);
    T.reserveEvents(static_cast<size_t>(Content / 200));
  }

  llvm::Expected<Trace> run();

private:
  InputStream &In;
  const ProgressFn &Progress;
  size_t WindowBytes;
  Trace T;
  bool Legacy = false;
  uint64_t EventsSeen = 0;
  std::map<std::string, uint64_t, std::less<>> Skipped;
  std::map<std::pair<TrackId, std::string>, uint64_t> Unused;
  /// A "B" event waiting for its "E": its views re-pointed at copies.
  struct OpenBegin {
    Scratch S;
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
  Scratch Current; ///< the event being read

  void topLevelField(std::string_view Key, od::value V);
  void element(od::value V);
  void parseEvent(od::object Obj, Scratch &S);
  void parseArgs(od::object Args, Scratch &S);
  void commit(Scratch &S);
  void commitInterval(Scratch &S, int64_t StartNs, int64_t DurNs);
  void parseDeviceProperties(od::array A);
  void parseDistributedInfo(od::object O);
  void finish();

  static std::string_view str(od::value V);
  static std::optional<int64_t> integer(od::value V);
  int64_t timeNs(std::string_view Text, const char *Field);
};

std::string_view KinetoParser::str(od::value V) {
  od::json_type Ty = V.type();
  if (Ty == od::json_type::string)
    return V.get_string();
  if (Ty == od::json_type::object || Ty == od::json_type::array)
    return Ty == od::json_type::object
               ? V.get_object().value().raw_json().value()
               : V.get_array().value().raw_json().value();
  return trimToken(V.raw_json_token());
}

std::optional<int64_t> KinetoParser::integer(od::value V) {
  od::json_type Ty = V.type();
  if (Ty == od::json_type::number)
    return parseScaledDecimal(trimToken(V.raw_json_token()), 0);
  if (Ty == od::json_type::string)
    return parseScaledDecimal(V.get_string(), 0);
  return std::nullopt;
}

int64_t KinetoParser::timeNs(std::string_view Text, const char *Field) {
  if (auto V = parseMicrosAsNanos(Text))
    return *V;
  throw ReadError{std::string("\"") + Field + "\" value '" +
                  std::string(Text.substr(0, 40)) +
                  "' is not a time in microseconds that fits in 64-bit "
                  "nanoseconds"};
}

void KinetoParser::parseArgs(od::object Args, Scratch &S) {
  for (auto Field : Args) {
    std::string_view Key = Field.unescaped_key();
    od::value V = Field.value();
    auto Int = [&]() { return integer(V).value_or(NoValue); };
    auto Extra = [&](ArgKey K) {
      if (auto I = integer(V))
        S.Extra.push_back({K, false, *I});
    };
    auto ExtraStr = [&](ArgKey K) {
      std::string_view Text = str(V);
      S.Extra.push_back({K, true, T.Strings.intern(Text)});
    };
    switch (Key.size()) {
    default:
      break;
    case 4:
      if (Key == "Addr") {
        std::string_view Tok = str(V);
        uint64_t A = 0;
        auto [P, Ec] = std::from_chars(Tok.data(), Tok.data() + Tok.size(), A);
        S.HasAddr = Ec == std::errc() && P == Tok.data() + Tok.size();
        S.Addr = A;
      } else if (Key == "cbid") {
        Extra(ArgKey::Cbid);
      } else if (Key == "name") {
        S.MetaName = str(V);
      }
      continue;
    case 5:
      if (Key == "bytes")
        S.Bytes = Int();
      else if (Key == "Bytes")
        S.MemBytes = Int();
      else if (Key == "dtype")
        ExtraStr(ArgKey::Dtype);
      continue;
    case 6:
      if (Key == "stream")
        S.Stream = Int();
      else if (Key == "device")
        S.Device = Int();
      continue;
    case 8:
      if (Key == "event_id")
        Extra(ArgKey::CudaEventId);
      else if (Key == "graph id")
        Extra(ArgKey::GraphId);
      continue;
    case 9:
      if (Key == "Device Id")
        S.DeviceId = Int();
      continue;
    case 10:
      if (Key == "Input Dims" || Key == "Input dims")
        ExtraStr(ArgKey::InputDims);
      else if (Key == "Input type")
        ExtraStr(ArgKey::InputTypes);
      else if (Key == "Group size")
        Extra(ArgKey::GroupSize);
      continue;
    case 11:
      if (Key == "correlation")
        S.Correlation = Int();
      else if (Key == "External id" || Key == "external id")
        S.ExternalId = Int();
      else if (Key == "Device Type")
        S.DeviceType = Int();
      else if (Key == "In msg size")
        Extra(ArgKey::InMsgSize);
      continue;
    case 12:
      if (Key == "Out msg size")
        Extra(ArgKey::OutMsgSize);
      continue;
    case 13:
      if (Key == "Fwd thread id") {
        S.FwdThread = static_cast<int32_t>(Int());
      } else if (Key == "In msg nelems") {
        Extra(ArgKey::InMsgNelems);
      }
      continue;
    case 14:
      if (Key == "cuda_sync_kind")
        ExtraStr(ArgKey::SyncKind);
      else if (Key == "Out msg nelems")
        Extra(ArgKey::OutMsgNelems);
      else if (Key == "Total Reserved")
        S.TotalReserved = Int();
      else if (Key == "wait_on_stream")
        Extra(ArgKey::WaitOnStream);
      continue;
    case 15:
      if (Key == "Sequence number")
        S.Seq = Int();
      else if (Key == "Total Allocated")
        S.TotalAllocated = Int();
      else if (Key == "Collective name")
        ExtraStr(ArgKey::CollectiveName);
      continue;
    case 16:
      if (Key == "Module Hierarchy")
        ExtraStr(ArgKey::ModuleHierarchy);
      continue;
    case 18:
      if (Key == "Process Group Name")
        ExtraStr(ArgKey::ProcessGroupName);
      else if (Key == "Record function id")
        Extra(ArgKey::RecordFunctionId);
      continue;
    case 21:
      if (Key == "wait_on_cuda_event_id")
        Extra(ArgKey::WaitOnEventId);
      continue;
    case 33:
      if (Key == "wait_on_cuda_event_record_corr_id")
        Extra(ArgKey::WaitOnEventCorr);
      continue;
    }
  }
}

void KinetoParser::parseEvent(od::object Obj, Scratch &S) {
  for (auto Field : Obj) {
    std::string_view Key = Field.unescaped_key();
    od::value V = Field.value();
    if (Key == "ph") {
      std::string_view Ph = str(V);
      S.Ph = Ph.empty() ? 0 : Ph[0];
    } else if (Key == "cat") {
      S.Cat = str(V);
    } else if (Key == "name") {
      S.Name = str(V);
    } else if (Key == "pid") {
      S.Pid = str(V);
      S.HasPid = true;
    } else if (Key == "tid") {
      S.Tid = str(V);
      S.HasTid = true;
    } else if (Key == "ts") {
      S.Ts = str(V);
      S.HasTs = true;
    } else if (Key == "dur") {
      S.Dur = str(V);
      S.HasDur = true;
    } else if (Key == "id") {
      S.Id = str(V);
      S.HasId = true;
    } else if (Key == "bp") {
      S.Bp = str(V);
    } else if (Key == "args") {
      if (V.type() == od::json_type::object)
        parseArgs(V.get_object(), S);
    }
  }
}

void KinetoParser::commitInterval(Scratch &S, int64_t StartNs, int64_t DurNs) {
  bool Leg = false;
  Cat C = classifyCategory(S.Cat, Leg);
  Legacy |= Leg;
  EventKind K;
  switch (C) {
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
    ++Skipped[S.Cat.empty() ? std::string("(no category)")
                            : std::string(S.Cat)];
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
    int64_t Stream = S.Stream;
    if (Stream == NoValue) {
      std::string_view Tid = S.Tid;
      if (Tid.substr(0, 7) == "stream ")
        Tid.remove_prefix(7);
      Stream = parseScaledDecimal(trimToken(Tid), 0).value_or(0);
    }
    Tr = T.deviceTrack(static_cast<int32_t>(Device), Stream);
  } else {
    Tr = T.internTrack(S.Pid, S.Tid);
  }
  EventId E =
      T.addEvent(K, T.Strings.intern(S.Name), Tr, StartNs, DurNs, S.Extra);
  T.Correlation[E] = S.Correlation;
  T.ExternalId[E] = S.ExternalId;
  T.SeqNumber[E] = S.Seq;
  T.FwdThread[E] = S.FwdThread;
  T.Bytes[E] = S.Bytes;
}

void KinetoParser::commit(Scratch &S) {
  ++EventsSeen;
  switch (S.Ph) {
  case 'X': {
    if (!S.HasTs)
      throw ReadError{"complete event '" + std::string(S.Name.substr(0, 60)) +
                      "' has no \"ts\""};
    int64_t Start = timeNs(S.Ts, "ts");
    int64_t Dur = S.HasDur ? timeNs(S.Dur, "dur") : 0;
    commitInterval(S, Start, Dur);
    return;
  }
  case 'B': {
    if (!S.HasTs)
      throw ReadError{"begin event has no \"ts\""};
    TrackId Tr = T.internTrack(S.Pid, S.Tid);
    // The scratch's views die with this event's window: keep copies.
    auto O = std::make_unique<OpenBegin>();
    O->S = S;
    O->Cat = S.Cat;
    O->Name = S.Name;
    O->Pid = S.Pid;
    O->Tid = S.Tid;
    O->Ts = S.Ts;
    OpenBegins[Tr].push_back(std::move(O));
    return;
  }
  case 'E': {
    TrackId Tr = T.internTrack(S.Pid, S.Tid);
    auto &Stack = OpenBegins[Tr];
    if (Stack.empty() || !S.HasTs) {
      ++UnmatchedEnds;
      return;
    }
    std::unique_ptr<OpenBegin> O = std::move(Stack.back());
    Stack.pop_back();
    Scratch &Begin = O->S;
    Begin.Cat = O->Cat;
    Begin.Name = O->Name;
    Begin.Pid = O->Pid;
    Begin.Tid = O->Tid;
    Begin.Bp = Begin.Id = Begin.Dur = Begin.MetaName = {};
    int64_t Start = timeNs(O->Ts, "ts");
    int64_t End = timeNs(S.Ts, "ts");
    commitInterval(Begin, Start, End - Start);
    return;
  }
  case 'i':
  case 'I': {
    if (S.Name != "[memory]" || !S.HasTs)
      return;
    MemoryRecord M;
    M.Ts = timeNs(S.Ts, "ts");
    M.Track = T.internTrack(S.Pid, S.Tid);
    M.Addr = S.Addr;
    M.Bytes = S.MemBytes == NoValue ? 0 : S.MemBytes;
    M.TotalAllocated = S.TotalAllocated;
    M.TotalReserved = S.TotalReserved;
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
    bool Leg = false;
    Cat C = classifyCategory(S.Cat, Leg);
    FlowPoint F;
    F.Kind = C == Cat::FlowLaunch   ? FlowKind::Launch
             : C == Cat::FlowFwdBwd ? FlowKind::FwdBwd
                                    : FlowKind::Other;
    F.Phase = S.Ph;
    F.BindEnclosing = S.Bp == "e";
    uint64_t Id = 0;
    auto [P, Ec] = std::from_chars(S.Id.data(), S.Id.data() + S.Id.size(), Id);
    if (Ec != std::errc() || P != S.Id.data() + S.Id.size())
      Id = (1ull << 63) | T.Strings.intern(S.Id);
    F.Id = Id;
    F.Ts = timeNs(S.Ts, "ts");
    F.Track = T.internTrack(S.Pid, S.Tid);
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
      ThreadNames.push_back({T.internTrack(S.Pid, S.Tid), std::string(N)});
    }
    return;
  }
  default:
    return;
  }
}

void KinetoParser::element(od::value V) {
  if (V.type() != od::json_type::object)
    throw ReadError{"an element of \"traceEvents\" is not an object"};
  Current.reset();
  parseEvent(V.get_object(), Current);
  commit(Current);
}

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
        D.Id = static_cast<int32_t>(integer(FV).value_or(-1));
      else if (Key == "name")
        D.Name = std::string(str(FV));
      else if (Key == "totalGlobalMem")
        D.TotalGlobalMem = integer(FV).value_or(0);
      else if (Key == "computeMajor")
        D.ComputeMajor = static_cast<int32_t>(integer(FV).value_or(0));
      else if (Key == "computeMinor")
        D.ComputeMinor = static_cast<int32_t>(integer(FV).value_or(0));
      else if (Key == "numSms")
        D.NumSms = static_cast<int32_t>(integer(FV).value_or(0));
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
      T.Distributed.Backend = std::string(str(V));
    else if (Key == "rank")
      T.Distributed.Rank = integer(V).value_or(-1);
    else if (Key == "world_size")
      T.Distributed.WorldSize = integer(V).value_or(-1);
    else if (Key == "nccl_version")
      T.Distributed.NcclVersion = std::string(str(V));
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
    if (auto B = integer(V))
      T.BaseTimeNs = *B;
  } else if (Key == "schemaVersion") {
    T.SchemaVersion = integer(V).value_or(0);
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
  JsonWalker W(In, WindowBytes ? WindowBytes : size_t(4) << 20);
  try {
    auto Report = [&](double F) {
      if (Progress)
        Progress(F);
    };
    if (auto E = W.walk(
            "traceEvents",
            [&](std::string_view Key, od::value V, uint64_t) {
              topLevelField(Key, V);
            },
            [&](od::value V, uint64_t) { element(V); }, Report))
      return E;
  } catch (const ReadError &E) {
    return Fail(E.Msg + " (in the value at " + W.location(W.elementOffset()) +
                ")");
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
                                                size_t WindowBytes) {
  KinetoParser P(In, Path, Progress, WindowBytes);
  return P.run();
}

llvm::Expected<Trace> dd::trace::parseKinetoJson(std::string_view Data,
                                                 const std::string &Path,
                                                 const ProgressFn &Progress) {
  auto In = InputStream::fromMemory(Data);
  return readKinetoJson(*In, Path, Progress);
}

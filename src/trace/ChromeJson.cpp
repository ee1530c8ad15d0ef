//===- ChromeJson.cpp - Writing a trace as Chrome-trace JSON --------------===//
//
// Times are written as microseconds with three decimals ("12.345"), which
// the readers parse back into exact nanoseconds. Strings are escaped and
// invalid UTF-8 is replaced, so the output is always valid JSON.
//
//===----------------------------------------------------------------------===//

#include "trace/ChromeJson.h"

#include <fmt/format.h>

#include <charconv>

using namespace dd;
using namespace dd::trace;

namespace {

class JsonOut {
public:
  std::string S;

  void raw(std::string_view V) { S += V; }
  void integer(int64_t V) { fmt::format_to(std::back_inserter(S), "{}", V); }
  /// Nanoseconds as microseconds with three decimals.
  void micros(int64_t Ns) {
    uint64_t A =
        Ns < 0 ? 0 - static_cast<uint64_t>(Ns) : static_cast<uint64_t>(Ns);
    fmt::format_to(std::back_inserter(S), "{}{}.{:03}", Ns < 0 ? "-" : "",
                   A / 1000, A % 1000);
  }
  void string(std::string_view V);
  void key(std::string_view K) {
    string(K);
    S += ':';
  }
};

/// Length of the valid UTF-8 sequence at \p P, or 0.
size_t utf8Length(const unsigned char *P, size_t Left) {
  unsigned char C = P[0];
  size_t N = C >= 0xf0 && C <= 0xf4 ? 4 : C >= 0xe0 ? 3 : C >= 0xc2 ? 2 : 0;
  if (C >= 0xf5 || N == 0 || N > Left)
    return 0;
  for (size_t I = 1; I < N; ++I)
    if ((P[I] & 0xc0) != 0x80)
      return 0;
  // Overlong and surrogate forms.
  if ((C == 0xe0 && P[1] < 0xa0) || (C == 0xed && P[1] >= 0xa0) ||
      (C == 0xf0 && P[1] < 0x90) || (C == 0xf4 && P[1] >= 0x90))
    return 0;
  return N;
}

void JsonOut::string(std::string_view V) {
  S += '"';
  const auto *P = reinterpret_cast<const unsigned char *>(V.data());
  for (size_t I = 0; I < V.size();) {
    unsigned char C = P[I];
    if (C == '"' || C == '\\') {
      S += '\\';
      S += static_cast<char>(C);
    } else if (C < 0x20) {
      fmt::format_to(std::back_inserter(S), "\\u{:04x}", C);
    } else if (C >= 0x80) {
      size_t N = utf8Length(P + I, V.size() - I);
      if (N == 0) {
        S += "\\ufffd";
        ++I;
        continue;
      }
      S.append(V.data() + I, N);
      I += N;
      continue;
    } else {
      S += static_cast<char>(C);
    }
    ++I;
  }
  S += '"';
}

bool isCanonicalInteger(std::string_view V) {
  int64_t X;
  auto [P, Ec] = std::from_chars(V.data(), V.data() + V.size(), X);
  return Ec == std::errc() && P == V.data() + V.size() && !V.empty() &&
         std::to_string(X) == V;
}

class Writer {
public:
  explicit Writer(const Trace &T) : T(T) {}
  std::string run();
  size_t Records = 0; ///< traceEvents written

private:
  const Trace &T;
  JsonOut O;
  bool FirstEvent = true;

  void beginEvent() {
    O.raw(FirstEvent ? "\n" : ",\n");
    FirstEvent = false;
    ++Records;
  }
  /// "pid":..,"tid":.. of a track.
  void pidTid(TrackId Tr);
  void id(std::string_view Raw) {
    if (isCanonicalInteger(Raw))
      O.raw(Raw);
    else
      O.string(Raw);
  }
  void header();
  void event(EventId E);
  void threadNames();
  void memory(const MemoryRecord &M);
  void flow(const FlowPoint &F);
};

void Writer::pidTid(TrackId Tr) {
  const Track &K = T.Tracks[Tr];
  O.key("pid");
  if (K.IsDevice)
    O.integer(K.Device);
  else
    id(T.str(K.RawPid));
  O.raw(",");
  O.key("tid");
  if (K.IsDevice)
    O.integer(K.Stream);
  else
    id(T.str(K.RawTid));
}

void Writer::header() {
  O.raw("{");
  O.key("schemaVersion");
  O.integer(1);
  O.raw(",\n");
  O.key("deviceProperties");
  O.raw("[");
  for (size_t I = 0; I < T.Devices.size(); ++I) {
    const DeviceInfo &D = T.Devices[I];
    O.raw(I ? ",\n  {" : "\n  {");
    O.key("id");
    O.integer(D.Id);
    O.raw(",");
    O.key("name");
    O.string(D.Name);
    O.raw(",");
    O.key("totalGlobalMem");
    O.integer(D.TotalGlobalMem);
    O.raw(",");
    O.key("computeMajor");
    O.integer(D.ComputeMajor);
    O.raw(",");
    O.key("computeMinor");
    O.integer(D.ComputeMinor);
    O.raw(",");
    O.key("numSms");
    O.integer(D.NumSms);
    O.raw("}");
  }
  O.raw("],\n");
  if (T.Distributed.Present) {
    O.key("distributedInfo");
    O.raw("{");
    O.key("backend");
    O.string(T.Distributed.Backend);
    O.raw(",");
    O.key("rank");
    O.integer(T.Distributed.Rank);
    O.raw(",");
    O.key("world_size");
    O.integer(T.Distributed.WorldSize);
    O.raw(",");
    O.key("nccl_version");
    O.string(T.Distributed.NcclVersion);
    O.raw("},\n");
  }
  O.key("displayTimeUnit");
  O.string("ms");
  O.raw(",\n");
  if (T.BaseTimeNs) {
    O.key("baseTimeNanoseconds");
    O.integer(*T.BaseTimeNs);
    O.raw(",\n");
  }
}

void Writer::event(EventId E) {
  EventKind K = T.Kind[E];
  const Track &Tr = T.track(E);
  beginEvent();
  O.raw("{\"ph\":\"X\",");
  O.key("cat");
  O.string(eventKindName(K));
  O.raw(",");
  O.key("name");
  O.string(T.name(E));
  O.raw(",");
  pidTid(T.TrackOf[E]);
  O.raw(",");
  O.key("ts");
  O.micros(T.Start[E]);
  O.raw(",");
  O.key("dur");
  O.micros(T.Dur[E]);
  O.raw(",\"args\":{");
  bool First = true;
  auto Key = [&](std::string_view K) {
    if (!First)
      O.raw(",");
    First = false;
    O.key(K);
  };
  if (Tr.IsDevice) {
    Key("device");
    O.integer(Tr.Device);
    Key("stream");
    O.integer(Tr.Stream);
  }
  if (T.Correlation[E] != NoValue) {
    Key("correlation");
    O.integer(T.Correlation[E]);
  }
  if (T.ExternalId[E] != NoValue) {
    Key("External id");
    O.integer(T.ExternalId[E]);
  }
  if (T.SeqNumber[E] != NoValue) {
    Key("Sequence number");
    O.integer(T.SeqNumber[E]);
  }
  if (T.FwdThread[E] >= 0) {
    Key("Fwd thread id");
    O.integer(T.FwdThread[E]);
  }
  if (T.Bytes[E] != NoValue) {
    Key("bytes");
    O.integer(T.Bytes[E]);
  }
  for (uint32_t I = T.ArgsBegin[E]; I != T.ArgsBegin[E + 1]; ++I) {
    const Arg &A = T.Args[I];
    Key(argKeyName(A.Key));
    if (A.IsString)
      O.string(T.str(static_cast<StringId>(A.Value)));
    else
      O.integer(A.Value);
  }
  O.raw("}}");
}

void Writer::threadNames() {
  for (TrackId Tr = 0; Tr < T.Tracks.size(); ++Tr) {
    const Track &K = T.Tracks[Tr];
    if (K.IsDevice || !K.Name)
      continue;
    beginEvent();
    O.raw("{\"ph\":\"M\",\"name\":\"thread_name\",");
    pidTid(Tr);
    O.raw(",\"args\":{");
    O.key("name");
    // Kineto's form; readers keep the part in parentheses.
    O.string("thread " + std::string(T.str(K.RawTid)) + " (" +
             std::string(T.str(K.Name)) + ")");
    O.raw("}}");
  }
}

void Writer::memory(const MemoryRecord &M) {
  beginEvent();
  O.raw("{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\","
        "\"name\":\"[memory]\",");
  pidTid(M.Track);
  O.raw(",");
  O.key("ts");
  O.micros(M.Ts);
  O.raw(",\"args\":{");
  O.key("Addr");
  fmt::format_to(std::back_inserter(O.S), "{}", M.Addr);
  O.raw(",");
  O.key("Bytes");
  O.integer(M.Bytes);
  if (M.TotalAllocated != NoValue) {
    O.raw(",");
    O.key("Total Allocated");
    O.integer(M.TotalAllocated);
  }
  if (M.TotalReserved != NoValue) {
    O.raw(",");
    O.key("Total Reserved");
    O.integer(M.TotalReserved);
  }
  O.raw(",");
  O.key("Device Type");
  O.integer(M.DeviceType);
  O.raw(",");
  O.key("Device Id");
  O.integer(M.DeviceId);
  O.raw("}}");
}

void Writer::flow(const FlowPoint &F) {
  beginEvent();
  O.raw("{\"ph\":");
  O.string(std::string(1, F.Phase));
  O.raw(",");
  O.key("id");
  if (F.Id >> 63)
    O.string(T.str(static_cast<StringId>(F.Id & ~(uint64_t(1) << 63))));
  else
    fmt::format_to(std::back_inserter(O.S), "{}", F.Id);
  O.raw(",");
  pidTid(F.Track);
  O.raw(",");
  O.key("ts");
  O.micros(F.Ts);
  const char *Cat = F.Kind == FlowKind::Launch   ? "ac2g"
                    : F.Kind == FlowKind::FwdBwd ? "fwdbwd"
                                                 : "flow";
  O.raw(",");
  O.key("cat");
  O.string(Cat);
  O.raw(",");
  O.key("name");
  O.string(Cat);
  if (F.BindEnclosing)
    O.raw(",\"bp\":\"e\"");
  O.raw("}");
}

std::string Writer::run() {
  header();
  O.key("traceEvents");
  O.raw("[");
  threadNames();
  for (EventId E = 0; E < T.numEvents(); ++E)
    event(E);
  for (const MemoryRecord &M : T.Memory)
    memory(M);
  for (const FlowPoint &F : T.Flows)
    flow(F);
  O.raw("\n],\n");
  O.key("traceName");
  O.string(T.Path);
  O.raw("}\n");
  return std::move(O.S);
}

} // namespace

std::string dd::trace::writeChromeJson(const Trace &T, size_t *Records) {
  Writer W(T);
  std::string Out = W.run();
  if (Records)
    *Records = W.Records;
  return Out;
}

//===- ChromeJson.cpp - Writing a trace as Chrome-trace JSON --------------===//
//
// Written through support's JsonWriter, in one pass: times as microseconds
// with three decimals ("12.345", appendMicros), which the readers parse back
// into exact nanoseconds; strings escaped with invalid UTF-8 replaced
// (appendJsonEscaped), so the output is always valid JSON.
//
//===----------------------------------------------------------------------===//

#include "trace/ChromeJson.h"

#include "support/Format.h"

#include <charconv>

using namespace dd;
using namespace dd::trace;

namespace {

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
  std::string Out;
  JsonWriter W{Out};

  void beginEvent() {
    W.breakLine().beginObject();
    ++Records;
  }
  /// "pid":..,"tid":.. of a track.
  void pidTid(TrackId Tr);
  void id(std::string_view Raw) {
    if (isCanonicalInteger(Raw))
      W.raw(Raw);
    else
      W.value(Raw);
  }
  void header();
  void event(EventId E);
  void threadNames();
  void memory(const MemoryRecord &M);
  void flow(const FlowPoint &F);
};

void Writer::pidTid(TrackId Tr) {
  const Track &K = T.Tracks[Tr];
  W.key("pid");
  if (K.IsDevice)
    W.value(K.Device);
  else
    id(T.str(K.RawPid));
  W.key("tid");
  if (K.IsDevice)
    W.value(K.Stream);
  else
    id(T.str(K.RawTid));
}

void Writer::header() {
  W.beginObject().field("schemaVersion", 1).breakLine();
  // What recorded it survives the conversion (the profiler's cost model
  // is the PyTorch profiler's, not the collector's).
  if (T.FromCollector)
    W.field("ddscriptCollector", true).breakLine();
  if (T.DroppedMemoryRecords)
    W.field("ddscriptDroppedMemoryRecords", T.DroppedMemoryRecords).breakLine();
  W.key("deviceProperties").beginArray();
  for (const DeviceInfo &D : T.Devices)
    W.breakLine(2)
        .beginObject()
        .field("id", D.Id)
        .field("name", D.Name)
        .field("totalGlobalMem", D.TotalGlobalMem)
        .field("computeMajor", D.ComputeMajor)
        .field("computeMinor", D.ComputeMinor)
        .field("numSms", D.NumSms)
        .endObject();
  W.endArray().breakLine();
  if (T.Distributed.Present) {
    W.key("distributedInfo")
        .beginObject()
        .field("backend", T.Distributed.Backend)
        .field("rank", T.Distributed.Rank)
        .field("world_size", T.Distributed.WorldSize)
        .field("nccl_version", T.Distributed.NcclVersion)
        .endObject()
        .breakLine();
  }
  W.field("displayTimeUnit", "ms").breakLine();
  if (T.BaseTimeNs)
    W.field("baseTimeNanoseconds", *T.BaseTimeNs).breakLine();
}

void Writer::event(EventId E) {
  EventKind K = T.Kind[E];
  const Track &Tr = T.track(E);
  beginEvent();
  W.field("ph", "X").field("cat", eventKindName(K)).field("name", T.name(E));
  pidTid(T.TrackOf[E]);
  W.key("ts").micros(T.Start[E]).key("dur").micros(T.Dur[E]);
  W.key("args").beginObject();
  if (Tr.IsDevice)
    W.field("device", Tr.Device).field("stream", Tr.Stream);
  if (T.Correlation[E] != NoValue)
    W.field("correlation", T.Correlation[E]);
  if (T.ExternalId[E] != NoValue)
    W.field("External id", T.ExternalId[E]);
  if (T.SeqNumber[E] != NoValue)
    W.field("Sequence number", T.SeqNumber[E]);
  if (T.FwdThread[E] >= 0)
    W.field("Fwd thread id", T.FwdThread[E]);
  if (T.Bytes[E] != NoValue)
    W.field("bytes", T.Bytes[E]);
  for (uint32_t I = T.ArgsBegin[E]; I != T.ArgsBegin[E + 1]; ++I) {
    const Arg &A = T.Args[I];
    W.key(argKeyName(A.Key));
    if (A.IsString)
      W.value(T.str(static_cast<StringId>(A.Value)));
    else
      W.value(A.Value);
  }
  W.endObject().endObject();
}

void Writer::threadNames() {
  for (TrackId Tr = 0; Tr < T.Tracks.size(); ++Tr) {
    const Track &K = T.Tracks[Tr];
    if (K.IsDevice || !K.Name)
      continue;
    beginEvent();
    W.field("ph", "M").field("name", "thread_name");
    pidTid(Tr);
    // Kineto's form; readers keep the part in parentheses.
    W.key("args")
        .beginObject()
        .field("name", "thread " + std::string(T.str(K.RawTid)) + " (" +
                           std::string(T.str(K.Name)) + ")")
        .endObject()
        .endObject();
  }
}

void Writer::memory(const MemoryRecord &M) {
  beginEvent();
  W.field("ph", "i").field("cat", "cpu_instant_event").field("s", "t");
  W.field("name", "[memory]");
  pidTid(M.Track);
  W.key("ts").micros(M.Ts);
  W.key("args").beginObject().field("Addr", M.Addr).field("Bytes", M.Bytes);
  if (M.TotalAllocated != NoValue)
    W.field("Total Allocated", M.TotalAllocated);
  if (M.TotalReserved != NoValue)
    W.field("Total Reserved", M.TotalReserved);
  W.field("Device Type", M.DeviceType).field("Device Id", M.DeviceId);
  W.endObject().endObject();
}

void Writer::flow(const FlowPoint &F) {
  beginEvent();
  W.field("ph", std::string_view(&F.Phase, 1)).key("id");
  if (F.Id >> 63)
    W.value(T.str(static_cast<StringId>(F.Id & ~(uint64_t(1) << 63))));
  else
    W.value(F.Id);
  pidTid(F.Track);
  W.key("ts").micros(F.Ts);
  const char *Cat = F.Kind == FlowKind::Launch   ? "ac2g"
                    : F.Kind == FlowKind::FwdBwd ? "fwdbwd"
                                                 : "flow";
  W.field("cat", Cat).field("name", Cat);
  if (F.BindEnclosing)
    W.field("bp", "e");
  W.endObject();
}

std::string Writer::run() {
  header();
  W.key("traceEvents").beginArray();
  threadNames();
  for (EventId E = 0; E < T.numEvents(); ++E)
    event(E);
  for (const MemoryRecord &M : T.Memory)
    memory(M);
  for (const FlowPoint &F : T.Flows)
    flow(F);
  W.breakLine().endArray().breakLine();
  W.field("traceName", T.Path).endObject();
  Out += '\n';
  return std::move(Out);
}

} // namespace

std::string dd::trace::writeChromeJson(const Trace &T, size_t *Records) {
  Writer W(T);
  std::string Out = W.run();
  if (Records)
    *Records = W.Records;
  return Out;
}

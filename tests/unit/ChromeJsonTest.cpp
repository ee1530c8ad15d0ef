// `ddscript convert`'s writer: a trace written as Chrome-trace JSON reads
// back, with ddscript's own Kineto reader, into the same model.

#include "CuptiSynth.h"

#include "trace/ChromeJson.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace dd;
using namespace dd::trace;

namespace {

/// Everything the model holds, one line per item, independent of track
/// and string numbering.
std::vector<std::string> dump(const Trace &T) {
  std::vector<std::string> L;
  auto Val = [](int64_t V) {
    return V == NoValue ? std::string("-") : std::to_string(V);
  };
  L.push_back("base " + (T.BaseTimeNs ? std::to_string(*T.BaseTimeNs)
                                      : std::string("-")));
  for (const DeviceInfo &D : T.Devices)
    L.push_back(fmt::format("device {} {} {} {}.{} {}", D.Id, D.Name,
                            D.TotalGlobalMem, D.ComputeMajor, D.ComputeMinor,
                            D.NumSms));
  if (T.Distributed.Present)
    L.push_back(fmt::format("distributed {} {} {} {}", T.Distributed.Backend,
                            T.Distributed.Rank, T.Distributed.WorldSize,
                            T.Distributed.NcclVersion));
  for (EventId E = 0; E < T.numEvents(); ++E) {
    std::string S = fmt::format(
        "{} {} | {} | {} {} | corr {} ext {} seq {} fwd {} bytes {}",
        eventKindName(T.Kind[E]), T.name(E), T.trackLabel(T.TrackOf[E]),
        T.Start[E], T.Dur[E], Val(T.Correlation[E]), Val(T.ExternalId[E]),
        Val(T.SeqNumber[E]), T.FwdThread[E], Val(T.Bytes[E]));
    std::vector<std::string> Args;
    for (uint32_t I = T.ArgsBegin[E]; I != T.ArgsBegin[E + 1]; ++I) {
      const Arg &A = T.Args[I];
      Args.push_back(fmt::format(
          "{}={}", argKeyName(A.Key),
          A.IsString ? std::string(T.str(static_cast<StringId>(A.Value)))
                     : std::to_string(A.Value)));
    }
    std::sort(Args.begin(), Args.end());
    for (const std::string &A : Args)
      S += " " + A;
    L.push_back(std::move(S));
  }
  for (const MemoryRecord &M : T.Memory)
    L.push_back(fmt::format("memory {} {} {} {} {} {} {} {}", M.Ts,
                            T.trackLabel(M.Track), M.Addr, M.Bytes,
                            Val(M.TotalAllocated), Val(M.TotalReserved),
                            M.DeviceType, M.DeviceId));
  for (const FlowPoint &F : T.Flows)
    L.push_back(fmt::format(
        "flow {} {} {} {} {} {}", static_cast<int>(F.Kind), F.Phase,
        F.BindEnclosing,
        F.Id >> 63 ? std::string(T.str(StringId(F.Id & ~(1ull << 63))))
                   : std::to_string(F.Id),
        F.Ts, T.trackLabel(F.Track)));
  return L;
}

Trace roundTrip(const Trace &T) {
  std::string Json = writeChromeJson(T);
  auto Back = parseKinetoJson(Json, "converted.json");
  if (!Back)
    FAIL(llvm::toString(Back.takeError()));
  return std::move(*Back);
}

void checkSame(const Trace &A, const Trace &B) {
  auto DA = dump(A), DB = dump(B);
  REQUIRE(DA.size() == DB.size());
  for (size_t I = 0; I < DA.size(); ++I) {
    CAPTURE(I);
    CHECK(DA[I] == DB[I]);
  }
}

} // namespace

TEST_CASE("convert: run.cupti -> JSON -> Kineto reader keeps the model") {
  test::SynthRun S;
  cupti::RecordWriter W;
  test::writeSyntheticRun(W, S);
  auto T = parseCupti(W.data(), "run.cupti");
  REQUIRE(static_cast<bool>(T));
  REQUIRE(T->numEvents() > 50);
  Trace Back = roundTrip(*T);
  CHECK(Back.Format == SourceFormat::KinetoJson);
  checkSame(*T, Back);
  // NVTX ranges stay markers, on the named thread.
  bool SawMarker = false;
  for (EventId E = 0; E < Back.numEvents(); ++E)
    if (Back.Kind[E] == EventKind::Marker &&
        Back.name(E) == "ProfilerStep#10") {
      SawMarker = true;
      CHECK(Back.str(Back.track(E).Name) == "python");
    }
  CHECK(SawMarker);
}

TEST_CASE("convert: Kineto traces survive the round trip too") {
  for (const char *Name : {"hta/critical_path/event_sync.json.gz",
                           "kineto/resnet50_2021-01_workers0.pt.trace.json.gz",
                           "hta/ddp2_a100_nccl_data.json.gz"}) {
    CAPTURE(Name);
    auto T = readTrace(std::string(DD_TEST_DATA) + "/" + Name);
    REQUIRE(static_cast<bool>(T));
    Trace Back = roundTrip(*T);
    checkSame(*T, Back);
  }
}

TEST_CASE("convert: names are escaped into valid JSON") {
  Trace T;
  TrackId Tr = T.internTrack("1", "thread \"one\"");
  T.Tracks[Tr].Name = T.Strings.intern("tab\there");
  std::string Odd = "quote\" back\\slash \x01 ctl \xc3\xa9 ok \xff bad";
  T.addEvent(EventKind::UserAnnotation, T.Strings.intern(Odd), Tr, -1500, 2);
  Trace Back = roundTrip(T);
  REQUIRE(Back.numEvents() == 1);
  CHECK(Back.name(0) ==
        "quote\" back\\slash \x01 ctl \xc3\xa9 ok \xef\xbf\xbd bad");
  CHECK(Back.Start[0] == -1500);
  CHECK(Back.Dur[0] == 2);
  CHECK(Back.str(Back.track(0).RawTid) == "thread \"one\"");
  CHECK(Back.str(Back.track(0).Name) == "tab\there");
}

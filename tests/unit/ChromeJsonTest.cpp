// `ddscript convert`'s writer: a trace written as Chrome-trace JSON reads
// back, with ddscript's own Kineto reader, into the same model.

#include "CuptiSynth.h"
#include "TraceDump.h"

#include "trace/ChromeJson.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>
#include <simdjson.h>

using namespace dd;
using namespace dd::trace;

namespace {

Trace roundTrip(const Trace &T) {
  size_t Records = 0;
  std::string Json = writeChromeJson(T, &Records);
  // The count convert prints is the traceEvents array's length.
  simdjson::dom::parser P;
  simdjson::dom::element Doc = P.parse(Json);
  CHECK(simdjson::dom::array(Doc["traceEvents"]).size() == Records);
  auto Back = parseKinetoJson(Json, "converted.json");
  if (!Back)
    FAIL(llvm::toString(Back.takeError()));
  return std::move(*Back);
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
  test::checkSameTrace(*T, Back);
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
    test::checkSameTrace(*T, Back);
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

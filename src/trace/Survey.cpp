//===- Survey.cpp - Where a Kineto trace's events lie, and when -----------===//
//
// The same walk as the Kineto reader's (JsonWalker: windows, threads,
// errors), with a parse that looks at five fields of each element and
// skips the rest, "args" above all, unread.
//
//===----------------------------------------------------------------------===//

#include "trace/Survey.h"

#include "support/Error.h"
#include "support/Format.h"
#include "support/InputStream.h"
#include "support/Prefault.h"
#include "support/Work.h"
#include "trace/JsonScan.h"
#include "trace/JsonText.h"
#include "trace/JsonWalker.h"
#include "trace/KinetoEvent.h"
#include "trace/Numbers.h"

#include <simdjson.h>

using namespace dd;
using namespace dd::trace;
namespace od = simdjson::ondemand;
using kineto::Cat;

namespace {

/// What the survey keeps of one element.
struct Item {
  uint64_t Offset = 0;
  int64_t Start = 0, Dur = -1;
  uint8_t Flags = 0;
};

/// Thrown for an element the survey cannot place (not an object): the
/// caller then reads the document in full, and the reader says what is
/// wrong with it.
struct NotSurveyed {};

bool isDeviceSide(Cat C) {
  return C == Cat::Kernel || C == Cat::Memcpy || C == Cat::Memset ||
         C == Cat::GpuAnnotation || C == Cat::CudaSync ||
         C == Cat::FlowLaunch || C == Cat::FlowFwdBwd;
}

/// Whether a name can matter here: unescaped, it starts as its raw text
/// does unless that starts with an escape, and only names that start with
/// 'P' (ProfilerStep#) or '[' ([memory]) do.
bool nameMatters(std::string_view Tok) {
  return Tok.size() < 2 || Tok[0] != '"' || Tok[1] == 'P' || Tok[1] == '[' ||
         Tok[1] == '\\';
}

/// What the survey keeps of element \p V at content offset \p Offset.
Item surveyElement(od::value V, uint64_t Offset) {
  Item It;
  It.Offset = Offset;
  if (V.type() != od::json_type::object)
    throw NotSurveyed{};
  std::string_view Ph, Ts, Dur, Name, CatText;
  bool HasTs = false, HasCat = false;
  // Every field is walked, so that the element is whole before it counts
  // (the walker reads an element that ends past its window again, in the
  // next one); a repeated key reads as its last, as the reader reads it.
  for (auto Field : V.get_object()) {
    std::string_view Key = jsontext::keyOf(Field);
    switch (Key.size()) {
    case 2:
      if (Key == "ph") {
        Ph = jsontext::textOf(Field.value());
      } else if (Key == "ts") {
        Ts = jsontext::textOf(Field.value());
        HasTs = true;
      }
      break;
    case 3:
      if (Key == "dur") {
        Dur = jsontext::textOf(Field.value());
      } else if (Key == "cat") {
        CatText = jsontext::textOf(Field.value());
        HasCat = true;
      }
      break;
    case 4:
      if (Key == "name") {
        od::value FV = Field.value();
        Name = nameMatters(FV.raw_json_token()) ? jsontext::textOf(FV)
                                                : std::string_view();
      }
      break;
    default:
      break;
    }
  }
  char P = Ph.empty() ? 0 : Ph[0];
  if (P == 'B' || P == 'E')
    It.Flags |= TraceSurvey::Paired;
  if (P == 'M')
    It.Flags |= TraceSurvey::Always;
  if (Name == "[memory]")
    It.Flags |= TraceSurvey::MemoryRecord;
  if (P == 's' || P == 't' || P == 'f')
    It.Flags |= TraceSurvey::Device;
  if (HasCat) {
    bool Legacy;
    Cat C = kineto::classifyCategory(CatText, Legacy);
    if (isDeviceSide(C))
      It.Flags |= TraceSurvey::Device;
    if (C == Cat::Kernel || C == Cat::Memcpy || C == Cat::Memset)
      It.Flags |= TraceSurvey::GpuWork;
  }
  std::optional<int64_t> Start;
  if (HasTs)
    Start = parseMicrosAsNanos(Ts);
  if (Start) {
    It.Flags |= TraceSurvey::Timed;
    It.Start = *Start;
  } else {
    It.Flags |= TraceSurvey::Always;
  }
  if (Name.substr(0, 13) == "ProfilerStep#") {
    It.Flags |= TraceSurvey::StepMarker;
    if (auto D = parseMicrosAsNanos(Dur))
      It.Dur = *D;
  }
  return It;
}

class Surveyor : public JsonWalker::Batches {
public:
  explicit Surveyor(TraceSurvey &S) : S(S) {}

  void add(const Item &It) {
    if (It.Flags & TraceSurvey::StepMarker)
      S.Markers.push_back({S.Offset.size(), It.Start, It.Dur});
    S.AnyPaired |= (It.Flags & TraceSurvey::Paired) != 0;
    S.Offset.push_back(It.Offset);
    S.Start.push_back(It.Start);
    S.Flags.push_back(It.Flags);
  }

  // JsonWalker::Batches.
  void resize(unsigned N) override {
    Ahead.resize(N);
    if (N == 0)
      Ahead.shrink_to_fit();
  }
  void clear(unsigned Batch, size_t Bytes, std::ptrdiff_t) override {
    std::vector<Item> &B = Ahead[Batch];
    B.clear();
    // Kineto events take 150 to 300 bytes.
    B.reserve(Bytes / 128 + 16);
  }
  void parse(unsigned Batch, od::value V, uint64_t Offset) override {
    Ahead[Batch].push_back(surveyElement(V, Offset));
  }
  void commit(unsigned Batch) override {
    for (const Item &It : Ahead[Batch])
      add(It);
  }

private:
  TraceSurvey &S;
  std::vector<std::vector<Item>> Ahead;
};

/// The JSON text of a top-level value.
std::string jsonText(od::value V) {
  switch (V.type()) {
  case od::json_type::object:
    return std::string(V.get_object().value().raw_json().value());
  case od::json_type::array:
    return std::string(V.get_array().value().raw_json().value());
  default:
    return std::string(jsontext::trimToken(V.raw_json_token()));
  }
}

} // namespace

llvm::Expected<TraceSurvey>
dd::trace::surveyKinetoJson(InputStream &In, const ProgressFn &Progress,
                            unsigned Threads) {
  TraceSurvey S;
  // Room for the elements at once (about 200 bytes each; gzip packs them
  // about 10x), mapped in one go.
  uint64_t Content = In.sourceSize() * (In.isCompressed() ? 10 : 1);
  size_t Guess = static_cast<size_t>(Content / 160) + 64;
  S.Offset.reserve(Guess);
  S.Start.reserve(Guess);
  S.Flags.reserve(Guess);
  prefaultCapacity(S.Offset);
  prefaultCapacity(S.Start);
  prefaultCapacity(S.Flags);

  JsonWalker W(In, DefaultWindowBytes);
  Surveyor Sv(S);
  auto Field = [&](std::string_view Key, od::value V, uint64_t) {
    S.Fields.emplace_back(std::string(Key), jsonText(V));
  };
  auto Element = [&](od::value V, uint64_t Offset) {
    Sv.add(surveyElement(V, Offset));
  };
  auto Report = [&](double F) {
    if (Progress)
      Progress(F);
  };
  if (Threads == 0)
    Threads = loadThreadsFor(Content, DefaultWindowBytes);
  try {
    llvm::Error E =
        Threads > 1 ? W.walk("traceEvents", Field, Element, Sv, Threads, Report)
                    : W.walk("traceEvents", Field, Element, Report);
    if (E)
      return E;
  } catch (const NotSurveyed &) {
    return makeError("an element of \"traceEvents\" is not an object");
  } catch (const simdjson::simdjson_error &E) {
    return makeError(std::string("malformed event: ") + E.what());
  }
  if (!W.sawArray())
    return makeError("no \"traceEvents\" array");
  work::add(work::Counter::TraceSurveyed, S.numElements());
  return S;
}

namespace {

/// Reads ranges of content in increasing order through blocks of a few
/// hundred KB: the elements a focus keeps come in many short runs, and a
/// read call each would cost more than reading what lies between them.
class BlockReader {
public:
  BlockReader(InputStream &In, uint64_t ContentBytes)
      : In(In), ContentBytes(ContentBytes) {}

  /// Appends content [From, To) to \p Out.
  llvm::Error append(uint64_t From, uint64_t To, std::string &Out) {
    while (From < To) {
      if (From < At || From >= At + Block.size()) {
        At = From;
        Block.resize(static_cast<size_t>(
            std::min<uint64_t>(BlockBytes, ContentBytes - From)));
        auto Got = In.readAt(At, Block.data(), Block.size());
        if (!Got)
          return Got.takeError();
        if (*Got != Block.size() || Block.empty())
          return makeError("the trace changed while it was read");
      }
      uint64_t End = std::min(To, At + Block.size());
      Out.append(Block.data() + (From - At), static_cast<size_t>(End - From));
      From = End;
    }
    return llvm::Error::success();
  }

private:
  static constexpr uint64_t BlockBytes = 256u << 10;
  InputStream &In;
  uint64_t ContentBytes;
  std::string Block;
  uint64_t At = 0;
};

} // namespace

llvm::Expected<std::string>
dd::trace::excerptKinetoJson(InputStream &In, uint64_t ContentBytes,
                             const TraceSurvey &S,
                             llvm::function_ref<bool(size_t)> Keep) {
  std::string Out;
  JsonWriter W(Out);
  W.beginObject();
  for (const auto &[Key, Json] : S.Fields)
    W.key(Key).raw(Json);
  W.key("traceEvents").beginArray();
  // Runs of kept elements, each read as one range: from the first's start
  // to the next element's (or the content's end), less what follows the
  // last: blanks and a comma, or whatever ends the array.
  struct Run {
    size_t First, Last; ///< element indexes
    uint64_t From, To;  ///< content offsets
  };
  std::vector<Run> Runs;
  size_t N = S.numElements();
  uint64_t Bytes = 0;
  for (size_t I = 0; I < N;) {
    if (!Keep(I)) {
      ++I;
      continue;
    }
    size_t J = I + 1;
    while (J < N && Keep(J))
      ++J;
    uint64_t From = S.Offset[I];
    uint64_t To = J < N ? S.Offset[J] : ContentBytes;
    if (To < From || To > ContentBytes)
      return makeError("the survey's offsets are out of order");
    Runs.push_back({I, J - 1, From, To});
    Bytes += To - From + 1;
    I = J + 1; // Keep(J) was false
  }
  // The document's room at once: grown by doubling, it would be written
  // (and faulted in) about twice.
  Out.reserve(Out.size() + static_cast<size_t>(Bytes) + 64);
  prefault(Out.data() + Out.size(), Out.capacity() - Out.size());
  BlockReader Read(In, ContentBytes);
  bool First = true;
  for (const Run &R : Runs) {
    if (!First)
      Out += ',';
    First = false;
    size_t At = Out.size();
    if (auto E = Read.append(R.From, R.To, Out))
      return E;
    size_t End = Out.size();
    if (R.Last + 1 < N) {
      while (End > At &&
             (jsonscan::isSpace(Out[End - 1]) || Out[End - 1] == ','))
        --End;
    } else {
      size_t Last = static_cast<size_t>(S.Offset[R.Last] - R.From);
      size_t Len =
          jsonscan::scanValue(Out.data() + At + Last, End - At - Last, true);
      if (Len == jsonscan::NoPos)
        return makeError("the last event does not end");
      End = At + Last + Len;
    }
    Out.resize(End);
  }
  W.endArray();
  W.endObject();
  return Out;
}

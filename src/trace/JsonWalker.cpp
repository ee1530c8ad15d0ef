#include "trace/JsonWalker.h"

#include "support/Error.h"
#include "trace/JsonScan.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>

using namespace dd;
using namespace dd::trace;
using namespace dd::trace::jsonscan;
namespace od = simdjson::ondemand;

namespace {
constexpr size_t Padding = simdjson::SIMDJSON_PADDING;
} // namespace

JsonWalker::JsonWalker(InputStream &In, size_t WindowBytes)
    : In(In), Window(std::max<size_t>(WindowBytes, 16)) {
  Cap = BufCap = Window;
  Buf.reset(new char[Cap + 2 + Padding]);
  D = Buf.get() + 1;
  // Once for all windows: a parser that grows to each new window's size
  // would allocate (and fault in) its index again and again.
  reserveParser();
}

void JsonWalker::reserveParser() {
  // A failure shows again, with its reason, when iterate() tries.
  simdjson::error_code E = Parser.allocate(Cap + 2);
  (void)E;
}

JsonWalker::~JsonWalker() = default;

llvm::Expected<size_t> JsonWalker::readInput(char *Dst, size_t Max) {
  if (UnreadUsed < Unread.size()) {
    size_t N = std::min(Max, Unread.size() - UnreadUsed);
    std::memcpy(Dst, Unread.data() + UnreadUsed, N);
    UnreadUsed += N;
    if (UnreadUsed == Unread.size()) {
      Unread.clear();
      UnreadUsed = 0;
    }
    return N;
  }
  if (InputError)
    return makeError(*InputError);
  auto N = In.read(Dst, Max);
  if (!N) {
    // Kept: a walk that goes back re-reads what it was given back, then
    // must meet the same error.
    InputError = llvm::toString(N.takeError());
    return makeError(*InputError);
  }
  return *N;
}

void JsonWalker::dropFront() {
  if (Dropped && Pos > 0)
    Dropped->emplace_back(Base, std::string(D, Pos));
}

llvm::Expected<bool> JsonWalker::fill() {
  if (Pos > 0) {
    dropFront();
    std::memmove(D, D + Pos, Len - Pos);
    Base += Pos;
    Len -= Pos;
    Pos = 0;
  }
  size_t Before = Len;
  while (!Eof && Len < Cap) {
    auto N = readInput(D + Len, Cap - Len);
    if (!N)
      return N.takeError();
    if (*N == 0)
      Eof = true;
    Len += *N;
  }
  return Len > Before;
}

llvm::Error JsonWalker::grow() {
  size_t NewCap = Cap * 2;
  std::unique_ptr<char[]> New(new char[NewCap + 2 + Padding]);
  dropFront();
  std::memcpy(New.get() + 1, D + Pos, Len - Pos);
  Base += Pos;
  Len -= Pos;
  Pos = 0;
  Buf = std::move(New);
  Cap = BufCap = NewCap;
  D = Buf.get() + 1;
  if (auto F = fill(); !F)
    return F.takeError();
  return llvm::Error::success();
}

llvm::Expected<bool> JsonWalker::skipSpace() {
  for (;;) {
    while (Pos < Len && isSpace(D[Pos]))
      ++Pos;
    if (Pos < Len)
      return true;
    auto F = fill();
    if (!F)
      return F.takeError();
    if (!*F)
      return false;
  }
}

llvm::Expected<size_t> JsonWalker::valueEnd() {
  for (;;) {
    size_t N = scanValue(D + Pos, Len - Pos, Eof);
    if (N != NoPos)
      return Pos + N;
    if (Eof)
      return fail(offset(), "the JSON ends early or is not well formed "
                            "(truncated file?)");
    if (Pos == 0 && Len == Cap) {
      if (auto E = grow())
        return E;
    } else if (auto F = fill(); !F) {
      return F.takeError();
    }
  }
}

std::string JsonWalker::location(uint64_t Offset) {
  auto [Line, Col] = In.lineColumnOf(Offset);
  return "line " + std::to_string(Line) + ", column " + std::to_string(Col);
}

llvm::Error JsonWalker::fail(uint64_t Offset, const std::string &What) {
  return makeError("invalid JSON in the value at " + location(Offset) + ": " +
                   What);
}

llvm::Error JsonWalker::failJson(uint64_t Offset, simdjson::error_code Code) {
  std::string What = simdjson::error_message(Code);
  if (Code == simdjson::INCOMPLETE_ARRAY_OR_OBJECT ||
      Code == simdjson::TAPE_ERROR || Code == simdjson::EMPTY)
    What = "the JSON ends early or is not well formed (truncated file?)";
  else if (Code == simdjson::UNCLOSED_STRING)
    What = "a string is not closed (truncated file?)";
  return fail(Offset, What);
}

llvm::Expected<bool> JsonWalker::start() {
  auto S = skipSpace();
  if (!S)
    return S.takeError();
  if (!*S)
    return makeError("empty file");
  // A UTF-8 byte order mark (editors on Windows write one): skipped.
  if (Base + Pos == 0 && Len - Pos >= 3 &&
      std::memcmp(D + Pos, "\xEF\xBB\xBF", 3) == 0) {
    Pos += 3;
    S = skipSpace();
    if (!S)
      return S.takeError();
    if (!*S)
      return makeError("empty file");
  }
  if (D[Pos] != '[' && D[Pos] != '{')
    return makeError("not JSON: the file does not start with '{' or '['");
  return D[Pos] == '{';
}

llvm::Error JsonWalker::end() {
  // Blanks may follow the document, nothing else: a second document (two
  // traces concatenated) or trailing bytes would otherwise be dropped
  // without a word.
  auto S = skipSpace();
  if (!S)
    return S.takeError();
  if (*S)
    return makeError("invalid JSON at " + location(offset()) +
                     ": the file goes on after the JSON document ends (two "
                     "documents concatenated, or trailing data)");
  return llvm::Error::success();
}

llvm::Error JsonWalker::walk(std::string_view ArrayKey, FieldFn Field,
                             ElementFn Element, ProgressFn Progress) {
  auto Object = start();
  if (!Object)
    return Object.takeError();
  if (auto E = *Object
                   ? topLevelObject(ArrayKey, Field, Element, nullptr, Progress)
                   : array(Element, nullptr, Progress))
    return E;
  return end();
}

llvm::Error JsonWalker::topLevelObject(std::string_view ArrayKey, FieldFn Field,
                                       ElementFn Element, Pipeline *Threads,
                                       ProgressFn Progress) {
  ++Pos; // '{'
  auto Next = [&]() -> llvm::Error {
    auto S = skipSpace();
    if (!S)
      return S.takeError();
    if (!*S)
      return fail(offset(), "the JSON ends early or is not well formed "
                            "(truncated file?)");
    return llvm::Error::success();
  };
  llvm::StringSet<> Keys;
  for (bool First = true;; First = false) {
    if (auto E = Next())
      return E;
    if (D[Pos] == '}') {
      ++Pos;
      return llvm::Error::success();
    }
    if (!First) {
      if (D[Pos] != ',')
        return fail(offset(), "expected ',' or '}' after a value");
      ++Pos;
      if (auto E = Next())
        return E;
    }
    if (D[Pos] != '"')
      return fail(offset(), "expected a key");
    auto KeyEnd = valueEnd();
    if (!KeyEnd)
      return KeyEnd.takeError();
    std::string Key(D + Pos + 1, *KeyEnd - Pos - 2);
    // A key twice: which value counts is up to the reader (JSON does not
    // say), and a second "traceEvents" would be a second trace.
    if (!Keys.insert(Key).second)
      return makeError("invalid JSON at " + location(offset()) +
                       ": the key \"" + Key +
                       "\" appears twice in the top-level object");
    Pos = *KeyEnd;
    if (auto E = Next())
      return E;
    if (D[Pos] != ':')
      return fail(offset(), "expected ':' after a key");
    ++Pos;
    if (auto E = Next())
      return E;
    if (Key == ArrayKey) {
      if (D[Pos] != '[')
        return makeError("\"" + Key + "\" is not an array");
      if (auto E = array(Element, Threads, Progress))
        return E;
      continue;
    }
    uint64_t At = offset();
    auto End = valueEnd();
    if (!End)
      return End.takeError();
    // Parsed alone, as the one element of an array (simdjson does not hand
    // out a scalar document as a value).
    std::string Text;
    Text.reserve(*End - Pos + 2 + Padding);
    Text += '[';
    Text.append(D + Pos, *End - Pos);
    Text += ']';
    Pos = *End;
    try {
      od::parser Small;
      od::document Doc = Small.iterate(simdjson::padded_string_view(
          Text.data(), Text.size(), Text.capacity()));
      for (auto Item : Doc.get_array()) {
        Field(Key, Item.value(), At);
        break;
      }
    } catch (const simdjson::simdjson_error &E) {
      return failJson(At, E.error());
    }
  }
}

/// What became of one window.
struct JsonWalker::WindowResult {
  enum { Read, Closed, Grow, RetryTo } Kind;
  size_t End = 0; ///< for RetryTo: the window's new end
};

llvm::Expected<JsonWalker::WindowResult>
JsonWalker::parseWindow(size_t End, bool Final, bool Exact, ElementFn Element) {
  // Parse [D[Pos], D[End]) as "[" elements "]", in place: the byte before,
  // the byte at End and the one after it are borrowed and given back.
  size_t Begin = Pos;
  // The byte before the window: Buf[0], the slack, when it starts the data
  // (D[Begin - 1] would wrap the index around, which is undefined).
  char *Open = D + Begin - 1;
  char Before = *Open, After = D[End], Beyond = D[End + 1];
  *Open = '[';
  D[End] = ']';
  // simdjson reads the byte after a document that ends in ']', and takes
  // a ']' there for a sign that the array may have run on: a document
  // where the array closes early (the last window: the array and what
  // follows it) then fails. That byte is the next window's, or stale.
  D[End + 1] = ' ';
  auto Restore = llvm::make_scope_exit([&] {
    *Open = Before;
    D[End] = After;
    D[End + 1] = Beyond;
  });
  char *BufEnd = Buf.get() + Cap + 2 + Padding;
  // Grown here rather than in grow(): with threads, grow() runs on the
  // thread that cuts windows while this parser may be parsing one.
  if (Parser.capacity() < Cap + 2)
    reserveParser();
  auto Doc = Parser.iterate(
      simdjson::padded_string_view(Open, End - Begin + 2, BufEnd - Open));
  if (Doc.error()) {
    if (Doc.error() == simdjson::UNCLOSED_STRING && Final) {
      // The content ends inside a string: name the element it is in (the
      // first one after the last whole element), or the key after the
      // array.
      size_t Last = exactBoundary(D, Begin, Len), At = Begin;
      if (Last != NoPos) {
        At = D[Last] == ']' ? Last + 1 : Last;
        while (At < Len && (isSpace(D[At]) || D[At] == ','))
          ++At;
      }
      return failJson(Base + At, Doc.error());
    }
    if (Doc.error() != simdjson::UNCLOSED_STRING || Exact)
      return failJson(offset(), Doc.error());
    // The boundary lay in a string: find one exactly.
    size_t Exactly = exactBoundary(D, Begin, Len);
    if (Exactly == NoPos || Exactly == Begin)
      return WindowResult{WindowResult::Grow};
    return WindowResult{WindowResult::RetryTo, Exactly};
  }
  size_t Began = 0;
  bool LastDone = true;
  const char *LastStart = D + Begin;
  try {
    for (auto Item : Doc.get_array()) {
      od::value V = Item.value();
      LastStart = std::string_view(V.raw_json_token()).data();
      ElementAt = Base + static_cast<uint64_t>(LastStart - D);
      ++Began;
      LastDone = false;
      Element(V, ElementAt);
      LastDone = true;
    }
    auto Loc = Doc.current_location();
    if (Loc.error()) {
      // Every element up to End was read; the array goes on.
      Pos = End;
      return WindowResult{WindowResult::Read};
    }
    // The array closed inside the window: go on after its ']'.
    Pos = static_cast<size_t>(Loc.value() - D);
    return WindowResult{WindowResult::Closed};
  } catch (const simdjson::simdjson_error &Err) {
    size_t FailAt = static_cast<size_t>(LastStart - D);
    if (!LastDone && !Final) {
      if (Began > 1) {
        // Likely cut inside a nested value: the next window starts with
        // the element that failed.
        Pos = FailAt;
        return WindowResult{WindowResult::Read};
      }
      size_t N = scanValue(D + FailAt, Len - FailAt, false);
      if (N == NoPos)
        return WindowResult{WindowResult::Grow};
      if (FailAt + N > End)
        return WindowResult{WindowResult::RetryTo, FailAt + N};
    }
    return failJson(ElementAt, Err.error());
  }
}

llvm::Expected<std::optional<JsonWalker::Cut>> JsonWalker::nextWindow() {
  for (;;) {
    auto S = skipSpace();
    if (!S)
      return S.takeError();
    if (!*S)
      return fail(offset(), "the JSON ends early or is not well formed "
                            "(truncated file?)");
    if (D[Pos] == ']') {
      ++Pos;
      return std::nullopt;
    }
    if (ExpectComma) {
      if (D[Pos] != ',')
        return fail(offset(), "expected ',' or ']' after an element");
      ++Pos;
      ExpectComma = false;
      continue;
    }
    if (!Eof && Len - Pos < Cap / 2) {
      if (auto F = fill(); !F)
        return F.takeError();
    }
    // With the end of the content in the buffer, the window is all of it.
    bool Final = Eof;
    size_t End = Final ? Len : lastBoundary(D, Pos, Len);
    bool Exact = false;
    if (End == NoPos) {
      End = exactBoundary(D, Pos, Len);
      Exact = true;
    }
    if (End == NoPos || End == Pos) {
      if (auto E = grow())
        return E;
      continue;
    }
    return Cut{End, Final, Exact};
  }
}

llvm::Expected<bool> JsonWalker::readWindow(Cut C, ElementFn Element) {
  for (;;) {
    auto R = parseWindow(C.End, C.Final, C.Exact, Element);
    if (!R)
      return R.takeError();
    switch (R->Kind) {
    case WindowResult::RetryTo:
      C.End = R->End;
      C.Exact = true;
      continue;
    case WindowResult::Grow:
      if (auto E = grow())
        return E;
      return false;
    case WindowResult::Closed:
      return true;
    case WindowResult::Read:
      // A window that ended at its last element's end is followed by ','
      // or ']'; one that stopped at a failed element restarts there.
      ExpectComma = Pos == C.End;
      return false;
    }
  }
}

llvm::Error JsonWalker::arrayRest(ElementFn Element, ProgressFn Progress) {
  for (;;) {
    auto C = nextWindow();
    if (!C)
      return C.takeError();
    if (!*C)
      return llvm::Error::success();
    auto Closed = readWindow(**C, Element);
    if (!Closed)
      return Closed.takeError();
    if (*Closed)
      return llvm::Error::success();
    if (Progress && In.sourceSize())
      Progress(double(In.sourcePosition()) / double(In.sourceSize()));
  }
}

llvm::Error JsonWalker::array(ElementFn Element, Pipeline *Threads,
                              ProgressFn Progress) {
  ++Pos; // '['
  SawArray = true;
  ExpectComma = false;
  if (Threads)
    return runPipeline(*Threads, Element, Progress);
  return arrayRest(Element, Progress);
}

#include "trace/JsonWalker.h"

#include "support/Error.h"

#include "llvm/ADT/ScopeExit.h"

#include <cstring>

using namespace dd;
using namespace dd::trace;
namespace od = simdjson::ondemand;

namespace {

constexpr size_t NoPos = ~size_t(0);
constexpr size_t Padding = simdjson::SIMDJSON_PADDING;

bool isSpace(char C) { return C == ' ' || C == '\n' || C == '\r' || C == '\t'; }

/// The length of the JSON value at the start of \p S (string-aware, nested
/// values balanced), or NoPos when it does not end within \p N bytes. A bare
/// scalar ends at the first delimiter.
size_t scanValue(const char *S, size_t N, bool AtEnd) {
  if (N == 0)
    return NoPos;
  char C = S[0];
  if (C == '"') {
    for (size_t I = 1; I < N; ++I) {
      if (S[I] == '\\')
        ++I;
      else if (S[I] == '"')
        return I + 1;
    }
    return NoPos;
  }
  if (C == '{' || C == '[') {
    size_t Depth = 0;
    bool InString = false;
    for (size_t I = 0; I < N; ++I) {
      char X = S[I];
      if (InString) {
        if (X == '\\')
          ++I;
        else if (X == '"')
          InString = false;
      } else if (X == '"') {
        InString = true;
      } else if (X == '{' || X == '[') {
        ++Depth;
      } else if ((X == '}' || X == ']') && --Depth == 0) {
        return I + 1;
      }
    }
    return NoPos;
  }
  for (size_t I = 0; I < N; ++I)
    if (S[I] == ',' || S[I] == '}' || S[I] == ']' || isSpace(S[I]))
      return I;
  return AtEnd ? N : NoPos;
}

/// The end (one past a '}') of the last element boundary "}" "," "{" in
/// [From, To), found from the back; NoPos if there is none. It may lie in
/// a string or a nested value: the caller checks.
size_t lastBoundary(const char *D, size_t From, size_t To) {
  size_t I = To;
  while (I > From + 1) {
    const void *P = memrchr(D + From + 1, '{', I - From - 1);
    if (!P)
      return NoPos;
    I = static_cast<const char *>(P) - D;
    size_t J = I;
    while (J > From && isSpace(D[J - 1]))
      --J;
    if (J == From || D[J - 1] != ',')
      continue;
    --J;
    while (J > From && isSpace(D[J - 1]))
      --J;
    if (J > From && D[J - 1] == '}')
      return J;
  }
  return NoPos;
}

/// The end of the last whole element in [From, To), scanning from an
/// element's start with strings and nesting followed exactly; the position
/// of the array's ']' if it closes first. NoPos if no element ends there.
size_t exactBoundary(const char *D, size_t From, size_t To) {
  size_t Depth = 0, Last = NoPos;
  bool InString = false;
  for (size_t I = From; I < To; ++I) {
    char X = D[I];
    if (InString) {
      if (X == '\\')
        ++I;
      else if (X == '"')
        InString = false;
    } else if (X == '"') {
      InString = true;
    } else if (X == '{' || X == '[') {
      ++Depth;
    } else if (X == '}' || X == ']') {
      if (Depth == 0)
        return I; // the array ends here
      if (--Depth == 0)
        Last = I + 1;
    }
  }
  return Last;
}

} // namespace

JsonWalker::JsonWalker(InputStream &In, size_t WindowBytes)
    : In(In), Window(std::max<size_t>(WindowBytes, 16)) {
  Cap = Window;
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

llvm::Expected<bool> JsonWalker::fill() {
  if (Pos > 0) {
    std::memmove(D, D + Pos, Len - Pos);
    Base += Pos;
    Len -= Pos;
    Pos = 0;
  }
  size_t Before = Len;
  while (!Eof && Len < Cap) {
    auto N = In.read(D + Len, Cap - Len);
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
  std::memcpy(New.get() + 1, D + Pos, Len - Pos);
  Base += Pos;
  Len -= Pos;
  Pos = 0;
  Buf = std::move(New);
  Cap = NewCap;
  D = Buf.get() + 1;
  reserveParser();
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

llvm::Error JsonWalker::walk(std::string_view ArrayKey, FieldFn Field,
                             ElementFn Element, ProgressFn Progress) {
  auto S = skipSpace();
  if (!S)
    return S.takeError();
  if (!*S)
    return makeError("empty file");
  if (D[Pos] == '[')
    return array(Element, Progress);
  if (D[Pos] != '{')
    return makeError("not JSON: the file does not start with '{' or '['");
  return topLevelObject(ArrayKey, Field, Element, Progress);
}

llvm::Error JsonWalker::topLevelObject(std::string_view ArrayKey, FieldFn Field,
                                       ElementFn Element, ProgressFn Progress) {
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
  for (bool First = true;; First = false) {
    if (auto E = Next())
      return E;
    if (D[Pos] == '}')
      return llvm::Error::success(); // what follows the object is ignored
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
      if (auto E = array(Element, Progress))
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
  // Parse [D[Pos], D[End]) as "[" elements "]", in place: the byte before
  // and the byte at End are borrowed and given back.
  size_t Begin = Pos;
  char Before = D[Begin - 1], After = D[End];
  D[Begin - 1] = '[';
  D[End] = ']';
  auto Restore = llvm::make_scope_exit([&] {
    D[Begin - 1] = Before;
    D[End] = After;
  });
  char *BufEnd = Buf.get() + Cap + 2 + Padding;
  auto Doc = Parser.iterate(simdjson::padded_string_view(
      D + Begin - 1, End - Begin + 2, BufEnd - (D + Begin - 1)));
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

llvm::Error JsonWalker::array(ElementFn Element, ProgressFn Progress) {
  ++Pos; // '['
  SawArray = true;
  bool ExpectComma = false;
  for (;;) {
    auto S = skipSpace();
    if (!S)
      return S.takeError();
    if (!*S)
      return fail(offset(), "the JSON ends early or is not well formed "
                            "(truncated file?)");
    if (D[Pos] == ']') {
      ++Pos;
      return llvm::Error::success();
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
    for (;;) {
      auto R = parseWindow(End, Final, Exact, Element);
      if (!R)
        return R.takeError();
      if (R->Kind == WindowResult::RetryTo) {
        End = R->End;
        Exact = true;
        continue;
      }
      if (R->Kind == WindowResult::Grow) {
        if (auto E = grow())
          return E;
      } else if (R->Kind == WindowResult::Closed) {
        return llvm::Error::success();
      } else {
        // A window that ended at its last element's end is followed by ','
        // or ']'; one that stopped at a failed element restarts there.
        ExpectComma = Pos == End;
      }
      break;
    }
    if (Progress && In.sourceSize())
      Progress(double(In.sourcePosition()) / double(In.sourceSize()));
  }
}

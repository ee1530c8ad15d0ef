//===- Format.cpp - Numbers for people, and a small JSON writer -----------===//
//
// The one JSON writer and string escaper of ddscript: every --format json
// output, the timeline, the report's data and `convert`'s Chrome-trace JSON.
//
//===----------------------------------------------------------------------===//

#include "support/Format.h"

#include "llvm/Support/ConvertUTF.h"

#include <fmt/format.h>

#include <cassert>
#include <charconv>
#include <cmath>

using namespace dd;

std::string dd::formatDuration(int64_t Ns) {
  int64_t A = Ns < 0 ? -Ns : Ns;
  if (A >= 1'000'000'000)
    return fmt::format("{:.3f} s", static_cast<double>(Ns) / 1e9);
  if (A >= 1'000'000)
    return fmt::format("{:.3f} ms", static_cast<double>(Ns) / 1e6);
  if (A >= 1'000)
    return fmt::format("{:.3f} us", static_cast<double>(Ns) / 1e3);
  return fmt::format("{} ns", Ns);
}

std::string dd::formatBytes(int64_t Bytes) {
  double B = static_cast<double>(Bytes);
  double A = std::fabs(B);
  if (A >= 1024.0 * 1024 * 1024)
    return fmt::format("{:.1f} GiB", B / (1024.0 * 1024 * 1024));
  if (A >= 1024.0 * 1024)
    return fmt::format("{:.1f} MiB", B / (1024.0 * 1024));
  if (A >= 1024.0)
    return fmt::format("{:.1f} KiB", B / 1024.0);
  return fmt::format("{} B", Bytes);
}

std::string dd::formatCount(uint64_t N) {
  std::string Digits = std::to_string(N), Out;
  for (size_t I = 0; I < Digits.size(); ++I) {
    if (I && (Digits.size() - I) % 3 == 0)
      Out.push_back(',');
    Out.push_back(Digits[I]);
  }
  return Out;
}

std::string dd::formatPercent(double F, bool Signed) {
  return Signed ? fmt::format("{:+.2f}%", F * 100.0)
                : fmt::format("{:.1f}%", F * 100.0);
}

namespace {

/// Length of the valid UTF-8 sequence at \p P (\p Left bytes remain), or 0:
/// LLVM's check, which refuses overlong and surrogate forms and code points
/// beyond U+10FFFF, as the .dd reader's does.
size_t utf8Length(const unsigned char *P, size_t Left) {
  return llvm::isLegalUTF8Sequence(P, P + Left) ? llvm::getNumBytesForUTF8(*P)
                                                : 0;
}

/// Bytes copied through as they are.
bool isPlain(unsigned char C) {
  return C >= 0x20 && C < 0x80 && C != '"' && C != '\\';
}

void appendInteger(std::string &Out, auto V) {
  char Buf[24];
  auto R = std::to_chars(Buf, Buf + sizeof(Buf), V);
  Out.append(Buf, R.ptr);
}

} // namespace

void dd::appendJsonEscaped(std::string &Out, std::string_view S) {
  const auto *P = reinterpret_cast<const unsigned char *>(S.data());
  size_t Size = S.size();
  for (size_t I = 0; I < Size;) {
    // Runs of plain ASCII in one append.
    size_t Run = I;
    while (Run < Size && isPlain(P[Run]))
      ++Run;
    Out.append(S.data() + I, Run - I);
    I = Run;
    if (I == Size)
      break;
    unsigned char C = P[I];
    switch (C) {
    case '"':
      Out += "\\\"";
      break;
    case '\\':
      Out += "\\\\";
      break;
    case '\n':
      Out += "\\n";
      break;
    case '\r':
      Out += "\\r";
      break;
    case '\t':
      Out += "\\t";
      break;
    default:
      if (C < 0x20) {
        static constexpr char Hex[] = "0123456789abcdef";
        Out += "\\u00";
        Out += Hex[C >> 4];
        Out += Hex[C & 15];
      } else if (size_t N = utf8Length(P + I, Size - I)) {
        Out.append(S.data() + I, N);
        I += N;
        continue;
      } else {
        Out += "\\ufffd";
      }
    }
    ++I;
  }
}

std::string dd::jsonEscape(std::string_view S) {
  std::string Out;
  Out.reserve(S.size() + 2);
  appendJsonEscaped(Out, S);
  return Out;
}

void dd::appendMicros(std::string &Out, int64_t Ns) {
  // Divide the magnitude as unsigned: INT64_MIN has no positive int64.
  uint64_t A =
      Ns < 0 ? 0 - static_cast<uint64_t>(Ns) : static_cast<uint64_t>(Ns);
  if (Ns < 0)
    Out += '-';
  appendInteger(Out, A / 1000);
  unsigned Frac = static_cast<unsigned>(A % 1000);
  char Dec[4] = {'.', char('0' + Frac / 100), char('0' + Frac / 10 % 10),
                 char('0' + Frac % 10)};
  Out.append(Dec, 4);
}

std::string dd::formatMicros(int64_t Ns) {
  std::string Out;
  appendMicros(Out, Ns);
  return Out;
}

void JsonWriter::flushBreak() {
  if (!PendingBreak)
    return;
  PendingBreak = false;
  *Out += '\n';
  Out->append(PendingIndent, ' ');
}

void JsonWriter::separate() {
  if (AfterKey) {
    AfterKey = false;
    return;
  }
  if (!First.empty()) {
    if (!First.back())
      *Out += ',';
    First.back() = false;
  }
  flushBreak();
}

JsonValue &JsonWriter::place(JsonValue V) {
  if (Open.empty()) {
    *Root = std::move(V);
    return *Root;
  }
  JsonValue &C = *Open.back();
  if (C.K == JsonValue::Kind::Object) {
    C.Keys.push_back(std::move(PendingKey));
    PendingKey.clear();
  }
  C.Items.push_back(std::move(V));
  return C.Items.back();
}

namespace {
JsonValue scalar(JsonValue::Kind K) {
  JsonValue V;
  V.K = K;
  return V;
}
} // namespace

JsonWriter &JsonWriter::breakLine(unsigned Indent) {
  PendingBreak = Out != nullptr;
  PendingIndent = Indent;
  return *this;
}

JsonWriter &JsonWriter::beginObject() {
  if (!Out) {
    // The pointers held stay valid: only the innermost container grows.
    Open.push_back(&place(scalar(JsonValue::Kind::Object)));
    return *this;
  }
  separate();
  *Out += '{';
  First.push_back(true);
  return *this;
}
JsonWriter &JsonWriter::endObject() {
  if (!Out) {
    Open.pop_back();
    return *this;
  }
  flushBreak();
  *Out += '}';
  First.pop_back();
  return *this;
}
JsonWriter &JsonWriter::beginArray() {
  if (!Out) {
    Open.push_back(&place(scalar(JsonValue::Kind::Array)));
    return *this;
  }
  separate();
  *Out += '[';
  First.push_back(true);
  return *this;
}
JsonWriter &JsonWriter::endArray() {
  if (!Out) {
    Open.pop_back();
    return *this;
  }
  flushBreak();
  *Out += ']';
  First.pop_back();
  return *this;
}
JsonWriter &JsonWriter::key(std::string_view K) {
  if (!Out) {
    PendingKey.assign(K);
    return *this;
  }
  separate();
  *Out += '"';
  appendJsonEscaped(*Out, K);
  *Out += "\":";
  AfterKey = true;
  return *this;
}
JsonWriter &JsonWriter::value(std::string_view S) {
  if (!Out) {
    place(scalar(JsonValue::Kind::String)).String.assign(S);
    return *this;
  }
  separate();
  *Out += '"';
  appendJsonEscaped(*Out, S);
  *Out += '"';
  return *this;
}
JsonWriter &JsonWriter::value(int64_t V) {
  if (!Out) {
    place(scalar(JsonValue::Kind::Int)).Int = V;
    return *this;
  }
  separate();
  appendInteger(*Out, V);
  return *this;
}
JsonWriter &JsonWriter::value(uint64_t V) {
  if (!Out) {
    place(scalar(JsonValue::Kind::UInt)).UInt = V;
    return *this;
  }
  separate();
  appendInteger(*Out, V);
  return *this;
}
JsonWriter &JsonWriter::value(double V) {
  if (!Out) {
    if (!std::isfinite(V))
      place(scalar(JsonValue::Kind::Null));
    else
      place(scalar(JsonValue::Kind::Double)).Double = V;
    return *this;
  }
  separate();
  if (!std::isfinite(V))
    *Out += "null";
  else
    fmt::format_to(std::back_inserter(*Out), "{}", V);
  return *this;
}
JsonWriter &JsonWriter::micros(int64_t Ns) {
  if (!Out) {
    // Exact as the text's "12.345" read back: both are the double nearest
    // Ns / 1000 (for |Ns| below 2^53).
    place(scalar(JsonValue::Kind::Double)).Double =
        static_cast<double>(Ns) / 1000.0;
    return *this;
  }
  separate();
  appendMicros(*Out, Ns);
  return *this;
}
JsonWriter &JsonWriter::value(bool V) {
  if (!Out) {
    place(scalar(JsonValue::Kind::Bool)).Bool = V;
    return *this;
  }
  separate();
  *Out += V ? "true" : "false";
  return *this;
}
JsonWriter &JsonWriter::null() {
  if (!Out) {
    place(scalar(JsonValue::Kind::Null));
    return *this;
  }
  separate();
  *Out += "null";
  return *this;
}
JsonWriter &JsonWriter::raw(std::string_view Json) {
  assert(Out && "raw JSON text in a JsonWriter that builds values");
  if (!Out) { // kept as its text, the nearest to what it says
    place(scalar(JsonValue::Kind::String)).String.assign(Json);
    return *this;
  }
  separate();
  *Out += Json;
  return *this;
}

std::string dd::shorten(std::string_view S, size_t Max) {
  if (S.size() <= Max)
    return std::string(S);
  size_t Keep = Max > 3 ? Max - 3 : 0;
  // Back off over continuation bytes (10xxxxxx) to a character's start.
  while (Keep > 0 && (static_cast<unsigned char>(S[Keep]) & 0xC0) == 0x80)
    --Keep;
  return std::string(S.substr(0, Keep)) + "...";
}

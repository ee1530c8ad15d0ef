//===- Format.cpp - Numbers for people, and a small JSON writer -----------===//

#include "support/Format.h"

#include <fmt/format.h>

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

std::string dd::jsonEscape(std::string_view S) {
  std::string Out;
  Out.reserve(S.size() + 2);
  for (unsigned char Ch : S) {
    switch (Ch) {
    case '"': Out += "\\\""; break;
    case '\\': Out += "\\\\"; break;
    case '\n': Out += "\\n"; break;
    case '\r': Out += "\\r"; break;
    case '\t': Out += "\\t"; break;
    default:
      if (Ch < 0x20)
        Out += fmt::format("\\u{:04x}", Ch);
      else
        Out.push_back(static_cast<char>(Ch));
    }
  }
  return Out;
}

void JsonWriter::separate() {
  if (AfterKey) {
    AfterKey = false;
    return;
  }
  if (!First.empty()) {
    if (!First.back())
      Out += ',';
    First.back() = false;
  }
}

JsonWriter &JsonWriter::beginObject() {
  separate();
  Out += '{';
  First.push_back(true);
  return *this;
}
JsonWriter &JsonWriter::endObject() {
  Out += '}';
  First.pop_back();
  return *this;
}
JsonWriter &JsonWriter::beginArray() {
  separate();
  Out += '[';
  First.push_back(true);
  return *this;
}
JsonWriter &JsonWriter::endArray() {
  Out += ']';
  First.pop_back();
  return *this;
}
JsonWriter &JsonWriter::key(std::string_view K) {
  separate();
  Out += '"';
  Out += jsonEscape(K);
  Out += "\":";
  AfterKey = true;
  return *this;
}
JsonWriter &JsonWriter::value(std::string_view S) {
  separate();
  Out += '"';
  Out += jsonEscape(S);
  Out += '"';
  return *this;
}
JsonWriter &JsonWriter::value(int64_t V) {
  separate();
  Out += std::to_string(V);
  return *this;
}
JsonWriter &JsonWriter::value(uint64_t V) {
  separate();
  Out += std::to_string(V);
  return *this;
}
JsonWriter &JsonWriter::value(double V) {
  separate();
  if (!std::isfinite(V))
    Out += "null";
  else
    Out += fmt::format("{}", V);
  return *this;
}
JsonWriter &JsonWriter::value(bool V) {
  separate();
  Out += V ? "true" : "false";
  return *this;
}
JsonWriter &JsonWriter::null() {
  separate();
  Out += "null";
  return *this;
}
JsonWriter &JsonWriter::raw(std::string_view Json) {
  separate();
  Out += Json;
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

//===- Format.h - Numbers for people, and a small JSON writer ---*- C++ -*-===//
//
// How ddscript writes durations, sizes, counts and percentages, and JSON, in
// every output: the command's text and JSON, the timeline, the HTML report.
// Shared here so that libraries below the driver write what it writes.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_FORMAT_H
#define DD_SUPPORT_FORMAT_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dd {

/// "95.697 ms", "12.500 us", "1.204 s", "830 ns".
std::string formatDuration(int64_t Ns);
/// "31.7 GiB", "25.0 MiB", "512 B".
std::string formatBytes(int64_t Bytes);
/// "23,910".
std::string formatCount(uint64_t N);
/// "+1.23%" from a signed fraction.
std::string formatPercent(double Fraction, bool Signed = false);
/// \p S cut to at most \p Max bytes for a table, "..." marking the cut,
/// never inside a UTF-8 character.
std::string shorten(std::string_view S, size_t Max);

/// A small streaming JSON writer: values are written in order, commas and
/// nesting are tracked.
class JsonWriter {
public:
  explicit JsonWriter(std::string &Out) : Out(Out) {}
  JsonWriter &beginObject();
  JsonWriter &endObject();
  JsonWriter &beginArray();
  JsonWriter &endArray();
  JsonWriter &key(std::string_view K);
  JsonWriter &value(std::string_view S);
  JsonWriter &value(const char *S) { return value(std::string_view(S)); }
  JsonWriter &value(const std::string &S) { return value(std::string_view(S)); }
  JsonWriter &value(int64_t V);
  JsonWriter &value(uint64_t V);
  JsonWriter &value(int V) { return value(static_cast<int64_t>(V)); }
  JsonWriter &value(unsigned V) { return value(static_cast<uint64_t>(V)); }
  JsonWriter &value(double V);
  JsonWriter &value(bool V);
  JsonWriter &null();
  /// Writes \p Json, already valid JSON text, as the next value.
  JsonWriter &raw(std::string_view Json);
  template <typename T> JsonWriter &field(std::string_view K, const T &V) {
    key(K);
    return value(V);
  }

private:
  std::string &Out;
  std::vector<bool> First; // per open container: no element written yet
  bool AfterKey = false;
  void separate();
};

std::string jsonEscape(std::string_view S);

} // namespace dd

#endif

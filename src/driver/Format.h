//===- Format.h - Human and JSON output helpers -----------------*- C++ -*-===//
#ifndef DD_DRIVER_FORMAT_H
#define DD_DRIVER_FORMAT_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dd::driver {

/// "95.697 ms", "12.500 us", "1.204 s", "830 ns".
std::string formatDuration(int64_t Ns);
/// "31.7 GiB", "25.0 MiB", "512 B".
std::string formatBytes(int64_t Bytes);
/// "23,910".
std::string formatCount(uint64_t N);
/// "+1.23%" from a signed fraction.
std::string formatPercent(double Fraction, bool Signed = false);

/// A left-aligned text table; the last column may be long.
class Table {
public:
  void row(std::vector<std::string> Cells) { Rows.push_back(std::move(Cells)); }
  /// Right-align column \p C (numbers).
  void alignRight(size_t C) {
    if (RightAligned.size() <= C)
      RightAligned.resize(C + 1, false);
    RightAligned[C] = true;
  }
  std::string render(std::string_view Indent = "  ") const;

private:
  std::vector<std::vector<std::string>> Rows;
  std::vector<bool> RightAligned;
};

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

} // namespace dd::driver

#endif

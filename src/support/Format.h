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

/// Appends \p S to \p Out as the inside of a JSON string: '"' and '\\'
/// escaped, \n \r \t as such, other control characters as \u00XX, and each
/// byte that does not start a valid UTF-8 sequence (a stray continuation
/// byte, a truncated, overlong or surrogate form, beyond U+10FFFF) replaced
/// by \ufffd, so the text is always valid JSON whatever the bytes.
void appendJsonEscaped(std::string &Out, std::string_view S);
/// appendJsonEscaped into a new string.
std::string jsonEscape(std::string_view S);

/// Nanoseconds as JSON microseconds with three decimals, exact and in
/// Kineto's own form: "12.345", "0.001", "-1.500", "0.000".
void appendMicros(std::string &Out, int64_t Ns);
std::string formatMicros(int64_t Ns);

/// A JSON document as values (what JsonWriter builds in place of text for
/// a caller that reads it, the Python module): the same values the text
/// holds, with no text written or parsed. A number is kept as written:
/// an integer as one, a double as the double (the text writes its shortest
/// exact form), micros() as microseconds in a double; a non-finite double
/// is null, as in the text.
struct JsonValue {
  enum class Kind : uint8_t {
    Null,
    Bool,
    Int,
    UInt,
    Double,
    String,
    Array,
    Object
  };
  Kind K = Kind::Null;
  bool Bool = false;
  int64_t Int = 0;
  uint64_t UInt = 0;
  double Double = 0;
  std::string String; ///< a String's bytes (escaped only in text)
  /// An Array's elements, or an Object's values, in order; an Object's keys
  /// in Keys, one per value (two vectors: a vector of pairs of this
  /// incomplete type is not portable C++).
  std::vector<JsonValue> Items;
  std::vector<std::string> Keys;
};

/// A small streaming JSON writer: values are written in order, commas and
/// nesting are tracked. Appends to \p Out as it goes, in one pass, so it
/// writes large documents (`convert`'s traces) as fast as by hand; or,
/// constructed on a JsonValue, builds the same document as values.
class JsonWriter {
public:
  explicit JsonWriter(std::string &Out) : Out(&Out) {}
  /// Builds the document in \p Root (which it replaces) instead of text;
  /// breakLine does nothing, and raw() is not taken (it has no values).
  explicit JsonWriter(JsonValue &Root) : Root(&Root) {}
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
  /// \p Ns written as microseconds (appendMicros).
  JsonWriter &micros(int64_t Ns);
  /// The next key, element or closing bracket starts on a new line, after
  /// \p Indent spaces; a comma it needs stays at the end of this line.
  JsonWriter &breakLine(unsigned Indent = 0);
  /// Writes \p Json, already valid JSON text, as the next value.
  JsonWriter &raw(std::string_view Json);
  template <typename T> JsonWriter &field(std::string_view K, const T &V) {
    key(K);
    return value(V);
  }

private:
  std::string *Out = nullptr;    // text, or
  JsonValue *Root = nullptr;     // values: the document, and its open
  std::vector<JsonValue *> Open; // containers, innermost last
  std::string PendingKey;
  std::vector<bool> First; // per open container: no element written yet
  bool AfterKey = false;
  bool PendingBreak = false;
  unsigned PendingIndent = 0;
  void separate();
  void flushBreak();
  /// Values: \p V placed after the pending key or as the next element (or
  /// as the document); the place it took.
  JsonValue &place(JsonValue V);
};

} // namespace dd

#endif

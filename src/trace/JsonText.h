//===- JsonText.h - Strings and keys read in place --------------*- C++ -*-===//
//
// simdjson unescapes every string it hands out into its own buffer, through
// a call to its runtime-chosen implementation; nearly no string of a trace
// holds an escape, and then the text between its quotes is its value. The
// readers of src/trace (KinetoEvent.cpp, Survey.cpp) read strings and keys
// in place where they can. Internal to src/trace.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_JSONTEXT_H
#define DD_TRACE_JSONTEXT_H

#include <simdjson.h>

#include <cstring>
#include <optional>
#include <string_view>

namespace dd::trace::jsontext {

/// The text of string token \p Tok ('"' ... '"' and blanks) if it holds
/// no escape.
static inline std::optional<std::string_view>
plainString(std::string_view Tok) {
  const char *P = Tok.data() + 1, *End = Tok.data() + Tok.size();
  auto *Quote = static_cast<const char *>(std::memchr(P, '"', End - P));
  if (!Quote || std::memchr(P, '\\', Quote - P))
    return std::nullopt;
  return std::string_view(P, Quote - P);
}

/// A field's key, as unescaped_key() gives it.
static inline std::string_view
keyOf(simdjson::simdjson_result<simdjson::ondemand::field> &Field) {
  // The key was checked to be a closed string: its '"' comes.
  const char *P = simdjson::ondemand::raw_json_string(Field.key()).raw();
  for (const char *Q = P;; ++Q) {
    if (*Q == '"')
      return std::string_view(P, Q - P);
    if (*Q == '\\')
      return Field.unescaped_key();
  }
}

} // namespace dd::trace::jsontext

#endif

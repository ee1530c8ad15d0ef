//===- JsonText.h - Strings and keys read in place --------------*- C++ -*-===//
//
// simdjson unescapes every string it hands out into its own buffer, through
// a call to its runtime-chosen implementation; nearly no string of a trace
// holds an escape, and then the text between its quotes is its value. The
// readers of src/trace (KinetoEvent.cpp, Survey.cpp) read strings and keys
// in place where they can, and take a value's text by the same rules.
// Internal to src/trace.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_JSONTEXT_H
#define DD_TRACE_JSONTEXT_H

#include <simdjson.h>

#include <cstdint>
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

/// The lowest byte of \p W (little-endian) equal to \p C, as a bit mask
/// with that byte's high bit set (bytes above it may be set too), or 0.
static inline uint64_t bytesEqual(uint64_t W, char C) {
  uint64_t X = W ^ (0x0101010101010101u * static_cast<unsigned char>(C));
  return (X - 0x0101010101010101u) & ~X & 0x8080808080808080u;
}

/// \p S without trailing blanks and commas (a raw JSON token's tail).
static inline std::string_view trimToken(std::string_view S) {
  while (!S.empty() &&
         (S.back() == ' ' || S.back() == '\n' || S.back() == '\r' ||
          S.back() == '\t' || S.back() == ','))
    S.remove_suffix(1);
  return S;
}

/// The text of \p V as the readers take it: a string's contents (in place
/// where it holds no escape: \p Unescaped is set when it lies in the
/// parser's buffer instead), the raw JSON of an object or array, a scalar's
/// token. Internal linkage: GCC then passes the on-demand value in
/// registers; through the external ABI every call went through the stack,
/// with store-forwarding stalls that made the whole parse about half as
/// fast.
static inline std::string_view textOf(simdjson::ondemand::value V,
                                      bool &Unescaped) {
  namespace od = simdjson::ondemand;
  od::json_type Ty = V.type();
  Unescaped = false;
  if (Ty == od::json_type::string) {
    if (auto Plain = plainString(V.raw_json_token()))
      return *Plain;
    Unescaped = true;
    return V.get_string();
  }
  if (Ty == od::json_type::object || Ty == od::json_type::array)
    return Ty == od::json_type::object
               ? V.get_object().value().raw_json().value()
               : V.get_array().value().raw_json().value();
  return trimToken(V.raw_json_token());
}

static inline std::string_view textOf(simdjson::ondemand::value V) {
  bool Unescaped;
  return textOf(V, Unescaped);
}

/// A field's key, as unescaped_key() gives it.
static inline std::string_view
keyOf(simdjson::simdjson_result<simdjson::ondemand::field> &Field) {
  // The key was checked to be a closed string: its '"' comes. The buffer
  // is padded: eight bytes can be read at any position in it. Keys are
  // short: the first eight bytes nearly always hold the closing quote.
  const char *P = simdjson::ondemand::raw_json_string(Field.key()).raw();
  uint64_t W;
  std::memcpy(&W, P, 8);
  uint64_t Quote = bytesEqual(W, '"'), Escape = bytesEqual(W, '\\');
  if (Quote && (!Escape || __builtin_ctzll(Quote) < __builtin_ctzll(Escape)))
    return std::string_view(P, __builtin_ctzll(Quote) / 8);
  if (Escape)
    return Field.unescaped_key();
  for (const char *Q = P + 8;; ++Q) {
    if (*Q == '"')
      return std::string_view(P, Q - P);
    if (*Q == '\\')
      return Field.unescaped_key();
  }
}

} // namespace dd::trace::jsontext

#endif

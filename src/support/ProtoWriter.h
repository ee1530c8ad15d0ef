//===- ProtoWriter.h - Protocol Buffers wire format, written ----*- C++ -*-===//
//
// The few pieces of the protobuf wire format an exporter needs: varints,
// tagged fields, nested messages and length-delimited streams of messages
// (https://protobuf.dev/programming-guides/encoding/). ddscript only writes
// protobuf (Chakra execution traces, export/ChakraEt.h), a handful of
// fields of two messages, so it encodes them here rather than generating
// code with protoc and linking libprotobuf; the tests decode what it
// writes with protoc and the .proto beside the exporter.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_PROTOWRITER_H
#define DD_SUPPORT_PROTOWRITER_H

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace dd::proto {

/// Appends \p V as a base-128 varint.
inline void varint(std::string &Out, uint64_t V) {
  while (V >= 0x80) {
    Out.push_back(static_cast<char>((V & 0x7f) | 0x80));
    V >>= 7;
  }
  Out.push_back(static_cast<char>(V));
}

enum WireType : unsigned { Varint = 0, Fixed64 = 1, Len = 2, Fixed32 = 5 };

/// One message being written: fields in the order called.
class Message {
public:
  /// An integer, bool or enum field (int64, uint64, bool, enum: varint).
  Message &u64(unsigned Field, uint64_t V) {
    tag(Field, Varint);
    varint(Out, V);
    return *this;
  }
  Message &i64(unsigned Field, int64_t V) {
    return u64(Field, static_cast<uint64_t>(V)); // two's complement, as int64
  }
  Message &boolean(unsigned Field, bool V) { return u64(Field, V ? 1 : 0); }
  Message &f64(unsigned Field, double V) {
    tag(Field, Fixed64);
    char B[8];
    std::memcpy(B, &V, 8); // little-endian hosts only (x86-64, aarch64)
    Out.append(B, 8);
    return *this;
  }
  /// A string, bytes or nested message field.
  Message &bytes(unsigned Field, std::string_view V) {
    tag(Field, Len);
    varint(Out, V.size());
    Out.append(V);
    return *this;
  }
  Message &message(unsigned Field, const Message &M) {
    return bytes(Field, M.Out);
  }
  /// A repeated integer field, packed (proto3's default for scalars).
  template <typename Range> Message &packed(unsigned Field, const Range &Vs) {
    std::string Body;
    for (uint64_t V : Vs)
      varint(Body, V);
    if (!Body.empty())
      bytes(Field, Body);
    return *this;
  }
  const std::string &data() const { return Out; }

private:
  std::string Out;
  void tag(unsigned Field, WireType W) {
    varint(Out, (static_cast<uint64_t>(Field) << 3) | W);
  }
};

/// Appends \p M to a stream of messages, each preceded by its length as a
/// varint (protobuf's writeDelimitedTo).
inline void appendDelimited(std::string &Stream, const Message &M) {
  varint(Stream, M.data().size());
  Stream += M.data();
}

} // namespace dd::proto

#endif

//===- ByteStream.h - Compact binary records, written and read --*- C++ -*-===//
//
// What ddscript's own binary files (a reduced rank, job/RankFile.h) are made
// of: unsigned LEB128 varints, zigzag varints for signed values, and strings
// as a length and their bytes. The reader never reads past its input nor
// trusts a count: every read is checked, a failure is sticky (the first one
// is kept, with the offset where it happened), and a count is refused where
// the bytes left could not hold that many items, so that a damaged or
// hostile file costs no more memory than its own size.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_BYTESTREAM_H
#define DD_SUPPORT_BYTESTREAM_H

#include <cstdint>
#include <string>
#include <string_view>

namespace dd {

class ByteWriter {
public:
  void u8(uint8_t V) { Out.push_back(static_cast<char>(V)); }
  void uvar(uint64_t V) {
    while (V >= 0x80) {
      Out.push_back(static_cast<char>((V & 0x7f) | 0x80));
      V >>= 7;
    }
    Out.push_back(static_cast<char>(V));
  }
  /// A signed value, zigzag-encoded: small magnitudes take one byte.
  void svar(int64_t V) {
    uvar((static_cast<uint64_t>(V) << 1) ^ static_cast<uint64_t>(V >> 63));
  }
  /// A 32-bit id whose "none" is ~0u: stored as id + 1, none as 0.
  void id(uint32_t V) { uvar(static_cast<uint32_t>(V + 1)); }
  void str(std::string_view S) {
    uvar(S.size());
    Out.append(S);
  }
  std::string &bytes() { return Out; }

private:
  std::string Out;
};

class ByteReader {
public:
  explicit ByteReader(std::string_view In) : In(In) {}

  uint8_t u8() {
    if (!need(1, "a byte"))
      return 0;
    return static_cast<uint8_t>(In[Pos++]);
  }
  uint64_t uvar() {
    uint64_t V = 0;
    for (unsigned Shift = 0; Shift < 64; Shift += 7) {
      if (!need(1, "a number"))
        return 0;
      uint8_t B = static_cast<uint8_t>(In[Pos++]);
      V |= static_cast<uint64_t>(B & 0x7f) << Shift;
      if (!(B & 0x80))
        return V;
    }
    fail("a number longer than 64 bits");
    return 0;
  }
  int64_t svar() {
    uint64_t V = uvar();
    return static_cast<int64_t>((V >> 1) ^ (~(V & 1) + 1));
  }
  uint32_t id() {
    uint64_t V = uvar();
    if (V > UINT32_MAX) {
      fail("an id beyond 32 bits");
      return 0;
    }
    return static_cast<uint32_t>(V - 1);
  }
  /// A count of items that take at least \p MinBytes each: refused where
  /// the bytes left could not hold them.
  size_t count(size_t MinBytes = 1) {
    uint64_t N = uvar();
    if (!Failed && N > (In.size() - Pos) / (MinBytes ? MinBytes : 1)) {
      fail("a count of " + std::to_string(N) + " items in " +
           std::to_string(In.size() - Pos) + " bytes left");
      return 0;
    }
    return static_cast<size_t>(N);
  }
  std::string_view str() {
    size_t N = count();
    if (Failed)
      return {};
    std::string_view S = In.substr(Pos, N);
    Pos += N;
    return S;
  }
  /// Records a failure (the first one stays) at the current offset.
  void fail(std::string Why) {
    if (Failed)
      return;
    Failed = true;
    Error = std::move(Why) + " at byte " + std::to_string(Pos);
  }
  bool failed() const { return Failed; }
  const std::string &error() const { return Error; }
  bool atEnd() const { return Pos == In.size(); }
  size_t offset() const { return Pos; }

private:
  bool need(size_t N, const char *What) {
    if (Failed)
      return false;
    if (In.size() - Pos < N) {
      fail(std::string("the data ends where ") + What + " was due");
      return false;
    }
    return true;
  }
  std::string_view In;
  size_t Pos = 0;
  bool Failed = false;
  std::string Error;
};

} // namespace dd

#endif

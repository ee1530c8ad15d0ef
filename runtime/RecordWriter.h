//===- RecordWriter.h - Writes run.cupti files ------------------*- C++ -*-===//
//
// Encodes run.cupti records (trace/CuptiFormat.h) into a buffer and writes
// it to a file descriptor now and then. Plain C++ with no dependencies: it
// runs inside the profiled process (the CUPTI collector) and in ddscript's
// tests, which build run.cupti files without CUPTI. Not thread-safe; the
// collector serialises calls.
//
//===----------------------------------------------------------------------===//
#ifndef DD_RUNTIME_RECORDWRITER_H
#define DD_RUNTIME_RECORDWRITER_H

#include "trace/CuptiFormat.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

namespace dd::cupti {

class RecordWriter {
public:
  /// Writes to \p Fd (owned: closed by close()), or, with -1, keeps the
  /// whole file in memory (see data()). The header is written at once.
  explicit RecordWriter(int Fd = -1);
  ~RecordWriter();
  RecordWriter(const RecordWriter &) = delete;
  RecordWriter &operator=(const RecordWriter &) = delete;

  /// The id of \p S, emitting a String record the first time; 0 for "".
  uint32_t string(std::string_view S);

  /// Appends one record.
  template <class R> void add(R &Rec) {
    if (Finished)
      return;
    cuptifmt::encode(Rec, Buf);
    ++Records;
    if constexpr (std::is_same_v<R, cuptifmt::DroppedRecord>)
      DroppedTotal += Rec.Count;
    if (Fd >= 0 && Buf.size() >= FlushThreshold)
      flush();
  }

  /// Appends the End record (filling its counts) and flushes. Later adds are
  /// ignored.
  void finish(cuptifmt::EndRecord E);
  /// Writes the buffer to the file. False once a write has failed.
  bool flush();
  /// Flushes and closes the file.
  bool close();

  bool failed() const { return Failed; }
  bool finished() const { return Finished; }
  uint64_t records() const { return Records; }
  /// Bytes written so far, the buffer included.
  uint64_t size() const { return Written + Buf.size(); }
  /// The file so far, when writing to memory.
  const std::string &data() const { return Buf; }

private:
  static constexpr size_t FlushThreshold = 1 << 20;
  int Fd;
  std::string Buf;
  std::unordered_map<std::string, uint32_t> Strings;
  uint64_t Records = 0;
  uint64_t DroppedTotal = 0;
  uint64_t Written = 0;
  bool Failed = false;
  bool Finished = false;
};

} // namespace dd::cupti

#endif

//===- KinetoEvent.h - One Kineto event, parsed -----------------*- C++ -*-===//
//
// The first half of reading a Kineto trace: one element of "traceEvents",
// its fields read in one pass (their order varies between writers) into a
// ParsedEvent, timestamps already converted. This half touches no trace
// model, so it can run on any thread; KinetoReader.cpp does the second
// half (interning, tracks, B/E pairing) in document order.
//
// Strings come in two lifetimes. Read and committed at once (one thread),
// an event's views point into the JSON and the parser's string buffer, and
// its string arguments are interned as they are read, as they always
// were. Parsed ahead into an EventBatch (worker threads), the views point
// where the JSON's text stays until the commit, strings simdjson had to
// unescape are copied into the batch's arena, and string arguments are
// interned when the batch is committed.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_KINETOEVENT_H
#define DD_TRACE_KINETOEVENT_H

#include "support/StringPool.h"
#include "trace/Trace.h"

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dd::trace::kineto {

/// Thrown inside the reader for malformed content; turned into an
/// llvm::Error with a line:column at the boundary.
struct ReadError {
  std::string Msg;
};

enum class Cat : uint8_t {
  None,
  CpuOp,
  UserAnnotation,
  PythonFunction,
  Runtime,
  Driver,
  Marker,
  Kernel,
  Memcpy,
  Memset,
  GpuAnnotation,
  CudaSync,
  CudaEvent,
  Overhead,
  InstantEvent,
  FlowLaunch,
  FlowFwdBwd,
  Trace,
  Unknown
};

/// The category \p C names; \p Legacy is set for the 2021 schema's names.
Cat classifyCategory(std::string_view C, bool &Legacy);

/// Everything of one event that ddscript reads.
struct ParsedEvent {
  char Ph = 0;
  Cat Category = Cat::None; ///< classified from CatText
  bool LegacyCategory = false;
  std::string_view CatText, Name, Pid, Tid, Ts, Dur, Id, Bp;
  bool HasPid = false, HasTid = false, HasTs = false, HasDur = false,
       HasId = false;
  /// Ts and Dur in nanoseconds, when they are valid times (the text stays
  /// for the message that names an invalid one).
  bool TsValid = false, DurValid = false;
  int64_t TsNs = 0, DurNs = 0;
  int64_t ExternalId = NoValue, Correlation = NoValue, Seq = NoValue,
          Stream = NoValue, Device = NoValue, Bytes = NoValue;
  int32_t FwdThread = -1;
  /// The event's arguments: [ArgsBegin, ArgsEnd) of the Args vector it was
  /// parsed with.
  uint32_t ArgsBegin = 0, ArgsEnd = 0;
  // [memory] records.
  bool HasAddr = false;
  uint64_t Addr = 0;
  int64_t MemBytes = NoValue, TotalAllocated = NoValue, TotalReserved = NoValue,
          DeviceType = NoValue, DeviceId = NoValue;
  // Metadata events.
  std::string_view MetaName;
};

/// Bump storage for the strings of one batch. Views into it stay valid
/// until reset(): blocks never move.
class TextArena {
public:
  void reset();
  std::string_view keep(std::string_view S);

private:
  static constexpr size_t BlockBytes = size_t(64) << 10;
  std::vector<std::unique_ptr<char[]>> Blocks;
  char *Next = nullptr;
  size_t Left = 0;
};

/// Events parsed ahead of their commit, in document order.
struct EventBatch {
  std::vector<ParsedEvent> Events;
  std::vector<uint64_t> Offsets; ///< content offset of each event
  /// All events' arguments. A string argument's Value indexes ArgTexts
  /// until the batch is committed.
  std::vector<Arg> Args;
  std::vector<std::string_view> ArgTexts;
  /// Strings unescaped by simdjson, whose views die with the parser's.
  TextArena Arena;
  /// Views into the JSON parsed, moved by Shift bytes, point at the same
  /// text where it stays until the batch is committed.
  std::ptrdiff_t Shift = 0;

  /// Empties the batch for \p Bytes of JSON, whose text stays at
  /// \p JsonShift bytes from where it is parsed.
  void reset(size_t Bytes, std::ptrdiff_t JsonShift);
};

/// Reads elements of "traceEvents" into ParsedEvents.
class EventParser {
public:
  /// Immediate reading: views into the JSON, string arguments interned
  /// into \p Pool and appended to \p Args.
  EventParser(StringPool &Pool, std::vector<Arg> &Args)
      : Pool(&Pool), Args(&Args) {}
  /// Reading ahead into \p B (see the file comment).
  explicit EventParser(EventBatch &B) : Batch(&B), Args(&B.Args) {}

  /// Reads element \p V into \p E, which must be as default-constructed.
  /// Throws ReadError when it is not an object, simdjson errors when it
  /// does not parse.
  void parse(simdjson::ondemand::value V, ParsedEvent &E);

  /// The text of any value: a string's contents, the raw JSON of an object
  /// or array, a scalar's token.
  static std::string_view str(simdjson::ondemand::value &V);
  /// An integer from a number or a string holding one.
  static std::optional<int64_t> integer(simdjson::ondemand::value &V);

private:
  StringPool *Pool = nullptr;
  EventBatch *Batch = nullptr;
  std::vector<Arg> *Args;
};

} // namespace dd::trace::kineto

#endif

//===- JsonWalker.h - A Chrome-trace document, window by window -*- C++ -*-===//
//
// A Chrome-trace JSON file is one object whose bulk is one array of small
// objects ("traceEvents"), or that array alone. JsonWalker reads such a file
// front to back from an InputStream and hands the array's elements to the
// caller one at a time, as simdjson on-demand values, parsing a window of a
// few MB at a time: memory follows the window, not the file, and the
// window's structural index stays in cache. The other top-level values are
// parsed on their own and handed over by key.
//
// Windows end at an element boundary: the last '}' followed by ',' and '{'
// in the buffer. Such a pattern can also occur inside a string or a nested
// value; simdjson then reports an unclosed string or an element that does
// not parse, and the walker falls back to an exact (string-aware) scan or
// starts the next window at the element that failed. An element fails for
// good only when it fails as the first of a window that holds all of it.
//
// With threads (walk() with Batches), the same windows are cut, in the same
// order, by whichever thread is free, split into pieces of a few hundred
// KB, parsed ahead on any thread into batches, and committed in document
// order by the calling thread. The cutting assumes each window reads
// cleanly to its end, as nearly all do. Where one does not (its end, or a
// piece's, lay in a string or a nested value, the array closes in it, an
// element fails), the walker goes back to the state it had when it cut
// that window, reads the window on the calling thread exactly as one
// thread would, and cuts ahead again from there: the elements, their order
// and the errors are those of the one-thread walk, whatever the timing.
// See JsonWalkerThreads.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_JSONWALKER_H
#define DD_TRACE_JSONWALKER_H

#include "support/InputStream.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <simdjson.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dd::trace {

class JsonWalker {
public:
  /// Called with each top-level key other than the array's, its value, and
  /// the content offset where the value starts.
  using FieldFn = llvm::function_ref<void(
      std::string_view Key, simdjson::ondemand::value V, uint64_t Offset)>;
  /// Called with each element of the array and its offset. May throw its
  /// own exceptions; they pass through walk() unchanged. A simdjson error
  /// thrown from here means the element did not parse.
  using ElementFn =
      llvm::function_ref<void(simdjson::ondemand::value V, uint64_t Offset)>;
  /// Called after each window with the fraction of the source read.
  using ProgressFn = llvm::function_ref<void(double)>;

  /// The array's elements parsed ahead, on any thread, into numbered
  /// batches that are committed in document order on the calling thread.
  class Batches {
  public:
    virtual ~Batches() = default;
    /// Before the walk: there will be batches 0 .. N-1. After it: 0, the
    /// batches' memory can go.
    virtual void resize(unsigned N) = 0;
    /// Any thread: empties batch \p Batch for a piece of \p Bytes of JSON.
    /// The JSON's text stays, until the batch is committed, \p Shift bytes
    /// from where it is parsed (the parser's own buffer does not).
    virtual void clear(unsigned Batch, size_t Bytes, std::ptrdiff_t Shift) = 0;
    /// Any thread, one at a time for a given batch: parses element \p V at
    /// content offset \p Offset into batch \p Batch. When it throws, the
    /// whole window is read again by the walk's ElementFn.
    virtual void parse(unsigned Batch, simdjson::ondemand::value V,
                       uint64_t Offset) = 0;
    /// The calling thread, in document order: commits batch \p Batch. Its
    /// exceptions pass through walk().
    virtual void commit(unsigned Batch) = 0;
  };

  /// \p WindowBytes: the size of the windows parsed at once.
  explicit JsonWalker(InputStream &In, size_t WindowBytes = 4u << 20);
  ~JsonWalker();

  /// Walks the document: \p ArrayKey's array (or a top-level array) element
  /// by element, every other top-level value through \p Field. Errors are
  /// one line; positions are "line L, column C".
  llvm::Error walk(std::string_view ArrayKey, FieldFn Field, ElementFn Element,
                   ProgressFn Progress);
  /// The same walk on \p Threads threads (this one included): the array's
  /// windows are parsed ahead into \p Ahead and committed in order. Where
  /// the one-thread walk would read a window differently from its quick
  /// cut, it is read with \p Element here. The same calls of Field, the
  /// same elements committed in the same order, the same errors.
  llvm::Error walk(std::string_view ArrayKey, FieldFn Field, ElementFn Element,
                   Batches &Ahead, unsigned Threads, ProgressFn Progress);

  /// True once the array was found.
  bool sawArray() const { return SawArray; }
  /// The content offset of the element being handed over (for messages of
  /// the caller's own exceptions).
  uint64_t elementOffset() const { return ElementAt; }
  /// "line L, column C" of a content offset (reads the source again).
  std::string location(uint64_t Offset);

private:
  InputStream &In;
  size_t Window;
  std::unique_ptr<char[]> Buf; ///< [0] is slack for '[', then data, padding
  size_t BufCap = 0;           ///< room for data in Buf (>= Cap)
  size_t Cap = 0;              ///< room for data the walk uses
  char *D = nullptr;           ///< the data: Buf + 1
  size_t Pos = 0, Len = 0;     ///< next byte; bytes of data
  uint64_t Base = 0;           ///< content offset of D[0]
  bool Eof = false;
  bool SawArray = false;
  bool ExpectComma = false; ///< in the array, after an element
  uint64_t ElementAt = 0;
  simdjson::ondemand::parser Parser;
  /// Content read ahead and given back (a threaded walk that went back to
  /// an earlier window), read again before the stream; then the stream's
  /// error, if reading it had failed.
  std::string Unread;
  size_t UnreadUsed = 0;
  std::optional<std::string> InputError;
  /// While threads cut ahead: bytes dropped from the buffer's front, with
  /// their content offset, so that the walk can go back to an earlier cut.
  std::vector<std::pair<uint64_t, std::string>> *Dropped = nullptr;

  /// A window about to be read: [Pos, End) of the buffer.
  struct Cut {
    size_t End;
    bool Final; ///< the content ends in the buffer
    bool Exact; ///< End was found by an exact scan
  };
  class Pipeline;

  uint64_t offset() const { return Base + Pos; }
  llvm::Expected<size_t> readInput(char *Dst, size_t Max);
  void dropFront();
  llvm::Expected<bool> fill();
  llvm::Error grow();
  void reserveParser();
  llvm::Expected<bool> skipSpace();
  llvm::Expected<size_t> valueEnd();
  /// Skips blanks and a byte order mark; whether the document is an object
  /// (else an array).
  llvm::Expected<bool> start();
  /// Refuses anything but blanks after the document.
  llvm::Error end();
  llvm::Error topLevelObject(std::string_view ArrayKey, FieldFn Field,
                             ElementFn Element, Pipeline *Threads,
                             ProgressFn Progress);
  llvm::Error array(ElementFn Element, Pipeline *Threads, ProgressFn Progress);
  /// The array from an element's position on, one window after another.
  llvm::Error arrayRest(ElementFn Element, ProgressFn Progress);
  /// The same with threads (JsonWalkerThreads.cpp).
  llvm::Error runPipeline(Pipeline &Threads, ElementFn Element,
                          ProgressFn Progress);
  /// Finds the next window from an element's position: skips blanks and
  /// ',', reads more, grows the buffer for an element larger than it.
  /// nullopt once the array's ']' is consumed.
  llvm::Expected<std::optional<Cut>> nextWindow();
  /// Reads window \p C with \p Element: up to its end, or the array's
  /// end (then true), again with an exact end or a larger buffer where the
  /// quick end was wrong.
  llvm::Expected<bool> readWindow(Cut C, ElementFn Element);
  struct WindowResult;
  llvm::Expected<WindowResult> parseWindow(size_t End, bool Final, bool Exact,
                                           ElementFn Element);
  llvm::Error fail(uint64_t Offset, const std::string &What);
  llvm::Error failJson(uint64_t Offset, simdjson::error_code Code);
};

} // namespace dd::trace

#endif

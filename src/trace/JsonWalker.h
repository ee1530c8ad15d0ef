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
//===----------------------------------------------------------------------===//
#ifndef DD_TRACE_JSONWALKER_H
#define DD_TRACE_JSONWALKER_H

#include "support/InputStream.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <simdjson.h>

#include <memory>
#include <string>
#include <string_view>

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

  /// \p WindowBytes: the size of the windows parsed at once.
  explicit JsonWalker(InputStream &In, size_t WindowBytes = 4u << 20);
  ~JsonWalker();

  /// Walks the document: \p ArrayKey's array (or a top-level array) element
  /// by element, every other top-level value through \p Field. Errors are
  /// one line; positions are "line L, column C".
  llvm::Error walk(std::string_view ArrayKey, FieldFn Field, ElementFn Element,
                   ProgressFn Progress);

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
  size_t Cap = 0;              ///< room for data
  char *D = nullptr;           ///< the data: Buf + 1
  size_t Pos = 0, Len = 0;     ///< next byte; bytes of data
  uint64_t Base = 0;           ///< content offset of D[0]
  bool Eof = false;
  bool SawArray = false;
  uint64_t ElementAt = 0;
  simdjson::ondemand::parser Parser;

  uint64_t offset() const { return Base + Pos; }
  llvm::Expected<bool> fill();
  llvm::Error grow();
  void reserveParser();
  llvm::Expected<bool> skipSpace();
  llvm::Expected<size_t> valueEnd();
  llvm::Error topLevelObject(std::string_view ArrayKey, FieldFn Field,
                             ElementFn Element, ProgressFn Progress);
  llvm::Error array(ElementFn Element, ProgressFn Progress);
  struct WindowResult;
  llvm::Expected<WindowResult> parseWindow(size_t End, bool Final, bool Exact,
                                           ElementFn Element);
  llvm::Error fail(uint64_t Offset, const std::string &What);
  llvm::Error failJson(uint64_t Offset, simdjson::error_code Code);
};

} // namespace dd::trace

#endif

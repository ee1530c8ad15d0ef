//===- FileIO.h - Reading whole files, gzip-aware ---------------*- C++ -*-===//
#ifndef DD_SUPPORT_FILEIO_H
#define DD_SUPPORT_FILEIO_H

#include "llvm/Support/Error.h"

#include <string>
#include <string_view>

namespace dd {

/// Reads \p Path completely. A gzip stream (detected by its magic bytes, not
/// by the file name) is inflated. The returned string has at least
/// \p Padding bytes of spare capacity, so parsers that read past the end in
/// blocks (simdjson) can use it in place.
llvm::Expected<std::string> readFileMaybeGzip(const std::string &Path,
                                              size_t Padding = 64);

/// True when \p Data starts with the gzip magic bytes.
bool isGzip(std::string_view Data);

/// Inflates a gzip stream (several members are concatenated).
llvm::Expected<std::string> gunzip(std::string_view Data, size_t Padding);

/// Compresses \p Data into one gzip member.
llvm::Expected<std::string> gzip(std::string_view Data);

/// Writes \p Data to \p Path (replacing it), gzip-compressed when the name
/// ends in ".gz". Returns the number of bytes written.
llvm::Expected<size_t> writeFileMaybeGzip(const std::string &Path,
                                          std::string_view Data);

} // namespace dd

#endif

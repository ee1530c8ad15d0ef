//===- Error.h - Making llvm::Error values ----------------------*- C++ -*-===//
#ifndef DD_SUPPORT_ERROR_H
#define DD_SUPPORT_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <system_error>

namespace dd {

/// An error carrying one line of text for the user.
inline llvm::Error makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument), Msg);
}

} // namespace dd

#endif

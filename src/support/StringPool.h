//===- StringPool.h - Interned strings with 32-bit ids ----------*- C++ -*-===//
//
// Every name in a trace (event names, thread names, kernel names) is stored
// once and referred to by a 32-bit StringId. Id 0 is always the empty string.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_STRINGPOOL_H
#define DD_SUPPORT_STRINGPOOL_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace dd {

using StringId = uint32_t;

class StringPool {
public:
  StringPool();
  /// A copy interns the strings again, in id order: the same ids, views
  /// into its own storage.
  StringPool(const StringPool &O);
  StringPool &operator=(const StringPool &O);
  StringPool(StringPool &&) = default;
  StringPool &operator=(StringPool &&) = default;

  /// Returns the id of \p S, adding it if it is new.
  StringId intern(std::string_view S);
  /// Returns the id of \p S, or ~0u when it was never interned.
  StringId lookup(std::string_view S) const;
  std::string_view str(StringId Id) const { return Strings[Id]; }
  size_t size() const { return Strings.size(); }

private:
  llvm::StringMap<StringId> Index;
  std::vector<std::string_view> Strings;
};

} // namespace dd

#endif

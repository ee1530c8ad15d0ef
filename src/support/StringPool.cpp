#include "support/StringPool.h"

#include <cstring>

using namespace dd;

StringPool::StringPool() { intern(""); }

StringPool::StringPool(const StringPool &O) {
  Strings.reserve(O.Strings.size());
  for (std::string_view S : O.Strings)
    intern(S);
}

StringPool &StringPool::operator=(const StringPool &O) {
  if (this != &O) {
    StringPool Copy(O);
    *this = std::move(Copy);
  }
  return *this;
}

StringId StringPool::intern(std::string_view S) {
  auto [It, Inserted] =
      Index.try_emplace(llvm::StringRef(S.data(), S.size()), 0u);
  if (!Inserted)
    return It->second;
  // StringMap owns a copy of the key; point our table at that copy so the
  // view stays valid for the pool's lifetime.
  StringId Id = static_cast<StringId>(Strings.size());
  It->second = Id;
  Strings.emplace_back(It->first().data(), It->first().size());
  return Id;
}

StringId StringPool::lookup(std::string_view S) const {
  auto It = Index.find(llvm::StringRef(S.data(), S.size()));
  return It == Index.end() ? ~0u : It->second;
}

#include "support/Regex.h"

using namespace dd;

namespace {

std::regex::flag_type regexFlags() {
  std::regex::flag_type F = std::regex::ECMAScript | std::regex::optimize;
#ifdef __GLIBCXX__
  // libstdc++'s extension: match breadth-first (no recursion per
  // character of the text).
  F |= std::regex_constants::__polynomial;
#endif
  return F;
}

unsigned nesting(std::string_view P) {
  unsigned Depth = 0, Max = 0;
  for (size_t I = 0; I < P.size(); ++I) {
    char C = P[I];
    if (C == '\\') {
      ++I;
    } else if (C == '(' || C == '[') {
      Max = std::max(Max, ++Depth);
    } else if ((C == ')' || C == ']') && Depth > 0) {
      --Depth;
    }
  }
  return Max;
}

} // namespace

std::optional<std::string> dd::regexProblem(const std::string &Pattern) {
  if (nesting(Pattern) > MaxRegexNesting)
    return "groups nested deeper than " + std::to_string(MaxRegexNesting);
  try {
    compileRegex(Pattern);
  } catch (const std::regex_error &X) {
    if (X.code() == std::regex_constants::error_backref ||
        std::string_view(X.what()).find("back-reference") !=
            std::string_view::npos)
      return "back-references (\\1) are not supported";
    return X.what();
  }
  return std::nullopt;
}

std::regex dd::compileRegex(const std::string &Pattern) {
  return std::regex(Pattern, regexFlags());
}

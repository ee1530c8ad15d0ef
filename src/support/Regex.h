//===- Regex.h - The regexes of .dd models ----------------------*- C++ -*-===//
//
// .dd regexes are ECMAScript regexes (std::regex). libstdc++ matches them
// by default with a backtracking search that recurses once per character
// of the text, so a long kernel name against /(a|b)*/ overflows the stack.
// ddscript compiles them for libstdc++'s breadth-first executor instead:
// its recursion is bounded by the pattern, its time by pattern x text, and
// it refuses what it cannot do (back-references) when the model is
// checked. The pattern's own nesting is bounded too, since compiling
// recurses once per group.
//
//===----------------------------------------------------------------------===//
#ifndef DD_SUPPORT_REGEX_H
#define DD_SUPPORT_REGEX_H

#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace dd {

/// The deepest nesting of groups and classes a pattern may have.
constexpr unsigned MaxRegexNesting = 100;

/// Why \p Pattern is not a regex ddscript can use ("back-references are
/// not supported", "groups nested deeper than 100", std::regex's reason),
/// or nullopt when it is one.
std::optional<std::string> regexProblem(const std::string &Pattern);

/// Compiles \p Pattern; call regexProblem first (this throws
/// std::regex_error for a pattern it refuses).
std::regex compileRegex(const std::string &Pattern);

} // namespace dd

#endif

//===- Text.cpp - Number formats and escaping for the outputs -------------===//

#include "report/ReportImpl.h"

#include <fmt/format.h>

using namespace dd;
using namespace dd::report;

const char *detail::chromeCategory(graph::TaskKind K) {
  switch (K) {
  case graph::TaskKind::CpuOp:
    return "cpu_op";
  case graph::TaskKind::Annotation:
    return "user_annotation";
  case graph::TaskKind::Runtime:
    return "cuda_runtime";
  case graph::TaskKind::Kernel:
    return "kernel";
  case graph::TaskKind::Memcpy:
    return "gpu_memcpy";
  case graph::TaskKind::Memset:
    return "gpu_memset";
  case graph::TaskKind::Comm:
    return "kernel";
  }
  return "cpu_op";
}

std::string detail::formatSpeedup(int64_t Before, int64_t After) {
  return After > 0 ? fmt::format("{:.3f}x", double(Before) / double(After))
                   : std::string("-");
}

std::string detail::htmlEscape(std::string_view S) {
  std::string Out;
  Out.reserve(S.size());
  for (char C : S) {
    switch (C) {
    case '&':
      Out += "&amp;";
      break;
    case '<':
      Out += "&lt;";
      break;
    case '>':
      Out += "&gt;";
      break;
    case '"':
      Out += "&quot;";
      break;
    case '\'':
      Out += "&#39;";
      break;
    default:
      Out += C;
    }
  }
  return Out;
}

std::string detail::scriptSafe(std::string Json) {
  // Inside JSON, "<" only occurs in strings, where "\u003c" reads as "<";
  // so no "</script>" or "<!--" can end or confuse the script element.
  std::string Out;
  Out.reserve(Json.size());
  for (char C : Json) {
    if (C == '<')
      Out += "\\u003c";
    else
      Out += C;
  }
  return Out;
}

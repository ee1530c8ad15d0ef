//===- JsonPassBench.cpp - a bare simdjson on-demand pass over a trace ----===//
//
// The floor that ddscript's trace loading is measured against (see
// tests/bench/trace_load_bench.py): load the file into a padded buffer and
// make one on-demand pass over every event of "traceEvents", visiting each
// field: keys unescaped, strings unescaped, numbers parsed, "args" objects
// walked the same way one level down. No trace model, no graph: only what
// any reader of the file must at least do.
//
// Usage: dd_json_pass [--warm] FILE.json   (uncompressed)
// Prints the events and fields seen and the time of the pass, in ms. With
// --warm the pass runs twice in the process and the second is timed: the
// buffers are then in place and the time is the CPU's floor, without the
// cost of first touching the memory.
//
//===----------------------------------------------------------------------===//

#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <string_view>

namespace od = simdjson::ondemand;
using Clock = std::chrono::steady_clock;

namespace {

struct Counts {
  uint64_t Events = 0, Fields = 0, StringBytes = 0;
  double NumberSum = 0;
};

void visitScalar(od::value V, Counts &C) {
  switch (V.type()) {
  case od::json_type::string:
    C.StringBytes += std::string_view(V.get_string()).size();
    break;
  case od::json_type::number:
    C.NumberSum += double(V.get_double());
    break;
  default:
    // Nested arrays and objects below args, booleans, null: let the
    // iterator skip them.
    break;
  }
}

void visitObject(od::object O, Counts &C, bool Nested) {
  for (auto Field : O) {
    std::string_view Key = Field.unescaped_key();
    ++C.Fields;
    od::value V = Field.value();
    if (!Nested && Key == "args" && V.type() == od::json_type::object)
      visitObject(V.get_object(), C, true);
    else
      visitScalar(V, C);
  }
}

} // namespace

Counts pass(od::parser &Parser, simdjson::padded_string &Json) {
  od::document Doc = Parser.iterate(Json);
  Counts C;
  for (auto Field : Doc.get_object()) {
    std::string_view Key = Field.unescaped_key();
    if (Key != "traceEvents")
      continue;
    for (auto Ev : Field.value().get_array()) {
      ++C.Events;
      visitObject(Ev.get_object(), C, false);
    }
  }
  return C;
}

int main(int Argc, char **Argv) {
  bool Warm = Argc == 3 && std::string_view(Argv[1]) == "--warm";
  if (Argc != 2 && !Warm) {
    std::fprintf(stderr, "usage: dd_json_pass [--warm] FILE.json\n");
    return 2;
  }
  const char *Path = Argv[Argc - 1];
  auto Begin = Clock::now();
  try {
    simdjson::padded_string Json = simdjson::padded_string::load(Path);
    od::parser Parser;
    Counts C = pass(Parser, Json);
    if (Warm) {
      Begin = Clock::now();
      C = pass(Parser, Json);
    }
    double Ms =
        std::chrono::duration<double, std::milli>(Clock::now() - Begin).count();
    std::printf("events %llu fields %llu string bytes %llu (checksum %g)\n",
                (unsigned long long)C.Events, (unsigned long long)C.Fields,
                (unsigned long long)C.StringBytes, C.NumberSum);
    std::printf("pass %.1f ms\n", Ms);
  } catch (const simdjson::simdjson_error &E) {
    std::fprintf(stderr, "%s: error: %s\n", Path, E.what());
    return 2;
  }
  return 0;
}

//===- TraceDump.h - Comparing trace models in tests ------------*- C++ -*-===//
#ifndef DD_TESTS_TRACEDUMP_H
#define DD_TESTS_TRACEDUMP_H

#include "trace/Trace.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace dd::test {

using namespace dd::trace;

/// Everything the model holds, one line per item, independent of track
/// and string numbering.
inline std::vector<std::string> dumpTrace(const Trace &T) {
  std::vector<std::string> L;
  auto Val = [](int64_t V) {
    return V == NoValue ? std::string("-") : std::to_string(V);
  };
  L.push_back("base " + (T.BaseTimeNs ? std::to_string(*T.BaseTimeNs)
                                      : std::string("-")));
  for (const DeviceInfo &D : T.Devices)
    L.push_back(fmt::format("device {} {} {} {}.{} {}", D.Id, D.Name,
                            D.TotalGlobalMem, D.ComputeMajor, D.ComputeMinor,
                            D.NumSms));
  if (T.Distributed.Present)
    L.push_back(fmt::format("distributed {} {} {} {}", T.Distributed.Backend,
                            T.Distributed.Rank, T.Distributed.WorldSize,
                            T.Distributed.NcclVersion));
  for (EventId E = 0; E < T.numEvents(); ++E) {
    std::string S = fmt::format(
        "{} {} | {} | {} {} | corr {} ext {} seq {} fwd {} bytes {}",
        eventKindName(T.Kind[E]), T.name(E), T.trackLabel(T.TrackOf[E]),
        T.Start[E], T.Dur[E], Val(T.Correlation[E]), Val(T.ExternalId[E]),
        Val(T.SeqNumber[E]), T.FwdThread[E], Val(T.Bytes[E]));
    std::vector<std::string> Args;
    for (uint32_t I = T.ArgsBegin[E]; I != T.ArgsBegin[E + 1]; ++I) {
      const Arg &A = T.Args[I];
      Args.push_back(fmt::format(
          "{}={}", argKeyName(A.Key),
          A.IsString ? std::string(T.str(static_cast<StringId>(A.Value)))
                     : std::to_string(A.Value)));
    }
    std::sort(Args.begin(), Args.end());
    for (const std::string &A : Args)
      S += " " + A;
    L.push_back(std::move(S));
  }
  for (const MemoryRecord &M : T.Memory)
    L.push_back(fmt::format("memory {} {} {} {} {} {} {} {}", M.Ts,
                            T.trackLabel(M.Track), M.Addr, M.Bytes,
                            Val(M.TotalAllocated), Val(M.TotalReserved),
                            M.DeviceType, M.DeviceId));
  for (const FlowPoint &F : T.Flows)
    L.push_back(fmt::format(
        "flow {} {} {} {} {} {}", static_cast<int>(F.Kind), F.Phase,
        F.BindEnclosing,
        F.Id >> 63 ? std::string(T.str(StringId(F.Id & ~(1ull << 63))))
                   : std::to_string(F.Id),
        F.Ts, T.trackLabel(F.Track)));
  return L;
}

/// Checks that two traces hold the same model, line by line.
inline void checkSameTrace(const Trace &A, const Trace &B) {
  auto DA = dumpTrace(A), DB = dumpTrace(B);
  REQUIRE(DA.size() == DB.size());
  for (size_t I = 0; I < DA.size(); ++I) {
    CAPTURE(I);
    CHECK(DA[I] == DB[I]);
  }
}

} // namespace dd::test

#endif

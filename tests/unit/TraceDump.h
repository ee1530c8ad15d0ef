//===- TraceDump.h - Comparing trace models in tests ------------*- C++ -*-===//
#ifndef DD_TESTS_TRACEDUMP_H
#define DD_TESTS_TRACEDUMP_H

#include "trace/Trace.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace dd::trace {
// Field by field, for firstDifference.
inline bool operator==(const DeviceInfo &A, const DeviceInfo &B) {
  return A.Id == B.Id && A.Name == B.Name &&
         A.TotalGlobalMem == B.TotalGlobalMem &&
         A.ComputeMajor == B.ComputeMajor && A.ComputeMinor == B.ComputeMinor &&
         A.NumSms == B.NumSms;
}
inline bool operator==(const Track &A, const Track &B) {
  return A.RawPid == B.RawPid && A.RawTid == B.RawTid && A.Pid == B.Pid &&
         A.Tid == B.Tid && A.Name == B.Name && A.IsDevice == B.IsDevice &&
         A.Device == B.Device && A.Stream == B.Stream;
}
inline bool operator==(const Arg &A, const Arg &B) {
  return A.Key == B.Key && A.IsString == B.IsString && A.Value == B.Value;
}
inline bool operator==(const FlowPoint &A, const FlowPoint &B) {
  return A.Kind == B.Kind && A.Phase == B.Phase &&
         A.BindEnclosing == B.BindEnclosing && A.Id == B.Id && A.Ts == B.Ts &&
         A.Track == B.Track;
}
inline bool operator==(const MemoryRecord &A, const MemoryRecord &B) {
  return A.Ts == B.Ts && A.Track == B.Track && A.Addr == B.Addr &&
         A.Bytes == B.Bytes && A.TotalAllocated == B.TotalAllocated &&
         A.TotalReserved == B.TotalReserved && A.DeviceType == B.DeviceType &&
         A.DeviceId == B.DeviceId && A.Stream == B.Stream;
}
} // namespace dd::trace

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

/// The first way in which \p A and \p B differ as stored, ids included
/// (string ids, track ids, every column, warnings, metadata); empty when
/// they are identical. Stricter than dumpTrace, which ignores numbering.
inline std::string firstDifference(const Trace &A, const Trace &B) {
  auto Same = [](const auto &X, const auto &Y) { return X == Y; };
  auto Column = [&](const char *Name, const auto &X,
                    const auto &Y) -> std::string {
    if (X.size() != Y.size())
      return fmt::format("{}: {} vs {} entries", Name, X.size(), Y.size());
    for (size_t I = 0; I < X.size(); ++I)
      if (!Same(X[I], Y[I]))
        return fmt::format("{}[{}] differs", Name, I);
    return "";
  };
  std::vector<std::string> Diffs;
  auto Note = [&](std::string D) {
    if (!D.empty())
      Diffs.push_back(std::move(D));
  };
  if (A.Path != B.Path)
    Note("path");
  if (A.Format != B.Format)
    Note("format");
  if (A.SchemaVersion != B.SchemaVersion)
    Note("schema version");
  if (A.BaseTimeNs != B.BaseTimeNs)
    Note("base time");
  Note(Column("devices", A.Devices, B.Devices));
  if (A.Distributed.Present != B.Distributed.Present ||
      A.Distributed.Backend != B.Distributed.Backend ||
      A.Distributed.Rank != B.Distributed.Rank ||
      A.Distributed.WorldSize != B.Distributed.WorldSize ||
      A.Distributed.NcclVersion != B.Distributed.NcclVersion)
    Note("distributed info");
  Note(Column("warnings", A.Warnings, B.Warnings));
  Note(Column("skipped categories", A.SkippedCategories, B.SkippedCategories));
  if (A.Strings.size() != B.Strings.size())
    Note(fmt::format("strings: {} vs {}", A.Strings.size(), B.Strings.size()));
  else
    for (StringId I = 0; I < A.Strings.size(); ++I)
      if (A.str(I) != B.str(I)) {
        Note(fmt::format("string id {}: '{}' vs '{}'", I, A.str(I), B.str(I)));
        break;
      }
  Note(Column("tracks", A.Tracks, B.Tracks));
  Note(Column("kind", A.Kind, B.Kind));
  Note(Column("name", A.Name, B.Name));
  Note(Column("track of", A.TrackOf, B.TrackOf));
  Note(Column("start", A.Start, B.Start));
  Note(Column("dur", A.Dur, B.Dur));
  Note(Column("correlation", A.Correlation, B.Correlation));
  Note(Column("external id", A.ExternalId, B.ExternalId));
  Note(Column("sequence number", A.SeqNumber, B.SeqNumber));
  Note(Column("fwd thread", A.FwdThread, B.FwdThread));
  Note(Column("bytes", A.Bytes, B.Bytes));
  Note(Column("args begin", A.ArgsBegin, B.ArgsBegin));
  Note(Column("args", A.Args, B.Args));
  Note(Column("flows", A.Flows, B.Flows));
  Note(Column("memory", A.Memory, B.Memory));
  return Diffs.empty() ? "" : Diffs.front();
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

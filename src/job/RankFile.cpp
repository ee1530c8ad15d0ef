//===- RankFile.cpp - A job's rank reduced to its graph -------------------===//

#include "job/RankFile.h"

#include "graph/GraphFile.h"
#include "support/ByteStream.h"
#include "support/FileIO.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

using namespace dd;
using namespace dd::job;

namespace {

constexpr size_t HeaderBytes = 12;

llvm::Error fail(const std::string &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s",
                                 Msg.c_str());
}

/// A reduced rank is at most this large: far beyond any rank's graph (a
/// 300 MB trace reduces to a few MB), and a bound on what a damaged header
/// makes the reader allocate.
constexpr uint64_t MaxRankFileBytes = uint64_t(4) << 30;

} // namespace

bool job::isRankFile(std::string_view Head) {
  return Head.substr(0, RankFileMagic.size()) == RankFileMagic;
}

bool job::isRankFilePath(const std::string &Path) {
  uint64_t Size = 0;
  auto Fd = openRegularFile(Path, Size);
  if (!Fd) {
    llvm::consumeError(Fd.takeError());
    return false;
  }
  char Head[8];
  ssize_t N = ::pread(*Fd, Head, sizeof(Head), 0);
  ::close(*Fd);
  return N == static_cast<ssize_t>(sizeof(Head)) &&
         isRankFile(std::string_view(Head, sizeof(Head)));
}

llvm::Expected<std::string> job::encodeRankFile(const ReducedRank &R) {
  ByteWriter W;
  W.str(R.Source);
  W.svar(R.Rank);
  W.svar(R.WorldSize);
  W.u8(R.FromCollector);
  W.str(R.DeviceName);
  W.svar(R.DeviceMemory);
  W.svar(R.DeviceSms);
  W.uvar(R.Warnings.size());
  for (const std::string &S : R.Warnings)
    W.str(S);
  W.str(R.Iteration);
  W.svar(R.Steady);
  W.str(R.Calibration);
  graph::writeGraph(R.G, W);
  // zlib's fastest level: a reduced rank is written once, by a task that
  // should keep up with reading its trace, and read back once; the default
  // level made reducing a 208 MB trace 20% slower for a file 10% smaller.
  auto Body = gzip(W.bytes(), 1);
  if (!Body)
    return Body.takeError();
  std::string Out(RankFileMagic);
  for (unsigned I = 0; I < 4; ++I)
    Out.push_back(static_cast<char>((RankFileVersion >> (8 * I)) & 0xff));
  Out += *Body;
  return Out;
}

llvm::Expected<ReducedRank> job::readRankFile(const std::string &Path) {
  auto Data = readTextFile(Path, MaxRankFileBytes);
  if (!Data)
    return Data.takeError();
  std::string_view D = *Data;
  if (D.size() < HeaderBytes || !isRankFile(D))
    return fail("not a reduced rank (ddscript reduce writes them): its first "
                "bytes are not a rank file's");
  uint32_t Version = 0;
  for (unsigned I = 0; I < 4; ++I)
    Version |= static_cast<uint32_t>(static_cast<uint8_t>(D[8 + I])) << (8 * I);
  if (Version != RankFileVersion)
    return fail(fmt::format("a reduced rank of format {}; this ddscript reads "
                            "format {}: reduce its trace again with this "
                            "ddscript",
                            Version, RankFileVersion));
  auto Body = gunzip(D.substr(HeaderBytes), 0);
  if (!Body)
    return fail("a damaged reduced rank: " + llvm::toString(Body.takeError()));
  return parseRankBody(*Body);
}

llvm::Expected<ReducedRank> job::parseRankBody(std::string_view Body) {
  ByteReader In(Body);
  ReducedRank R;
  R.Source = std::string(In.str());
  R.Rank = In.svar();
  R.WorldSize = In.svar();
  R.FromCollector = In.u8() != 0;
  R.DeviceName = std::string(In.str());
  R.DeviceMemory = In.svar();
  int64_t Sms = In.svar();
  if (Sms < 0 || Sms > INT32_MAX)
    In.fail(fmt::format("a device of {} SMs", Sms));
  R.DeviceSms = static_cast<int32_t>(Sms);
  size_t NumWarnings = In.count();
  for (size_t I = 0; I < NumWarnings && !In.failed(); ++I)
    R.Warnings.emplace_back(In.str());
  R.Iteration = std::string(In.str());
  R.Steady = In.svar();
  R.Calibration = std::string(In.str());
  if (!In.failed() && R.Calibration != "exact" && R.Calibration != "typical")
    In.fail("calibration '" + R.Calibration + "'");
  if (In.failed())
    return fail("a damaged reduced rank: " + In.error());
  auto G = graph::readGraph(In);
  if (!G)
    return fail("a damaged reduced rank: " + llvm::toString(G.takeError()));
  if (!In.atEnd())
    return fail(fmt::format("a damaged reduced rank: {} bytes after its graph",
                            Body.size() - In.offset()));
  R.G = std::move(*G);
  return R;
}

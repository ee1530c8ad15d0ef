//===- RecordWriter.cpp - Writes run.cupti files --------------------------===//

#include "RecordWriter.h"

#include <cerrno>
#include <unistd.h>

using namespace dd;
using namespace dd::cupti;

RecordWriter::RecordWriter(int Fd) : Fd(Fd) {
  if (Fd >= 0)
    Buf.reserve(FlushThreshold + (64 << 10));
  cuptifmt::encodeHeader(Buf);
}

RecordWriter::~RecordWriter() { close(); }

uint32_t RecordWriter::string(std::string_view S) {
  if (S.empty())
    return 0;
  auto [It, New] = Strings.try_emplace(std::string(S), 0);
  if (New) {
    It->second = static_cast<uint32_t>(Strings.size());
    cuptifmt::StringRecord R;
    R.Id = It->second;
    R.Text = It->first;
    add(R);
  }
  return It->second;
}

void RecordWriter::finish(cuptifmt::EndRecord E) {
  if (Finished)
    return;
  E.Records = Records;
  E.DroppedTotal = DroppedTotal;
  add(E);
  Finished = true;
  flush();
}

bool RecordWriter::flush() {
  if (Fd < 0 || Failed)
    return !Failed;
  const char *P = Buf.data();
  size_t Left = Buf.size();
  while (Left) {
    ssize_t N = ::write(Fd, P, Left);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      Failed = true;
      return false;
    }
    P += N;
    Left -= static_cast<size_t>(N);
    Written += static_cast<uint64_t>(N);
  }
  Buf.clear();
  return true;
}

bool RecordWriter::close() {
  if (Fd < 0)
    return !Failed;
  bool Ok = flush();
  Ok &= ::close(Fd) == 0;
  Fd = -1;
  return Ok && !Failed;
}

#include "support/InputStream.h"

#include "support/ContentBuffer.h"
#include "support/Error.h"
#include "support/FileIO.h"

#include <zlib.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

using namespace dd;

namespace {
constexpr size_t CompressedChunk = 1 << 20;
} // namespace

struct InputStream::Gzip {
  z_stream S;
  std::unique_ptr<char[]> In{new char[CompressedChunk]};
  bool RawEnd = false;   ///< the source has no more bytes
  bool Finished = false; ///< the last member ended
  uint64_t Inflated = 0; ///< content bytes produced, all members
  /// A fault met after some bytes were produced: those bytes are returned
  /// first, the fault on the next read (and every read after it).
  std::optional<std::string> Fault;
  Gzip() { std::memset(&S, 0, sizeof(S)); }
  ~Gzip() { inflateEnd(&S); }
};

InputStream::~InputStream() {
  if (Fd >= 0)
    ::close(Fd);
}

llvm::Expected<std::unique_ptr<InputStream>>
InputStream::open(const std::string &Path) {
  std::unique_ptr<InputStream> S(new InputStream());
  S->Path = Path;
  auto Fd = openRegularFile(Path, S->SourceSize);
  if (!Fd)
    return Fd.takeError();
  S->Fd = *Fd;
  // Sequential reads: let the kernel read ahead generously.
  ::posix_fadvise(S->Fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  if (auto E = S->start())
    return E;
  return S;
}

std::unique_ptr<InputStream> InputStream::fromMemory(std::string_view Data) {
  std::unique_ptr<InputStream> S(new InputStream());
  S->Memory = Data;
  S->SourceSize = Data.size();
  llvm::consumeError(S->start()); // memory reads cannot fail
  return S;
}

llvm::Error InputStream::start() {
  char Magic[2];
  size_t Got = 0;
  while (Got < 2) {
    auto N = readRaw(Magic + Got, 2 - Got);
    if (!N)
      return N.takeError();
    if (*N == 0)
      break;
    Got += *N;
  }
  Peeked.assign(Magic, Got);
  if (Got == 2 && static_cast<unsigned char>(Magic[0]) == 0x1f &&
      static_cast<unsigned char>(Magic[1]) == 0x8b) {
    Z = std::make_unique<Gzip>();
    // 16 + MAX_WBITS: expect a gzip header.
    if (inflateInit2(&Z->S, 16 + MAX_WBITS) != Z_OK)
      return makeError("cannot initialise zlib");
  }
  return llvm::Error::success();
}

bool InputStream::isCompressed() const { return Z != nullptr; }

uint64_t InputStream::sourcePosition() const {
  uint64_t Pending = Z ? Z->S.avail_in : 0;
  return RawPos - (Peeked.size() - PeekedUsed) - Pending;
}

llvm::Expected<size_t> InputStream::readRaw(char *Dst, size_t Max) {
  if (PeekedUsed < Peeked.size()) {
    size_t N = std::min(Max, Peeked.size() - PeekedUsed);
    std::memcpy(Dst, Peeked.data() + PeekedUsed, N);
    PeekedUsed += N;
    return N;
  }
  if (Fd < 0) {
    size_t N = std::min<uint64_t>(Max, Memory.size() - RawPos);
    std::memcpy(Dst, Memory.data() + RawPos, N);
    RawPos += N;
    return N;
  }
  for (;;) {
    ssize_t N = ::read(Fd, Dst, std::min<size_t>(Max, 1u << 30));
    if (N >= 0) {
      RawPos += static_cast<uint64_t>(N);
      return static_cast<size_t>(N);
    }
    if (errno != EINTR)
      return makeError(llvm::Twine("cannot read: ") + std::strerror(errno));
  }
}

llvm::Expected<size_t> InputStream::readAt(uint64_t Offset, char *Dst,
                                           size_t Max) {
  if (Z)
    return makeError("cannot read a gzip stream out of order");
  if (Fd < 0) {
    if (Offset >= Memory.size())
      return 0;
    size_t N = std::min<uint64_t>(Max, Memory.size() - Offset);
    std::memcpy(Dst, Memory.data() + Offset, N);
    return N;
  }
  size_t Done = 0;
  while (Done < Max) {
    ssize_t N = ::pread(Fd, Dst + Done, std::min<size_t>(Max - Done, 1u << 30),
                        static_cast<off_t>(Offset + Done));
    if (N == 0)
      break;
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return makeError(llvm::Twine("cannot read: ") + std::strerror(errno));
    }
    Done += static_cast<size_t>(N);
  }
  return Done;
}

llvm::Expected<std::string_view> InputStream::peek(size_t N) {
  if (AheadUsed > 0) {
    Ahead.erase(0, AheadUsed);
    AheadUsed = 0;
  }
  while (Ahead.size() < N) {
    size_t Have = Ahead.size();
    Ahead.resize(N);
    auto Got = readContent(Ahead.data() + Have, N - Have);
    if (!Got)
      return Got.takeError();
    Ahead.resize(Have + *Got);
    if (*Got == 0)
      break;
  }
  return std::string_view(Ahead).substr(0, N);
}

llvm::Expected<size_t> InputStream::read(char *Dst, size_t Max) {
  auto N = readUncopied(Dst, Max);
  if (N && Copy && !Copy->append(Dst, *N))
    return makeError("out of memory keeping the trace's content");
  return N;
}

llvm::Expected<size_t> InputStream::readUncopied(char *Dst, size_t Max) {
  if (AheadUsed < Ahead.size()) {
    size_t N = std::min(Max, Ahead.size() - AheadUsed);
    std::memcpy(Dst, Ahead.data() + AheadUsed, N);
    AheadUsed += N;
    return N;
  }
  return readContent(Dst, Max);
}

llvm::Expected<size_t> InputStream::readContent(char *Dst, size_t Max) {
  if (!Z)
    return readRaw(Dst, Max);
  Gzip &G = *Z;
  if (G.Fault)
    return makeError(*G.Fault);
  // What a read sees before a fault must not depend on how much it asked
  // for (the threaded JSON walk asks in other sizes than one thread does,
  // and both must meet the same content, then the same error): the bytes
  // inflated before the fault are returned, the fault is kept for later.
  auto FailAfter = [&](size_t Produced,
                       std::string Why) -> llvm::Expected<size_t> {
    G.Fault = std::move(Why);
    if (Produced)
      return Produced;
    return makeError(*G.Fault);
  };
  while (!G.Finished && Max > 0) {
    if (G.S.avail_in == 0 && !G.RawEnd) {
      auto N = readRaw(G.In.get(), CompressedChunk);
      if (!N)
        return N.takeError();
      G.RawEnd = *N == 0;
      G.S.next_in = reinterpret_cast<Bytef *>(G.In.get());
      G.S.avail_in = static_cast<uInt>(*N);
    }
    G.S.next_out = reinterpret_cast<Bytef *>(Dst);
    G.S.avail_out = static_cast<uInt>(std::min<size_t>(Max, 1u << 30));
    uInt Before = G.S.avail_out;
    int Rc = inflate(&G.S, Z_NO_FLUSH);
    size_t Produced = Before - G.S.avail_out;
    G.Inflated += Produced;
    uint64_t Bound = std::max(MaxInflateRatio * SourceSize, MinInflateBound);
    if (G.Inflated > Bound)
      return FailAfter(
          Produced - static_cast<size_t>(G.Inflated - Bound),
          (llvm::Twine("the gzip stream inflates to more than ") +
           llvm::Twine(Bound >> 20) + " MiB, over " +
           llvm::Twine(MaxInflateRatio) +
           " times its compressed size (traces inflate at most about 40x): "
           "a damaged file or a decompression bomb")
              .str());
    if (Rc == Z_STREAM_END) {
      // Another gzip member may follow (concatenated .gz files are valid).
      if (G.S.avail_in == 0 && !G.RawEnd) {
        auto N = readRaw(G.In.get(), CompressedChunk);
        if (!N)
          return FailAfter(Produced, llvm::toString(N.takeError()));
        G.RawEnd = *N == 0;
        G.S.next_in = reinterpret_cast<Bytef *>(G.In.get());
        G.S.avail_in = static_cast<uInt>(*N);
      }
      if (G.S.avail_in == 0)
        G.Finished = true;
      else if (inflateReset(&G.S) != Z_OK)
        return FailAfter(Produced, "corrupt gzip stream");
    } else if (Rc == Z_BUF_ERROR && G.S.avail_in == 0 && G.RawEnd) {
      return FailAfter(Produced,
                       "truncated gzip stream (the file ends before the "
                       "compressed data does)");
    } else if (Rc != Z_OK && Rc != Z_BUF_ERROR) {
      return FailAfter(Produced, std::string("corrupt gzip stream: ") +
                                     (G.S.msg ? G.S.msg : "inflate failed"));
    }
    if (Produced)
      return Produced;
  }
  return 0;
}

llvm::Expected<std::string> InputStream::readAll(size_t Padding) {
  // Start from the size the content will likely have: the file's for plain
  // files; gzip inflates traces 10-25x.
  uint64_t Guess = SourceSize > sourcePosition() ? SourceSize - sourcePosition()
                                                 : uint64_t(1) << 16;
  if (Z)
    Guess *= 16;
  size_t Cap = static_cast<size_t>(std::max<uint64_t>(Guess + 1, 1 << 16));
  std::string Out;
  Out.resize(Cap + Padding);
  size_t Len = 0;
  for (;;) {
    if (Len == Cap) {
      Cap *= 2;
      Out.resize(Cap + Padding);
    }
    auto N = read(Out.data() + Len, Cap - Len);
    if (!N)
      return N.takeError();
    if (*N == 0)
      break;
    Len += *N;
  }
  Out.resize(Len); // keeps the capacity: at least Len + Padding
  return Out;
}

std::pair<uint64_t, uint64_t> InputStream::lineColumnOf(uint64_t Offset) {
  std::unique_ptr<InputStream> Again;
  if (Fd >= 0) {
    auto S = open(Path);
    if (!S) {
      llvm::consumeError(S.takeError());
      return {0, 0};
    }
    Again = std::move(*S);
  } else {
    Again = fromMemory(Memory);
  }
  uint64_t Line = 1, LineStart = 0, Pos = 0;
  std::unique_ptr<char[]> Buf(new char[1 << 20]);
  while (Pos < Offset) {
    auto N = Again->read(Buf.get(), 1 << 20);
    if (!N) {
      llvm::consumeError(N.takeError());
      break;
    }
    if (*N == 0)
      break;
    size_t Use = static_cast<size_t>(std::min<uint64_t>(*N, Offset - Pos));
    for (size_t I = 0; I < Use; ++I)
      if (Buf[I] == '\n') {
        ++Line;
        LineStart = Pos + I + 1;
      }
    Pos += Use;
  }
  return {Line, Offset - LineStart + 1};
}

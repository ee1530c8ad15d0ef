#include "support/FileIO.h"

#include "support/Error.h"
#include "support/InputStream.h"

#include <zlib.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

using namespace dd;

namespace {

/// What a file that is not a regular one is, for messages.
const char *fileTypeName(mode_t Mode) {
  if (S_ISDIR(Mode))
    return "a directory";
  if (S_ISFIFO(Mode))
    return "a pipe (FIFO)";
  if (S_ISCHR(Mode))
    return "a character device";
  if (S_ISBLK(Mode))
    return "a block device";
  if (S_ISSOCK(Mode))
    return "a socket";
  return "not a plain file";
}

llvm::Error systemError(const char *What) {
  return makeError(llvm::Twine(What) + ": " + std::strerror(errno));
}

} // namespace

llvm::Expected<int> dd::openRegularFile(const std::string &Path,
                                        uint64_t &Size) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  int Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (Fd < 0)
    return systemError("cannot open");
  struct stat St;
  if (::fstat(Fd, &St) != 0) {
    llvm::Error E = systemError("cannot read");
    ::close(Fd);
    return E;
  }
  if (!S_ISREG(St.st_mode)) {
    ::close(Fd);
    if (S_ISDIR(St.st_mode))
      return makeError("cannot read: is a directory");
    return makeError(llvm::Twine("cannot read: ") + fileTypeName(St.st_mode) +
                     ", not a regular file (ddscript reads files it can "
                     "size and read again: save the content to a file)");
  }
  // Reads of a regular file never block; clear the flag all the same.
  ::fcntl(Fd, F_SETFL, ::fcntl(Fd, F_GETFL) & ~O_NONBLOCK);
  Size = static_cast<uint64_t>(St.st_size);
  return Fd;
}

llvm::Expected<std::string> dd::readTextFile(const std::string &Path,
                                             uint64_t MaxBytes) {
  uint64_t Size = 0;
  auto Fd = openRegularFile(Path, Size);
  if (!Fd)
    return Fd.takeError();
  auto TooLarge = [&] {
    return makeError(llvm::Twine("cannot read: larger than ") +
                     llvm::Twine(MaxBytes >> 20) + " MiB, the limit");
  };
  // The file may grow as it is read: read one byte past the limit to tell.
  std::string Out(static_cast<size_t>(std::min(Size, MaxBytes)) + 1, '\0');
  size_t Len = 0;
  int Errno = 0;
  while (Size <= MaxBytes) {
    if (Len == Out.size()) {
      if (Out.size() > MaxBytes)
        break;
      Out.resize(std::min<uint64_t>(Out.size() * 2, MaxBytes + 1));
    }
    ssize_t N = ::read(*Fd, Out.data() + Len, Out.size() - Len);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      Errno = N < 0 ? errno : 0;
      break;
    }
    Len += static_cast<size_t>(N);
  }
  ::close(*Fd);
  if (Size > MaxBytes || Len > MaxBytes)
    return TooLarge();
  if (Errno) {
    errno = Errno;
    return systemError("cannot read");
  }
  Out.resize(Len);
  return Out;
}

bool dd::isGzip(std::string_view Data) {
  return Data.size() >= 2 && static_cast<unsigned char>(Data[0]) == 0x1f &&
         static_cast<unsigned char>(Data[1]) == 0x8b;
}

llvm::Expected<std::string> dd::gunzip(std::string_view Data, size_t Padding) {
  if (!isGzip(Data))
    return makeError("not a gzip stream");
  return InputStream::fromMemory(Data)->readAll(Padding);
}

llvm::Expected<std::string> dd::readFileMaybeGzip(const std::string &Path,
                                                  size_t Padding) {
  auto In = InputStream::open(Path);
  if (!In)
    return In.takeError();
  return (*In)->readAll(Padding);
}

llvm::Expected<std::string> dd::gzip(std::string_view Data) {
  z_stream Z;
  std::memset(&Z, 0, sizeof(Z));
  if (deflateInit2(&Z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    return makeError("cannot initialise zlib");
  std::unique_ptr<z_stream, int (*)(z_stream *)> Guard(&Z, deflateEnd);
  std::string Out;
  Out.resize(deflateBound(&Z, static_cast<uLong>(Data.size())) + 64);
  Z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(Data.data()));
  Z.avail_in = static_cast<uInt>(Data.size());
  Z.next_out = reinterpret_cast<Bytef *>(Out.data());
  Z.avail_out = static_cast<uInt>(Out.size());
  if (Data.size() > (1u << 31) || deflate(&Z, Z_FINISH) != Z_STREAM_END)
    return makeError("cannot compress (more than 2 GiB?)");
  Out.resize(Z.total_out);
  return Out;
}

llvm::Expected<size_t> dd::writeFileMaybeGzip(const std::string &Path,
                                              std::string_view Data) {
  std::string Packed;
  if (Path.size() > 3 && Path.compare(Path.size() - 3, 3, ".gz") == 0) {
    auto Z = gzip(Data);
    if (!Z)
      return Z.takeError();
    Packed = std::move(*Z);
    Data = Packed;
  }
  std::unique_ptr<FILE, int (*)(FILE *)> F(std::fopen(Path.c_str(), "wb"),
                                           std::fclose);
  if (!F)
    return makeError(llvm::Twine("cannot write: ") + std::strerror(errno));
  if (std::fwrite(Data.data(), 1, Data.size(), F.get()) != Data.size() ||
      std::fflush(F.get()) != 0)
    return makeError(llvm::Twine("cannot write: ") + std::strerror(errno));
  return Data.size();
}

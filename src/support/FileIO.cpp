#include "support/FileIO.h"

#include "support/Error.h"
#include "support/Exit.h"
#include "support/InputStream.h"

#include <zlib.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

using namespace dd;
namespace fs = std::filesystem;

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

/// Writes all of \p Data to \p Fd.
bool writeAll(int Fd, std::string_view Data) {
  while (!Data.empty()) {
    ssize_t N =
        ::write(Fd, Data.data(), std::min<size_t>(Data.size(), 1 << 30));
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0) {
      if (N == 0)
        errno = EIO;
      return false;
    }
    Data.remove_prefix(static_cast<size_t>(N));
  }
  return true;
}

/// Writes \p Data to the device or FIFO \p Path, as it is.
llvm::Error writeInPlace(const std::string &Path, std::string_view Data) {
  int Fd = ::open(Path.c_str(), O_WRONLY | O_CLOEXEC);
  if (Fd < 0)
    return systemError("cannot write");
  bool Ok = writeAll(Fd, Data);
  int Errno = errno;
  if (::close(Fd) != 0 && Ok)
    return systemError("cannot write");
  errno = Errno;
  return Ok ? llvm::Error::success() : systemError("cannot write");
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

llvm::Expected<std::string> dd::gzip(std::string_view Data, int Level) {
  z_stream Z;
  std::memset(&Z, 0, sizeof(Z));
  if (deflateInit2(&Z, Level, Z_DEFLATED, 16 + MAX_WBITS, 8,
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

llvm::Error AtomicFiles::add(const std::string &Path, std::string_view Data) {
  struct stat St;
  bool Exists = ::stat(Path.c_str(), &St) == 0;
  if (Exists && S_ISDIR(St.st_mode))
    return makeError("cannot write: is a directory");
  if (Exists && !S_ISREG(St.st_mode))
    return writeInPlace(Path, Data);
  // Through a symlink, the file it names is replaced, not the link.
  fs::path Target = Path;
  std::error_code Ec;
  if (fs::is_symlink(fs::symlink_status(Target, Ec))) {
    fs::path Resolved = fs::weakly_canonical(Target, Ec);
    if (!Ec)
      Target = Resolved;
  }
  fs::path Dir = Target.parent_path();
  // Room for the temporary name's additions within a name's 255 bytes.
  std::string Base = Target.filename().string().substr(0, 200);
  int Fd = -1;
  std::string Temp;
  for (unsigned Try = 0; Fd < 0 && Try < 100; ++Try) {
    Temp = (Dir / ("." + Base + ".ddscript-" + std::to_string(::getpid()) +
                   "-" + std::to_string(Try)))
               .string();
    Fd = ::open(Temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (Fd < 0 && errno != EEXIST)
      return systemError("cannot write");
  }
  if (Fd < 0)
    return systemError("cannot write");
  Pending.push_back({Temp, Target.string(), registerTemporary(Temp)});
  if (Exists)
    ::fchmod(Fd, St.st_mode & 07777);
  bool Written = writeAll(Fd, Data);
  int Errno = errno;
  bool Closed = ::close(Fd) == 0;
  if (!Written)
    errno = Errno;
  if (Written && Closed)
    return llvm::Error::success();
  llvm::Error E = systemError("cannot write");
  discard();
  return E;
}

llvm::Error AtomicFiles::commit() {
  for (size_t I = 0; I < Pending.size(); ++I) {
    if (::rename(Pending[I].Temp.c_str(), Pending[I].Target.c_str()) != 0) {
      llvm::Error E = systemError("cannot write");
      Pending.erase(Pending.begin(), Pending.begin() + I);
      discard();
      return E;
    }
    releaseTemporary(Pending[I].Slot);
  }
  Pending.clear();
  return llvm::Error::success();
}

void AtomicFiles::discard() {
  for (const Temporary &T : Pending) {
    ::unlink(T.Temp.c_str());
    releaseTemporary(T.Slot);
  }
  Pending.clear();
}

AtomicFiles::~AtomicFiles() { discard(); }

llvm::Error dd::writeFileAtomically(const std::string &Path,
                                    std::string_view Data) {
  AtomicFiles F;
  if (auto E = F.add(Path, Data))
    return E;
  return F.commit();
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
  if (auto E = writeFileAtomically(Path, Data))
    return E;
  return Data.size();
}

FileIdentity dd::fileIdentity(const std::string &Path) {
  FileIdentity Id;
  struct stat St;
  if (::stat(Path.c_str(), &St) == 0) {
    Id.Exists = true;
    Id.Device = St.st_dev;
    Id.Inode = St.st_ino;
    return Id;
  }
  // Not there yet (an output): where it would be made.
  std::error_code Ec;
  fs::path C = fs::weakly_canonical(fs::absolute(Path, Ec), Ec);
  Id.Where = (Ec ? fs::path(Path).lexically_normal() : C).string();
  return Id;
}

bool dd::sameFile(const std::string &A, const std::string &B) {
  return fileIdentity(A) == fileIdentity(B);
}

bool dd::isSpecialFile(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && !S_ISREG(St.st_mode) &&
         !S_ISDIR(St.st_mode);
}

std::string dd::codeImagePath() {
  Dl_info Info;
  if (!dladdr(reinterpret_cast<void *>(&dd::codeImagePath), &Info) ||
      !Info.dli_fname)
    return "";
  std::error_code Ec;
  std::filesystem::path P =
      std::filesystem::weakly_canonical(Info.dli_fname, Ec);
  return Ec ? std::string() : P.string();
}

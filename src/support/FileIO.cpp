#include "support/FileIO.h"

#include "support/Error.h"
#include "support/InputStream.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

using namespace dd;

bool dd::isGzip(std::string_view Data) {
  return Data.size() >= 2 && static_cast<unsigned char>(Data[0]) == 0x1f &&
         static_cast<unsigned char>(Data[1]) == 0x8b;
}

llvm::Expected<std::string> dd::gunzip(std::string_view Data, size_t Padding) {
  z_stream Z;
  std::memset(&Z, 0, sizeof(Z));
  // 16 + MAX_WBITS: expect a gzip header.
  if (inflateInit2(&Z, 16 + MAX_WBITS) != Z_OK)
    return makeError("cannot initialise zlib");
  std::unique_ptr<z_stream, int (*)(z_stream *)> Guard(&Z, inflateEnd);

  std::string Out;
  // Compressed traces inflate 10-25x; start there and grow geometrically.
  Out.resize(std::max<size_t>(Data.size() * 8, 1 << 16));
  Z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(Data.data()));
  Z.avail_in = static_cast<uInt>(Data.size());
  size_t Produced = 0;
  for (;;) {
    if (Produced == Out.size())
      Out.resize(Out.size() * 2);
    Z.next_out = reinterpret_cast<Bytef *>(Out.data() + Produced);
    size_t Room = Out.size() - Produced;
    Z.avail_out = static_cast<uInt>(std::min<size_t>(Room, 1u << 30));
    uInt Before = Z.avail_out;
    int Rc = inflate(&Z, Z_NO_FLUSH);
    Produced += Before - Z.avail_out;
    if (Rc == Z_STREAM_END) {
      if (Z.avail_in == 0)
        break;
      // Another gzip member follows (concatenated .gz files are valid).
      if (inflateReset(&Z) != Z_OK)
        return makeError("corrupt gzip stream");
      continue;
    }
    if (Rc == Z_BUF_ERROR && Z.avail_in == 0)
      return makeError("truncated gzip stream (the file ends before the "
                       "compressed data does)");
    if (Rc != Z_OK && Rc != Z_BUF_ERROR)
      return makeError(llvm::Twine("corrupt gzip stream: ") +
                       (Z.msg ? Z.msg : "inflate failed"));
  }
  Out.resize(Produced);
  Out.reserve(Produced + Padding);
  return Out;
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

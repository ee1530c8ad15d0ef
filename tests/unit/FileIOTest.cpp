#include "support/FileIO.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdio>
#include <string>

namespace {
std::string gzipOf(const std::string &In) {
  z_stream Z{};
  deflateInit2(&Z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
               Z_DEFAULT_STRATEGY);
  std::string Out(deflateBound(&Z, In.size()) + 64, '\0');
  Z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(In.data()));
  Z.avail_in = static_cast<uInt>(In.size());
  Z.next_out = reinterpret_cast<Bytef *>(Out.data());
  Z.avail_out = static_cast<uInt>(Out.size());
  deflate(&Z, Z_FINISH);
  Out.resize(Z.total_out);
  deflateEnd(&Z);
  return Out;
}
} // namespace

TEST_CASE("gzip streams inflate, with room left for the JSON parser") {
  std::string Text(100000, 'x');
  Text += "{\"traceEvents\": []}";
  std::string Gz = gzipOf(Text);
  CHECK(dd::isGzip(Gz));
  auto Out = dd::gunzip(Gz, 64);
  REQUIRE(static_cast<bool>(Out));
  CHECK(*Out == Text);
  CHECK(Out->capacity() >= Out->size() + 64);
}

TEST_CASE("concatenated gzip members are one stream") {
  auto Out = dd::gunzip(gzipOf("abc") + gzipOf("def"), 64);
  REQUIRE(static_cast<bool>(Out));
  CHECK(*Out == "abcdef");
}

TEST_CASE("a truncated gzip stream is an error, not a short read") {
  std::string Gz = gzipOf(std::string(50000, 'y') + "tail");
  auto Out = dd::gunzip(Gz.substr(0, Gz.size() / 2), 64);
  REQUIRE_FALSE(static_cast<bool>(Out));
  CHECK(llvm::toString(Out.takeError()).find("truncated") != std::string::npos);
}

TEST_CASE("reading a missing file says why") {
  auto Out = dd::readFileMaybeGzip("/nonexistent/ddscript/trace.json");
  REQUIRE_FALSE(static_cast<bool>(Out));
  CHECK(llvm::toString(Out.takeError()).find("No such file") !=
        std::string::npos);
}

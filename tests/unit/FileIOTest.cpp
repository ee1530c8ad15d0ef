#include "support/FileIO.h"
#include "support/FileContent.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
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

TEST_CASE("a file's content in memory, inflated or as stored") {
  // Larger than the first guess at the inflated size (4x the file), so
  // that the room grows; two members, so that the stated size is wrong.
  std::string Text;
  for (int I = 0; Text.size() < (3u << 20); ++I)
    Text += "{\"ph\": \"X\", \"ts\": " + std::to_string(I) + "},\n";
  std::string Dir = std::filesystem::temp_directory_path().string();
  std::string Gz = Dir + "/ddscript_content_test.json.gz";
  std::string Plain = Dir + "/ddscript_content_test.json";
  std::ofstream(Gz, std::ios::binary)
      << gzipOf(Text.substr(0, 1000)) + gzipOf(Text.substr(1000));
  std::ofstream(Plain, std::ios::binary) << Text;
  for (const std::string &Path : {Gz, Plain}) {
    CAPTURE(Path);
    auto C = dd::FileContent::load(Path);
    REQUIRE(static_cast<bool>(C));
    CHECK(C->data() == Text);
    CHECK(C->isCompressed() == (Path == Gz));
    dd::FileContent Moved = std::move(*C);
    CHECK(Moved.data().size() == Text.size());
    CHECK(C->data().empty());
    Moved.release();
    CHECK(Moved.data().empty());
  }
  std::string Cut = gzipOf(Text);
  std::ofstream(Gz, std::ios::binary) << Cut.substr(0, Cut.size() / 2);
  auto Bad = dd::FileContent::load(Gz);
  REQUIRE_FALSE(static_cast<bool>(Bad));
  CHECK(llvm::toString(Bad.takeError()).find("truncated") != std::string::npos);
  auto Missing = dd::FileContent::load(Dir + "/ddscript/no/such/file");
  CHECK_FALSE(static_cast<bool>(Missing));
  llvm::consumeError(Missing.takeError());
  std::filesystem::remove(Gz);
  std::filesystem::remove(Plain);
}

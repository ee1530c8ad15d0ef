#include "support/FileIO.h"
#include "support/ContentBuffer.h"
#include "support/Exit.h"
#include "support/InputStream.h"

#include <doctest/doctest.h>
#include <zlib.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
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

TEST_CASE("a damaged gzip stream gives the same bytes, then the same error, "
          "whatever the read sizes") {
  // Damage in the middle of the deflate data: inflate fails partway
  // through a read. The bytes before the fault come first, then the fault,
  // on every read after it too; the threaded JSON walk reads in other sizes
  // than one thread does and must meet the same content (issue 19).
  std::string Text;
  for (int I = 0; Text.size() < 200000; ++I)
    Text +=
        "{\"ph\": \"X\", \"name\": \"k" + std::to_string(I * 7919) + "\"},\n";
  std::string Gz = gzipOf(Text);
  for (size_t At = Gz.size() / 2; At < Gz.size() / 2 + 8; ++At)
    Gz[At] = static_cast<char>(~Gz[At]);
  auto ReadIn = [&](size_t Chunk) {
    auto In = dd::InputStream::fromMemory(Gz);
    std::string Got, Buf(Chunk, '\0');
    for (;;) {
      auto N = In->read(Buf.data(), Chunk);
      if (!N) {
        std::string Why = llvm::toString(N.takeError());
        auto Again = In->read(Buf.data(), Chunk);
        REQUIRE_FALSE(static_cast<bool>(Again));
        CHECK(llvm::toString(Again.takeError()) == Why);
        return std::make_pair(Got, Why);
      }
      if (*N == 0)
        return std::make_pair(Got, std::string("end"));
      Got.append(Buf.data(), *N);
    }
  };
  auto Ref = ReadIn(1);
  CHECK(Ref.second.find("corrupt gzip stream") == 0);
  CHECK(Ref.first.size() > 1000);
  // Damaged deflate data may inflate to wrong bytes before inflate sees
  // the fault; the start is the text's.
  CHECK(Text.compare(0, 1000, Ref.first, 0, 1000) == 0);
  for (size_t Chunk :
       {size_t(7), size_t(4096), size_t(65536), size_t(1 << 20)}) {
    CAPTURE(Chunk);
    CHECK(ReadIn(Chunk) == Ref);
  }
}

TEST_CASE("reading a missing file says why") {
  auto Out = dd::readFileMaybeGzip("/nonexistent/ddscript/trace.json");
  REQUIRE_FALSE(static_cast<bool>(Out));
  CHECK(llvm::toString(Out.takeError()).find("No such file") !=
        std::string::npos);
}

TEST_CASE("a stream keeps a copy of what it hands out") {
  // More than the room first reserved, so that the copy grows; two gzip
  // members; a peek before the copy starts.
  std::string Text;
  for (int I = 0; Text.size() < (3u << 20); ++I)
    Text += "{\"ph\": \"X\", \"ts\": " + std::to_string(I) + "},\n";
  std::string Gz = gzipOf(Text.substr(0, 1000)) + gzipOf(Text.substr(1000));
  for (const std::string &Source : {Gz, Text}) {
    auto In = dd::InputStream::fromMemory(Source);
    REQUIRE(static_cast<bool>(In->peek(16)));
    dd::ContentBuffer Copy;
    REQUIRE(Copy.reserve(1 << 20));
    In->keepCopy(&Copy);
    std::string Read(1 << 16, '\0');
    size_t Total = 0;
    for (;;) {
      auto N = In->read(Read.data(), Read.size());
      REQUIRE(static_cast<bool>(N));
      if (*N == 0)
        break;
      Total += *N;
    }
    CHECK(Total == Text.size());
    CHECK(Copy.data() == Text);
    dd::ContentBuffer Moved = std::move(Copy);
    CHECK(Moved.data() == Text);
    CHECK(Copy.data().empty());
    Moved.release();
    CHECK(Moved.data().empty());
  }
}

TEST_CASE("readAt reads a plain file anywhere, and refuses gzip") {
  std::string Text = "0123456789abcdef";
  std::string Path =
      (std::filesystem::temp_directory_path() / "ddscript_readat_test.json")
          .string();
  std::ofstream(Path, std::ios::binary) << Text;
  auto In = dd::InputStream::open(Path);
  REQUIRE(static_cast<bool>(In));
  char Buf[8];
  auto N = (*In)->readAt(10, Buf, 8);
  REQUIRE(static_cast<bool>(N));
  CHECK(std::string(Buf, *N) == "abcdef");
  N = (*In)->readAt(100, Buf, 8);
  REQUIRE(static_cast<bool>(N));
  CHECK(*N == 0);
  std::filesystem::remove(Path);
  auto Z = dd::InputStream::fromMemory(gzipOf(Text));
  auto Bad = Z->readAt(0, Buf, 8);
  CHECK_FALSE(static_cast<bool>(Bad));
  llvm::consumeError(Bad.takeError());
}

namespace {
/// A fresh, empty directory under the system's temporary one.
std::filesystem::path scratchDir(const std::string &Name) {
  auto Dir = std::filesystem::temp_directory_path() /
             ("ddscript_fileio_" + Name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(Dir);
  std::filesystem::create_directories(Dir);
  return Dir;
}

std::string slurp(const std::filesystem::path &P) {
  std::ifstream In(P, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(In), {});
}

size_t entries(const std::filesystem::path &Dir) {
  size_t N = 0;
  for ([[maybe_unused]] auto &E : std::filesystem::directory_iterator(Dir))
    ++N;
  return N;
}
} // namespace

TEST_CASE("a gzip stream that inflates past the bound is refused") {
  // About 1000x: 80 MiB of spaces in 1 MiB members, past MinInflateBound.
  std::string Member = gzipOf(std::string(1 << 20, ' '));
  std::string Bomb;
  for (int I = 0; I < 80; ++I)
    Bomb += Member;
  auto Out = dd::gunzip(Bomb, 64);
  REQUIRE_FALSE(static_cast<bool>(Out));
  CHECK(llvm::toString(Out.takeError())
            .find("inflates to more than 64 MiB, over 128 times") !=
        std::string::npos);
  // Within the bound, the same members inflate.
  auto Fine = dd::gunzip(Bomb.substr(0, Member.size() * 8), 64);
  REQUIRE(static_cast<bool>(Fine));
  CHECK(Fine->size() == (8u << 20));
}

TEST_CASE("only regular files are read, within a size limit") {
  auto Dir = scratchDir("read");
  auto Dd = [](llvm::Expected<std::string> R) {
    return R ? std::string("ok: ") + *R : llvm::toString(R.takeError());
  };
  CHECK(Dd(dd::readTextFile(Dir.string(), 1 << 20)) ==
        "cannot read: is a directory");
  std::string Fifo = (Dir / "pipe").string();
  REQUIRE(::mkfifo(Fifo.c_str(), 0600) == 0);
  // No writer: opening must not block.
  CHECK(Dd(dd::readTextFile(Fifo, 1 << 20))
            .find("a pipe (FIFO), not a regular file") == 13);
  CHECK(Dd(dd::readTextFile("/dev/zero", 1 << 20))
            .find("a character device, not a regular file") !=
        std::string::npos);
  auto In = dd::InputStream::open(Fifo);
  REQUIRE_FALSE(static_cast<bool>(In));
  llvm::consumeError(In.takeError());
  std::ofstream(Dir / "m.dd") << std::string(3 << 20, 'x');
  CHECK(Dd(dd::readTextFile((Dir / "m.dd").string(), 2 << 20)) ==
        "cannot read: larger than 2 MiB, the limit");
  CHECK(dd::readTextFile((Dir / "m.dd").string(), 3 << 20)->size() ==
        (3u << 20));
  std::filesystem::remove_all(Dir);
}

/// Runs \p Fn with files limited to 4 KB (a full disk: a write past it
/// fails with EFBIG rather than a signal), and returns what it returns.
template <typename FnT> auto withSmallDisk(FnT Fn) {
  struct rlimit Old;
  ::getrlimit(RLIMIT_FSIZE, &Old);
  struct rlimit Small = Old;
  Small.rlim_cur = 4096;
  auto OldSignal = std::signal(SIGXFSZ, SIG_IGN);
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &Small) == 0);
  auto Result = Fn();
  ::setrlimit(RLIMIT_FSIZE, &Old);
  std::signal(SIGXFSZ, OldSignal);
  return Result;
}

TEST_CASE("a failed write leaves the old file whole, and no temporary one") {
  auto Dir = scratchDir("write");
  auto Path = (Dir / "report.html").string();
  std::ofstream(Path) << "the old report";
  // Files may not grow past 4 KB: the write fails part way (EFBIG).
  auto Failed = withSmallDisk(
      [&] { return dd::writeFileMaybeGzip(Path, std::string(1 << 20, 'n')); });
  REQUIRE_FALSE(static_cast<bool>(Failed));
  CHECK(llvm::toString(Failed.takeError()).find("cannot write: ") == 0);
  CHECK(slurp(Path) == "the old report");
  CHECK(entries(Dir) == 1);
  // A write that succeeds replaces it whole; through a symlink, the file it
  // names, keeping the link.
  std::filesystem::create_symlink("report.html", Dir / "link.html");
  REQUIRE(static_cast<bool>(
      dd::writeFileMaybeGzip((Dir / "link.html").string(), "new")));
  CHECK(slurp(Path) == "new");
  CHECK(std::filesystem::is_symlink(Dir / "link.html"));
  CHECK(entries(Dir) == 2);
  std::filesystem::remove_all(Dir);
}

TEST_CASE("files written together: all replaced, or none") {
  auto Dir = scratchDir("together");
  auto A = (Dir / "chakra.0.et").string(), B = (Dir / "chakra.1.et").string();
  std::ofstream(A) << "old 0";
  std::ofstream(B) << "old 1";
  {
    dd::AtomicFiles F;
    REQUIRE_FALSE(static_cast<bool>(F.add(A, "new 0")));
    // Not yet: the old file is there until all are whole.
    CHECK(slurp(A) == "old 0");
    // The second fails (the disk is full: files may not grow past 4 KB).
    llvm::Error E =
        withSmallDisk([&] { return F.add(B, std::string(1 << 20, 'n')); });
    CHECK(llvm::toString(std::move(E)).find("cannot write: ") == 0);
  }
  CHECK(slurp(A) == "old 0");
  CHECK(slurp(B) == "old 1");
  CHECK(entries(Dir) == 2);
  {
    dd::AtomicFiles F;
    REQUIRE_FALSE(static_cast<bool>(F.add(A, "new 0")));
    REQUIRE_FALSE(static_cast<bool>(F.add(B, "new 1")));
    CHECK(entries(Dir) == 4);
    REQUIRE_FALSE(static_cast<bool>(F.commit()));
  }
  CHECK(slurp(A) == "new 0");
  CHECK(slurp(B) == "new 1");
  CHECK(entries(Dir) == 2);
  // Dropped before commit: the temporaries go, the files stay.
  {
    dd::AtomicFiles F;
    REQUIRE_FALSE(static_cast<bool>(F.add(A, "newer")));
  }
  CHECK(slurp(A) == "new 0");
  CHECK(entries(Dir) == 2);
  std::filesystem::remove_all(Dir);
}

TEST_CASE("a signal while writing removes the temporary, then ends the "
          "process as the signal would") {
  auto Dir = scratchDir("signal");
  auto Path = (Dir / "trace.json").string();
  for (int Sig : {SIGINT, SIGTERM, SIGHUP}) {
    pid_t Child = ::fork();
    REQUIRE(Child >= 0);
    if (Child == 0) {
      dd::installExitHandlers();
      dd::AtomicFiles F;
      if (F.add(Path, "half of it"))
        ::_exit(10);
      ::raise(Sig);
      ::_exit(11); // not reached: the signal ends the process
    }
    int Status = 0;
    REQUIRE(::waitpid(Child, &Status, 0) == Child);
    CHECK(WIFSIGNALED(Status));
    CHECK(WTERMSIG(Status) == Sig);
    CHECK(entries(Dir) == 0);
  }
  std::filesystem::remove_all(Dir);
}

TEST_CASE("sameFile sees through symlinks and hard links") {
  auto Dir = scratchDir("same");
  auto A = (Dir / "a.json").string();
  std::ofstream(A) << "{}";
  std::filesystem::create_symlink("a.json", Dir / "sym.json");
  std::filesystem::create_hard_link(A, Dir / "hard.json");
  std::ofstream(Dir / "b.json") << "{}";
  CHECK(dd::sameFile(A, (Dir / "sym.json").string()));
  CHECK(dd::sameFile(A, (Dir / "hard.json").string()));
  CHECK(dd::sameFile(A, (Dir / "." / "a.json").string()));
  CHECK_FALSE(dd::sameFile(A, (Dir / "b.json").string()));
  // Neither exists yet: the same place.
  CHECK(dd::sameFile((Dir / "new.html").string(),
                     (Dir / ".." / Dir.filename() / "new.html").string()));
  CHECK_FALSE(dd::sameFile((Dir / "new.html").string(), A));
  CHECK(dd::isSpecialFile("/dev/null"));
  CHECK_FALSE(dd::isSpecialFile(A));
  std::filesystem::remove_all(Dir);
}

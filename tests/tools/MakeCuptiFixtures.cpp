// Writes the run.cupti files the CLI tests read into the directory given:
// a synthetic training run (CuptiSynth.h) and damaged copies of it. They are
// made at test time, with the collector's own writer, so that they follow
// the format as it is built.
#include "CuptiSynth.h"

#include <cstdio>
#include <string>
#include <sys/stat.h>

namespace {

bool save(const std::string &Dir, const char *Name, const std::string &Data) {
  std::string Path = Dir + "/" + Name;
  FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F || std::fwrite(Data.data(), 1, Data.size(), F) != Data.size()) {
    std::perror(Path.c_str());
    return false;
  }
  return std::fclose(F) == 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make-cupti-fixtures DIR\n");
    return 2;
  }
  std::string Dir = argv[1];
  mkdir(Dir.c_str(), 0755);
  dd::test::SynthRun S;
  dd::cupti::RecordWriter W;
  dd::test::writeSyntheticRun(W, S);
  const std::string &Run = W.data();

  std::string Version2 = Run;
  Version2[8] = 2;
  // The End record counts one record less than the file holds.
  std::string Count = Run;
  size_t EndAt = Run.size() - (8 + 32);
  Count[EndAt + 8] = static_cast<char>(Count[EndAt + 8] - 1);

  // Three bytes after the End record; a record with its reserved flags
  // set; the magic number cut short.
  std::string Junk = Run + "abc";
  std::string Flags = Run;
  Flags[16 + 2] = 1;
  std::string Magic = Run.substr(0, 5);

  dd::cupti::RecordWriter Never;
  dd::cuptifmt::ProcessRecord P;
  P.WindowMode = dd::cuptifmt::Iteration;
  P.Skip = 10;
  Never.add(P);
  Never.finish({});

  // The second iteration's copy recorded before the first kernel on its
  // stream, and one recorded at CUPTI time 0 (damaged times).
  auto DamagedCopy = [](uint64_t At) {
    dd::test::SynthRun D;
    D.DamagedCopyIteration = 1;
    D.CopyStart = At;
    dd::cupti::RecordWriter DW;
    dd::test::writeSyntheticRun(DW, D);
    return DW.data();
  };
  std::string EarlyCopy = DamagedCopy(dd::test::SynthRun::Base +
                                      dd::test::SynthRun::IterationNs + 5'000);
  std::string CopyAtZero = DamagedCopy(0);
  // A copy 2^63 - 1 ms into CUPTI's clock: past the times ddscript
  // represents (sums of such times overflowed in the graph build).
  std::string CopyTimeHuge = DamagedCopy((uint64_t(1) << 63) - 1'000'000);
  // An allocation of 2^63 bytes: negating it for a free overflowed int64
  // (found by dd_fuzz_cupti).
  dd::test::SynthRun Huge;
  Huge.FirstAllocationBytes = uint64_t(1) << 63;
  dd::cupti::RecordWriter HugeW;
  dd::test::writeSyntheticRun(HugeW, Huge);

  bool Ok =
      save(Dir, "run.cupti", Run) && save(Dir, "early_copy.cupti", EarlyCopy) &&
      save(Dir, "copy_at_zero.cupti", CopyAtZero) &&
      save(Dir, "copy_time_huge.cupti", CopyTimeHuge) &&
      save(Dir, "memory_huge.cupti", HugeW.data()) &&
      save(Dir, "truncated.cupti", Run.substr(0, Run.size() / 2 + 3)) &&
      save(Dir, "no_end.cupti", Run.substr(0, EndAt)) &&
      save(Dir, "version2.cupti", Version2) &&
      save(Dir, "bad_count.cupti", Count) &&
      save(Dir, "junk_after_end.cupti", Junk) &&
      save(Dir, "flags.cupti", Flags) && save(Dir, "cut_magic.cupti", Magic) &&
      save(Dir, "never_opened.cupti", Never.data());
  return Ok ? 0 : 1;
}

//===- Focus.cpp - Reading only the iterations a command reports ----------===//
//
// Which events a focus on iterations [Lo, Hi] (the reported ones and one on
// either side) keeps, with A the start of Lo and B the end of Hi:
//
//   - every event the survey cannot time, metadata (thread names); memory
//     records when the memory model is wanted (it starts from everything
//     allocated before), else none;
//   - the ProfilerStep#N markers that lie inside [A, B]: those of Lo..Hi;
//   - GPU work, GPU annotations and flow points starting in [A, B + (B-A)):
//     the work launched inside may run after B;
//   - every other event starting in [A, B): the builder takes the CPU
//     calls that start inside the iterations, and nothing before A.
//
// The focused trace is checked to hold exactly the iterations Lo..Hi,
// with their times; anything else (a file the survey or the reader
// refuses, markers on two threads in equal numbers, begin/end pairs that
// the cut could split) leaves the file to be read whole.
//
//===----------------------------------------------------------------------===//

#include "whatif/Focus.h"

#include "builder/GraphBuilder.h"
#include "support/ContentBuffer.h"
#include "support/InputStream.h"
#include "support/Progress.h"
#include "trace/Survey.h"
#include "whatif/Iterations.h"

#include <algorithm>

using namespace dd;
using namespace dd::whatif;
using trace::TraceSurvey;

namespace {

/// The ProfilerStep#N iterations of a trace, as the builder takes them.
struct Steps {
  std::vector<int64_t> Number, Begin, End, Length;
};

/// The iterations of \p T; nullopt when the builder's choice of marker
/// thread would rest on track ids (a tie).
std::optional<Steps> stepsOf(const trace::Trace &T) {
  bool Tied = false;
  std::vector<trace::EventId> Markers = graph::profilerSteps(T, &Tied);
  if (Tied)
    return std::nullopt;
  Steps S;
  for (trace::EventId E : Markers) {
    S.Number.push_back(graph::profilerStepNumberOf(T, E));
    S.Begin.push_back(T.Start[E]);
    S.End.push_back(T.end(E));
    S.Length.push_back(T.Dur[E]);
  }
  return S;
}

/// The trace read whole: what is odd about its iteration markers, as
/// warnings (a focused read notes them from the survey).
void noteMarkers(trace::Trace &T) {
  std::optional<Steps> S = stepsOf(T);
  if (!S)
    return;
  std::vector<int64_t> WorkStarts;
  for (trace::EventId E = 0; E < T.numEvents(); ++E)
    if (trace::isGpuWork(T.Kind[E]))
      WorkStarts.push_back(T.Start[E]);
  for (std::string &W : markerWarnings(
           S->Number, S->Begin, S->End,
           iterationsWithWork(S->Begin, S->End, std::move(WorkStarts))))
    T.Warnings.push_back(std::move(W));
}

/// Which elements of the surveyed file a focus on [A, B] keeps (see the
/// file comment). Called with increasing element indexes.
class Keep {
public:
  Keep(const TraceSurvey &S, int64_t A, int64_t B, bool Memory)
      : S(S), A(A), B(B), Memory(Memory) {
    Tail = B + (B - A);
  }
  bool operator()(size_t I) {
    uint8_t F = S.Flags[I];
    if (F & TraceSurvey::Always)
      return true;
    if (F & TraceSurvey::MemoryRecord)
      return Memory;
    int64_t T = S.Start[I];
    if (F & TraceSurvey::StepMarker) {
      while (S.Markers[NextMarker].Element < I)
        ++NextMarker;
      int64_t Dur = S.Markers[NextMarker].Dur;
      if (Dur >= 0)
        return T >= A && T <= B - Dur;
    }
    return T >= A && T < ((F & TraceSurvey::Device) ? Tail : B);
  }

private:
  const TraceSurvey &S;
  int64_t A, B, Tail;
  bool Memory;
  size_t NextMarker = 0;
};

} // namespace

std::optional<FocusedTrace>
dd::whatif::readFocusedTrace(const std::string &Path, std::string_view Choice,
                             bool Memory, const trace::ProgressFn &Progress) {
  if (Choice == "all")
    return std::nullopt;
  auto Opened = InputStream::open(Path);
  if (!Opened) {
    llvm::consumeError(Opened.takeError());
    return std::nullopt;
  }
  InputStream &File = **Opened;
  auto Head = File.peek(16);
  if (!Head || trace::isCuptiData(*Head) ||
      Head->find('\0') != std::string_view::npos) {
    if (!Head)
      llvm::consumeError(Head.takeError());
    return std::nullopt;
  }
  // The survey reads the file front to back; the second pass picks
  // elements out of a plain file, or out of the copy of a gzip file's
  // content that the survey kept as it inflated it.
  ContentBuffer Inflated;
  std::unique_ptr<InputStream> InMemory;
  if (File.isCompressed()) {
    // Kineto JSON inflates about 10x; the buffer grows if need be.
    if (!Inflated.reserve(static_cast<size_t>(File.sourceSize()) * 10))
      return std::nullopt;
    File.keepCopy(&Inflated);
  }

  // The file whole: every iteration was needed, or they are not
  // ProfilerStep#N ones.
  auto Whole = [&]() -> std::optional<FocusedTrace> {
    auto T = InMemory ? trace::parseKinetoJson(Inflated.data(), Path)
                      : trace::readTrace(Path);
    if (!T) {
      llvm::consumeError(T.takeError());
      return std::nullopt;
    }
    return FocusedTrace{std::move(*T), {}};
  };
  auto Excerpt = [&](llvm::function_ref<bool(size_t)> Keep,
                     const TraceSurvey &S) -> std::optional<trace::Trace> {
    InputStream &From = InMemory ? *InMemory : File;
    uint64_t Bytes = InMemory ? Inflated.data().size() : File.sourceSize();
    auto Doc = trace::excerptKinetoJson(From, Bytes, S, Keep);
    if (!Doc) {
      llvm::consumeError(Doc.takeError());
      return std::nullopt;
    }
    auto T = trace::parseKinetoJson(*Doc, Path);
    if (!T) {
      llvm::consumeError(T.takeError());
      return std::nullopt;
    }
    return std::move(*T);
  };

  PhaseTimer SurveyTimer("survey");
  auto Survey = trace::surveyKinetoJson(File, Progress);
  SurveyTimer.stop();
  if (!Survey) {
    llvm::consumeError(Survey.takeError());
    return std::nullopt;
  }
  if (File.isCompressed()) {
    File.keepCopy(nullptr);
    InMemory = InputStream::fromMemory(Inflated.data());
  }
  const TraceSurvey &S = *Survey;
  if (S.Markers.empty() || S.AnyPaired)
    return Whole();

  // The iterations, read from the markers alone as the builder reads them.
  auto Markers = Excerpt(
      [&](size_t I) { return (S.Flags[I] & TraceSurvey::StepMarker) != 0; }, S);
  if (!Markers)
    return std::nullopt;
  std::optional<Steps> All = stepsOf(*Markers);
  if (!All || All->Number.empty())
    return Whole();
  size_t N = All->Number.size();
  std::vector<int64_t> WorkStarts;
  for (size_t I = 0; I < S.numElements(); ++I)
    if ((S.Flags[I] & TraceSurvey::GpuWork) &&
        (S.Flags[I] & TraceSurvey::Timed))
      WorkStarts.push_back(S.Start[I]);
  std::vector<uint8_t> Busy =
      iterationsWithWork(All->Begin, All->End, std::move(WorkStarts));
  auto Chosen = chooseIterations(All->Number, All->Length, Choice, Busy);
  if (!Chosen) {
    // The graph of the whole file says what is wrong with the choice,
    // after whatever is wrong with the trace.
    llvm::consumeError(Chosen.takeError());
    return Whole();
  }
  auto [MinIt, MaxIt] = std::minmax_element(Chosen->begin(), Chosen->end());
  size_t Lo = *MinIt > 0 ? *MinIt - 1 : 0;
  size_t Hi = std::min(*MaxIt + 1, N - 1);
  if (Lo == 0 && Hi == N - 1)
    return Whole();

  PhaseTimer ReadTimer("excerpt");
  auto T = Excerpt(Keep(S, All->Begin[Lo], All->End[Hi], Memory), S);
  ReadTimer.stop();
  if (!T)
    return std::nullopt;
  // The focused trace must hold iterations Lo..Hi and no other (markers of
  // another thread in the window could outnumber them there).
  std::optional<Steps> Got = stepsOf(*T);
  if (!Got || Got->Number.size() != Hi - Lo + 1)
    return Whole();
  for (size_t I = 0; I <= Hi - Lo; ++I)
    if (Got->Number[I] != All->Number[Lo + I] ||
        Got->Begin[I] != All->Begin[Lo + I] || Got->End[I] != All->End[Lo + I])
      return Whole();

  FocusedTrace F{std::move(*T), {}};
  F.Span.TraceIterations = N;
  F.Span.FirstTraceIteration = Lo;
  F.Span.Steady = static_cast<int64_t>(defaultIteration(All->Length, Busy)) -
                  static_cast<int64_t>(Lo);
  for (std::string &W : markerWarnings(All->Number, All->Begin, All->End, Busy))
    F.Trace.Warnings.push_back(std::move(W));
  return F;
}

llvm::Expected<FocusedTrace>
dd::whatif::readTraceFor(const std::string &Path, bool Focus,
                         std::string_view Choice, bool Memory,
                         const trace::ProgressFn &Progress) {
  if (Focus)
    if (auto F = readFocusedTrace(Path, Choice, Memory, Progress)) {
      if (!F->Span.TraceIterations)
        noteMarkers(F->Trace);
      return std::move(*F);
    }
  auto T = trace::readTrace(Path, Progress);
  if (!T)
    return T.takeError();
  noteMarkers(*T);
  return FocusedTrace{std::move(*T), {}};
}

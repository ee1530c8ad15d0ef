//===- JsonWalkerThreads.cpp - The array's windows on several threads -----===//
//
// The one-thread walk alternates two steps: cut the next window (read more
// of the stream, find the last element boundary: JsonWalker::nextWindow)
// and read it (parse it, hand its elements over: readWindow). Cutting
// depends on where the previous window really ended; reading does not
// depend on anything after the window. So here one thread at a time cuts
// windows ahead, on the guess that each reads cleanly to its end; each cut
// window goes into a slot of a ring with the walker's whole state at the
// cut (the buffer itself changes hands: no copy) and is split into pieces
// at element boundaries; any thread parses a piece (a copy of it, so that
// pieces side by side can each borrow a byte before and after) into its
// batch; the calling thread commits a window's batches once all its pieces
// are parsed, windows in ring order.
//
// Pieces are small (PieceBytes) because a piece's bytes, structural index
// and batch then stay in the core's cache while it is parsed, and the
// threads share the work finely; windows stay as large as the one-thread
// walk's, because what the walk reads differently (the guess fails) and
// where it reports errors depend on the windows.
//
// A window whose pieces all read cleanly reads cleanly as a whole, to the
// same elements: the pieces' ends are element ends, and only blanks and
// one comma lie between pieces. Otherwise (a piece's end or the window's
// lay in a string or a nested value, an element fails, the array closes)
// the calling thread waits for the other threads to stop, puts the walker
// back in the state it had at that window's cut (what was read past it is
// given back to be read again), reads the window itself exactly as the
// one-thread walk does, and cuts ahead again; a window where the array
// closes in a piece after clean ones is committed as parsed. Errors are
// met in document order for the same reason. Nothing depends on timing:
// which thread parses a piece changes nothing in its batch.
//
// Memory: threads + 1 windows (at most 4) and their batches in flight.
//
//===----------------------------------------------------------------------===//

#include "trace/JsonWalker.h"

#include "support/Error.h"
#include "support/Prefault.h"
#include "trace/JsonScan.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace dd;
using namespace dd::trace;
using namespace dd::trace::jsonscan;
namespace od = simdjson::ondemand;

namespace {

constexpr size_t Padding = simdjson::SIMDJSON_PADDING;

/// The size pieces of a window are cut to (the last one takes the rest).
size_t pieceBytes(size_t Window) {
  return std::clamp<size_t>(Window / 16, 64, size_t(256) << 10);
}

/// A thread's copy of the piece it parses, with room for '[' and ']'.
struct PieceBuffer {
  std::unique_ptr<char[]> Buf;
  size_t Cap = 0;
  char *hold(size_t N) {
    if (Cap < N + 2) {
      Cap = N + 2;
      Buf.reset(new char[Cap + Padding]);
    }
    return Buf.get();
  }
};

} // namespace

class JsonWalker::Pipeline {
public:
  Pipeline(JsonWalker &W, Batches &Ahead, unsigned Threads)
      : W(W), Ahead(Ahead), Threads(Threads),
        // A window has pieces for many threads: a few windows in flight
        // keep them busy, and memory does not grow with the threads.
        Slots(std::min(Threads + 1, 4u)), PieceBytes(pieceBytes(W.Window)),
        MaxPieces(static_cast<unsigned>(W.Window / PieceBytes) + 2) {
    Ahead.resize(static_cast<unsigned>(Slots.size()) * MaxPieces);
    // Cutting allocates nothing but a window's buffer, before it changes
    // anything: an exception there leaves the walker as it was.
    for (Slot &S : Slots)
      S.Pieces.reserve(MaxPieces);
  }
  ~Pipeline() {
    {
      std::lock_guard<std::mutex> L(M);
      Quit = true;
    }
    Wake.notify_all();
    for (std::thread &H : Helpers)
      H.join();
    consumeError(std::move(CutError));
    // Windows, batches, buffers: freed. glibc keeps freed memory in its
    // arenas (the helpers' own among them), where it would stay resident
    // under everything built after the trace (16 MB of peak memory for the
    // 110 MB benchmark trace): given back.
    Slots.clear();
    Dropped.clear();
    CallerPiece = PieceBuffer();
    Ahead.resize(0);
#ifdef __GLIBC__
    malloc_trim(0);
#endif
  }

  llvm::Error run(ElementFn Element, ProgressFn Progress);

private:
  /// Part of a window: [Begin, End) of its buffer.
  struct Piece {
    size_t Begin = 0, End = 0;
    /// What parsing found: read to its end, the array closed in it (then
    /// ClosedAt: the window's buffer position after ']'), or anything else.
    enum { Clean, Closed, Unclean } Outcome = Unclean;
    size_t ClosedAt = 0;
    bool Scanned = false; ///< simdjson's first stage found no error
  };
  /// One window in flight, with the walker's state when it was cut.
  struct Slot {
    enum { Free, Cut, Parsed } State = Free;
    std::unique_ptr<char[]> Buf; ///< as JsonWalker::Buf
    size_t BufCap = 0, Cap = 0, Pos = 0, Len = 0;
    uint64_t Base = 0;
    bool Eof = false;
    JsonWalker::Cut Window{0, false, false};
    double Fraction = -1; ///< of the source read at the cut, for progress
    std::vector<Piece> Pieces;
    size_t PiecesDone = 0;
    char *data() { return Buf.get() + 1; }
  };
  /// Why the cutting stopped.
  enum class Stop { ArrayEnd, Error, Exception, AfterFinal };

  JsonWalker &W;
  Batches &Ahead;
  unsigned Threads;
  std::vector<Slot> Slots;
  size_t PieceBytes;
  unsigned MaxPieces; ///< batches of a slot
  std::vector<std::thread> Helpers;
  PieceBuffer CallerPiece;
  std::vector<std::pair<uint64_t, std::string>> Dropped;

  // Shared; guarded by M.
  std::mutex M;
  std::condition_variable Wake;
  uint64_t NextCut = 0, NextCommit = 0; ///< window numbers
  uint64_t NextParse = 0;               ///< window of the next piece
  size_t NextPiece = 0;                 ///< ... and the piece
  bool Cutting = false;                 ///< a thread holds the walker
  bool CutDone = false;                 ///< no more cuts; StopKind says why
  Stop StopKind = Stop::ArrayEnd;
  llvm::Error CutError = llvm::Error::success();
  std::exception_ptr CutException;
  unsigned Busy = 0; ///< cuts and parses under way
  bool Paused = true, Quit = false;

  Slot &slot(uint64_t N) { return Slots[N % Slots.size()]; }
  unsigned batch(uint64_t N, size_t Piece) const {
    return static_cast<unsigned>(N % Slots.size()) * MaxPieces +
           static_cast<unsigned>(Piece);
  }
  bool canCut() const {
    return !Paused && !Cutting && !CutDone &&
           NextCut - NextCommit < Slots.size();
  }
  bool canParse() const { return !Paused && NextParse < NextCut; }
  bool canCommit() {
    return NextCommit < NextCut && slot(NextCommit).State == Slot::Parsed;
  }
  bool stopped() const { return CutDone && !Cutting && NextCommit == NextCut; }

  void helper();
  void work(std::unique_lock<std::mutex> &L, od::parser &P, PieceBuffer &B);
  void cut();
  void handOver(Slot &S, Cut C);
  void split(Slot &S);
  void parse(Slot &S, Piece &U, unsigned Batch, od::parser &P, PieceBuffer &B);
  void pause(std::unique_lock<std::mutex> &L);
  void resume();
  llvm::Error goBack(Slot &S);
  llvm::Expected<std::string> readPast(uint64_t From, uint64_t To);
};

void JsonWalker::Pipeline::helper() {
  od::parser P;
  PieceBuffer B;
  std::unique_lock<std::mutex> L(M);
  for (;;) {
    Wake.wait(L, [&] { return Quit || canCut() || canParse(); });
    if (Quit)
      return;
    work(L, P, B);
  }
}

/// Cuts the next window or parses a piece, whichever is there to do
/// (cutting first: it keeps the others busy). Called and returns locked.
void JsonWalker::Pipeline::work(std::unique_lock<std::mutex> &L, od::parser &P,
                                PieceBuffer &B) {
  if (canCut()) {
    Cutting = true;
    ++Busy;
    L.unlock();
    cut();
    L.lock();
    Cutting = false;
    --Busy;
  } else if (canParse()) {
    uint64_t N = NextParse;
    Slot &S = slot(N);
    size_t I = NextPiece++;
    if (NextPiece == S.Pieces.size()) {
      ++NextParse;
      NextPiece = 0;
    }
    ++Busy;
    L.unlock();
    parse(S, S.Pieces[I], batch(N, I), P, B);
    L.lock();
    if (++S.PiecesDone == S.Pieces.size())
      S.State = Slot::Parsed;
    --Busy;
  } else {
    return;
  }
  Wake.notify_all();
}

/// One step of the one-thread walk's cutting, then the guess that the
/// window reads cleanly to its end. Holds the walker (Cutting).
void JsonWalker::Pipeline::cut() {
  // Cutting ends: the error or the exception (in a catch block) that ended
  // it is kept for the calling thread.
  auto Finish = [&](Stop Kind, llvm::Error E = llvm::Error::success()) {
    std::lock_guard<std::mutex> L(M);
    if (Kind == Stop::Exception)
      CutException = std::current_exception();
    if (E) {
      consumeError(std::move(CutError));
      CutError = std::move(E);
    }
    StopKind = Kind;
    CutDone = true;
  };
  std::optional<llvm::Expected<std::optional<Cut>>> C;
  try {
    C.emplace(W.nextWindow());
  } catch (...) {
    return Finish(Stop::Exception);
  }
  if (!*C)
    return Finish(Stop::Error, C->takeError());
  std::optional<Cut> Window = **C;
  if (!Window)
    return Finish(Stop::ArrayEnd);
  // The slot is free: no other thread looks at it until it is published.
  Slot &S = slot(NextCut);
  try {
    handOver(S, *Window);
  } catch (...) {
    return Finish(Stop::Exception);
  }
  split(S);
  std::lock_guard<std::mutex> L(M);
  S.State = Slot::Cut;
  ++NextCut;
  // After the content's last window the one-thread walk either finds the
  // array closed in it or reports the content cut short; the calling
  // thread goes on alone from there.
  if (Window->Final) {
    StopKind = Stop::AfterFinal;
    CutDone = true;
  }
}

void JsonWalker::Pipeline::handOver(Slot &S, Cut C) {
  S.Cap = W.Cap;
  S.Pos = W.Pos;
  S.Len = W.Len;
  S.Base = W.Base;
  S.Eof = W.Eof;
  S.Window = C;
  S.Fraction = W.In.sourceSize()
                   ? double(W.In.sourcePosition()) / double(W.In.sourceSize())
                   : -1;
  // The slot takes the walker's buffer; the walker goes on in the slot's
  // old one (grown if need be) from the window's end, as the one-thread
  // walk goes on after a window read to its end.
  if (!S.Buf || S.BufCap < W.Cap) {
    S.Buf.reset(new char[W.Cap + 2 + Padding]);
    S.BufCap = W.Cap;
    // Filled at once: one call maps it, not a fault per page.
    prefault(S.Buf.get(), W.Cap + 2 + Padding);
  }
  std::swap(S.Buf, W.Buf);
  std::swap(S.BufCap, W.BufCap);
  W.D = W.Buf.get() + 1;
  size_t Tail = S.Len - C.End;
  std::memcpy(W.D, S.data() + C.End, Tail);
  W.Base = S.Base + C.End;
  W.Pos = 0;
  W.Len = Tail;
  W.ExpectComma = true;
}

/// Splits the window into pieces at element boundaries ("}" "," "{" with
/// blanks). A boundary found in a string or a nested value makes a piece
/// that does not parse: the window is then read as a whole.
void JsonWalker::Pipeline::split(Slot &S) {
  S.Pieces.clear();
  S.PiecesDone = 0;
  const char *D = S.data();
  size_t At = S.Pos, End = S.Window.End;
  while (End - At > PieceBytes && S.Pieces.size() + 1 < MaxPieces) {
    size_t B = lastBoundary(D, At, At + PieceBytes);
    if (B == NoPos || B <= At)
      break;
    Piece U;
    U.Begin = At;
    U.End = B;
    S.Pieces.push_back(U);
    // lastBoundary found blanks, one ',', blanks and '{' after B.
    At = B;
    while (D[At] != ',')
      ++At;
    ++At;
    while (isSpace(D[At]))
      ++At;
  }
  Piece Last;
  Last.Begin = At;
  Last.End = End;
  S.Pieces.push_back(Last);
}

/// Parses piece \p U of window \p S into batch \p Batch, as readWindow
/// would parse those elements, and notes whether it read cleanly.
void JsonWalker::Pipeline::parse(Slot &S, Piece &U, unsigned Batch,
                                 od::parser &P, PieceBuffer &B) {
  size_t N = U.End - U.Begin;
  U.Outcome = Piece::Unclean;
  U.Scanned = false;
  // Whatever fails here (memory included) fails again, in order, when the
  // calling thread reads the window itself.
  try {
    char *Text = B.hold(N);
    // The copy's text is the window's, which the slot keeps until the
    // batch is committed.
    Ahead.clear(Batch, N,
                static_cast<std::ptrdiff_t>(
                    reinterpret_cast<uintptr_t>(S.data() + U.Begin) -
                    reinterpret_cast<uintptr_t>(Text + 1)));
    if (P.capacity() < N + 2 && P.allocate(N + 2) != simdjson::SUCCESS)
      return;
    Text[0] = '[';
    std::memcpy(Text + 1, S.data() + U.Begin, N);
    Text[N + 1] = ']';
    Text[N + 2] = ' '; // see parseWindow
    // Buffer positions of the piece's bytes: Text + 1 + X is S.data() +
    // U.Begin + X.
    auto InWindow = [&](const char *P) {
      return U.Begin + static_cast<size_t>(P - (Text + 1));
    };
    auto Doc =
        P.iterate(simdjson::padded_string_view(Text, N + 2, B.Cap + Padding));
    if (Doc.error())
      return;
    U.Scanned = true;
    for (auto Item : Doc.get_array()) {
      od::value V = Item.value();
      const char *Start = std::string_view(V.raw_json_token()).data();
      Ahead.parse(Batch, V, S.Base + InWindow(Start));
    }
    auto Loc = Doc.current_location();
    if (Loc.error()) {
      U.Outcome = Piece::Clean;
    } else {
      U.Outcome = Piece::Closed;
      U.ClosedAt = InWindow(Loc.value());
    }
  } catch (...) {
  }
}

/// Stops the other threads' work and waits until none is under way.
void JsonWalker::Pipeline::pause(std::unique_lock<std::mutex> &L) {
  Paused = true;
  Wake.wait(L, [&] { return Busy == 0; });
}

/// Starts cutting again from the walker's state. Called locked.
void JsonWalker::Pipeline::resume() {
  NextCut = NextParse = NextCommit;
  NextPiece = 0;
  CutDone = false;
  Paused = false;
  Wake.notify_all();
}

/// The content [From, To) that the walker read past a cut: in the slots cut
/// after it, the bytes dropped from the buffer's front since, and the
/// buffer.
llvm::Expected<std::string> JsonWalker::Pipeline::readPast(uint64_t From,
                                                           uint64_t To) {
  struct Part {
    uint64_t At;
    const char *Data;
    size_t Size;
  };
  std::vector<Part> Parts;
  for (uint64_t N = NextCommit + 1; N < NextCut; ++N) {
    Slot &S = slot(N);
    Parts.push_back({S.Base, S.data(), S.Len});
  }
  for (auto &[At, Bytes] : Dropped)
    Parts.push_back({At, Bytes.data(), Bytes.size()});
  Parts.push_back({W.Base, W.D, W.Len});
  std::string Out;
  Out.reserve(static_cast<size_t>(To - From));
  for (uint64_t At = From; At < To;) {
    const Part *Best = nullptr;
    for (const Part &P : Parts)
      if (P.At <= At && At < P.At + P.Size &&
          (!Best || P.At + P.Size > Best->At + Best->Size))
        Best = &P;
    if (!Best)
      return makeError("internal error: the threaded JSON walk lost bytes "
                       "at offset " +
                       std::to_string(At) + " (set DDSCRIPT_THREADS=1)");
    uint64_t Until = std::min(To, Best->At + Best->Size);
    Out.append(Best->Data + (At - Best->At), static_cast<size_t>(Until - At));
    At = Until;
  }
  return Out;
}

/// Puts the walker back in the state it had when \p S (the oldest window in
/// flight) was cut. Everything cut after it is dropped; its bytes are given
/// back to the walker's input. Called with no other thread at work.
llvm::Error JsonWalker::Pipeline::goBack(Slot &S) {
  auto Past = readPast(S.Base + S.Len, W.Base + W.Len);
  if (!Past)
    return Past.takeError();
  Past->append(W.Unread, W.UnreadUsed);
  W.Unread = std::move(*Past);
  W.UnreadUsed = 0;
  std::swap(W.Buf, S.Buf);
  std::swap(W.BufCap, S.BufCap);
  W.D = W.Buf.get() + 1;
  W.Cap = S.Cap;
  W.Pos = S.Pos;
  W.Len = S.Len;
  W.Base = S.Base;
  W.Eof = S.Eof;
  W.ExpectComma = false;
  for (Slot &Each : Slots)
    Each.State = Slot::Free;
  Dropped.clear();
  consumeError(std::move(CutError));
  CutError = llvm::Error::success();
  CutException = nullptr;
  return llvm::Error::success();
}

llvm::Error JsonWalker::Pipeline::run(ElementFn Element, ProgressFn Progress) {
  W.Dropped = &Dropped;
  // However run() ends (an exception from a commit included), no other
  // thread is at work when it has: the walker is this thread's again.
  struct Detach {
    Pipeline &P;
    ~Detach() {
      std::unique_lock<std::mutex> L(P.M);
      P.pause(L);
      P.W.Dropped = nullptr;
    }
  } DetachOnExit{*this};
  std::unique_lock<std::mutex> L(M);
  resume();
  try {
    while (Helpers.size() + 1 < Threads)
      Helpers.emplace_back([this] { helper(); });
  } catch (const std::system_error &) {
    // Fewer threads than asked for: the ones there do all the work.
  }
  for (;;) {
    Wake.wait(
        L, [&] { return canCommit() || stopped() || canCut() || canParse(); });
    if (canCommit()) {
      Slot &S = slot(NextCommit);
      uint64_t N = NextCommit;
      L.unlock();
      // All pieces read cleanly: so does the window. The array closed in
      // a piece after clean ones: the window reads to the same elements
      // and stops at the same place, if the first stage of its parse
      // passes (it fails where it would fail on a piece: only blanks and
      // commas lie between them). Anything else: read it as one thread.
      size_t I = 0;
      while (I < S.Pieces.size() && S.Pieces[I].Outcome == Piece::Clean)
        ++I;
      bool Closed = I < S.Pieces.size() &&
                    S.Pieces[I].Outcome == Piece::Closed &&
                    std::all_of(S.Pieces.begin(), S.Pieces.end(),
                                [](const Piece &U) { return U.Scanned; });
      if (I == S.Pieces.size() || Closed)
        for (size_t J = 0; J < I + (Closed ? 1 : 0); ++J)
          Ahead.commit(batch(N, J));
      if (I == S.Pieces.size()) {
        if (Progress && S.Fraction >= 0)
          Progress(S.Fraction);
        L.lock();
        S.State = Slot::Free;
        ++NextCommit;
        Wake.notify_all();
        continue;
      }
      L.lock();
      pause(L);
      if (auto E = goBack(S))
        return E;
      if (Closed) {
        // As readWindow: go on after the array's ']'.
        W.Pos = S.Pieces[I].ClosedAt;
        return llvm::Error::success();
      }
      // The one-thread walk reads this window differently: read it here,
      // as it does, then cut ahead again.
      L.unlock();
      auto ArrayClosed = W.readWindow(S.Window, Element);
      if (!ArrayClosed)
        return ArrayClosed.takeError();
      if (*ArrayClosed)
        return llvm::Error::success();
      L.lock();
      resume();
      continue;
    }
    if (stopped()) {
      Paused = true;
      switch (StopKind) {
      case Stop::ArrayEnd:
        return llvm::Error::success();
      case Stop::Error: {
        llvm::Error E = std::move(CutError);
        CutError = llvm::Error::success();
        return E;
      }
      case Stop::Exception:
        std::rethrow_exception(CutException);
      case Stop::AfterFinal:
        L.unlock();
        return W.arrayRest(Element, Progress);
      }
    }
    // The walker's own parser: this thread is the only one to use it.
    work(L, W.Parser, CallerPiece);
  }
}

llvm::Error JsonWalker::runPipeline(Pipeline &Threads, ElementFn Element,
                                    ProgressFn Progress) {
  return Threads.run(Element, Progress);
}

llvm::Error JsonWalker::walk(std::string_view ArrayKey, FieldFn Field,
                             ElementFn Element, Batches &Ahead,
                             unsigned Threads, ProgressFn Progress) {
  if (Threads <= 1)
    return walk(ArrayKey, Field, Element, Progress);
  Pipeline P(*this, Ahead, Threads);
  auto Object = start();
  if (!Object)
    return Object.takeError();
  if (auto E = *Object ? topLevelObject(ArrayKey, Field, Element, &P, Progress)
                       : array(Element, &P, Progress))
    return E;
  return end();
}

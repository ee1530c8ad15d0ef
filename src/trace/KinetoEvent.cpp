#include "trace/KinetoEvent.h"

#include "support/Prefault.h"
#include "trace/JsonText.h"
#include "trace/Numbers.h"

#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <charconv>
#include <cstring>

using namespace dd;
using namespace dd::trace;
using namespace dd::trace::kineto;
namespace od = simdjson::ondemand;
using jsontext::keyOf;
using jsontext::textOf;
using jsontext::trimToken;

Cat kineto::classifyCategory(std::string_view C, bool &Legacy) {
  Cat R = llvm::StringSwitch<Cat>(llvm::StringRef(C.data(), C.size()))
              .Case("cpu_op", Cat::CpuOp)
              .Case("Operator", Cat::CpuOp)
              .Case("user_annotation", Cat::UserAnnotation)
              .Case("python_function", Cat::PythonFunction)
              .Case("cuda_runtime", Cat::Runtime)
              .Case("Runtime", Cat::Runtime)
              .Case("cuda_driver", Cat::Driver)
              .Case("marker", Cat::Marker) // NVTX ranges (ddscript convert)
              .Case("kernel", Cat::Kernel)
              .Case("Kernel", Cat::Kernel)
              .Case("gpu_memcpy", Cat::Memcpy)
              .Case("Memcpy", Cat::Memcpy)
              .Case("gpu_memset", Cat::Memset)
              .Case("Memset", Cat::Memset)
              .Case("gpu_user_annotation", Cat::GpuAnnotation)
              .Case("cuda_sync", Cat::CudaSync)
              .Case("cuda_event", Cat::CudaEvent)
              .Case("overhead", Cat::Overhead)
              .Case("Overhead", Cat::Overhead)
              .Case("cpu_instant_event", Cat::InstantEvent)
              .Case("ac2g", Cat::FlowLaunch)
              .Case("async", Cat::FlowLaunch)
              .Case("fwdbwd", Cat::FlowFwdBwd)
              .Case("Trace", Cat::Trace)
              .Default(Cat::Unknown);
  if (C == "Operator" || C == "Runtime" || C == "Kernel" || C == "async")
    Legacy = true;
  return R;
}

void TextArena::reset() {
  if (Blocks.size() > 1)
    Blocks.resize(1);
  Next = Blocks.empty() ? nullptr : Blocks.front().get();
  Left = Blocks.empty() ? 0 : BlockBytes;
}

std::string_view TextArena::keep(std::string_view S) {
  if (S.size() > Left) {
    size_t Cap = std::max(S.size(), BlockBytes);
    Blocks.emplace_back(new char[Cap]);
    Next = Blocks.back().get();
    Left = Cap;
  }
  if (!S.empty())
    std::memcpy(Next, S.data(), S.size());
  std::string_view Kept(Next, S.size());
  Next += S.size();
  Left -= S.size();
  return Kept;
}

void EventBatch::reset(size_t WindowBytes, std::ptrdiff_t JsonShift) {
  Shift = JsonShift;
  // Room for the piece's events at once: grown by doubling, the vectors
  // would touch (and fault in) about twice their size. Kineto events take
  // 150 to 300 bytes.
  size_t Guess = WindowBytes / 128 + 16;
  if (Events.capacity() < Guess) {
    Events.reserve(Guess);
    Offsets.reserve(Guess);
    prefaultCapacity(Events);
    prefaultCapacity(Offsets);
  }
  Events.clear();
  Offsets.clear();
  Args.clear();
  ArgTexts.clear();
  Arena.reset();
}

namespace {

// File-local (internal linkage), as jsontext::textOf is: see there.

std::optional<int64_t> integerOf(od::value V) {
  od::json_type Ty = V.type();
  std::optional<int64_t> I;
  if (Ty == od::json_type::number)
    I = parseScaledDecimal(trimToken(V.raw_json_token()), 0);
  else if (Ty == od::json_type::string)
    I = parseScaledDecimal(textOf(V), 0);
  // The two extremes are no one's id, size or count: INT64_MIN is NoValue,
  // and both are keys the maps keyed by ids (correlation, sequence number)
  // reserve. They read as absent, like a value that is not a number.
  if (I && (*I == INT64_MIN || *I == INT64_MAX))
    return std::nullopt;
  return I;
}

/// The parse proper, with internal linkage (see strOf).
struct Reader {
  StringPool *Pool;
  EventBatch *Batch;
  std::vector<Arg> *Args;

  std::string_view text(od::value V) {
    bool Unescaped;
    std::string_view S = textOf(V, Unescaped);
    if (!Batch)
      return S;
    // Read ahead, the parser's buffer is reused before the batch is
    // committed; the JSON read is a copy of part of a window that lives
    // until then.
    if (Unescaped)
      return Batch->Arena.keep(S);
    // (Integer arithmetic: the two texts are different objects.)
    auto At = reinterpret_cast<uintptr_t>(S.data()) +
              static_cast<uintptr_t>(Batch->Shift);
    return std::string_view(reinterpret_cast<const char *>(At), S.size());
  }
  void stringArg(ArgKey K, std::string_view Text);
  void parseArgs(od::object Obj, ParsedEvent &S);
  void parseFields(od::object Obj, ParsedEvent &S);
};

void Reader::stringArg(ArgKey K, std::string_view Text) {
  if (Pool) {
    Args->push_back({K, true, Pool->intern(Text)});
    return;
  }
  Args->push_back({K, true, static_cast<int64_t>(Batch->ArgTexts.size())});
  Batch->ArgTexts.push_back(Text);
}

void Reader::parseArgs(od::object Obj, ParsedEvent &S) {
  for (auto Field : Obj) {
    std::string_view Key = keyOf(Field);
    od::value V = Field.value();
    auto Int = [&]() { return integerOf(V).value_or(NoValue); };
    auto Extra = [&](ArgKey K) {
      if (auto I = integerOf(V))
        Args->push_back({K, false, *I});
    };
    auto ExtraStr = [&](ArgKey K) { stringArg(K, text(V)); };
    switch (Key.size()) {
    default:
      break;
    case 4:
      if (Key == "Addr") {
        std::string_view Tok = textOf(V);
        uint64_t A = 0;
        auto [P, Ec] = std::from_chars(Tok.data(), Tok.data() + Tok.size(), A);
        S.HasAddr = Ec == std::errc() && P == Tok.data() + Tok.size();
        S.Addr = A;
      } else if (Key == "cbid") {
        Extra(ArgKey::Cbid);
      } else if (Key == "name") {
        S.MetaName = text(V);
      }
      continue;
    case 5:
      if (Key == "bytes")
        S.Bytes = Int();
      else if (Key == "Bytes")
        S.MemBytes = Int();
      else if (Key == "dtype")
        ExtraStr(ArgKey::Dtype);
      continue;
    case 6:
      if (Key == "stream")
        S.Stream = Int();
      else if (Key == "device")
        S.Device = Int();
      continue;
    case 8:
      if (Key == "event_id")
        Extra(ArgKey::CudaEventId);
      else if (Key == "graph id")
        Extra(ArgKey::GraphId);
      continue;
    case 9:
      if (Key == "Device Id")
        S.DeviceId = Int();
      continue;
    case 10:
      if (Key == "Input Dims" || Key == "Input dims")
        ExtraStr(ArgKey::InputDims);
      else if (Key == "Input type")
        ExtraStr(ArgKey::InputTypes);
      else if (Key == "Group size")
        Extra(ArgKey::GroupSize);
      continue;
    case 11:
      if (Key == "correlation")
        S.Correlation = Int();
      else if (Key == "External id" || Key == "external id")
        S.ExternalId = Int();
      else if (Key == "Device Type")
        S.DeviceType = Int();
      else if (Key == "In msg size")
        Extra(ArgKey::InMsgSize);
      continue;
    case 12:
      if (Key == "Out msg size")
        Extra(ArgKey::OutMsgSize);
      continue;
    case 13:
      if (Key == "Fwd thread id") {
        S.FwdThread = static_cast<int32_t>(Int());
      } else if (Key == "In msg nelems") {
        Extra(ArgKey::InMsgNelems);
      }
      continue;
    case 14:
      if (Key == "cuda_sync_kind")
        ExtraStr(ArgKey::SyncKind);
      else if (Key == "Out msg nelems")
        Extra(ArgKey::OutMsgNelems);
      else if (Key == "Total Reserved")
        S.TotalReserved = Int();
      else if (Key == "wait_on_stream")
        Extra(ArgKey::WaitOnStream);
      continue;
    case 15:
      if (Key == "Sequence number")
        S.Seq = Int();
      else if (Key == "Total Allocated")
        S.TotalAllocated = Int();
      else if (Key == "Collective name")
        ExtraStr(ArgKey::CollectiveName);
      else if (Key == "Concrete Inputs")
        ExtraStr(ArgKey::ConcreteInputs);
      continue;
    case 16:
      if (Key == "Module Hierarchy")
        ExtraStr(ArgKey::ModuleHierarchy);
      continue;
    case 18:
      if (Key == "Process Group Name")
        ExtraStr(ArgKey::ProcessGroupName);
      else if (Key == "Record function id")
        Extra(ArgKey::RecordFunctionId);
      continue;
    case 19:
      if (Key == "Process Group Ranks")
        ExtraStr(ArgKey::ProcessGroupRanks);
      continue;
    case 21:
      if (Key == "wait_on_cuda_event_id")
        Extra(ArgKey::WaitOnEventId);
      continue;
    case 33:
      if (Key == "wait_on_cuda_event_record_corr_id")
        Extra(ArgKey::WaitOnEventCorr);
      continue;
    }
  }
}

void Reader::parseFields(od::object Obj, ParsedEvent &S) {
  for (auto Field : Obj) {
    std::string_view Key = keyOf(Field);
    od::value V = Field.value();
    if (Key == "ph") {
      std::string_view Ph = textOf(V);
      S.Ph = Ph.empty() ? 0 : Ph[0];
    } else if (Key == "cat") {
      S.CatText = text(V);
    } else if (Key == "name") {
      S.Name = text(V);
    } else if (Key == "pid") {
      S.Pid = text(V);
      S.HasPid = true;
    } else if (Key == "tid") {
      S.Tid = text(V);
      S.HasTid = true;
    } else if (Key == "ts") {
      S.Ts = text(V);
      S.HasTs = true;
    } else if (Key == "dur") {
      S.Dur = text(V);
      S.HasDur = true;
    } else if (Key == "id") {
      S.Id = text(V);
      S.HasId = true;
    } else if (Key == "bp") {
      S.Bp = text(V);
    } else if (Key == "args") {
      if (V.type() == od::json_type::object)
        parseArgs(V.get_object(), S);
    }
  }
}

} // namespace

std::string_view EventParser::str(od::value &V) { return textOf(V); }

std::optional<int64_t> EventParser::integer(od::value &V) {
  return integerOf(V);
}

void EventParser::parse(od::value V, ParsedEvent &E) {
  if (V.type() != od::json_type::object)
    throw ReadError{"an element of \"traceEvents\" is not an object"};
  E.ArgsBegin = E.ArgsEnd = static_cast<uint32_t>(Args->size());
  Reader{Pool, Batch, Args}.parseFields(V.get_object(), E);
  E.ArgsEnd = static_cast<uint32_t>(Args->size());
  // Work that needs no trace model, done here so that it runs where the
  // parsing does (possibly another thread). Which of these a commit uses,
  // and when an invalid time is an error, is up to the commit.
  E.Category = classifyCategory(E.CatText, E.LegacyCategory);
  if (E.HasTs)
    if (auto Ns = parseMicrosAsNanos(E.Ts)) {
      E.TsValid = true;
      E.TsNs = *Ns;
    }
  if (E.HasDur)
    if (auto Ns = parseMicrosAsNanos(E.Dur)) {
      E.DurValid = true;
      E.DurNs = *Ns;
    }
}

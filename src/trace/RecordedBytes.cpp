//===- RecordedBytes.cpp - The bytes an event's arguments describe --------===//

#include "trace/RecordedBytes.h"

#include "ops/Sizes.h"

using namespace dd;
using namespace dd::trace;
using ops::scalarTypeSize;
using ops::tensorInputBytes;

namespace {

/// recordedBytes's rules; \p Inputs sizes the tensor inputs from the
/// "Input Dims" and "Input type" arguments (the latter null when absent).
template <typename InputsFn>
std::optional<int64_t> bytesOf(const Trace &T, EventId E, InputsFn Inputs) {
  if (auto Size = T.intArg(E, ArgKey::InMsgSize); Size && *Size >= 0)
    return *Size;
  if (auto N = T.intArg(E, ArgKey::InMsgNelems); N && *N >= 0) {
    auto Type = T.strArg(E, ArgKey::Dtype);
    std::optional<int64_t> Size = Type ? scalarTypeSize(*Type) : std::nullopt;
    if (Size && *N <= INT64_MAX / *Size)
      return *N * *Size;
  }
  const Arg *Dims = T.arg(E, ArgKey::InputDims);
  if (!Dims || !Dims->IsString)
    return std::nullopt;
  const Arg *Types = T.arg(E, ArgKey::InputTypes);
  return Inputs(*Dims, Types && Types->IsString ? Types : nullptr);
}

} // namespace

std::optional<int64_t> trace::recordedBytes(const Trace &T, EventId E) {
  return bytesOf(T, E, [&](const Arg &Dims, const Arg *Types) {
    return tensorInputBytes(T.str(static_cast<StringId>(Dims.Value)),
                            Types ? T.str(static_cast<StringId>(Types->Value))
                                  : "");
  });
}

std::optional<int64_t> RecordedBytes::operator()(EventId E) {
  return bytesOf(T, E, [&](const Arg &Dims, const Arg *Types) {
    auto [It, New] =
        Inputs.try_emplace({Dims.Value, Types ? Types->Value : -1});
    if (New)
      It->second = tensorInputBytes(
          T.str(static_cast<StringId>(Dims.Value)),
          Types ? T.str(static_cast<StringId>(Types->Value)) : "");
    return It->second;
  });
}

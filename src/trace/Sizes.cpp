//===- Sizes.cpp - The bytes an event's recorded arguments describe -------===//

#include "trace/Sizes.h"

#include <cctype>
#include <climits>
#include <string>
#include <vector>

namespace dd::trace {

std::optional<int64_t> cppTypeSize(std::string_view Type) {
  // Tensor inputs are spelled as C++ types; scalar arguments are spelled
  // "Int", "Double", "Bool", "Scalar" and are not tensors.
  if (Type.substr(0, 5) == "c10::")
    Type.remove_prefix(5);
  if (Type == "float" || Type == "int" || Type == "unsigned int")
    return 4;
  if (Type == "Half" || Type == "BFloat16" || Type == "short int" ||
      Type == "short" || Type == "unsigned short")
    return 2;
  if (Type == "double" || Type == "long int" || Type == "long" ||
      Type == "long long" || Type == "unsigned long" ||
      Type == "complex<float>")
    return 8;
  if (Type == "unsigned char" || Type == "signed char" || Type == "char" ||
      Type == "bool" || Type.substr(0, 7) == "Float8_")
    return 1;
  if (Type == "complex<double>")
    return 16;
  return std::nullopt;
}

std::optional<int64_t> scalarTypeSize(std::string_view Type) {
  if (Type == "Float" || Type == "Int" || Type == "ComplexHalf" ||
      Type == "UInt32")
    return 4;
  if (Type == "Half" || Type == "BFloat16" || Type == "Short" ||
      Type == "UInt16")
    return 2;
  if (Type == "Double" || Type == "Long" || Type == "ComplexFloat" ||
      Type == "UInt64")
    return 8;
  if (Type == "Byte" || Type == "Char" || Type == "Bool" ||
      Type.substr(0, 7) == "Float8_")
    return 1;
  if (Type == "ComplexDouble")
    return 16;
  return std::nullopt;
}

namespace {

/// A minimal reader for the profiler's shape and type lists.
class ListReader {
public:
  explicit ListReader(std::string_view S) : S(S) {}

  void skipSpace() {
    while (P < S.size() && std::isspace(static_cast<unsigned char>(S[P])))
      ++P;
  }
  bool eat(char Ch) {
    skipSpace();
    if (P < S.size() && S[P] == Ch) {
      ++P;
      return true;
    }
    return false;
  }
  bool peek(char Ch) {
    skipSpace();
    return P < S.size() && S[P] == Ch;
  }
  bool atEnd() {
    skipSpace();
    return P == S.size();
  }
  std::optional<int64_t> integer() {
    skipSpace();
    size_t Begin = P;
    int64_t V = 0;
    while (P < S.size() && std::isdigit(static_cast<unsigned char>(S[P]))) {
      if (V > (INT64_MAX - 9) / 10)
        return std::nullopt;
      V = V * 10 + (S[P++] - '0');
    }
    if (P == Begin)
      return std::nullopt;
    return V;
  }
  std::optional<std::string> string() {
    if (!eat('"'))
      return std::nullopt;
    std::string Out;
    while (P < S.size() && S[P] != '"') {
      if (S[P] == '\\' && P + 1 < S.size())
        ++P;
      Out += S[P++];
    }
    if (P == S.size())
      return std::nullopt;
    ++P;
    return Out;
  }

private:
  std::string_view S;
  size_t P = 0;
};

/// One input's dims: a shape (a list of integers), or a list of shapes (a
/// tensor list). Elements per tensor, summed; Nested says it was a list.
struct InputShape {
  int64_t Elements = 0;
  bool Empty = true;  ///< "[]": a scalar argument or a 0-d tensor
  bool Nested = false;
};

std::optional<int64_t> shapeElements(ListReader &R, bool &Empty) {
  // After '[': integers up to ']'.
  int64_t N = 1;
  Empty = true;
  if (R.eat(']'))
    return 1;
  do {
    auto D = R.integer();
    if (!D)
      return std::nullopt;
    Empty = false;
    if (*D != 0 && N > INT64_MAX / *D)
      return std::nullopt;
    N *= *D;
  } while (R.eat(','));
  if (!R.eat(']'))
    return std::nullopt;
  return N;
}

std::optional<std::vector<InputShape>> readDims(std::string_view Json) {
  ListReader R(Json);
  std::vector<InputShape> Out;
  if (!R.eat('['))
    return std::nullopt;
  if (R.eat(']'))
    return Out;
  do {
    InputShape In;
    if (!R.eat('['))
      return std::nullopt;
    if (R.peek('[')) {
      In.Nested = true;
      In.Empty = false;
      do {
        if (!R.eat('['))
          return std::nullopt;
        bool E;
        auto N = shapeElements(R, E);
        if (!N)
          return std::nullopt;
        In.Elements += *N;
      } while (R.eat(','));
      if (!R.eat(']'))
        return std::nullopt;
    } else {
      auto N = shapeElements(R, In.Empty);
      if (!N)
        return std::nullopt;
      In.Elements = *N;
    }
    Out.push_back(In);
  } while (R.eat(','));
  if (!R.eat(']') || !R.atEnd())
    return std::nullopt;
  return Out;
}

std::vector<std::string> readTypes(std::string_view Json) {
  std::vector<std::string> Out;
  ListReader R(Json);
  if (!R.eat('[') || R.eat(']'))
    return Out;
  do {
    auto S = R.string();
    if (!S)
      return {};
    Out.push_back(std::move(*S));
  } while (R.eat(','));
  return Out;
}

} // namespace

std::optional<int64_t> tensorInputBytes(std::string_view DimsJson,
                                        std::string_view TypesJson) {
  auto Dims = readDims(DimsJson);
  if (!Dims)
    return std::nullopt;
  std::vector<std::string> Types = readTypes(TypesJson);
  bool Typed = !Types.empty();
  int64_t Total = 0;
  bool Any = false;
  for (size_t I = 0; I < Dims->size(); ++I) {
    const InputShape &In = (*Dims)[I];
    std::optional<int64_t> Size;
    if (Typed && I < Types.size())
      Size = cppTypeSize(Types[I]);
    if (!Size) {
      // Untyped traces and tensor lists: a shape is a tensor, of 4-byte
      // elements; an empty shape without a type is a scalar argument.
      if (In.Empty || (Typed && !In.Nested))
        continue;
      Size = 4;
    }
    if (In.Elements > INT64_MAX / *Size - Total)
      return std::nullopt;
    Total += In.Elements * *Size;
    Any = true;
  }
  if (!Any)
    return std::nullopt;
  return Total;
}

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

std::optional<int64_t> recordedBytes(const Trace &T, EventId E) {
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

} // namespace dd::trace

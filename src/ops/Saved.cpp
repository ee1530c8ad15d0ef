//===- Saved.cpp - What autograd keeps for an operator's backward ---------===//

#include "ops/Saved.h"
#include "ops/Sizes.h"

#include <cmath>
#include <string>
#include <vector>

namespace dd::ops {

namespace {

enum class Result {
  None,
  Same,
  Mask,
  NormStats,
  BatchStats,
  PoolIndices,
  AttentionOut,
  TotalWeight
};

constexpr uint32_t Pairwise = ~0u;

struct Row {
  std::string_view Name, GradFn;
  uint32_t Inputs;
  Result Saves;
};

constexpr Row Rows[] = {
#define DD_SAVED_OP(Name, GradFn, Inputs, Saves)                               \
  {Name, GradFn, Inputs, Result::Saves},
#include "ops/SavedTensors.def"
};

const Row *rowOf(std::string_view Op) {
  for (const Row &R : Rows)
    if (R.Name == Op)
      return &R;
  return nullptr;
}

/// One input as the trace records it: a tensor's elements and element
/// size, or not a tensor (a scalar, a list, an absent optional).
struct Input {
  bool Tensor = false;
  double Elements = 0;
  int64_t ElemSize = 4;
  std::vector<int64_t> Dims;
};

/// Max pooling's output elements from its input and "Concrete Inputs"
/// (kernel_size, stride, padding, dilation, ceil_mode after the input).
std::optional<double> poolOutput(const std::vector<int64_t> &In,
                                 const std::vector<std::string> &Concrete) {
  if (In.size() < 3 || Concrete.size() < 5)
    return std::nullopt;
  auto Arg = [&](size_t I) -> std::optional<std::vector<int64_t>> {
    auto V = concreteInts(Concrete[I]);
    return V ? perDim(*V, 2) : std::nullopt;
  };
  auto K = Arg(1), P = Arg(3), D = Arg(4);
  // An empty stride is the kernel's.
  auto S = Concrete[2] == "[]" ? K : Arg(2);
  bool Ceil = Concrete.size() > 5 && Concrete[5] == "True";
  if (!K || !S || !P || !D)
    return std::nullopt;
  double Out = 1;
  for (size_t I = 0; I < In.size() - 2; ++I)
    Out *= static_cast<double>(In[I]);
  for (size_t I = 0; I < 2; ++I) {
    int64_t Size = In[In.size() - 2 + I], St = (*S)[I];
    int64_t Span = Size + 2 * (*P)[I] - (*D)[I] * ((*K)[I] - 1) - 1;
    if (St <= 0 || Span < 0)
      return std::nullopt;
    double Len = static_cast<double>(Span) / static_cast<double>(St);
    Out *= (Ceil ? std::ceil(Len) : std::floor(Len)) + 1;
  }
  return Out;
}

} // namespace

std::string_view savedGradFn(std::string_view Op) {
  const Row *R = rowOf(Op);
  return R ? R->GradFn : std::string_view();
}

std::optional<SavedTensors> savedTensors(std::string_view Op,
                                         std::string_view DimsJson,
                                         std::string_view TypesJson,
                                         std::string_view ConcreteJson) {
  const Row *R = rowOf(Op);
  if (!R)
    return std::nullopt;
  auto Shapes = inputShapes(DimsJson);
  if (!Shapes)
    return std::nullopt;
  std::vector<std::string> Types = jsonStrings(TypesJson);
  std::vector<Input> In(Shapes->size());
  for (size_t I = 0; I < In.size(); ++I) {
    const std::vector<int64_t> &S = (*Shapes)[I];
    std::optional<int64_t> Size =
        I < Types.size()
            ? cppTypeSize(Types[I])
            : (S.empty() ? std::nullopt : std::optional<int64_t>(4));
    if (!Size)
      continue;
    In[I].Tensor = true;
    In[I].ElemSize = *Size;
    In[I].Dims = S;
    In[I].Elements = 1;
    for (int64_t D : S)
      In[I].Elements *= static_cast<double>(D);
  }
  double Bytes = 0;
  int32_t Count = 0;
  auto Save = [&](double Elements, double ElemSize) {
    Bytes += Elements * ElemSize;
    ++Count;
  };
  if (R->Inputs == Pairwise) {
    // Each operand where the other may need a gradient: a 0-d operand (a
    // wrapped number) needs none.
    if (In.size() < 2)
      return std::nullopt;
    for (size_t I = 0; I < 2; ++I)
      if (In[I].Tensor && In[1 - I].Tensor && !In[1 - I].Dims.empty())
        Save(In[I].Elements, In[I].ElemSize);
  } else {
    for (size_t I = 0; I < 32; ++I) {
      if (!(R->Inputs >> I & 1))
        continue;
      if (I >= In.size())
        return std::nullopt;
      if (In[I].Tensor) // an absent optional (no affine weight) saves none
        Save(In[I].Elements, In[I].ElemSize);
    }
  }
  if (R->Saves != Result::None && (In.empty() || !In[0].Tensor))
    return std::nullopt;
  const Input &First = In.empty() ? Input() : In[0];
  std::vector<std::string> Concrete = jsonStrings(ConcreteJson);
  switch (R->Saves) {
  case Result::None:
    break;
  case Result::Same:
    Save(First.Elements, First.ElemSize);
    break;
  case Result::Mask:
    Save(First.Elements, 1);
    break;
  case Result::NormStats: {
    // Rows: the elements over the normalised shape's (the weight's where
    // "Concrete Inputs" does not give it).
    double Norm = 0;
    if (auto N =
            Concrete.size() > 1 ? concreteInts(Concrete[1]) : std::nullopt) {
      Norm = 1;
      for (int64_t D : *N)
        Norm *= static_cast<double>(D);
    } else if (In.size() > 2 && In[2].Tensor) {
      Norm = In[2].Elements;
    }
    if (Norm <= 0)
      return std::nullopt;
    Save(First.Elements / Norm, 4);
    Save(First.Elements / Norm, 4);
    break;
  }
  case Result::BatchStats:
    if (First.Dims.size() < 2)
      return std::nullopt;
    Save(static_cast<double>(First.Dims[1]), 4);
    Save(static_cast<double>(First.Dims[1]), 4);
    break;
  case Result::PoolIndices: {
    auto Out = poolOutput(First.Dims, Concrete);
    if (!Out)
      return std::nullopt;
    Save(*Out, 8);
    break;
  }
  case Result::AttentionOut: {
    // query (B, H, L, D), value (B, H, S, Dv): the output B x H x L x Dv,
    // the log-sum-exp B x H x L floats, the random seed and offset.
    if (In.size() < 3 || First.Dims.size() != 4 || In[2].Dims.size() != 4)
      return std::nullopt;
    double Rows = First.Elements / static_cast<double>(First.Dims[3]);
    Save(Rows * static_cast<double>(In[2].Dims[3]), First.ElemSize);
    Save(Rows, 4);
    Save(1, 8);
    Save(1, 8);
    break;
  }
  case Result::TotalWeight:
    Save(1, 4);
    break;
  }
  if (!(Bytes >= 0) || Bytes > 9.0e18)
    return std::nullopt;
  return SavedTensors{static_cast<int64_t>(Bytes), Count};
}

} // namespace dd::ops

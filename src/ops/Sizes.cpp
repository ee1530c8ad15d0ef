//===- Sizes.cpp - The bytes and work recorded shapes describe -----------===//

#include "ops/Sizes.h"

#include <charconv>
#include <cmath>

#include <cctype>
#include <climits>
#include <string>
#include <utility>
#include <vector>

namespace dd::ops {

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
  bool Empty = true; ///< "[]": a scalar argument or a 0-d tensor
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

} // namespace

std::vector<std::string> jsonStrings(std::string_view Json) {
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

std::optional<std::vector<std::vector<int64_t>>>
inputShapes(std::string_view DimsJson) {
  ListReader R(DimsJson);
  std::vector<std::vector<int64_t>> Out;
  if (!R.eat('['))
    return std::nullopt;
  if (R.eat(']'))
    return Out;
  do {
    if (!R.eat('['))
      return std::nullopt;
    std::vector<int64_t> Shape;
    if (R.peek('[')) {
      // A tensor list: read past it, its shape left empty.
      int Depth = 1;
      while (Depth > 0 && !R.atEnd()) {
        if (R.eat('['))
          ++Depth;
        else if (R.eat(']'))
          --Depth;
        else if (!R.eat(',') && !R.integer())
          return std::nullopt;
      }
      if (Depth)
        return std::nullopt;
    } else if (!R.eat(']')) {
      do {
        auto D = R.integer();
        if (!D)
          return std::nullopt;
        Shape.push_back(*D);
      } while (R.eat(','));
      if (!R.eat(']'))
        return std::nullopt;
    }
    Out.push_back(std::move(Shape));
  } while (R.eat(','));
  if (!R.eat(']') || !R.atEnd())
    return std::nullopt;
  return Out;
}

std::optional<std::vector<double>> listElements(std::string_view DimsJson) {
  auto Dims = readDims(DimsJson);
  if (!Dims)
    return std::nullopt;
  std::vector<double> Out;
  Out.reserve(Dims->size());
  for (const InputShape &In : *Dims)
    Out.push_back(In.Nested ? double(In.Elements) : -1);
  return Out;
}

namespace {

/// 2 * Batch * M * K * N, none on overflow or a negative dimension. In
/// doubles: the dimensions come from the trace, and a damaged one must not
/// overflow anything on the way.
std::optional<int64_t> mulAdds(double Batch, double M, double K, double N) {
  if (Batch < 0 || M < 0 || K < 0 || N < 0)
    return std::nullopt;
  double F = 2.0 * Batch * M * K * N;
  if (!(F < 9e18))
    return std::nullopt;
  return static_cast<int64_t>(F);
}

/// The product of S[From, To), in a double; -1 where a dimension is
/// negative.
double product(const std::vector<int64_t> &S, size_t From, size_t To) {
  double P = 1;
  for (size_t I = From; I < To; ++I) {
    if (S[I] < 0)
      return -1;
    P *= double(S[I]);
  }
  return P;
}

/// A matrix multiply of Batch x (M x K) by (K x N): its FLOPs and its
/// product's Batch x M x N elements.
std::optional<OpWork> work(double Batch, double M, double K, double N) {
  auto F = mulAdds(Batch, M, K, N);
  if (!F)
    return std::nullopt;
  OpWork W{*F, Batch * M * N};
  W.Align = 16;
  for (double D : {M, K, N})
    while (W.Align > 1 && std::fmod(D, W.Align) != 0)
      W.Align /= 2;
  return W;
}

} // namespace

std::optional<OpWork>
matmulWork(std::string_view Op,
           const std::vector<std::vector<int64_t>> &Shapes) {
  auto At = [&](size_t I) -> const std::vector<int64_t> * {
    return I < Shapes.size() ? &Shapes[I] : nullptr;
  };
  // The two multiplied operands: after the added one in addmm, baddbmm.
  size_t First = Op == "aten::addmm" || Op == "aten::baddbmm" ? 1 : 0;
  const std::vector<int64_t> *A = At(First), *B = At(First + 1);
  if (!A || !B)
    return std::nullopt;
  if (Op == "aten::mm" || Op == "aten::addmm") {
    if (A->size() != 2 || B->size() != 2 || (*A)[1] != (*B)[0])
      return std::nullopt;
    return work(1, (*A)[0], (*A)[1], (*B)[1]);
  }
  if (Op == "aten::bmm" || Op == "aten::baddbmm") {
    if (A->size() != 3 || B->size() != 3 || (*A)[0] != (*B)[0] ||
        (*A)[2] != (*B)[1])
      return std::nullopt;
    return work((*A)[0], (*A)[1], (*A)[2], (*B)[2]);
  }
  if (Op == "aten::linear") {
    // input [..., K], weight [N, K].
    if (A->empty() || B->size() != 2 || A->back() != (*B)[1])
      return std::nullopt;
    return work(product(*A, 0, A->size() - 1), 1, A->back(), (*B)[0]);
  }
  if (Op == "aten::matmul") {
    if (A->empty() || B->empty())
      return std::nullopt;
    // Vectors are matrices of one row (A) or one column (B).
    std::vector<int64_t> X = *A, Y = *B;
    if (X.size() == 1)
      X.insert(X.begin(), 1);
    if (Y.size() == 1)
      Y.push_back(1);
    int64_t K = X.back();
    if (Y[Y.size() - 2] != K)
      return std::nullopt;
    // Batch dimensions broadcast: the larger of each pair.
    size_t BX = X.size() - 2, BY = Y.size() - 2;
    double Batch = 1;
    for (size_t I = 0; I < std::max(BX, BY); ++I) {
      int64_t DX = I < BX ? X[BX - 1 - I] : 1;
      int64_t DY = I < BY ? Y[BY - 1 - I] : 1;
      if (DX < 0 || DY < 0)
        return std::nullopt;
      Batch *= double(std::max(DX, DY));
    }
    return work(Batch, X[X.size() - 2], K, Y.back());
  }
  return std::nullopt;
}

std::optional<int64_t>
matmulFlops(std::string_view Op,
            const std::vector<std::vector<int64_t>> &Shapes) {
  auto W = matmulWork(Op, Shapes);
  return W ? std::optional<int64_t>(W->Flops) : std::nullopt;
}

std::optional<std::vector<int64_t>> concreteInts(std::string_view S) {
  if (S == "True" || S == "False")
    return std::vector<int64_t>{S == "True" ? 1 : 0};
  std::vector<int64_t> Out;
  bool List = !S.empty() && S.front() == '[';
  if (List) {
    if (S.back() != ']')
      return std::nullopt;
    S = S.substr(1, S.size() - 2);
  }
  while (!S.empty()) {
    while (!S.empty() && S.front() == ' ')
      S.remove_prefix(1);
    size_t End = S.find(',');
    std::string_view Tok = S.substr(0, End);
    while (!Tok.empty() && Tok.back() == ' ')
      Tok.remove_suffix(1);
    if (Tok == "True" || Tok == "False") {
      Out.push_back(Tok == "True");
    } else {
      int64_t V = 0;
      auto [P, Ec] = std::from_chars(Tok.data(), Tok.data() + Tok.size(), V);
      if (Ec != std::errc() || P != Tok.data() + Tok.size())
        return std::nullopt;
      Out.push_back(V);
    }
    if (End == std::string_view::npos)
      break;
    S.remove_prefix(End + 1);
  }
  if (Out.empty() || (!List && Out.size() != 1))
    return std::nullopt;
  return Out;
}

std::optional<std::vector<int64_t>> perDim(const std::vector<int64_t> &V,
                                           size_t Dims) {
  if (V.size() == Dims)
    return V;
  if (V.size() == 1)
    return std::vector<int64_t>(Dims, V[0]);
  return std::nullopt;
}

std::optional<OpWork> convWork(std::string_view Op,
                               const std::vector<std::vector<int64_t>> &Shapes,
                               std::string_view ConcreteJson) {
  bool Backward = Op == "aten::convolution_backward";
  if (!Backward && Op != "aten::convolution")
    return std::nullopt;
  std::vector<std::string> Concrete = jsonStrings(ConcreteJson);
  auto Ints = [&](size_t I) -> std::optional<std::vector<int64_t>> {
    if (I >= Concrete.size())
      return std::nullopt;
    return concreteInts(Concrete[I]);
  };
  // Positions of the arguments in each operator's schema.
  size_t X = Backward ? 1 : 0, W = Backward ? 2 : 1;
  size_t Stride = Backward ? 4 : 3, Transposed = Backward ? 7 : 6,
         Groups = Backward ? 9 : 8;
  if (W >= Shapes.size())
    return std::nullopt;
  const std::vector<int64_t> &In = Shapes[X], &Wt = Shapes[W];
  if (In.size() < 3 || Wt.size() != In.size())
    return std::nullopt;
  size_t Spatial = In.size() - 2;
  auto T = Ints(Transposed), G = Ints(Groups);
  if (!T || T->size() != 1 || (*T)[0] != 0 || !G || G->size() != 1 ||
      (*G)[0] < 1)
    return std::nullopt;
  int64_t N = In[0], K = Wt[0], CPerGroup = Wt[1];
  if (double(In[1]) != double(CPerGroup) * double((*G)[0]))
    return std::nullopt;
  // The output's spatial size: grad_output's in backward, else from the
  // input, kernel, stride, padding and dilation (in doubles: no value the
  // trace gives can overflow).
  double OutSize = 1;
  if (Backward) {
    const std::vector<int64_t> &GO = Shapes[0];
    if (GO.size() != In.size() || GO[0] != N || GO[1] != K)
      return std::nullopt;
    OutSize = product(GO, 2, GO.size());
  } else {
    auto S = Ints(Stride), P = Ints(Stride + 1), D = Ints(Stride + 2);
    if (!S || !P || !D)
      return std::nullopt;
    auto SD = perDim(*S, Spatial), PD = perDim(*P, Spatial),
         DD = perDim(*D, Spatial);
    if (!SD || !PD || !DD)
      return std::nullopt;
    for (size_t I = 0; I < Spatial; ++I) {
      double Span = double(In[2 + I]) + 2.0 * double((*PD)[I]) -
                    double((*DD)[I]) * (double(Wt[2 + I]) - 1) - 1;
      if ((*SD)[I] < 1 || (*PD)[I] < 0 || (*DD)[I] < 1 || Span < 0)
        return std::nullopt;
      OutSize *= std::floor(Span / double((*SD)[I])) + 1;
    }
  }
  auto Once = mulAdds(N, K, OutSize,
                      product(Wt, 1, Wt.size())); // (C / groups) x kernel
  if (!Once)
    return std::nullopt;
  if (!Backward)
    return OpWork{*Once, double(N) * double(K) * OutSize};
  // output_mask: [input gradient, weight gradient, bias gradient]; each
  // gradient is the size of what it is the gradient of.
  auto Mask = Ints(10);
  if (!Mask || Mask->size() < 2)
    return std::nullopt;
  int64_t Times = ((*Mask)[0] != 0) + ((*Mask)[1] != 0);
  if (Times > 1 && *Once > INT64_MAX / Times)
    return std::nullopt;
  double Out = ((*Mask)[0] != 0 ? product(In, 0, In.size()) : 0) +
               ((*Mask)[1] != 0 ? product(Wt, 0, Wt.size()) : 0);
  return OpWork{*Once * Times, Out};
}

std::optional<int64_t>
convFlops(std::string_view Op, const std::vector<std::vector<int64_t>> &Shapes,
          std::string_view ConcreteJson) {
  auto W = convWork(Op, Shapes, ConcreteJson);
  return W ? std::optional<int64_t>(W->Flops) : std::nullopt;
}

namespace {

enum class Pass { Forward, Backward };
enum class Layout { BHLD, BLHD };
enum class Stats { Moments, Rms };

struct AttentionOp {
  std::string_view Name;
  Layout L;
  size_t Causal;
  Pass P;
};
struct NormOp {
  std::string_view Name;
  Stats S;
  size_t Input, Weight;
  Pass P;
};
struct SoftmaxOp {
  std::string_view Name;
  Pass P;
};

constexpr AttentionOp AttentionOps[] = {
#define DD_ATTENTION_OP(Name, L, Causal, P) {Name, Layout::L, Causal, Pass::P},
#include "ops/OpWork.def"
};
constexpr NormOp NormOps[] = {
#define DD_NORM_OP(Name, S, Input, Weight, P)                                  \
  {Name, Stats::S, Input, Weight, Pass::P},
#include "ops/OpWork.def"
};
struct EmbeddingOp {
  std::string_view Name;
  size_t NumWeights;
  Pass P;
};
constexpr EmbeddingOp EmbeddingOps[] = {
#define DD_EMBEDDING_OP(Name, NumWeights, P) {Name, NumWeights, Pass::P},
#include "ops/OpWork.def"
};
constexpr SoftmaxOp SoftmaxOps[] = {
#define DD_SOFTMAX_OP(Name, P) {Name, Pass::P},
#include "ops/OpWork.def"
};

enum class Written { Broadcast, InPlace, Overwrite };
struct PointwiseOp {
  std::string_view Name;
  int Flops;
  Written O;
  size_t Args;
};
constexpr PointwiseOp PointwiseOps[] = {
#define DD_POINTWISE_OP(Name, Flops, O, Args) {Name, Flops, Written::O, Args},
#include "ops/OpWork.def"
};
struct ReductionOp {
  std::string_view Name;
  int Flops;
  size_t Dim;
};
constexpr ReductionOp ReductionOps[] = {
#define DD_REDUCTION_OP(Name, Flops, Dim) {Name, Flops, Dim},
#include "ops/OpWork.def"
};
struct ListOp {
  std::string_view Name;
  int Flops;
  uint64_t Reads, Writes;
};
constexpr ListOp ListOps[] = {
#define DD_LIST_OP(Name, Flops, Reads, Writes) {Name, Flops, Reads, Writes},
#include "ops/OpWork.def"
};

template <typename Entry, size_t N>
const Entry *lookup(const Entry (&Table)[N], std::string_view Op) {
  for (const Entry &E : Table)
    if (E.Name == Op)
      return &E;
  return nullptr;
}

/// \p Flops as an OpWork writing \p Out elements; none where the FLOPs are
/// negative or do not fit.
std::optional<OpWork> workOf(double Flops, double Out) {
  if (!(Flops >= 0 && Flops < 9e18) || !(Out >= 0))
    return std::nullopt;
  return OpWork{static_cast<int64_t>(Flops), Out};
}

} // namespace

std::optional<OpWork>
attentionWork(std::string_view Op,
              const std::vector<std::vector<int64_t>> &Shapes,
              std::string_view ConcreteJson) {
  const AttentionOp *A = lookup(AttentionOps, Op);
  if (!A)
    return std::nullopt;
  bool Backward = false;
  switch (A->P) {
  case Pass::Forward:
    break;
  case Pass::Backward:
    Backward = true;
    break;
  }
  size_t First = Backward ? 1 : 0; // after grad_out
  if (First + 2 >= Shapes.size())
    return std::nullopt;
  const std::vector<int64_t> &Q = Shapes[First], &K = Shapes[First + 1],
                             &V = Shapes[First + 2];
  // Four dimensions each; a varlen batch packs its sequences into three,
  // whose lengths the trace does not give.
  if (Q.size() != 4 || K.size() != 4 || V.size() != 4)
    return std::nullopt;
  size_t Seq = 2, Heads = 1;
  switch (A->L) {
  case Layout::BHLD:
    break;
  case Layout::BLHD:
    std::swap(Seq, Heads);
    break;
  }
  // Key and value share a length; query and key a head dimension; all
  // three the batch. Key and value may have fewer heads (grouped queries).
  if (K[0] != Q[0] || V[0] != Q[0] || K[3] != Q[3] || V[Seq] != K[Seq])
    return std::nullopt;
  double B = double(Q[0]), H = double(Q[Heads]), Lq = double(Q[Seq]),
         Lk = double(K[Seq]), D = double(Q[3]), Dv = double(V[3]);
  double Flops = 2.0 * B * H * Lq * Lk * (D + Dv);
  std::vector<std::string> Concrete = jsonStrings(ConcreteJson);
  if (A->Causal < Concrete.size())
    if (auto C = concreteInts(Concrete[A->Causal]);
        C && C->size() == 1 && (*C)[0] != 0)
      Flops /= 2;
  if (!Backward)
    return workOf(Flops, B * H * Lq * Dv);
  return workOf(2.5 * Flops,
                product(Q, 0, 4) + product(K, 0, 4) + product(V, 0, 4));
}

std::optional<OpWork>
normWork(std::string_view Op, const std::vector<std::vector<int64_t>> &Shapes) {
  const NormOp *N = lookup(NormOps, Op);
  if (!N || N->Input >= Shapes.size() || Shapes[N->Input].empty())
    return std::nullopt;
  double Elements = product(Shapes[N->Input], 0, Shapes[N->Input].size());
  // An undefined optional weight is recorded as an empty shape.
  bool Affine = N->Weight < Shapes.size() && !Shapes[N->Weight].empty();
  double Weights =
      Affine ? product(Shapes[N->Weight], 0, Shapes[N->Weight].size()) : 0;
  double PerElement = 0, WeightGrads = 0;
  switch (N->S) {
  case Stats::Moments:
    // mean: add; variance: subtract, square, add; normalise: multiply by
    // the inverse deviation; scale and shift: multiply, add.
    PerElement = Affine ? 7 : 5;
    WeightGrads = 2 * Weights; // scale and shift
    break;
  case Stats::Rms:
    // square, add; multiply by the inverse root mean square; scale.
    PerElement = Affine ? 4 : 3;
    WeightGrads = Weights;
    break;
  }
  if (Elements < 0 || Weights < 0)
    return std::nullopt;
  switch (N->P) {
  case Pass::Forward:
    return workOf(PerElement * Elements, Elements);
  case Pass::Backward:
    return workOf(2 * PerElement * Elements, Elements + WeightGrads);
  }
  return std::nullopt;
}

std::optional<OpWork>
softmaxWork(std::string_view Op,
            const std::vector<std::vector<int64_t>> &Shapes) {
  const SoftmaxOp *S = lookup(SoftmaxOps, Op);
  if (!S || Shapes.empty() || Shapes[0].empty())
    return std::nullopt;
  double Elements = product(Shapes[0], 0, Shapes[0].size());
  if (Elements < 0)
    return std::nullopt;
  switch (S->P) {
  case Pass::Forward:
    // max, subtract, exponentiate, sum, divide (log-softmax: subtract the
    // sum's logarithm).
    return workOf(5 * Elements, Elements);
  case Pass::Backward:
    // softmax: y * (dy - sum(dy * y)); log-softmax: dy - exp(y) * sum(dy).
    return workOf(4 * Elements, Elements);
  }
  return std::nullopt;
}

std::optional<OpWork>
embeddingWork(std::string_view Op,
              const std::vector<std::vector<int64_t>> &Shapes,
              std::string_view ConcreteJson) {
  const EmbeddingOp *E = lookup(EmbeddingOps, Op);
  if (!E || Shapes.size() < 2 || Shapes[0].empty())
    return std::nullopt;
  const std::vector<int64_t> &Indices = Shapes[1];
  double Lookups = product(Indices, 0, Indices.size());
  switch (E->P) {
  case Pass::Forward: {
    // weight [num_weights, D]: a row of D per index.
    if (Shapes[0].size() != 2)
      return std::nullopt;
    double Rows = Lookups * double(Shapes[0][1]);
    OpWork W{0, Rows};
    W.InElements = Rows + Lookups;
    return W;
  }
  case Pass::Backward: {
    // grad_output [..., D], one row per index.
    const std::vector<int64_t> &Grad = Shapes[0];
    double D = double(Grad.back());
    std::vector<std::string> Concrete = jsonStrings(ConcreteJson);
    std::optional<std::vector<int64_t>> Weights =
        E->NumWeights < Concrete.size() ? concreteInts(Concrete[E->NumWeights])
                                        : std::nullopt;
    if (!Weights || Weights->size() != 1 || (*Weights)[0] < 0 ||
        product(Grad, 0, Grad.size()) != Lookups * D)
      return std::nullopt;
    return workOf(Lookups * D, double((*Weights)[0]) * D);
  }
  }
  return std::nullopt;
}

std::optional<OpWork>
pointwiseWork(std::string_view Op,
              const std::vector<std::vector<int64_t>> &Shapes) {
  const PointwiseOp *P = lookup(PointwiseOps, Op);
  if (!P || Shapes.empty())
    return std::nullopt;
  double Elements = 0;
  uint64_t Unread = 0;
  switch (P->O) {
  case Written::Broadcast: {
    // The out= overload writes the tensor recorded after the arguments.
    if (Shapes.size() == P->Args + 1 && !Shapes[P->Args].empty() &&
        P->Args < 64) {
      const std::vector<int64_t> &Dest = Shapes[P->Args];
      Elements = product(Dest, 0, Dest.size());
      Unread = uint64_t(1) << P->Args;
      break;
    }
    // Aligned from the last dimension; a dimension of 1 stretches. Scalars
    // and 0-d tensors (an empty shape) broadcast to anything.
    std::vector<int64_t> Shape;
    for (const std::vector<int64_t> &S : Shapes) {
      if (S.size() > Shape.size())
        Shape.insert(Shape.begin(), S.size() - Shape.size(), 1);
      for (size_t I = 0; I < S.size(); ++I) {
        int64_t &D = Shape[Shape.size() - S.size() + I];
        int64_t E = S[I];
        if (E < 0)
          return std::nullopt;
        if (D == 1)
          D = E;
        else if (E != 1 && E != D)
          return std::nullopt;
      }
    }
    Elements = product(Shape, 0, Shape.size());
    break;
  }
  case Written::Overwrite:
    Unread = 1;
    [[fallthrough]];
  case Written::InPlace:
    Elements = product(Shapes[0], 0, Shapes[0].size());
    break;
  }
  auto W = workOf(double(P->Flops) * Elements, Elements);
  if (W)
    W->Unread = Unread;
  return W;
}

std::optional<OpWork>
reductionWork(std::string_view Op,
              const std::vector<std::vector<int64_t>> &Shapes,
              std::string_view ConcreteJson) {
  const ReductionOp *R = lookup(ReductionOps, Op);
  if (!R || Shapes.empty())
    return std::nullopt;
  const std::vector<int64_t> &In = Shapes[0];
  double Elements = product(In, 0, In.size());
  if (Elements < 0)
    return std::nullopt;
  // The dimensions kept; none where all are reduced.
  std::vector<bool> Reduced(In.size(), true);
  std::vector<std::string> Concrete = jsonStrings(ConcreteJson);
  if (Shapes.size() > R->Dim + 1 && R->Dim < Concrete.size() &&
      !Concrete[R->Dim].empty() && Concrete[R->Dim] != "[]") {
    // "[-1, -2]", "[0]" or "1": counted from the end where negative.
    auto Dims = concreteInts(Concrete[R->Dim]);
    if (!Dims)
      return std::nullopt;
    Reduced.assign(In.size(), false);
    auto Rank = static_cast<int64_t>(In.size());
    for (int64_t D : *Dims) {
      int64_t At = D < 0 ? D + Rank : D;
      if (At < 0 || At >= std::max<int64_t>(Rank, 1))
        return std::nullopt;
      if (At < Rank)
        Reduced[static_cast<size_t>(At)] = true;
    }
  }
  double Kept = 1;
  for (size_t I = 0; I < In.size(); ++I)
    if (!Reduced[I])
      Kept *= double(In[I]);
  return workOf(double(R->Flops) * Elements, Kept);
}

std::optional<OpWork> listWork(std::string_view Op,
                               const std::vector<double> &Lists) {
  const ListOp *L = lookup(ListOps, Op);
  if (!L || Lists.empty() || Lists[0] < 0)
    return std::nullopt;
  double Out = 0;
  uint64_t Unread = 0;
  for (size_t I = 0; I < Lists.size() && I < 64; ++I) {
    uint64_t Bit = uint64_t(1) << I;
    if ((L->Writes & Bit) && Lists[I] > 0)
      Out += Lists[I];
    if (!(L->Reads & Bit) && Lists[I] >= 0)
      Unread |= Bit;
  }
  auto W = workOf(double(L->Flops) * Lists[0], Out);
  if (W)
    W->Unread = Unread;
  return W;
}

bool isPointwiseWorkOp(std::string_view Op) {
  return lookup(PointwiseOps, Op) || lookup(ReductionOps, Op) ||
         lookup(ListOps, Op);
}

std::optional<OpWork> opWork(std::string_view Op,
                             const std::vector<std::vector<int64_t>> &Shapes,
                             std::string_view ConcreteJson,
                             const std::vector<double> &Lists) {
  if (auto W = matmulWork(Op, Shapes))
    return W;
  if (auto W = convWork(Op, Shapes, ConcreteJson))
    return W;
  if (auto W = attentionWork(Op, Shapes, ConcreteJson))
    return W;
  if (auto W = normWork(Op, Shapes))
    return W;
  if (auto W = softmaxWork(Op, Shapes))
    return W;
  if (auto W = embeddingWork(Op, Shapes, ConcreteJson))
    return W;
  if (auto W = pointwiseWork(Op, Shapes))
    return W;
  if (auto W = reductionWork(Op, Shapes, ConcreteJson))
    return W;
  return listWork(Op, Lists);
}

int64_t elementSize(std::string_view TypesJson) {
  for (const std::string &T : jsonStrings(TypesJson))
    if (auto Size = cppTypeSize(T))
      return *Size;
  return 4;
}

uint8_t inputPrecision(std::string_view TypesJson) {
  for (const std::string &T : jsonStrings(TypesJson)) {
    std::string_view Type = T;
    if (Type.substr(0, 5) == "c10::")
      Type.remove_prefix(5);
    if (Type == "float" || Type == "double")
      return 1;
    if (Type == "Half" || Type == "BFloat16")
      return 2;
    if (Type.substr(0, 7) == "Float8_")
      return 3;
  }
  return 0;
}

namespace {

/// Operators whose output is small beside their input: a reduction's
/// output is not counted in the bytes it moves.
bool isReduction(std::string_view Op) {
  for (std::string_view R :
       {"aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::max",
        "aten::min", "aten::argmax", "aten::argmin", "aten::norm",
        "aten::linalg_vector_norm", "aten::var", "aten::std", "aten::prod",
        "aten::all", "aten::any", "aten::_foreach_norm"})
    if (Op == R)
      return true;
  return false;
}

} // namespace

std::optional<int64_t>
movedBytes(std::string_view Op, const std::vector<std::vector<int64_t>> &Shapes,
           std::optional<OpWork> Work, int64_t InputBytes, int64_t ElemSize) {
  if (InputBytes < 0 || ElemSize <= 0)
    return std::nullopt;
  double Out = 0;
  if (Work) {
    Out = Work->OutElements;
  } else if (!isReduction(Op)) {
    for (const std::vector<int64_t> &S : Shapes)
      if (!S.empty())
        Out = std::max(Out, product(S, 0, S.size()));
  }
  double In = Work && Work->InElements >= 0
                  ? Work->InElements * double(ElemSize)
                  : double(InputBytes);
  double Total = In + Out * double(ElemSize);
  if (!(Total >= 0 && Total < 9e18))
    return std::nullopt;
  return static_cast<int64_t>(Total);
}

std::optional<int64_t> tensorInputBytes(std::string_view DimsJson,
                                        std::string_view TypesJson,
                                        uint64_t Skip) {
  auto Dims = readDims(DimsJson);
  if (!Dims)
    return std::nullopt;
  std::vector<std::string> Types = jsonStrings(TypesJson);
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
    Any = true;
    // A tensor written, not read (copy_'s destination).
    if (I < 64 && (Skip >> I & 1))
      continue;
    if (In.Elements > INT64_MAX / *Size - Total)
      return std::nullopt;
    Total += In.Elements * *Size;
  }
  if (!Any)
    return std::nullopt;
  return Total;
}

std::optional<std::vector<int32_t>> rankList(std::string_view S) {
  // Digits only ("True" is a concrete argument's, not a rank).
  if (S.empty() || S.front() != '[' ||
      S.find_first_not_of("0123456789[], ") != std::string_view::npos)
    return std::nullopt;
  if (S.find_first_not_of("[] ") == std::string_view::npos)
    return std::vector<int32_t>{};
  auto Ints = concreteInts(S);
  if (!Ints)
    return std::nullopt;
  std::vector<int32_t> Out;
  for (int64_t V : *Ints) {
    if (V > INT32_MAX)
      return std::nullopt;
    Out.push_back(static_cast<int32_t>(V));
  }
  return Out;
}

} // namespace dd::ops

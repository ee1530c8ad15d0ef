#include "ops/Sizes.h"
#include "ops/Saved.h"
#include "trace/RecordedBytes.h"
#include "trace/TraceReader.h"

#include <doctest/doctest.h>

#include <string>

using namespace dd::ops;
using namespace dd::trace;

TEST_CASE("element sizes of the profiler's type spellings") {
  CHECK(cppTypeSize("float") == 4);
  CHECK(cppTypeSize("c10::Half") == 2);
  CHECK(cppTypeSize("c10::BFloat16") == 2);
  CHECK(cppTypeSize("long int") == 8);
  CHECK(cppTypeSize("double") == 8);
  CHECK(cppTypeSize("unsigned char") == 1);
  CHECK(cppTypeSize("bool") == 1);
  CHECK(cppTypeSize("c10::Float8_e4m3fn") == 1);
  // Scalar arguments are spelled as IValue tags: not tensors.
  CHECK_FALSE(cppTypeSize("Int").has_value());
  CHECK_FALSE(cppTypeSize("Double").has_value());
  CHECK_FALSE(cppTypeSize("Scalar").has_value());
  CHECK_FALSE(cppTypeSize("GenericList").has_value());
  CHECK_FALSE(cppTypeSize("").has_value());
  // Collectives spell ScalarType names.
  CHECK(scalarTypeSize("Float") == 4);
  CHECK(scalarTypeSize("Long") == 8);
  CHECK(scalarTypeSize("BFloat16") == 2);
  CHECK(scalarTypeSize("Int") == 4);
  CHECK_FALSE(scalarTypeSize("float").has_value());
}

TEST_CASE("tensor inputs: typed shapes, scalars skipped") {
  // addmm(bias[1000], x[32,2048], w[2048,1000], beta, alpha)
  CHECK(
      tensorInputBytes("[[1000], [32, 2048], [2048, 1000], [], []]",
                       R"(["float", "float", "float", "Scalar", "Scalar"])") ==
      4 * (1000 + 32 * 2048 + 2048 * 1000));
  CHECK(tensorInputBytes("[[4, 4]]", R"(["c10::Half"])") == 32);
  // A 0-d tensor is one element.
  CHECK(tensorInputBytes("[[]]", R"(["float"])") == 4);
  // Only non-tensor arguments: no tensor bytes to report.
  CHECK_FALSE(tensorInputBytes("[[], []]", R"(["Int", "Scalar"])").has_value());
  CHECK(tensorInputBytes("[[8], [], []]", R"(["float", "Int", "Bool"])") == 32);
  CHECK_FALSE(tensorInputBytes("[[]]", R"([""])").has_value());
}

TEST_CASE("tensor inputs: untyped traces and tensor lists count 4 bytes") {
  // The 2021 schema records "Input dims" without types.
  CHECK(tensorInputBytes("[[1000, 2048]]", "") == 4 * 1000 * 2048);
  CHECK(tensorInputBytes("[[1000, 2048], []]", "[]") == 4 * 1000 * 2048);
  // A tensor list: a list of shapes.
  CHECK(tensorInputBytes("[[[2, 3], [4]], []]",
                         R"(["GenericList", "Scalar"])") == 4 * (6 + 4));
}

TEST_CASE("tensor inputs: malformed or overflowing shapes are unknown") {
  CHECK_FALSE(tensorInputBytes("[[1000, ", "").has_value());
  CHECK_FALSE(tensorInputBytes("not json", "").has_value());
  CHECK_FALSE(tensorInputBytes("[[1000] [3]]", "").has_value());
  CHECK_FALSE(
      tensorInputBytes("[[9223372036854775807, 9223372036854775807]]", "")
          .has_value());
  CHECK_FALSE(tensorInputBytes("[[-3]]", "").has_value());
}

TEST_CASE("recorded bytes of real operators and collectives") {
  auto T = readTrace(std::string(DD_TEST_DATA) +
                     "/kineto/resnet50_v100_workers0.pt.trace.json.gz");
  REQUIRE(T);
  int64_t Grads = 0, Sized = 0, Total = 0;
  for (EventId E = 0; E < T->numEvents(); ++E)
    if (T->name(E) == "torch::autograd::AccumulateGrad") {
      ++Grads;
      if (auto B = recordedBytes(*T, E)) {
        ++Sized;
        Total += *B;
      }
    }
  // Six steps of ResNet-50's 161 parameters, 25,557,032 floats each step.
  CHECK(Grads == 6 * 161);
  CHECK(Sized == Grads);
  CHECK(Total == 6 * int64_t(25557032) * 4);

  auto D =
      readTrace(std::string(DD_TEST_DATA) + "/hta/ddp2_a100_nccl_data.json.gz");
  REQUIRE(D);
  int64_t AllReduced = 0;
  for (EventId E = 0; E < D->numEvents(); ++E)
    if (D->Kind[E] == EventKind::Kernel &&
        D->name(E).substr(0, 22) == "ncclKernel_AllReduce_R")
      AllReduced += recordedBytes(*D, E).value_or(0);
  // Three steps of five buckets holding ResNet-50's gradients.
  CHECK(AllReduced == 3 * int64_t(25557032) * 4);

  // Sizes read once per distinct shape are the sizes read each time.
  for (const auto &Trace : {&*T, &*D}) {
    RecordedBytes Once(*Trace);
    size_t Sized = 0;
    for (EventId E = 0; E < Trace->numEvents(); ++E) {
      auto B = recordedBytes(*Trace, E);
      CHECK(Once(E) == B);
      Sized += B.has_value();
    }
    CHECK(Sized > 0); // not a comparison of nothing
  }
}

namespace {
std::optional<int64_t> flopsOf(std::string_view Op, std::string_view Dims) {
  auto Shapes = dd::ops::inputShapes(Dims);
  REQUIRE(Shapes.has_value());
  return dd::ops::matmulFlops(Op, *Shapes);
}
} // namespace

TEST_CASE("matrix multiplies' FLOPs from shapes recorded in shipped traces") {
  // kineto/resnet50_v100_workers0: the classifier, batch 32, 2048 -> 1000.
  CHECK(flopsOf("aten::addmm", "[[1000], [32, 2048], [2048, 1000], [], []]") ==
        2LL * 32 * 2048 * 1000);
  // Its weight gradient in backward.
  CHECK(flopsOf("aten::mm", "[[32, 1000], [1000, 2048]]") ==
        2LL * 32 * 1000 * 2048);
  // tracelens/h100_qwen0.5b_inference: a projection of 16 x 559 tokens.
  CHECK(flopsOf("aten::linear", "[[16, 559, 1024], [1024, 1024], [1024]]") ==
        2LL * 16 * 559 * 1024 * 1024);
  // ... and attention scores of one head against 559 keys.
  CHECK(flopsOf("aten::bmm", "[[1, 32, 1], [1, 1, 559]]") == 2LL * 32 * 559);
  CHECK(flopsOf("aten::matmul", "[[1, 32, 1], [1, 1, 559]]") == 2LL * 32 * 559);
  // astra_sim/megatron_tp8: a sequence-parallel GEMM (batch dims flatten)
  // and attention's baddbmm (the added tensor first) and bmm.
  CHECK(flopsOf("aten::matmul", "[[2048, 4, 4096], [4096, 1536]]") ==
        2LL * 2048 * 4 * 4096 * 1536);
  CHECK(flopsOf("aten::baddbmm",
                "[[32, 2048, 2048], [32, 2048, 64], [32, 64, 2048], [], []]") ==
        2LL * 32 * 2048 * 64 * 2048);
  CHECK(flopsOf("aten::bmm", "[[32, 2048, 2048], [32, 2048, 64]]") ==
        2LL * 32 * 2048 * 2048 * 64);
}

TEST_CASE("matrix multiplies' FLOPs: shapes that do not multiply, and other "
          "operators") {
  CHECK_FALSE(flopsOf("aten::mm", "[[32, 1000], [999, 2048]]").has_value());
  CHECK_FALSE(flopsOf("aten::add", "[[32, 1000], [32, 1000]]").has_value());
  CHECK_FALSE(flopsOf("aten::bmm", "[[2, 3, 4], [3, 4, 5]]").has_value());
  CHECK_FALSE(dd::ops::inputShapes("[[1, 2], [3").has_value());
  // A tensor list's shape is left empty.
  auto S = dd::ops::inputShapes("[[[1, 2], [3]], [4, 5], []]");
  REQUIRE(S.has_value());
  CHECK(S->size() == 3);
  CHECK((*S)[0].empty());
  CHECK((*S)[1] == std::vector<int64_t>{4, 5});
}

namespace {
std::optional<int64_t> convOf(std::string_view Op, std::string_view Dims,
                              std::string_view Concrete) {
  auto Shapes = dd::ops::inputShapes(Dims);
  REQUIRE(Shapes.has_value());
  return dd::ops::convFlops(Op, *Shapes, Concrete);
}
} // namespace

TEST_CASE("convolutions' FLOPs from shapes and concrete arguments") {
  // groundtruth/resnet50_baseline (torch 2.11): the stem, 7x7 stride 2
  // padding 3 on 224x224, batch 64: a 112x112 output.
  CHECK(
      convOf(
          "aten::convolution",
          "[[64, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]",
          R"(["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"])") ==
      2LL * 64 * 64 * 112 * 112 * 3 * 7 * 7);
  // A 1x1 projection in backward, both gradients (output_mask).
  CHECK(
      convOf(
          "aten::convolution_backward",
          "[[64, 256, 56, 56], [64, 64, 56, 56], [256, 64, 1, 1], [], "
          "[], [], [], [], [], [], []]",
          R"(["", "", "", "[0]", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"])") ==
      2 * (2LL * 64 * 256 * 56 * 56 * 64));
  // The first layer's backward computes no input gradient.
  CHECK(
      convOf(
          "aten::convolution_backward",
          "[[64, 64, 112, 112], [64, 3, 224, 224], [64, 3, 7, 7], [], "
          "[], [], [], [], [], [], []]",
          R"(["", "", "", "[0]", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1", "[False, True, False]"])") ==
      2LL * 64 * 64 * 112 * 112 * 3 * 7 * 7);
  // Grouped (depthwise): 32 groups of one channel each.
  CHECK(
      convOf(
          "aten::convolution",
          "[[8, 32, 10, 10], [32, 1, 3, 3], [], [], [], [], [], [], []]",
          R"(["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "32"])") ==
      2LL * 8 * 32 * 10 * 10 * 1 * 3 * 3);
}

TEST_CASE("convolutions' FLOPs: what is not sized") {
  const char *Dims =
      "[[64, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]";
  // Transposed, missing arguments, channels that do not match the groups,
  // another operator.
  CHECK_FALSE(
      convOf(
          "aten::convolution", Dims,
          R"(["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "True", "[0, 0]", "1"])")
          .has_value());
  CHECK_FALSE(convOf("aten::convolution", Dims, "").has_value());
  CHECK_FALSE(
      convOf(
          "aten::convolution", Dims,
          R"(["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "2"])")
          .has_value());
  CHECK_FALSE(
      convOf(
          "aten::cudnn_convolution", Dims,
          R"(["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"])")
          .has_value());
}

TEST_CASE("FLOPs of damaged shapes: unknown, never an overflow") {
  // The shapes' reader refuses negative and out-of-range dimensions ...
  CHECK_FALSE(
      dd::ops::inputShapes("[[9223372036854775807, 3, 224, 224]]").has_value());
  CHECK_FALSE(dd::ops::inputShapes("[[64, 3, -7, 7]]").has_value());
  // ... and what it reads cannot overflow the FLOPs: a stride of zero, a
  // padding near INT64_MAX, batch dimensions whose product is 2^64.
  const char *Dims =
      "[[64, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]";
  CHECK_FALSE(
      convOf(
          "aten::convolution", Dims,
          R"(["", "", "", "[0, 0]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"])")
          .has_value());
  CHECK_FALSE(
      convOf(
          "aten::convolution", Dims,
          R"(["", "", "", "[2, 2]", "[9223372036854775807, 3]", "[1, 1]", "False", "[0, 0]", "1"])")
          .has_value());
  CHECK_FALSE(
      convOf(
          "aten::convolution", Dims,
          R"(["", "", "", "[2, 2]", "[-3, 3]", "[1, 1]", "False", "[0, 0]", "1"])")
          .has_value());
  CHECK_FALSE(
      flopsOf("aten::matmul", "[[4294967296, 4294967296, 4, 8], [8, 16]]")
          .has_value());
}

namespace {
/// movedBytes as the graph builder computes it: the tensor inputs' bytes
/// from "Input Dims" and "Input type", the outputs from the work.
std::optional<int64_t> movedOf(std::string_view Op, std::string_view Dims,
                               std::string_view Types,
                               std::string_view Concrete = "") {
  auto Shapes = dd::ops::inputShapes(Dims);
  REQUIRE(Shapes.has_value());
  auto Lists = dd::ops::listElements(Dims);
  REQUIRE(Lists.has_value());
  std::optional<dd::ops::OpWork> W =
      dd::ops::opWork(Op, *Shapes, Concrete, *Lists);
  auto In = dd::ops::tensorInputBytes(Dims, Types, W ? W->Unread : 0);
  REQUIRE(In.has_value());
  return dd::ops::movedBytes(Op, *Shapes, W, *In, dd::ops::elementSize(Types));
}
} // namespace

TEST_CASE("bytes moved: inputs read and outputs written, by hand") {
  // kineto/resnet50_v100_workers0's classifier: bias, input and weight
  // read, a 32 x 1000 product written, all fp32.
  CHECK(movedOf("aten::addmm", "[[1000], [32, 2048], [2048, 1000], [], []]",
                R"(["float", "float", "float", "Scalar", "Scalar"])") ==
        4LL * (1000 + 32 * 2048 + 2048 * 1000 + 32 * 1000));
  // astra_sim/megatron_tp8's sequence-parallel GEMM in half precision: the
  // batch dimensions flatten into the product's rows.
  CHECK(movedOf("aten::matmul", "[[2048, 4, 4096], [4096, 1536]]",
                R"(["c10::Half", "c10::Half"])") ==
        2LL * (2048 * 4 * 4096 + 4096 * 1536 + 2048 * 4 * 1536));
  // groundtruth/resnet50_baseline's stem: the output is 64 x 64 x 112 x 112.
  CHECK(
      movedOf(
          "aten::convolution",
          "[[64, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], "
          "[]]",
          "['float', 'float', '', 'ScalarList', 'ScalarList', "
          "'ScalarList', 'Scalar', 'ScalarList', 'Scalar']",
          R"(["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"])") ==
      4LL * (64 * 3 * 224 * 224 + 64 * 3 * 7 * 7 + 64 * 64 * 112 * 112));
  // A backward convolution writes the gradients output_mask asks for: the
  // input's and the weight's.
  CHECK(
      movedOf(
          "aten::convolution_backward",
          "[[64, 256, 56, 56], [64, 64, 56, 56], [256, 64, 1, 1], [], "
          "[], [], [], [], [], [], []]",
          "['float', 'float', 'float', 'ScalarList', 'ScalarList', "
          "'ScalarList', 'ScalarList', 'Scalar', 'ScalarList', "
          "'Scalar', 'ScalarList']",
          R"(["", "", "", "[0]", "[1, 1]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"])") ==
      4LL * (64 * 256 * 56 * 56 + 64 * 64 * 56 * 56 + 256 * 64 +
             64 * 64 * 56 * 56 + 256 * 64));
  // An elementwise operator writes the broadcast of its inputs; a norm
  // its input's size (its statistics are small).
  CHECK(movedOf("aten::add", "[[64, 256, 56, 56], [64, 256, 56, 56], []]",
                R"(["c10::BFloat16", "c10::BFloat16", "Scalar"])") ==
        2LL * 3 * 64 * 256 * 56 * 56);
  CHECK(movedOf("aten::native_layer_norm",
                "[[8, 512, 768], [], [768], [768], []]",
                R"(["float", "", "float", "float", "Scalar"])") ==
        4LL * (2 * 8 * 512 * 768 + 2 * 768));
  // A reduction without "Concrete Inputs" is taken to reduce everything:
  // one element written.
  CHECK(movedOf("aten::sum", "[[64, 1000], [], [], []]",
                R"(["float", "ScalarList", "Scalar", ""])") ==
        4LL * (64 * 1000 + 1));
  // One the table does not size (aten::max's values and indices) writes
  // nothing counted.
  CHECK(movedOf("aten::max", "[[64, 1000], []]", R"(["float", "Int"])") ==
        4LL * 64 * 1000);
}

TEST_CASE("process-group ranks as PyTorch records them") {
  using V = std::vector<int32_t>;
  CHECK(dd::ops::rankList("[0, 1, 2, 3]") == V{0, 1, 2, 3});
  CHECK(dd::ops::rankList("[7]") == V{7});
  CHECK(dd::ops::rankList("[]") == V{});
  for (const char *Bad : {"", "0, 1", "[0, -1]", "[True]", "[0 1]", "[0,,1]",
                          "[0, 1] x", "[4294967296]"})
    CHECK_FALSE(dd::ops::rankList(Bad).has_value());
}

namespace {
/// opWork's FLOPs of an operator as the trace records it.
std::optional<int64_t> workFlops(std::string_view Op, std::string_view Dims,
                                 std::string_view Concrete = "") {
  auto Shapes = dd::ops::inputShapes(Dims);
  REQUIRE(Shapes.has_value());
  auto Lists = dd::ops::listElements(Dims);
  REQUIRE(Lists.has_value());
  auto W = dd::ops::opWork(Op, *Shapes, Concrete, *Lists);
  return W ? std::optional<int64_t>(W->Flops) : std::nullopt;
}
} // namespace

TEST_CASE("attention's FLOPs: two GEMMs, halved where causal") {
  // groundtruth/bert_baseline: BERT-base's self-attention, batch 32, 12
  // heads of 64 over 128 tokens, not causal; SDPA (batch, heads, tokens,
  // head dim) and the memory-efficient kernel's operator (batch, tokens,
  // heads, head dim) under it give the same work.
  const int64_t Bert = 2LL * 32 * 12 * 128 * 128 * (64 + 64);
  CHECK(
      workFlops(
          "aten::scaled_dot_product_attention",
          "[[32, 12, 128, 64], [32, 12, 128, 64], [32, 12, 128, 64], "
          "[], [], [], [], []]",
          R"(["", "", "", "", "0.10000000000000001", "False", "0.125", "False"])") ==
      Bert);
  CHECK(
      workFlops(
          "aten::_efficient_attention_forward",
          "[[32, 128, 12, 64], [32, 128, 12, 64], [32, 128, 12, 64], "
          "[], [], [], [], [], [], [], [], [], [], []]",
          R"(["", "", "", "", "", "", "", "", "0.10000000000000001", "0", "True", "0.125", "", ""])") ==
      Bert);
  // groundtruth/gpt2_baseline: GPT-2's causal attention, batch 8 over 512
  // tokens: is_causal on SDPA, custom_mask_type 1 on the kernel's operator.
  const int64_t Gpt2 = 2LL * 8 * 12 * 512 * 512 * (64 + 64) / 2;
  CHECK(
      workFlops(
          "aten::_scaled_dot_product_efficient_attention",
          "[[8, 12, 512, 64], [8, 12, 512, 64], [8, 12, 512, 64], [], "
          "[], [], [], []]",
          R"(["", "", "", "", "True", "0.10000000000000001", "True", "0.125"])") ==
      Gpt2);
  CHECK(
      workFlops(
          "aten::_efficient_attention_forward",
          "[[8, 512, 12, 64], [8, 512, 12, 64], [8, 512, 12, 64], [], "
          "[], [], [], [], [], [], [], [], [], []]",
          R"(["", "", "", "", "", "", "", "", "0.10000000000000001", "1", "True", "0.125", "", ""])") ==
      Gpt2);
  // Its backward: five GEMMs for the forward's two (2.5x), causal too.
  CHECK(
      workFlops(
          "aten::_scaled_dot_product_efficient_attention_backward",
          "[[8, 12, 512, 64], [8, 12, 512, 64], [8, 12, 512, 64], "
          "[8, 12, 512, 64], [], [8, 12, 512, 64], [8, 12, 512], [], "
          "[], [], [], [], []]",
          R"(["", "", "", "", "", "", "", "", "", "0.10000000000000001", "[True, True, True, False]", "True", "0.125"])") ==
      Gpt2 * 5 / 2);
  CHECK(
      workFlops(
          "aten::_efficient_attention_backward",
          "[[8, 512, 12, 64], [8, 512, 12, 64], [8, 512, 12, 64], "
          "[8, 512, 12, 64], [], [8, 512, 12, 64], [], [], [], [], "
          "[8, 12, 512], [], [], [], [], [], [], [], [], []]",
          R"(["", "", "", "", "", "", "", "", "12", "12", "", "0.10000000000000001", "", "", "1", "False", "0.125", "", "", "False"])") ==
      Gpt2 * 5 / 2);
  // tracelens/h100_qwen0.5b_inference: Qwen's causal prefill in flash
  // attention, 16 sequences of 559 tokens, 16 heads of 64.
  CHECK(
      workFlops(
          "aten::_flash_attention_forward",
          "[[16, 559, 16, 64], [16, 559, 16, 64], [16, 559, 16, 64], "
          "[], [], [], [], [], [], [], [], [], [], [], []]",
          R"(["", "", "", "", "", "559", "559", "0.", "True", "False", "0.125", "", "", "", ""])") ==
      2LL * 16 * 16 * 559 * 559 * 128 / 2);
  CHECK(workFlops("aten::_scaled_dot_product_flash_attention",
                  "[[16, 16, 559, 64], [16, 16, 559, 64], [16, 16, 559, 64], "
                  "[], [], [], []]",
                  R"(["", "", "", "0.", "True", "False", "0.125"])") ==
        2LL * 16 * 16 * 559 * 559 * 128 / 2);
}

TEST_CASE("attention's FLOPs: what is not sized") {
  const char *Bert = "[[32, 12, 128, 64], [32, 12, 128, 64], "
                     "[32, 12, 128, 64], [], [], [], [], []]";
  // Without "Concrete Inputs" the flag is unknown: taken as not causal.
  CHECK(workFlops("aten::scaled_dot_product_attention", Bert) ==
        2LL * 32 * 12 * 128 * 128 * 128);
  // A varlen batch packs its sequences into three dimensions.
  CHECK_FALSE(workFlops("aten::_flash_attention_forward",
                        "[[4096, 12, 64], [4096, 12, 64], [4096, 12, 64], "
                        "[33], [33], [], [], [], [], [], []]")
                  .has_value());
  // Query and key of different head dimensions do not multiply.
  CHECK_FALSE(workFlops("aten::scaled_dot_product_attention",
                        "[[32, 12, 128, 64], [32, 12, 128, 32], "
                        "[32, 12, 128, 64], [], [], [], [], []]")
                  .has_value());
  // Grouped queries: fewer key and value heads, the query's heads count.
  CHECK(workFlops("aten::scaled_dot_product_attention",
                  "[[2, 16, 128, 64], [2, 4, 128, 64], [2, 4, 128, 64], [], "
                  "[], [], [], []]",
                  R"(["", "", "", "", "0.", "False", "", "True"])") ==
        2LL * 2 * 16 * 128 * 128 * 128);
}

TEST_CASE("norms' and softmaxes' FLOPs per element") {
  // groundtruth/bert_baseline: layer norm over 768 with scale and shift,
  // 7 FLOPs per element; its backward twice that.
  CHECK(workFlops("aten::native_layer_norm",
                  "[[32, 128, 768], [], [768], [768], []]") ==
        7LL * 32 * 128 * 768);
  CHECK(workFlops("aten::native_layer_norm_backward",
                  "[[32, 128, 768], [32, 128, 768], [], [32, 128, 1], "
                  "[32, 128, 1], [768], [768], []]") == 14LL * 32 * 128 * 768);
  // groundtruth/resnet50_baseline: cuDNN's batch norm of the stem's output,
  // and a backward one (input first, then the gradient).
  CHECK(workFlops("aten::cudnn_batch_norm",
                  "[[64, 64, 112, 112], [64], [64], [64], [64], [], [], []]") ==
        7LL * 64 * 64 * 112 * 112);
  CHECK(workFlops("aten::cudnn_batch_norm_backward",
                  "[[64, 256, 56, 56], [64, 256, 56, 56], [256], [256], [256], "
                  "[256], [256], [], [0]]") == 14LL * 64 * 256 * 56 * 56);
  // astra_sim/megatron_tp8: Apex's fused layer norm and Megatron's causal
  // softmax as their autograd functions record them.
  CHECK(workFlops("FusedLayerNormAffineFunction",
                  "[[2048, 4, 4096], [4096], [4096]]") ==
        7LL * 2048 * 4 * 4096);
  CHECK(workFlops("ScaledUpperTriangMaskedSoftmax", "[[32, 2048, 2048]]") ==
        5LL * 32 * 2048 * 2048);
  // groundtruth/bert_baseline: the masked-LM loss's log-softmax over the
  // vocabulary, and its backward.
  CHECK(workFlops("aten::_log_softmax", "[[4096, 30522], [], []]") ==
        5LL * 4096 * 30522);
  CHECK(workFlops("aten::_log_softmax_backward_data",
                  "[[4096, 30522], [4096, 30522], [], []]") ==
        4LL * 4096 * 30522);
  // A norm without weights: no scale and shift.
  CHECK(workFlops("aten::native_layer_norm", "[[8, 768], [], [], [], []]") ==
        5LL * 8 * 768);
  CHECK(workFlops("aten::rms_norm", "[[8, 768], [], [768], []]") ==
        4LL * 8 * 768);
  // Not an operator of these families; a missing input.
  CHECK_FALSE(workFlops("aten::max_pool2d_with_indices",
                        "[[64, 64, 112, 112], [], [], [], [], []]")
                  .has_value());
  CHECK_FALSE(
      workFlops("aten::native_layer_norm_backward", "[[8, 768]]").has_value());
}

TEST_CASE("bytes moved by attention, norms and softmaxes, by hand") {
  // tracelens/h100_bert_small_inference: bf16 flash attention reads
  // query, key and value and writes one output of the query's size.
  CHECK(
      movedOf(
          "aten::_scaled_dot_product_flash_attention",
          "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], "
          "[], []]",
          R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", "Scalar"])",
          R"(["", "", "", "0.", "False", "False", "0.125"])") ==
      2LL * 4 * 8 * 141 * 64);
  // groundtruth/gpt2_baseline's attention backward (fp32): grad_out, query,
  // key, value, out and logsumexp read, with the two 0-d philox tensors
  // (8 bytes each); the three gradients written.
  const int64_t N = 8LL * 12 * 512 * 64;
  CHECK(
      movedOf(
          "aten::_scaled_dot_product_efficient_attention_backward",
          "[[8, 12, 512, 64], [8, 12, 512, 64], [8, 12, 512, 64], "
          "[8, 12, 512, 64], [], [8, 12, 512, 64], [8, 12, 512], [], "
          "[], [], [], [], []]",
          R"(["float", "float", "float", "float", "", "float", "float", "long int", "long int", "Scalar", "ScalarList", "Scalar", "Scalar"])",
          R"(["", "", "", "", "", "", "", "", "", "0.10000000000000001", "[True, True, True, False]", "True", "0.125"])") ==
      4 * (5 * N + 8 * 12 * 512) + 2 * 8 + 4 * 3 * N);
  // groundtruth/bert_baseline's layer norm backward: gradient, input, the
  // statistics and the weights read; the input's gradient and the scale's
  // and shift's written.
  const int64_t L = 32LL * 128 * 768;
  CHECK(
      movedOf(
          "aten::native_layer_norm_backward",
          "[[32, 128, 768], [32, 128, 768], [], [32, 128, 1], "
          "[32, 128, 1], [768], [768], []]",
          R"(["float", "float", "ScalarList", "float", "float", "float", "float", "ScalarList"])",
          R"(["", "", "[768]", "", "", "", "", "[True, True, True]"])") ==
      4 * (2 * L + 2 * 32 * 128 + 2 * 768) + 4 * (L + 2 * 768));
  // groundtruth/resnet50_baseline's batch norm backward: the reserve space
  // is empty.
  const int64_t R = 64LL * 256 * 56 * 56;
  CHECK(
      movedOf(
          "aten::cudnn_batch_norm_backward",
          "[[64, 256, 56, 56], [64, 256, 56, 56], [256], [256], [256], "
          "[256], [256], [], [0]]",
          R"(["float", "float", "float", "float", "float", "float", "float", "Scalar", "unsigned char"])",
          R"(["", "", "", "", "", "", "", "1.0000000000000001e-05", ""])") ==
      4 * (2 * R + 5 * 256) + 4 * (R + 2 * 256));
  // astra_sim/megatron_tp8's fp16 causal softmax: scores in, probabilities
  // out.
  CHECK(movedOf("ScaledUpperTriangMaskedSoftmax", "[[32, 2048, 2048]]",
                R"(["c10::Half"])") == 2LL * 2 * 32 * 2048 * 2048);
  // groundtruth/bert_baseline's log-softmax backward: gradient and output
  // read, the input's gradient written.
  CHECK(movedOf("aten::_log_softmax_backward_data",
                "[[4096, 30522], [4096, 30522], [], []]",
                R"(["float", "float", "Scalar", "Scalar"])",
                R"(["", "", "1", "6"])") == 4LL * 3 * 4096 * 30522);
}

TEST_CASE("embeddings: the rows looked up, not the whole table") {
  // groundtruth/bert_baseline: the word embeddings, 30522 x 768 in fp32,
  // looked up for 32 x 128 tokens: no FLOPs; the 4096 rows and their
  // indices read (in the table's element size), the rows written.
  const char *Dims = "[[30522, 768], [32, 128], [], [], []]";
  CHECK(workFlops("aten::embedding", Dims) == 0);
  CHECK(movedOf("aten::embedding", Dims,
                R"(["float", "long int", "Scalar", "Scalar", "Scalar"])",
                R"(["", "", "0", "False", "False"])") ==
        4LL * (4096 * 768 + 4096) + 4LL * 4096 * 768);
  // Its backward adds each gradient element into a gradient of the whole
  // table, which it writes.
  const char *Bwd = "[[32, 128, 768], [32, 128], [], [], []]";
  const char *Concrete = R"(["", "", "30522", "0", "False"])";
  CHECK(workFlops("aten::embedding_dense_backward", Bwd, Concrete) ==
        32LL * 128 * 768);
  CHECK(movedOf("aten::embedding_dense_backward", Bwd,
                R"(["float", "long int", "Scalar", "Scalar", "Scalar"])",
                Concrete) ==
        4LL * 32 * 128 * 768 + 8LL * 32 * 128 + 4LL * 30522 * 768);
  // astra_sim/megatron_tp8: fp16 position embeddings, 4 x 2048 lookups.
  CHECK(movedOf("aten::embedding", "[[2048, 4096], [4, 2048], [], [], []]",
                R"(["c10::Half", "long int", "Scalar", "Scalar", "Scalar"])",
                R"(["", "", "-1", "False", "False"])") ==
        2LL * (8192 * 4096 + 8192) + 2LL * 8192 * 4096);
  // Without num_weights the backward's output is unknown; a gradient that
  // does not match its indices is not sized.
  CHECK_FALSE(workFlops("aten::embedding_dense_backward", Bwd).has_value());
  CHECK_FALSE(workFlops("aten::embedding_dense_backward",
                        "[[32, 127, 768], [32, 128], [], [], []]", Concrete)
                  .has_value());
}

TEST_CASE("elementwise FLOPs and bytes, by hand") {
  // groundtruth/resnet50_baseline (fp32): the residual add in place, the
  // ReLU as clamp_min_ in place, and ReLU's backward: one FLOP per element
  // written; add_ reads both inputs and writes the first.
  const int64_t A = 64LL * 2048 * 7 * 7;
  const char *AddDims = "[[64, 2048, 7, 7], [64, 2048, 7, 7], []]";
  const char *AddTypes = R"(["float", "float", "Scalar"])";
  CHECK(workFlops("aten::add_", AddDims, R"(["", "", "1"])") == A);
  CHECK(movedOf("aten::add_", AddDims, AddTypes, R"(["", "", "1"])") ==
        4 * 3 * A);
  const int64_t C = 64LL * 64 * 112 * 112;
  CHECK(workFlops("aten::clamp_min_", "[[64, 64, 112, 112], []]") == C);
  CHECK(movedOf("aten::clamp_min_", "[[64, 64, 112, 112], []]",
                R"(["float", "Scalar"])", R"(["", "0"])") == 4 * 2 * C);
  const int64_t T = 64LL * 512 * 14 * 14;
  CHECK(workFlops("aten::threshold_backward",
                  "[[64, 512, 14, 14], [64, 512, 14, 14], []]") == T);
  // tracelens/h100_qwen0.5b_inference: RMS norm's weight (bf16) times the
  // normalised rows broadcasts to 16 x 559 x 1024; the fp32 rows times
  // their 16 x 559 x 1 inverse roots too.
  const int64_t Q = 16LL * 559 * 1024;
  CHECK(workFlops("aten::mul", "[[1024], [16, 559, 1024]]") == Q);
  CHECK(movedOf("aten::mul", "[[1024], [16, 559, 1024]]",
                R"(["c10::BFloat16", "c10::BFloat16"])") == 2 * (1024 + Q + Q));
  CHECK(movedOf("aten::mul", "[[16, 559, 1024], [16, 559, 1]]",
                R"(["float", "float"])") == 4 * (Q + 16 * 559 + Q));
  // Its casts: copy_ reads its source (bf16) and writes its destination
  // (fp32) without reading it; no FLOPs.
  CHECK(workFlops("aten::copy_", "[[16, 559, 1024], [16, 559, 1024], []]") ==
        0);
  CHECK(movedOf("aten::copy_", "[[16, 559, 1024], [16, 559, 1024], []]",
                R"(["float", "c10::BFloat16", "Scalar"])",
                R"(["", "", "False"])") == 2 * Q + 4 * Q);
  // groundtruth/gpt2_baseline: the logits' gradient zeroed, 4096 x 50257
  // fp32 written and not read; GPT-2's tanh GELU in pieces.
  const int64_t Z = 4096LL * 50257;
  CHECK(movedOf("aten::fill_", "[[4096, 50257], []]", R"(["float", "Scalar"])",
                R"(["", "0"])") == 4 * Z);
  CHECK(movedOf("aten::zero_", "[[4096, 50257]]", R"(["float"])") == 4 * Z);
  const int64_t G = 8LL * 512 * 3072;
  CHECK(workFlops("aten::tanh", "[[8, 512, 3072]]") == G);
  CHECK(workFlops("aten::pow", "[[8, 512, 3072], []]", R"(["", "2."])") == G);
  CHECK(workFlops("aten::tanh_backward", "[[8, 512, 3072], [8, 512, 3072]]") ==
        3 * G);
  // groundtruth/bert_baseline: erf GELU (5 per element) and its backward
  // (11); dropout (2) and its backward, whose mask is read as bytes.
  CHECK(workFlops("aten::gelu", "[[32, 128, 3072], []]") ==
        5LL * 32 * 128 * 3072);
  const int64_t B = 32LL * 128 * 768;
  CHECK(workFlops("aten::gelu_backward",
                  "[[32, 128, 768], [32, 128, 768], []]") == 11 * B);
  CHECK(workFlops("aten::native_dropout", "[[32, 128, 768], [], []]",
                  R"(["", "0.10000000000000001", "True"])") == 2 * B);
  CHECK(movedOf("aten::native_dropout_backward",
                "[[32, 128, 768], [32, 128, 768], []]",
                R"(["float", "bool", "Scalar"])",
                R"(["", "", "1.1111111111111112"])") == 4 * B + B + 4 * B);
  // kineto/resnet50_v100_workers0's older PyTorch: relu_ calls
  // clamp_min(self, min, out=self), its destination recorded after the
  // arguments; written, not read.
  const int64_t R = 32LL * 64 * 112 * 112;
  const char *Out = "[[32, 64, 112, 112], [], [32, 64, 112, 112]]";
  CHECK(workFlops("aten::clamp_min", Out) == R);
  CHECK(movedOf("aten::clamp_min", Out, R"(["float", "Int", "float"])") ==
        4 * 2 * R);
  // Inputs that do not broadcast are not sized.
  CHECK_FALSE(workFlops("aten::add", "[[32, 1000], [999]]").has_value());
}

TEST_CASE("Adam without foreach: its elementwise steps, by hand") {
  // groundtruth/gpt2_baseline's Adam step on the 50257 x 768 word
  // embeddings (fp32): the moments by lerp_ and addcmul_ (3 FLOPs per
  // element), the step size a 0-d double tensor (8 bytes) in mul_.
  const int64_t N = 50257LL * 768;
  const char *Two = "[[50257, 768], [50257, 768], []]";
  CHECK(workFlops("aten::lerp_", Two) == 3 * N);
  CHECK(movedOf("aten::lerp_", Two, R"(["float", "float", "Scalar"])") ==
        4 * 3 * N);
  const char *Three = "[[50257, 768], [50257, 768], [50257, 768], []]";
  CHECK(workFlops("aten::addcmul_", Three) == 3 * N);
  CHECK(workFlops("aten::addcdiv_", Three) == 3 * N);
  CHECK(movedOf("aten::addcdiv_", Three,
                R"(["float", "float", "float", "Scalar"])") == 4 * 4 * N);
  CHECK(workFlops("aten::sqrt", "[[50257, 768]]") == N);
  CHECK(workFlops("aten::mul_", "[[50257, 768], []]") == N);
  CHECK(movedOf("aten::mul_", "[[50257, 768], []]", R"(["float", "double"])") ==
        4 * N + 8 + 4 * N);
}

TEST_CASE("reductions: the dimensions kept from Concrete Inputs") {
  // groundtruth/resnet50_baseline: global average pooling as a mean over
  // the last two dimensions, keepdim: 64 x 2048 written.
  const int64_t In = 64LL * 2048 * 7 * 7;
  const char *Dims = "[[64, 2048, 7, 7], [], [], []]";
  const char *Types = R"(["float", "ScalarList", "Scalar", ""])";
  const char *Concrete = R"(["", "[-1, -2]", "True", ""])";
  CHECK(workFlops("aten::mean", Dims, Concrete) == In);
  CHECK(movedOf("aten::mean", Dims, Types, Concrete) == 4 * (In + 64 * 2048));
  // The classifier's bias gradient: a sum over the batch, 1000 written.
  CHECK(movedOf("aten::sum", "[[64, 1000], [], [], []]", Types,
                R"(["", "[0]", "True", ""])") == 4LL * (64 * 1000 + 1000));
  // tracelens/h100_qwen0.5b_inference: RMS norm's mean of squares over
  // the hidden size, one per token.
  CHECK(movedOf("aten::mean", "[[16, 559, 1024], [], [], []]", Types,
                R"(["", "[-1]", "True", ""])") ==
        4LL * (16 * 559 * 1024 + 16 * 559));
  // A norm: 2 FLOPs per element. The overload (self, p, dtype) has no dim
  // and reduces everything.
  CHECK(workFlops("aten::linalg_vector_norm", "[[4096, 768], [], [], [], []]",
                  R"(["", "2", "", "False", ""])") == 2LL * 4096 * 768);
  CHECK(movedOf("aten::norm", "[[768], [], []]",
                R"(["float", "Scalar", "Scalar"])",
                R"(["", "2", "6"])") == 4LL * (768 + 1));
  // A dimension out of range is not sized.
  CHECK_FALSE(workFlops("aten::sum", "[[64, 1000], [], [], []]",
                        R"(["", "[2]", "False", ""])")
                  .has_value());
}

TEST_CASE("tensor-list operators: sized where the lists are recorded") {
  // hta/mi250_rocm_minitoy_train: SGD's foreach update of a 128 x 128
  // weight and its 128 bias, the lists recorded (fp32 taken: the trace
  // types a list as "TensorList").
  const int64_t P = 128LL * 128 + 128;
  const char *Dims = "[[[128, 128], [128]], [[128, 128], [128]], []]";
  const char *Types = R"(["TensorList", "TensorList", "Scalar"])";
  CHECK(workFlops("aten::_foreach_add_", Dims, R"(["", "", "-0.001"])") == P);
  CHECK(movedOf("aten::_foreach_add_", Dims, Types) == 4 * 3 * P);
  // groundtruth/gpt2_fused_adam (torch 2.11) records each list as an empty
  // shape: not sized.
  const char *Unrecorded = "[[], [], [], [], [], [], [], [], [], [], [], [], "
                           "[], [], []]";
  CHECK_FALSE(workFlops("aten::_fused_adam_", Unrecorded).has_value());
  CHECK_FALSE(workFlops("aten::_foreach_add_", "[[], []]").has_value());
  // Fused Adam with its lists recorded: 13 FLOPs per parameter element;
  // parameters, gradients, both moments and the 0-d steps read, the
  // parameters and moments written (max_exp_avg_sqs empty without
  // amsgrad).
  const char *Adam = "[[[10], [20]], [[10], [20]], [[10], [20]], "
                     "[[10], [20]], [], [[], []], [], [], [], [], [], [], "
                     "[], [], []]";
  CHECK(workFlops("aten::_fused_adam_", Adam) == 13 * 30);
  CHECK(workFlops("aten::_fused_adamw_", Adam) == 14 * 30);
  CHECK(
      movedOf(
          "aten::_fused_adam_", Adam,
          R"(["TensorList", "TensorList", "TensorList", "TensorList", "TensorList", "TensorList", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", ""])") ==
      4 * (4 * 30 + 2) + 4 * 3 * 30);
  // groundtruth/gpt2_baseline: cat of query, key and value, no FLOPs; the
  // three read and one of their total size written.
  const int64_t Q = 8LL * 512 * 768;
  const char *Cat = "[[[8, 512, 768], [8, 512, 768], [8, 512, 768]], []]";
  CHECK(workFlops("aten::cat", Cat, R"(["", "2"])") == 0);
  CHECK(movedOf("aten::cat", Cat, R"(["TensorList", "Scalar"])",
                R"(["", "2"])") == 4 * 2 * 3 * Q);
  // Lists as listElements reads them: a tensor's shape is no list.
  auto L = dd::ops::listElements("[[[128, 128], [128]], [4, 5], []]");
  REQUIRE(L.has_value());
  CHECK(*L == std::vector<double>{16512, -1, -1});
}

TEST_CASE("saved tensors: what autograd keeps, from recorded shapes") {

  // BERT-base's operators as torch 2.11 records them (batch 32, seq 128).
  auto Addmm = savedTensors("aten::addmm", "[[768], [4096, 768], [768, 768]]",
                            R"(["float", "float", "float", "Scalar"])", "");
  REQUIRE(Addmm);
  CHECK(Addmm->Bytes == (4096 * 768 + 768 * 768) * 4); // mat1, mat2
  CHECK(Addmm->Count == 2);
  auto Norm = savedTensors(
      "aten::native_layer_norm", "[[32, 128, 768], [], [768], [768], []]",
      R"(["float", "ScalarList", "float", "float", "Scalar"])",
      R"(["", "[768]", "", "", "1e-12"])");
  REQUIRE(Norm);
  // input, weight, bias, and a mean and a reciprocal deviation per row.
  CHECK(Norm->Bytes == (32 * 128 * 768 + 768 + 768 + 2 * 32 * 128) * 4);
  CHECK(Norm->Count == 5);
  auto Drop = savedTensors("aten::native_dropout", "[[32, 128, 768], [], []]",
                           R"(["float", "Scalar", "Scalar"])", "");
  REQUIRE(Drop);
  CHECK(Drop->Bytes == 32 * 128 * 768); // a byte mask
  auto Sdpa = savedTensors(
      "aten::_scaled_dot_product_efficient_attention",
      "[[32, 12, 128, 64], [32, 12, 128, 64], [32, 12, 128, 64], [], [], [], "
      "[], []]",
      R"(["float", "float", "float", "", "Scalar", "Scalar", "Scalar", "Scalar"])",
      "");
  REQUIRE(Sdpa);
  // query, key, value, output; log-sum-exp; seed and offset.
  CHECK(Sdpa->Bytes == 4 * 32 * 12 * 128 * 64 * 4 + 32 * 12 * 128 * 4 + 16);
  CHECK(Sdpa->Count == 7);
  // ResNet-50's stem: max pooling keeps its input and an int64 index per
  // output element (112 -> 56).
  auto Pool = savedTensors(
      "aten::max_pool2d_with_indices",
      "[[64, 64, 112, 112], [], [], [], [], []]",
      R"(["float", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"])",
      R"(["", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "False"])");
  REQUIRE(Pool);
  CHECK(Pool->Bytes == 64 * 64 * 112 * 112 * 4 + 64 * 64 * 56 * 56 * 8);
  // A product keeps each operand the other's gradient needs: by a wrapped
  // number, only the number.
  auto Both = savedTensors("aten::mul", "[[8, 512, 3072], [8, 512, 3072]]",
                           R"(["float", "float"])", "");
  REQUIRE(Both);
  CHECK(Both->Bytes == 2 * 8 * 512 * 3072 * 4);
  auto ByNumber = savedTensors("aten::mul", "[[8, 512, 3072], []]",
                               R"(["float", "double"])", "");
  REQUIRE(ByNumber);
  CHECK(ByNumber->Bytes == 8);
  // Outside the table, or unrecorded: none.
  CHECK(!savedTensors("aten::add", "[[4], [4]]", R"(["float", "float"])", ""));
  CHECK(!savedTensors("aten::addmm", "", "", ""));
  CHECK(savedGradFn("aten::addmm") == "AddmmBackward0");
  CHECK(savedGradFn("aten::add").empty());
}

TEST_CASE("matrix multiplies: the alignment their dimensions allow") {
  // GPT-2's and BERT's vocabulary projections at 4096 tokens, and a
  // hidden-size one: the largest power of two, up to 16, dividing M, N, K.
  auto Gpt2 = matmulWork("aten::mm", {{4096, 768}, {768, 50257}});
  REQUIRE(Gpt2);
  CHECK(Gpt2->Align == 1);
  auto Bert = matmulWork("aten::addmm", {{30522}, {4096, 768}, {768, 30522}});
  REQUIRE(Bert);
  CHECK(Bert->Align == 2);
  auto Hidden = matmulWork("aten::mm", {{4096, 768}, {768, 3072}});
  REQUIRE(Hidden);
  CHECK(Hidden->Align == 16);
  auto Batched = matmulWork("aten::bmm", {{96, 128, 64}, {96, 64, 124}});
  REQUIRE(Batched);
  CHECK(Batched->Align == 4);
}

TEST_CASE("input precision: the first floating-point input's recorded type") {
  auto Of = [](const char *Types) {
    return std::string(Precisions[inputPrecision(Types)]);
  };
  CHECK(Of(R"(["float", "float", "float", "Scalar", "Scalar"])") == "fp32");
  CHECK(Of(R"(["c10::BFloat16", "c10::BFloat16", "", "Scalar"])") == "half");
  CHECK(Of(R"(["c10::Half", "float"])") == "half");
  // Indices first (embedding), then the weights.
  CHECK(Of(R"(["long int", "float"])") == "fp32");
  // cuDNN attention's backward: bf16 data before its fp32 statistics.
  CHECK(Of(R"(["c10::BFloat16", "c10::BFloat16", "float", "long int"])") ==
        "half");
  CHECK(Of(R"(["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float"])") ==
        "fp8");
  CHECK(Of(R"(["long int", "bool", "Scalar"])") == "");
  CHECK(Of("") == "");
}

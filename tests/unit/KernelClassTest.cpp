// Kernel classes (graph/KernelClass.h) on names taken from shipped traces:
// the kernel's own name decides, not its template arguments, and the
// operator that launched it where the name says nothing.

#include "graph/KernelClass.h"

#include <doctest/doctest.h>

using namespace dd::graph;

namespace {
KernelClass kernel(std::string_view Name, std::string_view Op = "",
                   bool Optimizer = false) {
  return classifyKernel(Name, TaskKind::Kernel, Op, Optimizer);
}
} // namespace

TEST_CASE("kernel classes: vendors' GEMMs and convolutions") {
  // cuBLAS, cuBLASLt (H100, B200), CUTLASS through its generic wrapper,
  // rocBLAS/Tensile (MI250X), GEMV.
  CHECK(kernel("volta_sgemm_128x64_nn") == KernelClass::gemm);
  CHECK(kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_"
               "warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas") ==
        KernelClass::gemm);
  CHECK(kernel("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT") ==
        KernelClass::gemm);
  CHECK(kernel("bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16") ==
        KernelClass::gemm);
  CHECK(kernel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_"
               "16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_"
               "align4::Params)") == KernelClass::gemm);
  CHECK(kernel("Cijk_Ailk_Bljk_SB_MT64x64x16_SN_1LDSB0_APM1") ==
        KernelClass::gemm);
  CHECK(kernel("void gemv2T_kernel_val<int, int, float, float, float, float, "
               "128, 16, 4, 4, false, false>(cublasGemvParamsEx<int, float "
               "const*, float const*, float, float>)") == KernelClass::gemm);
  // Implicit-GEMM convolutions are convolutions.
  CHECK(
      kernel("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_"
             "nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8") ==
      KernelClass::conv);
  CHECK(kernel("void cudnn::detail::implicit_convolve_sgemm<float, float, "
               "128, 5, 5, 3, 3, 3, 1, true, false, true>(int, int)") ==
        KernelClass::conv);
  CHECK(kernel("volta_scudnn_128x64_relu_interior_nn_v1") == KernelClass::conv);
  CHECK(kernel("void cudnn::winograd_nonfused::winogradForwardData4x4<float, "
               "float>(cudnn::winograd_nonfused::WinogradDataParams<float, "
               "float>)") == KernelClass::conv);
}

TEST_CASE("kernel classes: the kernel's own name, not its template "
          "arguments") {
  // Flash attention whose traits name GEMM tiles is attention.
  CHECK(kernel("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_"
               "kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_"
               "t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, "
               "cutlass::bfloat16_t> >, false, true, false, false, true, true, "
               "false, false>(pytorch_flash::Flash_fwd_params)") ==
        KernelClass::attention);
  CHECK(kernel("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeq") ==
        KernelClass::attention);
  // An elementwise kernel whose functor's name mentions a GEMM.
  CHECK(kernel("void at::native::vectorized_elementwise_kernel<4, "
               "at::native::(anonymous namespace)::gemm_bias_functor<float>, "
               "at::detail::Array<char*, 2> >(int, float)") ==
        KernelClass::elementwise);
  CHECK(kernel("void at::native::(anonymous namespace)::CatArrayBatchedCopy<"
               "float, unsigned int, 4, 64, 64>(float*)") ==
        KernelClass::elementwise);
  CHECK(kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<"
               "float, at::native::func_wrapper_t<float, at::native::sum_"
               "functor<float, float, float>::operator()>, unsigned int, "
               "float, 4> >(at::native::ReduceOp<float>)") ==
        KernelClass::reduction);
  // A return type written out before the name.
  CHECK(kernel("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>"
               "::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::"
               "BFloat16, 8>(c10::BFloat16*, c10::BFloat16*)") ==
        KernelClass::norm);
  CHECK(kernel("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long "
               "const*)") == KernelClass::elementwise);
}

TEST_CASE("kernel classes: norms, softmax, Triton, communication, copies") {
  CHECK(kernel("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, "
               "true, 1>(cudnnTensorStruct)") == KernelClass::norm);
  CHECK(kernel("void at::native::(anonymous namespace)::vectorized_layer_norm_"
               "kernel<c10::BFloat16, float>(int, float)") ==
        KernelClass::norm);
  CHECK(kernel("void (anonymous namespace)::softmax_warp_forward<float, "
               "float, float, 9, false, false>(float*)") ==
        KernelClass::softmax);
  CHECK(kernel("triton_poi_fused_add_mul_0") == KernelClass::elementwise);
  CHECK(kernel("triton_red_fused_native_layer_norm_0") == KernelClass::norm);
  CHECK(kernel("triton_per_fused_sum_1") == KernelClass::reduction);
  CHECK(kernel("triton_tem_fused_mm_0") == KernelClass::gemm);
  CHECK(kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned "
               "long, ncclWork*)") == KernelClass::comm);
  CHECK(classifyKernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgs"
                       "Storage<4096ul>)",
                       TaskKind::Comm, "", false) == KernelClass::comm);
  CHECK(classifyKernel("Memcpy HtoD (Pageable -> Device)", TaskKind::Memcpy,
                       "aten::copy_", false) == KernelClass::copy);
  CHECK(classifyKernel("Memset (Device)", TaskKind::Memset, "", false) ==
        KernelClass::memset);
}

TEST_CASE("kernel classes: the operator decides where the name does not") {
  // index_select under aten::embedding is the embedding's lookup.
  CHECK(kernel("void at::native::(anonymous namespace)::indexSelectLargeIndex"
               "<float, long, unsigned int, 2, 2, -2, true>(float*)",
               "aten::embedding") == KernelClass::embedding);
  CHECK(kernel("void at::native::(anonymous namespace)::indexSelectLargeIndex"
               "<float, long, unsigned int, 2, 2, -2, true>(float*)",
               "aten::index_select") == KernelClass::elementwise);
  CHECK(kernel("my_kernel", "aten::addmm") == KernelClass::gemm);
  CHECK(kernel("my_kernel", "aten::cudnn_convolution") == KernelClass::conv);
  CHECK(kernel("my_kernel") == KernelClass::other);
  // In an optimizer step, pointwise work is the optimizer's; GEMMs stay.
  CHECK(kernel("void at::native::vectorized_elementwise_kernel<4, "
               "at::native::AddFunctor<float> >(int)",
               "aten::add_", true) == KernelClass::optimizer);
  CHECK(kernel("void multi_tensor_apply_kernel<TensorListMetadata<4>, "
               "AdamFunctor<float> >(int)") == KernelClass::optimizer);
  CHECK(kernel("volta_sgemm_128x64_nn", "aten::mm", true) == KernelClass::gemm);
  CHECK(kernelClassName(KernelClass::attention) == "attention");
}

TEST_CASE("kernel precision: from the types a kernel's name shows") {
  // cuBLASLt's nvjet kernels, as an H100 ran one BERT step in bf16, fp16
  // and fp8 (tests/data/groundtruth/h100): the operand letters decide.
  CHECK(kernelPrecision("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_TNT") ==
        "half");
  CHECK(kernelPrecision("nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopA_NNN") ==
        "half");
  CHECK(kernelPrecision("nvjet_sm90_qqtst_96x128_128x7_2x1_v_bz_coopA_algo2_"
                        "TNN") == "fp8");
  CHECK(kernelPrecision("nvjet_sm90_qrsss_72x64_128x12_1x2_h_bz_algo2_TNN") ==
        "fp8");
  CHECK(kernelPrecision("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT") ==
        "half");
  // fp32 operands could run as TF32: the name does not say.
  CHECK(kernelPrecision("nvjet_sm90_sss_128x128_64x4_2x1_v_bz_NNN") == "");
  CHECK(kernelPrecision("nvjet_sm90") == "");
  CHECK(kernelPrecision("nvjet_") == "");
  CHECK(kernelPrecision("triton_tem_fused_mm_0") == "");
  // Other vendors' names, as before.
  CHECK(kernelPrecision("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_"
                        "stage3_warpsize1x4x1_ffma_aligna4") == "fp32");
  CHECK(kernelPrecision("void cutlass::Kernel2<cutlass_80_tensorop_bf16_"
                        "s16816gemm_bf16_64x64_64x4_tn_align8>") == "half");
  CHECK(kernelPrecision("sm90_xmma_gemm_e4m3e4m3_bf16f32_f32_tn_n") == "fp8");
}

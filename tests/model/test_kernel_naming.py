"""The kernel naming table (model/kernel_naming.py): one name of each library, as a public trace of the
wild corpus (docs/corpus.md) or a capture of tests/data names it, and what the table says of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.model import kernel_naming as k
from tb_gpu_advisor.model.classify import classify_device_event, kernel_flags
from tb_gpu_advisor.model.profile import Flag, Kind

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "kernel-naming.md"

# (name as the trace writes it, library, role, unit, precision): where each was seen is in the comment
NAMES = [
    # cuBLAS on Hopper and Blackwell (tests/data/gpu H100; the B200 vLLM trace)
    ("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", "cuBLAS", k.MATMUL, k.TENSOR, k.BF16),
    (
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "cuBLAS",
        k.MATMUL,
        k.TENSOR,
        k.BF16,
    ),
    (
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
        "cuBLAS/cuDNN",
        k.MATMUL,
        k.CORES,
        k.FP32,
    ),
    # cuBLAS SIMT and legacy Tensor Core GEMMs (HTA's V100 and A100 traces)
    ("volta_sgemm_128x64_nn", "cuBLAS", k.MATMUL, k.CORES, k.FP32),
    ("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", "cuBLAS", k.MATMUL, k.TENSOR, k.FP16),
    ("volta_h884gemm_64x64_nn", "cuBLAS", k.MATMUL, k.TENSOR, None),
    # cuDNN (HTA's V100 ResNet and A100 AlexNet traces)
    ("cudnn_infer_volta_scudnn_128x64_relu_medium_nn_v1", "cuDNN", k.CONV, k.CORES, k.FP32),
    (
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4",
        "cuDNN",
        k.CONV,
        k.TENSOR,
        k.TF32,
    ),
    (
        "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(x)",
        "cuDNN",
        k.OTHER,
        k.NONE,
        k.FP32,
    ),
    # CUTLASS 2 and 3 (the H100 vision traces; DeepSeek's H800 trace)
    (
        "void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_tn_align1>(x::Params)",
        "CUTLASS",
        k.MATMUL,
        k.TENSOR,
        k.BF16,
    ),
    (
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(x::Params)",
        "CUTLASS",
        k.MATMUL,
        k.CORES,
        k.FP32,
    ),
    (
        "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel>(x::Params)",
        "CUTLASS 3",
        k.MATMUL,
        k.TENSOR,
        k.FP8,
    ),
    # FlashAttention 2 (PyTorch's copy, the H100 Qwen trace) and 3 (DeepSeek's H800 trace)
    (
        "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
        "cutlass::bfloat16_t> >(x)",
        "FlashAttention",
        k.ATTENTION,
        k.TENSOR,
        k.BF16,
    ),
    (
        "void cutlass::device_kernel<flash::FlashAttnBwd<flash::CollectiveMainloopBwd<2>, cutlass::bfloat16_t> >(x)",
        "FlashAttention",
        k.ATTENTION,
        k.TENSOR,
        k.BF16,
    ),
    (
        "void cutlass::device_kernel<flash::FlashAttnBwdPreprocess<cute::tuple<cute::C<64> >, cutlass::bfloat16_t> >(x)",
        "FlashAttention",
        k.OTHER,
        k.NONE,
        k.BF16,
    ),
    # Blackwell: trtllm-gen's MX GEMMs and FP8 attention (the B200 vLLM trace)
    (
        "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_sm100f",
        "TensorRT-LLM",
        k.MATMUL,
        k.TENSOR,
        k.FP8,
    ),
    ("bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_sm100f", "TensorRT-LLM", k.MATMUL, k.TENSOR, k.FP8),
    (
        "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
        "TensorRT-LLM",
        k.ATTENTION,
        k.TENSOR,
        k.FP8,
    ),
    # DeepGEMM (its own kernel names)
    ("void deep_gemm::fp8_gemm_kernel<128, 128, 64, 4, 8>(x)", "DeepGEMM", k.MATMUL, k.TENSOR, k.FP8),
    # TransformerEngine's own kernels: casts, not GEMMs
    (
        "void transformer_engine::detail::cast_fp8_2D_kernel<float, __nv_fp8_e4m3>(x)",
        "TransformerEngine",
        k.OTHER,
        k.NONE,
        k.FP8,
    ),
    # Triton (Inductor's pointwise kernels; triton_kernels' matmul_ogs on MI300X, the vLLM gpt-oss trace)
    ("triton_poi_fused__to_copy_add_0", "Triton", k.OTHER, k.NONE, None),
    ("_matmul_ogs_NNT_bf16xbf16xmxfp4_128x128x128x1_swiglu", "Triton", k.MATMUL, k.UNKNOWN, k.FP8),
    # AMD: Tensile/hipBLASLt, MIOpen, Composable Kernel (the MI300X, MI250 and MI210 traces)
    (
        "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x256x32_MI16x16x1_SN_LDSB1",
        "Tensile/hipBLASLt",
        k.MATMUL,
        k.MATRIX,
        k.BF16,
    ),
    (
        "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0",
        "Tensile/hipBLASLt",
        k.MATMUL,
        k.MATRIX,
        k.FP32,
    ),
    ("igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt256x64x32_wt32x32x8_ws1x1_wr2x2_mh", "MIOpen", k.CONV, k.MATRIX, k.BF16),
    ("SubTensorOpWithScalar1d", "MIOpen", k.OTHER, k.NONE, None),
    ("batched_transpose_32x32_half", "MIOpen", k.OTHER, k.NONE, k.FP16),
    (
        "_ZN2ck16tensor_operation6device37kernel_batched_gemm_xdlops_bwd_weightINS_47GridwiseGemm",
        "Composable Kernel",
        k.MATMUL,
        k.MATRIX,
        None,
    ),
    # PyTorch's own kernels
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(x)",
        "ATen",
        k.OTHER,
        k.NONE,
        k.FP32,
    ),
    # XLA's fusions and Triton GEMMs (the JAX captures)
    ("loop_add_fusion.kd", "XLA", k.OTHER, k.NONE, None),
    ("gemm_fusion_dot_general_1", "XLA", k.MATMUL, k.TENSOR, None),
    # communication
    (
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "NCCL/RCCL",
        k.COLLECTIVE,
        k.NONE,
        k.FP32,
    ),
    ("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "NCCL/RCCL", k.COLLECTIVE, k.NONE, None),
    (
        "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*)",
        "DeepEP",
        k.COLLECTIVE,
        k.NONE,
        k.BF16,
    ),
    ("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*)", "DeepEP", k.COLLECTIVE, k.NONE, None),
    ("void nvshmemi_proxy_kernel(x)", "NVSHMEM", k.COLLECTIVE, k.NONE, None),
    (
        "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*)",
        "symmetric memory",
        k.COLLECTIVE,
        k.NONE,
        k.BF16,
    ),
    ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(x)", "custom all-reduce", k.COLLECTIVE, k.NONE, k.BF16),
    (
        "void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16>(x)",
        "custom all-reduce",
        k.COLLECTIVE,
        k.NONE,
        k.BF16,
    ),
]


@pytest.mark.parametrize("name,library,role,unit,precision", NAMES)
def test_the_table_identifies_each_library(name, library, role, unit, precision):
    i = k.identify(name)
    assert (i.library, i.role, i.unit, i.precision) == (library, role, unit, precision)


@pytest.mark.parametrize("name", ["my_gemm_kernel", "void sage_quant_kernel<1>(x)", "k_kernel", "foo_bar_step_kernel"])
def test_what_nothing_identifies_is_unknown(name):
    i = k.identify(name)
    assert i.library is None or i.unit == k.UNKNOWN
    if i.library is None:
        assert (i.role, i.unit) == (k.UNKNOWN, k.UNKNOWN) and kernel_flags(name) & Flag.UNIT_UNKNOWN


def test_flags_follow_the_table():
    fp8 = "void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(x)"
    assert kernel_flags(fp8) == Flag.TENSOR_CORE | Flag.FP8 | Flag.MATRIX_WORK
    assert kernel_flags("volta_sgemm_128x64_nn") == Flag.MATRIX_WORK
    assert kernel_flags("my_gemm_kernel") == Flag.UNIT_UNKNOWN


@pytest.mark.parametrize(
    "name",
    [n for n, _, role, _, _ in NAMES if role == k.COLLECTIVE],
)
def test_communication_kernels_are_collectives(name):
    assert classify_device_event(name) == Kind.COLLECTIVE


def test_the_doc_lists_every_entry_and_its_source():
    text = DOC.read_text()
    for f in (*k.FAMILIES, *k.COMMUNICATION):
        assert f"| {f.library} | {f.role} | {f.unit} |" in text, f.library
        assert f.source in text, f.source

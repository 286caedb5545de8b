"""What a GPU kernel is, from its name: the one table of kernel naming (issue 50).

A trace names a kernel by its C++ signature, a mangled symbol or a generated identifier; the library
that built it names it after a convention of its own, and that convention is what tells what the
kernel runs on. Each entry of `FAMILIES` is one library's convention: the pattern that finds its
names, what the kernels it names do (`role`), which units run them (`unit`), and where the naming
was read (`source`: the library's documentation or source, or the public trace it was seen in,
docs/corpus.md). The first entry whose pattern matches decides; a name no entry matches is
`UNKNOWN`, and so is its unit: the Tensor Core checks count such kernels apart and withhold their
verdict where they weigh much, instead of reading "no Tensor Cores" into a name nothing explains.

Precision is read apart from the family (`precision_of`): the dtype tokens libraries put in their
names (`e4m3`, `MxE2m1`, `bf16`, `tf32`, Tensile's `_BBS_`). FP8 and narrower floats (FP6, FP4, the
MX and NV block formats) are one precision of their own, `FP8`: never "32-bit", never advised back to
bf16 or TF32.

Communication kernels are in `COMMUNICATION` (the same shape of table): the collective libraries
(NCCL, RCCL, MSCCL++), expert-parallel all-to-all (DeepEP, NVSHMEM), symmetric-memory all-reduce
(`multimem`), and the custom all-reduce kernels of serving engines (vLLM, SGLang, TensorRT-LLM,
AMD's quick reduce). Whatever their library, they move data between GPUs: collectives, not compute.
"""

from __future__ import annotations

import dataclasses
import re
from functools import lru_cache

# What runs the kernel's arithmetic
TENSOR = "tensor"  # NVIDIA Tensor Cores (HMMA/IMMA, Hopper's warp-group MMA, Blackwell's tcgen05 MMA)
MATRIX = "matrix"  # AMD matrix cores (MFMA/xdlops, WMMA)
CORES = "cores"  # the SIMT units: CUDA cores, AMD's stream processors (an FMA GEMM, a GEMV)
NONE = "none"  # no matrix arithmetic: element-wise, reductions, layout, casts, communication
UNKNOWN = "unknown"  # nothing in the table identifies it

# What the kernel does
MATMUL = "matmul"  # a GEMM or a batched/grouped GEMM, a GEMV
CONV = "conv"  # a convolution (implicit GEMM, Winograd, FFT)
ATTENTION = "attention"  # fused attention (FlashAttention, fmha)
COLLECTIVE = "collective"  # moves data between GPUs
OTHER = "other"  # anything else a library runs (element-wise, norms, layout, casts, routing)

MATRIX_ROLES = frozenset({MATMUL, CONV, ATTENTION})

# Precision classes
FP8 = "fp8"  # 8-bit floats and narrower: e4m3, e5m2, FP6, FP4 (e2m1), MX and NVFP4 block formats
BF16 = "bf16"
FP16 = "fp16"
TF32 = "tf32"
FP32 = "fp32"
INT8 = "int8"


@dataclasses.dataclass(frozen=True, slots=True)
class Family:
    """One library's kernel naming."""

    library: str
    pattern: re.Pattern[str]
    role: str
    unit: str
    source: str


@dataclasses.dataclass(frozen=True, slots=True)
class Identity:
    """What the table says of one kernel name."""

    library: str | None  # None: nothing identifies it
    role: str  # MATMUL, CONV, ATTENTION, COLLECTIVE, OTHER; UNKNOWN when nothing identifies it
    unit: str  # TENSOR, MATRIX, CORES, NONE, UNKNOWN
    precision: str | None  # FP8, BF16, FP16, TF32, FP32, INT8; None when the name does not say

    @property
    def known(self) -> bool:
        return self.library is not None

    @property
    def matrix_work(self) -> bool:
        """A GEMM, convolution or attention kernel, by its library's naming."""
        return self.role in MATRIX_ROLES


def _f(library: str, pattern: str, role: str, unit: str, source: str, flags: int = 0) -> Family:
    return Family(library, re.compile(pattern, flags), role, unit, source)


I = re.IGNORECASE  # noqa: E741

# Sources, named once
CUBLAS_SRC = "cuBLAS: kernels named <arch>_<type><tile>gemm (sm80/sm90 xmma, nvjet since CUDA 12.x); seen in tests/data/gpu (H100) and the corpus (V100, A100, H100, H800, B200)"
CUTLASS2_SRC = (
    "CUTLASS 2.x library kernel names cutlass_<cc>_<opclass>_<type>gemm (tools/library, OpClassTensorOp/OpClassSimt)"
)
CUTLASS3_SRC = "CUTLASS 3.x: every kernel is cutlass::device_kernel<Kernel> (include/cutlass/device_kernel.h); Hopper/Blackwell GEMMs are TMA + warp-group/tcgen05 MMA"
CUDNN_SRC = "cuDNN kernel names (<arch>_<type>cudnn, implicit/explicit_convolve_sgemm, winograd, fft, cask offsets); seen in the corpus (V100, A100, H100)"
FLASH_SRC = "FlashAttention 2 (flash_fwd_kernel, flash_bwd_*) and 3 (flash::FlashAttn*Sm90, compute_attn_ws), Dao-AILab/flash-attention; PyTorch's copy pytorch_flash::"
TRTLLM_SRC = "TensorRT-LLM / trtllm-gen Blackwell kernels (bmm_<A>_<B>..., fmhaSm100*), seen in the B200 vLLM trace of AMD-AGI/TraceLens"
DEEPGEMM_SRC = "DeepGEMM (deepseek-ai/DeepGEMM: sm90/sm100 fp8 GEMM kernels) and DeepSeek's profile-data (dpsk::grouped_gemm in cutlass::device_kernel)"
TE_SRC = "TransformerEngine (NVIDIA/TransformerEngine): its own kernels are casts, norms, amax and transposes; its GEMMs are cuBLASLt's"
TRITON_SRC = "Triton kernels as PyTorch Inductor names them (triton_poi/red/per: pointwise and reductions; triton_tem: templates) and triton_kernels' matmul_ogs"
TENSILE_SRC = "Tensile/hipBLASLt (rocBLAS's GEMMs): Cijk_<layout>_<types>_..._MI<m>x<n>x<k>x<b>_ (matrix-instruction tile); seen in the corpus (MI210, MI250, MI300X)"
MIOPEN_SRC = "MIOpen: igemm_<dir>_gtcx<n> (implicit GEMM on xdlops, i.e. MFMA), naive_conv, batched_transpose, SubTensorOp; seen in the corpus (MI210, MI300X)"
CK_SRC = "Composable Kernel (ROCm/composable_kernel): ck::tensor_operation::device::*xdl*/*wmma* kernels on MFMA/WMMA, ck_tile:: kernels"
ATEN_SRC = "PyTorch ATen's own CUDA/HIP kernels (at::native::): element-wise, reductions, indexing, norms, softmax"
MEMEFF_SRC = "PyTorch/xFormers memory-efficient attention (fmha_cutlassF/B_<type>_..._sm<cc>): CUTLASS MMA for f16/bf16, CUDA cores for f32"
XLA_GEMM_SRC = "XLA's Triton GEMMs (gemm_fusion_dot_*): MMA for 16-bit and TF32 dots, 810-840 TFLOP/s bf16 on an H100 (tests/data/gpu)"
XLA_SRC = "XLA's fused element-wise and reduction kernels (loop_*_fusion, input_*_fusion, wrapped_*; `.kd` on ROCm)"
MMA_SRC = "MMA instruction tile codes in kernel names: h884/s884 (Volta HMMA.884), h1688/s1688/16816 (Turing/Ampere HMMA), i8816/i16832 (IMMA), xmma, wgmma/gmma (Hopper warp-group MMA)"
ATEN_NAMES = (
    r"at::native::|at_cuda_detail::|(?:^|\s)(?:void )?at::|c10::cuda::|cunn_|CatArrayBatchedCopy|elementwise_kernel"
    r"|vectorized_elementwise|reduce_kernel|multi_tensor_apply|distribution_elementwise|batch_norm_|layer_norm"
    r"|softmax_warp|upsample_|max_pool|avg_pool|adaptive_avg|index_elementwise|scatter_gather|_scatter_|RowwiseMoments"
    r"|GammaBeta|LayerNorm|bitonicSort|radixSort|gatherTopK|sortKeyValue|embedding_backward|EmbeddingBag|nll_loss"
    r"|bounds_check_indices|im2col|col2im|indexSelect|indexing_backward|groupnorm|group_norm"
)
VLLM_NAMES = (
    r"vllm::|sgl_hip::|sgl_kernel::|sglang::|flashinfer::|reshape_and_cache|rotary_embedding|store_kvcache|act_and_mul"
    r"|silu_and_mul|fused_add_rms_norm|rms_norm_kernel|moe_align|topkGating|moe_sum|count_and_sort_expert"
    r"|_combined_routing|_finalize_matmul|_topk_forward|per_token_group_quant|dynamic_per_token|scaled_fp8_quant"
)

FAMILIES: tuple[Family, ...] = (
    # -- NVIDIA: cuBLAS / cuBLASLt ------------------------------------------------------------------
    _f("cuBLAS", r"^nvjet_", MATMUL, TENSOR, CUBLAS_SRC),
    # xmma kernels on the FMA path (`sm80_xmma_gemm_f32f32_..._ffma_`): CUDA cores
    _f("cuBLAS/cuDNN", r"^sm\d+_xmma.*(?:ffma|_simt_)", MATMUL, CORES, CUBLAS_SRC),
    _f("cuBLAS", r"^sm\d+_xmma_gemm", MATMUL, TENSOR, CUBLAS_SRC),
    _f("cuDNN", r"^sm\d+_xmma_(?:fprop|dgrad|wgrad)", CONV, TENSOR, CUDNN_SRC),
    _f("cuBLAS/cuDNN", r"^sm\d+_xmma", MATMUL, TENSOR, CUBLAS_SRC),
    # `volta_h884gemm_...`, `ampere_fp16_s16816gemm_fp16_...`, `turing_i8816gemm`: MMA tile codes
    _f(
        "cuBLAS",
        r"^(?:maxwell|pascal|volta|turing|ampere|ada|hopper)_\w*?(?:884|1688|16816|8816|16832)\w*gemm",
        MATMUL,
        TENSOR,
        CUBLAS_SRC,
    ),
    # `volta_sgemm_128x64_nn`, `ampere_fp16_sgemm_fp16_...`, `ampere_gcgemm_64x64_nt`: SIMT GEMMs
    _f("cuBLAS", r"^(?:maxwell|pascal|volta|turing|ampere|ada|hopper)_\w*gemm", MATMUL, CORES, CUBLAS_SRC),
    # -- NVIDIA: cuDNN's convolutions and attention ------------------------------------------------------
    _f("cuDNN", r"(?:^|_)[sh](?:884|1688|16816)cudnn|cudnn_\w*(?:hmma|xmma)", CONV, TENSOR, CUDNN_SRC),
    _f(
        "cuDNN",
        r"(?:^|_)[shdc]cudnn_|scudnn|implicit_convolve_sgemm|explicit_convolve_sgemm|cudnn::detail::\w*engine|(?:^|\s|::)wgrad_alg\d_engine|dgrad_engine|cudnn::winograd|winograd_nonfused|(?:^|\s)(?:void )?fft\d*d?_|\bfft\d+d_[rc]2[rc]|cudnn::cnn::\w*(?:conv|gemm)",
        CONV,
        CORES,
        CUDNN_SRC,
    ),
    _f("cuDNN", r"_sdpa_sm\d+|cudnn_generated_fort_native_sdpa", ATTENTION, TENSOR, CUDNN_SRC),
    # -- NVIDIA: CUTLASS 2 (also inside cuDNN: `cutlass__5x_cudnn::Kernel<cutlass_tensorop_...>`) ---------
    _f(
        "CUTLASS",
        r"ImplicitGemmConvolution\w*MmaTensorOp|_tensorop_\w*(?:fprop|dgrad|wgrad)",
        CONV,
        TENSOR,
        CUTLASS2_SRC,
    ),
    _f(
        "CUTLASS",
        r"cutlass\w*_(?:wmma_)?tensorop_|OpClassTensorOp|MmaTensorOp|cutlass3x_sm\d+_tensorop",
        MATMUL,
        TENSOR,
        CUTLASS2_SRC,
    ),
    _f("CUTLASS", r"ImplicitGemmConvolution\w*MmaSimt", CONV, CORES, CUTLASS2_SRC),
    _f("CUTLASS", r"cutlass\w*_simt_|OpClassSimt|MmaSimt", MATMUL, CORES, CUTLASS2_SRC),
    # -- fused attention ----------------------------------------------------------------------------------
    _f(
        "FlashAttention",
        r"FlashAttn(?:Bwd|Fwd)?(?:Preprocess|Postprocess|Convert|Combine)|flash_bwd_(?:convert|dot_do_o|clear)|flash::(?:prepare|combine)|flash_fwd_splitkv_combine",
        OTHER,
        NONE,
        FLASH_SRC,
    ),
    _f(
        "FlashAttention",
        r"flash::FlashAttn|flash::compute_attn|flash_fwd_kernel|flash_fwd_splitkv_kernel|flash_bwd_\w*kernel|pytorch_flash::|flash_attn",
        ATTENTION,
        TENSOR,
        FLASH_SRC,
    ),
    _f("PyTorch mem-efficient attention", r"fmha_cutlass[FB]_f32", ATTENTION, CORES, MEMEFF_SRC),
    _f("PyTorch mem-efficient attention", r"fmha_cutlass[FB]_", ATTENTION, TENSOR, MEMEFF_SRC),
    _f("TensorRT-LLM", r"^fmhaSm\d+|fmha_v2_|fmhaKernel", ATTENTION, TENSOR, TRTLLM_SRC),
    _f(
        "Composable Kernel",
        r"(?:^_ZN7ck_tile|ck_tile::)\w*(?:Fmha|FlashAttn)|^_ZN\d+ck_tile\w*Fmha",
        ATTENTION,
        MATRIX,
        CK_SRC,
    ),
    _f(
        "Triton attention",
        r"kernel_unified_attention|^_attn_fwd|^attn_fwd|^_fwd_kernel$|^sage_fwd|^_attn_bwd",
        ATTENTION,
        UNKNOWN,
        TRITON_SRC,
    ),
    # -- DeepGEMM / DeepSeek, CUTLASS 3 ---------------------------------------------------------------
    _f("DeepGEMM", r"deep_gemm::|sm(?:90|100)_(?:fp8|bf16)_\w*gemm", MATMUL, TENSOR, DEEPGEMM_SRC),
    _f("CUTLASS 3", r"cutlass::device_kernel<[^(]*(?:Gemm|gemm|Conv|conv|Mma)", MATMUL, TENSOR, CUTLASS3_SRC),
    # DeepSeek's own kernels in its training trace: FP8 casts, SwiGLU, transposes, expert routing
    _f(
        "DeepSeek",
        r"dpsk::grouped_gemm|(?:^|\s)(?:void )?cuda::\w+|utils::transpose|fill_tensormaps",
        OTHER,
        NONE,
        DEEPGEMM_SRC,
    ),
    # -- TensorRT-LLM / trtllm-gen Blackwell batched GEMMs (`bmm_MxE4m3_MxE2m1MxE4m3_Fp32_...`) --------
    _f("TensorRT-LLM", r"^bmm_(?:Mx)?(?:E\d+m\d+|Bfloat16|Fp16|Fp32|Int8)_", MATMUL, TENSOR, TRTLLM_SRC),
    _f("TensorRT-LLM", r"tensorrt_llm::|trtllm|moe::dev::", OTHER, NONE, TRTLLM_SRC),
    # -- TransformerEngine ------------------------------------------------------------------------------
    _f("TransformerEngine", r"transformer_engine::|\bnvte_", OTHER, NONE, TE_SRC),
    # -- AMD: Tensile / hipBLASLt, MIOpen, Composable Kernel ----------------------------------------------
    _f("Tensile/hipBLASLt", r"^Cijk_\w*?_MI\d+x\d+x\d+", MATMUL, MATRIX, TENSILE_SRC),
    _f("Tensile/hipBLASLt", r"^Cijk_", MATMUL, CORES, TENSILE_SRC),
    _f("MIOpen", r"^igemm_\w+_gtcx\d*_", CONV, MATRIX, MIOPEN_SRC),
    _f("MIOpen", r"^igemm_\w+_gtc_|naive_conv_|MIOpenConv|miopenSp3AsmConv", CONV, CORES, MIOPEN_SRC),
    _f(
        "MIOpen",
        r"^batched_transpose_|^transpose_(?:NCHW|CNHW|NHWC)|SubTensorOp|^MIOpen|^miopen|Op(?:Tensor|4d|2d)Tensor|^Im\d?d\d?2Col|^Col2Im",
        OTHER,
        NONE,
        MIOPEN_SRC,
    ),
    _f(
        "Composable Kernel",
        r"(?:^_ZN2ck|ck::tensor_operation)\w*(?:conv|Conv)\w*(?:xdl|wmma|Xdl|Wmma)",
        CONV,
        MATRIX,
        CK_SRC,
    ),
    _f("Composable Kernel", r"(?:^_ZN2ck|ck::tensor_operation)\w*(?:xdl|wmma|Xdl|Wmma)", MATMUL, MATRIX, CK_SRC),
    _f("Composable Kernel", r"(?:^_ZN7ck_tile|ck_tile::)\w*(?:Gemm|gemm)", MATMUL, MATRIX, CK_SRC),
    _f("Composable Kernel", r"^_ZN2ck|^_ZN7ck_tile|ck::|ck_tile::", OTHER, NONE, CK_SRC),
    _f(
        "rocBLAS",
        r"^rocblas_",
        OTHER,
        CORES,
        "rocBLAS's own kernels (rocblas_<op>_kernel: GEMV and BLAS-1 on stream processors)",
    ),
    _f(
        "AITER",
        r"(?:^_ZN5aiter|aiter::)\w*(?:gemm|fmoe|fmha|mla_)",
        MATMUL,
        MATRIX,
        "AITER (ROCm/aiter): asm/CK GEMM, MoE and attention kernels on MFMA",
    ),
    _f("AITER", r"^_ZN5aiter|aiter::", OTHER, NONE, "AITER (ROCm/aiter): norms, quantisation, rotary"),
    # -- MAGMA ----------------------------------------------------------------------------------------
    _f("MAGMA", r"magma_\w*gemm", MATMUL, CORES, "MAGMA (magma_sgemmEx_kernel; PyTorch's batched small-matrix path)"),
    # -- Triton -----------------------------------------------------------------------------------------
    _f("Triton", r"^triton_(?:poi|red|per)_", OTHER, NONE, TRITON_SRC),
    _f("Triton", r"^triton_tem_|matmul_ogs|^triton_\w*(?:mm|gemm|bmm)(?:_|$)", MATMUL, UNKNOWN, TRITON_SRC),
    _f("Triton", r"^triton_", OTHER, UNKNOWN, TRITON_SRC),
    # -- XLA (JAX, TensorFlow) ------------------------------------------------------------------------------
    _f("XLA", r"^gemm_fusion|^triton_gemm|__triton_gemm", MATMUL, TENSOR, XLA_GEMM_SRC),
    _f(
        "XLA",
        r"^(?:loop|input)_\w*fusion|^wrapped_|^fusion(?:[._]\d+)*(?:\.kd)?$|^[a-z_]+_fusion(?:[._]\d+)*(?:\.kd)?$",
        OTHER,
        NONE,
        XLA_SRC,
    ),
    # -- any other name with an MMA instruction's tile code ------------------------------------------------
    _f(
        "MMA tile code",
        r"h884|s884|h1688|s1688|c1688|hmma|16816|i8816|i16832|xmma_gemm|xmma_implicit_gemm|xmma_sparse|wgmma|_gmma_",
        MATMUL,
        TENSOR,
        MMA_SRC,
        re.I,
    ),
    # -- cuBLAS's helpers: GEMV (matrix-vector, on CUDA cores), split-K reductions, BLAS-1, epilogues ----------
    _f(
        "cuBLAS",
        r"(?:^|[\s:<])(?:gemv2[NT]_kernel|gemvNSP|gemv_kernel|gemvx|gemmk1_kernel|gemmSN_\w+_kernel)",
        OTHER,
        CORES,
        CUBLAS_SRC,
    ),
    _f(
        "cuBLAS",
        r"(?:^|[\s:])(?:cublasLt::)?(?:splitKreduce_kernel|reduce_1Block_kernel|dot_kernel|scal_kernel|axpy_kernel|asum_kernel|nrm2_kernel)|cublasLt::|epilogue::impl::",
        OTHER,
        NONE,
        CUBLAS_SRC,
    ),
    # -- cuDNN's helpers: layout transforms, batch norm, offsets (cask) ------------------------------------
    _f("cuDNN", r"cudnn|cask_|cask::", OTHER, NONE, CUDNN_SRC),
    # -- libraries of element-wise, layout and routing kernels ------------------------------------------------
    _f("ATen", ATEN_NAMES, OTHER, NONE, ATEN_SRC),
    _f(
        "Eigen/TensorFlow",
        r"Eigen::|EigenMetaKernel|tensorflow::|BiasNHWCKernel|BiasGradNHWC",
        OTHER,
        NONE,
        "TensorFlow's Eigen kernels (EigenMetaKernel) and its own (tensorflow::functor)",
    ),
    _f(
        "FBGEMM",
        r"fbgemm_gpu::|split_embedding_|permute_pooled_embs|_block_bucketize|jagged_|dense_to_jagged|recat_copy",
        OTHER,
        NONE,
        "FBGEMM GPU and TorchRec (pytorch/FBGEMM, pytorch/torchrec): embedding, permute, bucketize, jagged kernels",
    ),
    _f(
        "CUB/Thrust",
        r"cub::|thrust::|rocprim::|hipcub::|\bcub_|DeviceRadixSort|DeviceScan|DeviceReduce|DeviceSegmented",
        OTHER,
        NONE,
        "CUB, Thrust and rocPRIM device algorithms",
    ),
    _f(
        "vLLM/SGLang",
        VLLM_NAMES,
        OTHER,
        NONE,
        "vLLM and SGLang's own kernels (norms, rotary, KV cache, MoE routing, quantisation); seen in the corpus",
    ),
    _f(
        "Apex",
        r"apex::|welford|fused_adam|AdamFunctor|LambFunctor",
        OTHER,
        NONE,
        "NVIDIA Apex and PyTorch's fused optimizers",
    ),
    _f(
        "ROCclr",
        r"^__amd_rocclr_",
        OTHER,
        NONE,
        "ROCclr's copy and fill kernels (__amd_rocclr_copyBuffer, __amd_rocclr_fillBuffer)",
    ),
)

# -- communication ------------------------------------------------------------------------------------------

COMMUNICATION: tuple[Family, ...] = (
    _f(
        "NCCL/RCCL",
        r"^nccl|^rccl|ncclDevKernel|ncclKernel|^void ncclDevKernel|^void nccl",
        COLLECTIVE,
        NONE,
        "NCCL and RCCL kernels (ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_SendRecv_..., ncclDevKernel_Generic on ROCm)",
    ),
    _f("MSCCL++", r"mscclpp|msccl", COLLECTIVE, NONE, "MSCCL/MSCCL++ kernels (microsoft/mscclpp)"),
    _f(
        "DeepEP",
        r"deep_ep::|dpsk::ep::|\bep::internode::|\bep::intranode::|\binternode::(?:dispatch|combine|notify|cached_notify)|\bintranode::(?:dispatch|combine|notify|cached_notify)|internode_ll::",
        COLLECTIVE,
        NONE,
        "DeepEP (deepseek-ai/DeepEP: intranode/internode dispatch, combine, notify; low-latency internode_ll); DeepSeek's profile-data names them dpsk::ep::internode::",
    ),
    _f(
        "NVSHMEM", r"nvshmem|nvshmemi_|nvshmemx_", COLLECTIVE, NONE, "NVSHMEM's device kernels (nvshmemi_*, nvshmemx_*)"
    ),
    _f(
        "symmetric memory",
        r"multimem_all_reduce|multimem_all_gather|one_shot_all_reduce|two_shot_all_reduce|symm_mem|multimem_\w*reduce",
        COLLECTIVE,
        NONE,
        "PyTorch symmetric memory (torch.distributed._symmetric_memory: multimem_all_reduce_kernel, one/two_shot_all_reduce_kernel); seen in the B200 vLLM trace",
    ),
    _f(
        "custom all-reduce",
        r"cross_device_reduce|custom_all_reduce|CustomAllreduce|allreduce_fusion_kernel|oneShotAllReduce|twoShotAllReduce|lamport\w*(?:allreduce|all_reduce)|allReduce\w*Kernel|all_reduce_kernel|quickreduce|quick_reduce|QuickReduce",
        COLLECTIVE,
        NONE,
        "serving engines' all-reduce kernels: vLLM/SGLang cross_device_reduce_1stage/2stage, TensorRT-LLM allreduce_fusion_kernel and one/twoShotAllReduce, AMD quick reduce",
    ),
)


# Tokens of 8-bit and narrower floats in kernel names: OCP FP8 (`e4m3`, `e5m2`), FP6 (`e3m2`, `e2m3`),
# FP4 (`e2m1`), the MX block formats (`MxE4m3`, `mxfp4`, `ue8m0` scales), NVFP4, PyTorch's and CUDA's
# type names (`Float8_e4m3fn`, `__nv_fp8_e4m3`), and `fp8` as libraries write it.
FP8_NAME = re.compile(
    r"e4m3|e5m2|e3m2|e2m3|e2m1|ue8m0|float8|__nv_fp8|_fp8|fp8_|\bfp8|mxfp[468]|nvfp4|_fp4|fp4_|\bfp4|_fp6|f8f8|_f8_|_bf8_",
    re.I,
)
# Tensile's data types after the layout (`Cijk_Alik_Bljk_BBS_BH_...`, `Cijk_Ailk_Bljk_SB_...`):
# S float, D double, H half, B bfloat16, F8/B8 (and the fnuz F8N/B8N) fp8, I8 int8, X xfloat32
_TENSILE_TYPES = re.compile(r"^Cijk_A\w{3}_B\w{3}_([A-Z0-9]+)_")
_TENSILE_PRECISION = (
    ("F8", FP8),
    ("B8", FP8),
    ("I8", INT8),
    ("X", TF32),
    ("B", BF16),
    ("H", FP16),
    ("S", FP32),
    ("D", FP32),
)
_NVJET = re.compile(r"^nvjet_(?:sm\d+_)?([a-z]{3})_")
_NVJET_TYPES = {"tst": BF16, "hsh": FP16, "tss": BF16, "hss": FP16, "sss": FP32}
_BF16 = re.compile(r"bf16|bfloat16|__nv_bfloat16|BFloat16|_bf16|Bfloat16", re.I)
_FP16 = re.compile(r"(?<![b])f16|half|fp16|Fp16|__half", re.I)
_TF32 = re.compile(r"tf32|tfloat32", re.I)
_FP32 = re.compile(r"f32f32_f32|sgemm|scudnn|_f32_|float>|<float,", re.I)
_INT8 = re.compile(r"i8816|i16832|int8|_i8_|imma", re.I)


def precision_of(name: str) -> str | None:
    """The precision a kernel's name says it computes in, None when it does not say. FP8 (and
    narrower) first: an FP8 GEMM that writes bf16 is an FP8 GEMM."""
    if FP8_NAME.search(name):
        return FP8
    m = _TENSILE_TYPES.match(name)
    if m:
        code = m.group(1)
        return next((p for prefix, p in _TENSILE_PRECISION if code.startswith(prefix)), None)
    m = _NVJET.match(name)
    if m:
        return _NVJET_TYPES.get(m.group(1))
    if _INT8.search(name):
        return INT8
    if _TF32.search(name):
        return TF32
    if _BF16.search(name):
        return BF16
    if _FP16.search(name):
        return FP16
    if _FP32.search(name):
        return FP32
    return None


def _first(table: tuple[Family, ...], name: str) -> Family | None:
    return next((f for f in table if f.pattern.search(name)), None)


@lru_cache(maxsize=8192)
def identify(name: str) -> Identity:
    """What the table says of the kernel `name` (UNKNOWN library, role and unit where no entry matches)."""
    fam = _first(COMMUNICATION, name) or _first(FAMILIES, name)
    if fam is None:
        return Identity(None, UNKNOWN, UNKNOWN, precision_of(name))
    return Identity(fam.library, fam.role, fam.unit, precision_of(name))


def is_communication(name: str) -> bool:
    """A kernel that moves data between GPUs (COMMUNICATION)."""
    return _first(COMMUNICATION, name) is not None


# AMD's matrix cores as a kernel's name tells: MFMA instructions, or rocBLAS/Tensile's
# matrix-instruction tag (`Cijk_..._MI32x32x8x1_...`), MIOpen's xdlops (`gtcx`), CK's `xdl`/`wmma`.
# Other kernels may use the matrix cores and not say (MATRIX_CORE_NAMES).
AMD_MATRIX = re.compile(r"mfma|_MI\d+x\d+x\d+|_gtcx\d*_|xdlops|_xdl_|wmma_", re.IGNORECASE)
MATRIX_CORE_NAMES = (
    "kernel names show matrix-core (MFMA) use only where the library names it (rocBLAS/Tensile's "
    "`_MI32x32x8` tag, MIOpen's `gtcx`, `mfma`, CK's `xdl`); a kernel whose name does not say may still use them"
)


def sources() -> list[tuple[str, str]]:
    """(library, source) of every entry, each once, in the table's order: what docs/kernel-naming.md lists."""
    seen: dict[tuple[str, str], None] = {}
    for f in (*FAMILIES, *COMMUNICATION):
        seen.setdefault((f.library, f.source), None)
    return list(seen)

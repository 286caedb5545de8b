"""Regenerate demo_logs/: one profile run per scenario of the GPU performance guide.

    python scripts/make_demo_logs.py [OUTDIR]      (default: demo_logs)

Deterministic: the same bytes every time (no clocks, no unseeded randomness). Each run folder gets a
README.md saying what it shows and which checks it should trigger. The real captures are kept as they
are: `tf_cpu_capture/` (made by scripts/capture_tf_cpu.py) and the PyTorch traces
`pytorch_resnet50_num_workers_*` (copied from tests/data/pytorch).
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]  # the package, and tests/support: the writers

from support.kineto_writer import ddp_job  # noqa: E402
from support.xplane_writer import GPU_SPECS, ProfileWriter, Stream, Thread  # noqa: E402

SESSION = "2026_11_22_10_00_00"
HOST = "gpu-worker-0"
# real captures, not generated here: a tensorflow-cpu capture, and two PyTorch traces (copied from
# tests/data/pytorch, one span each)
KEEP = {"tf_cpu_capture", "pytorch_resnet50_num_workers_0", "pytorch_resnet50_num_workers_4"}


@dataclasses.dataclass(frozen=True)
class K:
    """One kernel of a model step."""

    name: str
    op: str
    dur_us: float
    shape: str = ""
    grid: tuple = (108, 1, 1)
    block: tuple = (256, 1, 1)
    regs: int = 64
    shared: int = 0


# -- kernel libraries (names as CUDA/cuDNN/cuBLAS/Eigen/NCCL print them) ------------------------

EIGEN_F16 = "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<Eigen::half, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_sum_op<Eigen::half const, Eigen::half const>, Eigen::TensorMap<Eigen::Tensor<Eigen::half const, 1, 1, long>, 16, Eigen::MakePointer> const, Eigen::TensorMap<Eigen::Tensor<Eigen::half const, 1, 1, long>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<Eigen::half, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_sum_op<Eigen::half const, Eigen::half const>, Eigen::TensorMap<Eigen::Tensor<Eigen::half const, 1, 1, long>, 16, Eigen::MakePointer> const, Eigen::TensorMap<Eigen::Tensor<Eigen::half const, 1, 1, long>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, long)"  # noqa: E501
EIGEN_F32 = "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_product_op<float const, float const>, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, long>(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<Eigen::Tensor<float, 1, 1, long>, 16, Eigen::MakePointer>, Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_product_op<float const, float const>, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const, Eigen::TensorMap<Eigen::Tensor<float const, 1, 1, long>, 16, Eigen::MakePointer> const> const> const, Eigen::GpuDevice>, long)"  # noqa: E501
NCCL_ALLREDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def resnet_block_fp16(i: int) -> list[K]:
    """A mixed-precision conv block on Ampere: Tensor Core convolutions and GEMMs, fp16 element-wise."""
    s = f"resnet/block{i}"
    return [
        K(
            "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16",
            f"{s}/conv1/Conv2D:Conv2D",
            410,
            "(half[128,56,56,64];half[3,3,64,64])",
            (392, 1, 1),
            (128, 1, 1),
            168,
            65536,
        ),
        K(
            "void cudnn::bn_fw_tr_1C11_kernel_NCHW<__half, float, 512, true, 1>",
            f"{s}/bn1/FusedBatchNormV3:FusedBatchNormV3",
            95,
            "(half[128,56,56,64];float[64])",
            (64, 32, 1),
            (512, 1, 1),
            40,
        ),
        K(EIGEN_F16, f"{s}/relu1/Relu:Relu", 38, "(half[128,56,56,64])", (3136, 1, 1), (1024, 1, 1), 24),
        K(
            "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16",
            f"{s}/conv2/Conv2D:Conv2D",
            410,
            "(half[128,56,56,64];half[3,3,64,64])",
            (392, 1, 1),
            (128, 1, 1),
            168,
            65536,
        ),
        K(
            "void cudnn::bn_fw_tr_1C11_kernel_NCHW<__half, float, 512, true, 1>",
            f"{s}/bn2/FusedBatchNormV3:FusedBatchNormV3",
            95,
            "(half[128,56,56,64];float[64])",
            (64, 32, 1),
            (512, 1, 1),
            40,
        ),
        K(
            EIGEN_F16,
            f"{s}/add/AddV2:AddV2",
            42,
            "(half[128,56,56,64];half[128,56,56,64])",
            (3136, 1, 1),
            (1024, 1, 1),
            24,
        ),
        K(
            "sm80_xmma_dgrad_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16",
            f"gradient_tape/{s}/conv2/Conv2D/Conv2DBackpropInput:Conv2DBackpropInput",
            430,
            "(half[128,56,56,64];half[3,3,64,64])",
            (392, 1, 1),
            (128, 1, 1),
            168,
            65536,
        ),
        K(
            "sm80_xmma_wgrad_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16",
            f"gradient_tape/{s}/conv2/Conv2D/Conv2DBackpropFilter:Conv2DBackpropFilter",
            450,
            "(half[128,56,56,64];half[3,3,64,64])",
            (72, 1, 1),
            (256, 1, 1),
            168,
            65536,
        ),
        K(
            "void cudnn::bn_bw_1C11_kernel_new<__half, float, float2, 512, true, 1>",
            f"gradient_tape/{s}/bn2/FusedBatchNormGradV3:FusedBatchNormGradV3",
            120,
            "(half[128,56,56,64];float[64])",
            (64, 32, 1),
            (512, 1, 1),
            48,
        ),
    ]


HEAD_FP16 = [
    K(
        "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
        "resnet/dense/MatMul:MatMul",
        160,
        "(half[128,2048];half[2048,1024])",
        (8, 16, 1),
        (128, 1, 1),
        232,
        73728,
    ),
    K(
        "ampere_fp16_s16816gemm_fp16_64x64_sliced1x2_ldg8_f2f_stages_64x5_tn",
        "gradient_tape/resnet/dense/MatMul/MatMul_1:MatMul",
        170,
        "(half[128,2048];half[128,1024])",
        (16, 32, 1),
        (128, 1, 1),
        168,
        65536,
    ),
    K(
        "void tensorflow::functor::ColumnReduceKernel<Eigen::half const*, float*, cub::Sum>",
        "gradient_tape/resnet/dense/BiasAdd/BiasAddGrad:BiasAddGrad",
        24,
        "(half[128,1024])",
        (32, 1, 1),
        (1024, 1, 1),
        32,
    ),
    K(
        "void tensorflow::functor::ApplyAdamKernel<float>",
        "Adam/Adam/update/ResourceApplyAdam:ResourceApplyAdam",
        60,
        "(float[2048,1024])",
        (1024, 1, 1),
        (1024, 1, 1),
        30,
    ),
]


def fp16_model(blocks: int = 4) -> list[K]:
    out = []
    for i in range(blocks):
        out += resnet_block_fp16(i)
    return out + HEAD_FP16


def fp32_model_volta(blocks: int = 4) -> list[K]:
    """The same model in fp32 on a V100: no Tensor Cores (scudnn/sgemm kernels)."""
    out = []
    for i in range(blocks):
        s = f"resnet/block{i}"
        out += [
            K(
                "volta_scudnn_128x64_relu_interior_nn_v1",
                f"{s}/conv1/Conv2D:Conv2D",
                1180,
                "(float[128,56,56,64];float[3,3,64,64])",
                (392, 1, 1),
                (256, 1, 1),
                126,
                32768,
            ),
            K(
                "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>",
                f"{s}/bn1/FusedBatchNormV3:FusedBatchNormV3",
                170,
                "(float[128,56,56,64];float[64])",
                (64, 32, 1),
                (512, 1, 1),
                40,
            ),
            K(EIGEN_F32, f"{s}/relu1/Relu:Relu", 72, "(float[128,56,56,64])", (3136, 1, 1), (1024, 1, 1), 24),
            K(
                "volta_scudnn_128x64_relu_interior_nn_v1",
                f"{s}/conv2/Conv2D:Conv2D",
                1180,
                "(float[128,56,56,64];float[3,3,64,64])",
                (392, 1, 1),
                (256, 1, 1),
                126,
                32768,
            ),
            K(
                "volta_scudnn_128x128_stridedB_splitK_small_nn_v1",
                f"gradient_tape/{s}/conv2/Conv2D/Conv2DBackpropFilter:Conv2DBackpropFilter",
                1320,
                "(float[128,56,56,64];float[3,3,64,64])",
                (72, 1, 1),
                (256, 1, 1),
                128,
                32768,
            ),
        ]
    return out + [
        K(
            "volta_sgemm_128x64_nn",
            "resnet/dense/MatMul:MatMul",
            480,
            "(float[128,2048];float[2048,1024])",
            (8, 16, 1),
            (256, 1, 1),
            126,
        ),
        K(
            "volta_sgemm_64x64_tn",
            "gradient_tape/resnet/dense/MatMul/MatMul_1:MatMul",
            500,
            "(float[128,2048];float[128,1024])",
            (16, 32, 1),
            (256, 1, 1),
            120,
        ),
        K(
            "void tensorflow::functor::ApplyAdamKernel<float>",
            "Adam/Adam/update/ResourceApplyAdam:ResourceApplyAdam",
            60,
            "(float[2048,1024])",
            (1024, 1, 1),
            (1024, 1, 1),
            30,
        ),
    ]


# fp32 kernels of fp32_model_volta and what mixed precision runs instead (Tensor Core kernels)
TO_FP16_VOLTA = {
    "volta_scudnn_128x64_relu_interior_nn_v1": "volta_fp16_s884cudnn_fp16_128x128_ldg8_relu_f2f_exp_interior_nhwc2nchw_tn_v1",
    "volta_scudnn_128x128_stridedB_splitK_small_nn_v1": "volta_fp16_s884cudnn_fp16_256x128_ldg8_dgrad_f2f_exp_small_nhwc2nchw_tt_v1",
    "volta_sgemm_128x64_nn": "volta_h884gemm_128x64_ldg8_nn",
    "volta_sgemm_64x64_tn": "volta_h884gemm_64x64_ldg8_tn",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>": "void cudnn::bn_fw_tr_1C11_kernel_NCHW<__half, float, 512, true, 1>",
    EIGEN_F32: EIGEN_F16,
}


def fp16_model_volta() -> list[K]:
    """fp32_model_volta with mixed precision: 16-bit Tensor Core convolutions and GEMMs about 2.5x as
    fast, 16-bit element-wise and batch-norm kernels about 1.8x, the optimizer still in fp32."""
    out = []
    for k in fp32_model_volta():
        name = TO_FP16_VOLTA.get(k.name)
        if name is None:  # the fp32 optimizer update
            out.append(k)
            continue
        fast = 2.5 if ("884" in name) else 1.8
        shape = k.shape.replace("(float[", "(half[").replace(";float[", ";half[")
        out.append(dataclasses.replace(k, name=name, dur_us=round(k.dur_us / fast, 1), shape=shape))
    return out


def odd_dims_fp16_model() -> list[K]:
    """fp16 GEMMs whose dimensions are not multiples of 8: cuBLAS picks non-Tensor-Core kernels."""
    out = []
    for i in range(6):
        out += [
            K(
                "ampere_fp16_sgemm_fp16_128x64_nn",
                f"transformer/layer{i}/ffn/dense_1/MatMul:MatMul",
                520,
                "(half[4000,1001];half[1001,3999])",
                (32, 63, 1),
                (256, 1, 1),
                122,
            ),
            K(
                "ampere_fp16_sgemm_fp16_128x64_nn",
                f"transformer/layer{i}/ffn/dense_2/MatMul:MatMul",
                510,
                "(half[4000,3999];half[3999,1001])",
                (32, 16, 1),
                (256, 1, 1),
                122,
            ),
            K(
                EIGEN_F16,
                f"transformer/layer{i}/ffn/gelu/Mul:Mul",
                45,
                "(half[4000,3999])",
                (15621, 1, 1),
                (1024, 1, 1),
                24,
            ),
            K(
                "void tensorflow::(anonymous namespace)::GenericSoftmaxKernel<Eigen::half, float>",
                f"transformer/layer{i}/attention/softmax/Softmax:Softmax",
                95,
                "(half[32,16,125,125])",
                (8000, 1, 1),
                (128, 1, 1),
                32,
            ),
        ]
    return out


# -- building blocks ------------------------------------------------------------------------------


class Run:
    """One demo run: a writer per host, README text, and helpers that lay out realistic steps."""

    def __init__(self, name: str, title: str, shows: str, checks: list[str], host: str = HOST):
        self.name, self.title, self.shows, self.checks = name, title, shows, checks
        self.writers: list[ProfileWriter] = []
        self.rng = random.Random(name)  # seeded by the run's name: deterministic
        self.writer = self.host(host)
        self.step_start = 0.0  # the current step's start: launches come after it, as in real captures

    def host(self, host: str) -> ProfileWriter:
        w = ProfileWriter(host, fmt="new")
        self.writers.append(w)
        return w

    def old_host(self, host: str) -> ProfileWriter:
        """This run's only host, written as older TensorFlow wrote it (annotations, saved group ids)."""
        w = ProfileWriter(host, fmt="old", group_ids=True)
        self.writers = [w]
        return w

    def jitter(self, us: float, pct: float = 0.03) -> float:
        return round(us * (1 + self.rng.uniform(-pct, pct)), 3)

    def kernels(
        self,
        stream: Stream,
        kernels: list[K],
        t: float,
        launcher: Thread | None,
        gap_us: float = 2.0,
        lead_us: float = 150.0,
        launch_us: float = 4.5,
        scale: float = 1.0,
        is_eager: bool = False,
    ) -> float:
        """Place kernels back to back from t (µs); each launched `lead_us` ahead, but not before the
        step's start. Returns the end."""
        for k in kernels:
            dur = self.jitter(k.dur_us * scale)
            launch = self.jitter(launch_us, 0.2)
            lead = max(min(lead_us, t - self.step_start - launch - 1.0), 0.5)
            stream.kernel(
                k.name,
                t,
                dur,
                op=k.op,
                shape=k.shape or None,
                grid=k.grid,
                block=k.block,
                regs=k.regs,
                shared=k.shared,
                occupancy=50.0,
                launch=launcher,
                launch_us=launch,
                lead_us=lead,
                is_eager=is_eager,
            )
            t += dur + gap_us
        return t

    def tf_data(self, threads: list[Thread], t: float, dur_us: float, stages: list[str]) -> None:
        """tf.data stage events (nested Iterator::... names) on the pipeline's threads."""
        for i, th in enumerate(threads):
            start = t + 13 * i
            d = self.jitter(dur_us)
            depth = len(stages)
            for j, stage in enumerate(stages):
                inset = 3.0 * j
                th.event(stage, start + inset, max(d - 2 * inset - (depth - j), 1.0))

    def each_step(self, python: Thread, steps: int, body, t: float = 1000.0) -> None:
        """Lay out `steps` steps back to back: body(i, t) builds step i from t and returns where it
        ends; the step marker on the Python thread spans [t, end), and the next step starts there."""
        for i in range(steps):
            self.step_start = t
            end = body(i, t)
            python.step(i, t, end - t)
            t = end

    def memory(self, thread: Thread, t: float, device: int, peak_fraction: float, spec_mem: int) -> None:
        peak = int(spec_mem * peak_fraction)
        thread.memory(t, 256 << 20, peak, allocator=f"GPU_{device}_bfc", reserved=0, available=spec_mem - peak)


STAGES_HEAVY = [
    "Iterator::Root::Prefetch::ParallelMapV2",
    "Iterator::Root::Prefetch::ParallelMapV2::Shuffle",
    "Iterator::Root::Prefetch::ParallelMapV2::Shuffle::TFRecord",
]
STAGES_LIGHT = ["Iterator::Root::Prefetch", "Iterator::Root::Prefetch::ParallelMapV2"]


def single_gpu_run(run: Run, spec: str = "A100", private: bool = True):
    w = run.writer
    gpu = w.gpu(0, GPU_SPECS[spec])
    streams = {
        "compute": gpu.stream(7, "Compute"),
        "h2d": gpu.stream(13, "MemcpyH2D"),
        "d2h": gpu.stream(14, "MemcpyD2H"),
        "d2d": gpu.stream(15, "MemcpyD2D"),
    }
    threads = {
        "python": w.thread("python", 11201),
        "launch": w.thread("tf_gpu_private_0/11330" if private else "tf_Compute/11290", 11330 if private else 11290),
        "compute2": w.thread("tf_Compute/11291", 11291),
        "get_next": w.thread("tf_data_iterator_get_next/11402", 11402),
        "resource": w.thread("tf_data_iterator_resource/11410", 11410),
        "pool": [w.thread(f"tf_data_private_threadpool/{11420 + i}", 11420 + i) for i in range(4)],
    }
    return gpu, streams, threads


STEP_OVERHEAD_US = 120.0  # host time from the step marker to its first launch


def healthy(run: Run, steps: int = 6) -> None:
    gpu, s, th = single_gpu_run(run)
    model = fp16_model()
    run.memory(th["python"], 500, 0, 0.72, GPU_SPECS["A100"].memory_bytes)

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 20, 35)  # prefetched: the element is ready
        run.tf_data(th["pool"][:2], t + 200, 1800, STAGES_LIGHT)  # producing the next batch, overlapped
        # next step's input copied while this step computes
        s["h2d"].memcpy(
            "H2D",
            t + 600,
            210,
            128 * 224 * 224 * 3 * 2,
            op="IteratorGetNext:IteratorGetNext",
            launch=th["get_next"],
            lead_us=3,
        )
        end = run.kernels(s["compute"], model, t + 70, th["launch"], lead_us=200)
        s["d2h"].memcpy(
            "D2H", end + 5, 3, 4, op="Adam/Adam/AssignAddVariableOp:AssignAddVariableOp", launch=th["launch"]
        )
        return end + 40

    run.each_step(th["python"], steps, step)


BATCH_BYTES = 128 * 224 * 224 * 3 * 4  # a batch of 128 224x224 RGB images in float32


def input_batch_copy(s: dict, th: dict, start_us: float, dur_us: float) -> None:
    """The batch's host-to-device copy, launched from the input thread (IteratorGetNext)."""
    s["h2d"].memcpy(
        "H2D", start_us, dur_us, BATCH_BYTES, op="IteratorGetNext:IteratorGetNext", launch=th["get_next"], lead_us=3
    )


def input_bound(run: Run, steps: int = 6) -> None:
    gpu, s, th = single_gpu_run(run)
    model = fp16_model()
    t = 1000.0
    for i in range(steps):  # not each_step: a 5 µs gap is left between the markers
        run.step_start = t
        wait = run.jitter(14_000, 0.1)
        th["get_next"].get_next(t + 10, wait)
        run.tf_data([th["resource"]] + th["pool"], t, wait + 300, STAGES_HEAVY)
        input_batch_copy(s, th, t + wait + 20, 420)
        end = run.kernels(s["compute"], model, t + wait + 450, th["launch"], lead_us=100)
        step_end = end + 60
        th["python"].step(i, t, step_end - t)
        t = step_end + 5


def gaps_host_work(run: Run, steps: int = 6) -> None:
    """Keras metrics and a callback run eagerly after every step while the GPU waits."""
    gpu, s, th = single_gpu_run(run)
    model = fp16_model()
    py = th["python"]

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 20, 30)
        end = run.kernels(s["compute"], model, t + STEP_OVERHEAD_US, th["launch"], lead_us=200)
        # after the step's device work: per-step Python work on the host
        h = end + 20
        py.event("$keras/src/callbacks/callback_list.py:106 on_train_batch_end", h, 2600)
        for j, op in enumerate(["ReadVariableOp", "Mean", "AssignAddVariableOp", "DivNoNan", "Identity"] * 4):
            py.eager(op, h + 40 + j * 125, 95)
        py.event("$keras/src/utils/progbar.py:88 update", h + 2650, 900)
        step_end = h + 3600
        return step_end

    run.each_step(py, steps, step)


def thread_contention(run: Run, steps: int = 6) -> None:
    """tf.data threads busy at each step's start; launches share threads with them (no gpu_private)."""
    gpu, s, th = single_gpu_run(run, private=False)
    model = fp16_model()

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 15, 40)
        busy = run.jitter(2200, 0.1)
        run.tf_data(th["pool"] + [th["resource"], th["compute2"]], t, busy, STAGES_HEAVY)
        # the first launches are held back until the tf.data work frees the threads
        first = t + busy + 60
        end = run.kernels(s["compute"], model[:6], first, th["launch"], lead_us=2, launch_us=28)
        end = run.kernels(s["compute"], model[6:], end + 3, th["launch"], lead_us=150)
        return end + 40

    run.each_step(th["python"], steps, step)


def launch_bound(run: Run, steps: int = 5, kernels_per_step: int = 2000) -> None:
    """The guide's example: a very large number of ~21.9 µs Mul kernels the host cannot launch fast enough."""
    gpu, s, th = single_gpu_run(run, spec="V100")
    mul = K(EIGEN_F32, "model/scale/Mul:Mul", 21.9, "(float[256];float[])", (1, 1, 1), (256, 1, 1), 16)

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 10, 25)
        k_t = t + 80
        for j in range(kernels_per_step):
            # the launch (~28 µs of host time) ends after the previous kernel: the GPU waits for it
            launch = run.jitter(28.0, 0.15)
            start = k_t + launch + 1.5
            s["compute"].kernel(
                mul.name,
                start,
                run.jitter(mul.dur_us, 0.05),
                op=f"model/scale_{j % 40}/Mul:Mul",
                shape=mul.shape,
                grid=mul.grid,
                block=mul.block,
                regs=mul.regs,
                launch=th["launch"],
                launch_us=launch,
                lead_us=1.5,
            )
            k_t = start - 1.0
        return k_t + 60

    run.each_step(th["python"], steps, step)


def eager(run: Run, steps: int = 5) -> None:
    """A custom loop without tf.function: every op is dispatched from Python, one at a time."""
    gpu, s, th = single_gpu_run(run)
    py = th["python"]
    model = fp16_model(2)

    def step(i: int, t: float) -> float:
        k_t = t + 50
        for k in model * 2:
            op_type = k.op.rsplit(":", 1)[1]
            py.eager(op_type, k_t, 85)
            dur = run.jitter(k.dur_us)
            s["compute"].kernel(
                k.name,
                k_t + 78,
                dur,
                op=k.op,
                shape=k.shape,
                grid=k.grid,
                block=k.block,
                regs=k.regs,
                launch=py,
                launch_us=6,
                lead_us=1,
                is_eager=True,
            )
            k_t += max(dur, 85) + 12
        return k_t + 30

    run.each_step(py, steps, step)


def host_placement_copies(run: Run, steps: int = 6) -> None:
    """Ops placed on the host mid-step: their inputs go D2H and results back H2D, blocking the GPU."""
    gpu, s, th = single_gpu_run(run)
    model = fp16_model()

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 20, 30)
        end = run.kernels(s["compute"], model[:18], t + STEP_OVERHEAD_US, th["launch"], lead_us=150)
        for j, (op, dur) in enumerate(
            [
                ("resnet/block2/unique/Unique:Unique", 1450),
                ("resnet/block2/string_to_hash/StringToHashBucketFast:StringToHashBucketFast", 820),
            ]
        ):
            name = op.split(":")[0]
            s["d2h"].memcpy(
                "D2H", end + 4, run.jitter(180), 8 << 20, op=f"{name}/input_copy:_Send", launch=th["launch"]
            )
            h = end + 190
            th["compute2"].op(op, h, run.jitter(dur))
            back = h + dur + 15
            s["h2d"].memcpy(
                "H2D", back, run.jitter(170), 8 << 20, op=f"{name}/output_copy:_Recv", launch=th["compute2"], lead_us=3
            )
            end = back + 175
            if j == 0:
                end = run.kernels(s["compute"], model[18:27], end + 3, th["launch"], lead_us=2)
        end = run.kernels(s["compute"], model[27:], end + 3, th["launch"], lead_us=2)
        return end + 50

    run.each_step(th["python"], steps, step)


def fp32_tensor_core_gpu(run: Run, steps: int = 6) -> None:
    volta_training(run, steps, fp32_model_volta())


def volta_training(run: Run, steps: int, model: list[K]) -> None:
    """A step on a V100 with its input ready: the batch copied in, then the model's kernels."""
    gpu, s, th = single_gpu_run(run, spec="V100")

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 20, 30)
        input_batch_copy(s, th, t + 25, 380)
        return run.kernels(s["compute"], model, t + 420, th["launch"], lead_us=200) + 40

    run.each_step(th["python"], steps, step)


def input_prefetched(run: Run, steps: int = 6) -> None:
    """02_input_bound after the fix: the same model and input, with `.map(num_parallel_calls=AUTOTUNE)`
    and `.prefetch(AUTOTUNE)`: the next batch is ready when the step asks for it."""
    gpu, s, th = single_gpu_run(run)
    model = fp16_model()

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 10, 35)
        run.tf_data([th["resource"]] + th["pool"], t + 100, 3600, STAGES_HEAVY)  # overlapped with compute
        input_batch_copy(s, th, t + 50, 420)
        return run.kernels(s["compute"], model, t + 480, th["launch"], lead_us=100) + 60

    run.each_step(th["python"], steps, step)


def mixed_precision_volta(run: Run, steps: int = 6) -> None:
    """08_fp32_on_tensor_core_gpu after the fix: the same step under the mixed_float16 policy."""
    volta_training(run, steps, fp16_model_volta())


def fp16_odd_dims(run: Run, steps: int = 6) -> None:
    gpu, s, th = single_gpu_run(run)
    model = odd_dims_fp16_model()

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 20, 30)
        return run.kernels(s["compute"], model, t + STEP_OVERHEAD_US, th["launch"], lead_us=200) + 40

    run.each_step(th["python"], steps, step)


def dynamic_loss_scale(run: Run, steps: int = 6) -> None:
    """Mixed precision with dynamic loss scaling: finiteness checks and a cond run on the host between steps."""
    gpu, s, th = single_gpu_run(run)
    model = fp16_model()

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 20, 30)
        end = run.kernels(s["compute"], model, t + STEP_OVERHEAD_US, th["launch"], lead_us=200)
        s["d2h"].memcpy("D2H", end + 3, 4, 1, op="LossScaleOptimizer/All:All", launch=th["launch"])
        h = end + 20
        for op, d in [
            ("LossScaleOptimizer/IsFinite:IsFinite", 180),
            ("LossScaleOptimizer/All:All", 140),
            ("LossScaleOptimizer/cond:If", 620),
            ("LossScaleOptimizer/cond/then/_1/AssignAddVariableOp:AssignAddVariableOp", 160),
            ("LossScaleOptimizer/cond_1:If", 540),
            ("LossScaleOptimizer/update_loss_scale/Select:Select", 120),
        ]:
            th["compute2"].op(op, h, d)
            h += d + 15
        return h + 30

    run.each_step(th["python"], steps, step)


def xla_recompile(run: Run, steps: int = 6) -> None:
    """XLA-compiled steps whose input shapes change: clusters are compiled again and again."""
    gpu, s, th = single_gpu_run(run)
    seq_lens = [128, 128, 131, 128, 97, 140]
    seen = set()

    def step(i: int, t: float) -> float:
        th["get_next"].get_next(t + 20, 30)
        h = t + 60
        seq = seq_lens[i % len(seq_lens)]
        if seq not in seen:
            seen.add(seq)
            d = run.jitter(38_000 if seq == 128 else 31_000)
            th["compute2"].op("cluster_0_1/xla_compile:_XlaCompile", h, d)
            th["compute2"].event("XlaCompilationCache::CompileStrict", h + 5, d - 10)
            th["compute2"].event("xla::gpu::GpuCompiler::RunHloPasses", h + 20, d * 0.55)
            th["compute2"].event("xla::gpu::GpuCompiler::RunBackend", h + 30 + d * 0.55, d * 0.4)
            h += d + 10
        th["compute2"].op("cluster_0_1/xla_run:_XlaRun", h, 60)
        k_t = h + 70
        for j in range(24):
            kind = j % 3
            name = [
                "loop_fusion_%d",
                "input_reduce_fusion_%d",
                "cutlass_80_tensorop_f16_s16816gemm_f16_256x128_32x3_nn_align8",
            ][kind]
            name = name % j if "%d" in name else name
            dur = run.jitter([55, 70, 390][kind] * seq / 128)
            s["compute"].kernel(
                name,
                k_t,
                dur,
                op=None,
                launch=th["compute2"],
                lead_us=40,
                grid=(216, 1, 1),
                hlo_module="cluster_0_1",
                hlo_op=name if kind < 2 else "custom-call.12",
            )
            k_t += dur + 2
        return k_t + 40

    run.each_step(th["python"], steps, step)


# -- four GPUs ------------------------------------------------------------------------------------


def four_gpu_run(
    run: Run,
    steps: int = 6,
    *,
    work=(1.0, 1.0, 1.0, 1.0),
    allreduces: int = 1,
    serialized: bool = False,
    skew_us: float = 0.0,
) -> None:
    w = run.writer
    n = 4
    gpus = [w.gpu(d, GPU_SPECS["A100"]) for d in range(n)]
    compute = [g.stream(7, "Compute") for g in gpus]
    nccl = [g.stream(21, "Compute") for g in gpus]
    h2d = [g.stream(13, "MemcpyH2D") for g in gpus]
    py = w.thread("python", 11201)
    private = not skew_us
    launchers = [
        w.thread(f"tf_gpu_private_{d}/{11330 + d}" if private else f"tf_Compute/{11290 + d % 2}", 11330 + d)
        for d in range(n)
    ]
    get_next = w.thread("tf_data_iterator_get_next/11402", 11402)
    model = fp16_model(3)
    for d in range(n):
        run.memory(py, 500 + d, d, 0.69, GPU_SPECS["A100"].memory_bytes)

    def step(i: int, t: float) -> float:
        get_next.get_next(t + 15, 40)
        ends = []
        cursor = t + STEP_OVERHEAD_US
        for d in range(n):
            start = cursor if serialized else t + STEP_OVERHEAD_US + d * skew_us
            h2d[d].memcpy(
                "H2D",
                start - 90,
                85,
                32 * 224 * 224 * 3 * 2,
                op="IteratorGetNext:IteratorGetNext",
                launch=get_next,
                lead_us=2,
            )
            end = run.kernels(
                compute[d],
                [dataclasses.replace(k, op=f"replica_{d}/{k.op}") for k in model],
                start,
                launchers[d],
                scale=work[d],
                lead_us=2 if skew_us else 120,
            )
            ends.append(end)
            cursor = end + 40
        # the all-reduce starts when the slowest replica is ready; NCCL kernels on the others wait inside
        ready = max(ends)
        ar = ready
        for r in range(allreduces):
            size = 25_557_032 if r == 0 else 180  # the gradients (ResNet-50's parameter count), then metrics
            dur = run.jitter(640 if r == 0 else 45)
            for d in range(n):
                begin = (ends[d] + 4) if r == 0 else ar
                nccl[d].kernel(
                    NCCL_ALLREDUCE,
                    begin,
                    ar - begin + dur,
                    op=f"replica_{d}/CollectiveReduceV2_{r}:CollectiveReduceV2",
                    shape=f"(float[{size}])",
                    grid=(1, 1, 1),
                    block=(640, 1, 1),
                    regs=96,
                    launch=launchers[d],
                    lead_us=2,
                )
            ar += dur + 6
            if r + 1 < allreduces:
                # a small metric reduced after every step waits for its kernel and syncs all GPUs
                ar += 60
        return ar + 50

    run.each_step(py, steps, step)


def two_hosts(run: Run, steps: int = 6) -> None:
    """Two workers in one run, two GPUs each; worker 1 is starved by a slower input pipeline, and in
    this synchronous job worker 0's all-reduce waits for it: both steps last as long."""
    slow_waits = [run.jitter(3800) for _ in range(steps)]
    for h, host in enumerate(["gpu-worker-0", "gpu-worker-1"]):
        w = run.writer if h == 0 else run.host(host)
        gpus = [w.gpu(d, GPU_SPECS["A100"]) for d in range(2)]
        compute = [g.stream(7, "Compute") for g in gpus]
        nccl = [g.stream(21, "Compute") for g in gpus]
        py = w.thread("python", 11201)
        launchers = [w.thread(f"tf_gpu_private_{d}/{11330 + d}", 11330 + d) for d in range(2)]
        get_next = w.thread("tf_data_iterator_get_next/11402", 11402)
        pool = [w.thread(f"tf_data_private_threadpool/{11420 + i}", 11420 + i) for i in range(2)]
        model = fp16_model(3)
        t = 1000.0
        for i in range(steps):
            run.step_start = t
            wait = 30 if h == 0 else slow_waits[i]
            held = slow_waits[i] - 30 if h == 0 else 0.0  # worker 0's all-reduce waits for worker 1's input
            get_next.get_next(t + 15, wait)
            if h == 1:
                run.tf_data(pool, t, wait, STAGES_HEAVY)
            ends = [
                run.kernels(
                    compute[d],
                    [dataclasses.replace(k, op=f"replica_{d}/{k.op}") for k in model],
                    t + wait + 100,
                    launchers[d],
                    lead_us=120,
                )
                for d in range(2)
            ]
            for d in range(2):
                nccl[d].kernel(
                    NCCL_ALLREDUCE,
                    ends[d] + 4,
                    900 + held,
                    op=f"replica_{d}/CollectiveReduceV2:CollectiveReduceV2",
                    grid=(1, 1, 1),
                    block=(640, 1, 1),
                    launch=launchers[d],
                    lead_us=2,
                )
            end = max(ends) + 910 + held
            py.step(i, t, end + 40 - t)
            t = end + 40


# -- eight GPUs, two of them working: a real capture's shape ----------------------------------

PHILOX = (
    "void tensorflow::functor::FillPhiloxRandomKernelLaunch<tensorflow::random::UniformDistribution<"
    "tensorflow::random::PhiloxRandom, Eigen::half> >(unsigned long, unsigned long, tensorflow::random::PhiloxRandom, "
    "Eigen::half*, long, tensorflow::random::UniformDistribution<tensorflow::random::PhiloxRandom, Eigen::half>)"
)
CAST_HALF = (
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
    "Eigen::Tensor<Eigen::half, 1, 1, long>, 16>, Eigen::TensorConversionOp<Eigen::half, Eigen::TensorMap<"
    "Eigen::Tensor<float const, 1, 1, long>, 16> const> const> const, Eigen::GpuDevice>, long>"
)
MUL_HALF = (
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::TensorMap<"
    "Eigen::Tensor<Eigen::half, 1, 1, long>, 16>, Eigen::TensorCwiseBinaryOp<Eigen::internal::scalar_product_op<"
    "Eigen::half const, Eigen::half const>, Eigen::TensorMap<Eigen::Tensor<Eigen::half const, 1, 1, long>, 16> "
    "const, Eigen::TensorMap<Eigen::Tensor<Eigen::half const, 1, 1, long>, 16> const> const> const, Eigen::GpuDevice>, long>"
)
# GPU: (step start ms, step ms, Cast kernel µs): the two working GPUs of the capture issue 9 describes
BERT_GPUS = {4: (1792.6, 19.87, 19.4), 6: (2440.2, 21.31, 19.25)}
BERT_INPUT_SHARE = 0.115  # each working GPU's step begins with the host waiting this share for input


def bert_partial_capture(w: ProfileWriter) -> None:
    """The public 8-GPU BERT fine-tuning capture of issue 9, as its description gives it: older format
    (annotations, saved derived lines with a `Steps` line per working GPU, group ids), no CUDA API
    events, 22 host threads; GPUs 0, 2, 3, 5, 7 without lines, GPU 1 with 19 H2D copies only, GPUs 4 and
    6 each running one step at its own time (648 ms apart) with 665 dropout kernels.

    Per working GPU and step (µs): the host waits for input for 11.5% of the step, then 665 kernels run
    back to back with equal gaps: 97 RandomUniform (Philox, `int32[3]` input) of 50, 284 Cast
    (float -> half) of 19.4 (GPU 4) or 19.25 (GPU 6), 284 Mul (half inputs) of 16. Compute: GPU 4
    4850 + 5509.6 + 4544 = 14903.6 (75.0% of 19870), GPU 6 14861 (69.7% of 21310); spread 0.29%.
    16-bit by the profile plugin's rule: only the Mul kernels (their op's input is half):
    2 x 4544 / 29764.6 = 30.5%; by kernel name it would be 100%. Small kernels (op type mean <= 40 µs):
    Cast and Mul, 568 per GPU per step. H2D and D2H copies run under compute."""
    py = w.thread("python3", 1)
    threads = [py] + [w.thread(f"tf_Compute/{100 + i}", 100 + i) for i in range(12)]
    threads += [w.thread(f"tf_data_private_threadpool/{200 + i}", 200 + i) for i in range(4)]
    threads += [w.thread("tf_data_iterator_get_next/300", 300), w.thread("tf_data_iterator_resource/301", 301)]
    threads += [w.thread(f"collective_ops/{400 + i}", 400 + i) for i in range(3)]
    assert len(threads) == 22
    for d in range(8):
        w.gpu(d, GPU_SPECS["V100"])
    h2d_only = w.gpu(1).stream(123, "MemcpyH2D")
    for i in range(19):
        h2d_only.memcpy("H2D", 1000.0 + 100 * i, 20, 4096, op="replica_1/IteratorGetNext:IteratorGetNext")
    for group, (d, (start_ms, step_ms, cast_us)) in enumerate(BERT_GPUS.items()):
        gpu = w.gpu(d)
        compute, h2d, d2h = gpu.stream(7, "Compute"), gpu.stream(8, "MemcpyH2D"), gpu.stream(9, "MemcpyD2H")
        start, step = start_ms * 1000, step_ms * 1000
        wait = BERT_INPUT_SHARE * step
        threads[1 + d].event("IteratorGetNextOp::DoCompute", start, wait)
        kernels = []
        for layer in range(97):
            scope = f"replica_{d}/bert/encoder/layer_{layer % 24}/attention/dropout_{layer}"
            kernels.append((PHILOX, f"{scope}/random_uniform/RandomUniform:RandomUniform", "(int32[3])", 50.0))
        for k in range(284):
            scope = f"replica_{d}/bert/encoder/layer_{k % 24}/output/dropout_{k}"
            src = "bool" if k % 2 else "float"
            kernels.append((CAST_HALF, f"{scope}/Cast:Cast", f"({src}[24,384,1024])", cast_us))
            kernels.append((MUL_HALF, f"{scope}/mul_1:Mul", "(half[24,384,1024];half[24,384,1024])", 16.0))
        busy = sum(k[3] for k in kernels)
        gap = (step - wait - busy) / len(kernels)
        t = start + wait
        ops = []
        for name, op, shape, dur in kernels:
            compute.kernel(name, t, dur, op=op, shape=shape, grid=(640, 1, 1), block=(256, 1, 1), group_id=group)
            ops.append((op.split(":")[0], t, dur))
            t += dur + gap
        for j in range(4):  # input and output copies of 10 µs, each inside a kernel (the shortest is 16 µs)
            h2d.memcpy("H2D", ops[10 + 20 * j][1], 10, 1 << 20, op=f"replica_{d}/IteratorGetNext:IteratorGetNext")
            d2h.memcpy("D2H", ops[400 + 20 * j][1], 10, 4096, op=f"replica_{d}/loss/Identity:Identity")
        gpu.derived_line("TensorFlow Ops", ops)
        gpu.derived_line("TensorFlow Name Scope", [(o.rsplit("/", 1)[0], s, du) for o, s, du in ops])
        gpu.derived_line("Steps", [(str(group), start, step)])


# -- the catalogue --------------------------------------------------------------------------------

RUNS = [
    (
        "01_healthy",
        "Healthy: busy GPU, 16-bit Tensor Core kernels, input prefetched",
        "A mixed-precision ResNet-style step on one A100. The input is prefetched (the get-next call returns "
        "in ~35 µs and the next batch is copied while the current step computes), kernels are launched from "
        "a private GPU thread well ahead of time, and almost every kernel is a 16-bit Tensor Core kernel.",
        [],
        healthy,
    ),
    (
        "02_input_bound",
        "Input-bound: the host waits on IteratorGetNext while the GPU idles",
        "Each step begins with ~14 ms of waiting for the next batch while the tf.data pipeline's threads "
        "(Iterator::Root::Prefetch::ParallelMapV2::Shuffle::TFRecord) read and decode it; the GPU has nothing to do.",
        ["input.bound", "steps.gaps"],
        input_bound,
    ),
    (
        "03_gaps_host_work",
        "Gaps between steps: callbacks and metrics every step",
        "After each step's device work the Python thread runs Keras callbacks, a progress bar and eager metric "
        "updates for ~3.6 ms while the GPU idles.",
        ["steps.gaps", "steps.host-work"],
        gaps_host_work,
    ),
    (
        "04_gaps_thread_contention",
        "Gaps between steps: tf.data threads delay the first launches",
        "At each step's start the tf.data threads are busy preparing the next batch, and kernels are launched "
        "from shared tf_Compute threads (no TF_GPU_THREAD_MODE=gpu_private): the first launches come ~2 ms late.",
        ["host.thread-contention", "steps.gaps"],
        thread_contention,
    ),
    (
        "05_launch_bound_small_kernels",
        "Launch-bound: thousands of ~21.9 µs Mul kernels",
        "The guide's example: 2,000 tiny Mul kernels per step of ~21.9 µs each on a V100. Each launch takes "
        "~28 µs of host time, longer than the kernel runs, so the GPU waits for every launch.",
        ["kernels.launch-bound", "kernels.small", "fusion.xla-candidates"],
        launch_bound,
    ),
    (
        "06_eager_execution",
        "Eager execution: ops dispatched one by one from Python",
        "A custom training loop without tf.function: every op goes through EagerExecute on the Python "
        "thread and its kernels are marked eager.",
        ["ops.eager"],
        eager,
    ),
    (
        "07_host_ops_and_copies",
        "Host placement: ops on the CPU mid-step, with copies that block the GPU",
        "Unique and StringToHashBucketFast are placed on the host in the middle of the step: their inputs "
        "go device-to-host and their outputs back host-to-device (8 MiB each way) while the compute stream "
        "waits.",
        ["placement.host-ops", "memcpy.excessive"],
        host_placement_copies,
    ),
    (
        "08_fp32_on_tensor_core_gpu",
        "fp32 on a Tensor Core GPU (V100)",
        "The ResNet-style step in fp32 on a V100 (compute capability 7.0): convolutions and GEMMs run "
        "scudnn/sgemm kernels that do not use Tensor Cores.",
        ["precision.mixed-off", "tensorcore.unused"],
        fp32_tensor_core_gpu,
    ),
    (
        "09_fp16_dims_not_multiple_of_8",
        "fp16 GEMMs with dimensions not divisible by 8",
        "Mixed precision is on, but the feed-forward layers are 1001 and 3999 wide: cuBLAS picks 16-bit "
        "kernels that cannot use Tensor Cores. A 16-bit softmax also runs outside the loss.",
        ["tensorcore.dims", "precision.fp16-no-tensorcore", "tensorcore.unused", "precision.fp16-softmax"],
        fp16_odd_dims,
    ),
    (
        "10_dynamic_loss_scale",
        "Dynamic loss scaling: host conditionals between steps",
        "The LossScaleOptimizer's finiteness check and its cond ops run on the host after every step, "
        "leaving the GPU idle for ~1.8 ms.",
        ["precision.dynamic-loss-scale", "steps.gaps"],
        dynamic_loss_scale,
    ),
    (
        "11_xla_recompile",
        "XLA recompiling on changing shapes",
        "An XLA-compiled step whose sequence length changes (128, 131, 97, 140): each new shape compiles "
        "the cluster again, for ~31-38 ms each time.",
        ["xla.recompile"],
        xla_recompile,
    ),
    (
        "12_multi_gpu_imbalance",
        "Four GPUs: one replica slower (GPU0 gets more work)",
        "Four A100s; GPU0's replica does 45% more work per step, and the others wait for it inside the all-reduce.",
        ["multigpu.imbalance"],
        lambda r: four_gpu_run(r, work=(1.45, 1.0, 1.0, 1.0)),
    ),
    (
        "13_multi_gpu_extra_allreduce",
        "Four GPUs: an extra AllReduce per step",
        "Besides the gradient all-reduce, two small metric all-reduces run after every step, each one a "
        "synchronisation of all GPUs.",
        ["allreduce.count"],
        lambda r: four_gpu_run(r, allreduces=3),
    ),
    (
        "14_multi_gpu_serialized",
        "Four GPUs serialized by a control dependency",
        "The replicas run one after another instead of together: each GPU starts when the previous one has finished.",
        ["multigpu.serialized"],
        lambda r: four_gpu_run(r, serialized=True),
    ),
    (
        "15_multi_gpu_launch_skew",
        "Four GPUs: host launch skew",
        "Kernels for the four GPUs are launched from two shared host threads, GPU by GPU: GPU3 starts "
        "~1.5 ms after GPU0 in every step.",
        ["multigpu.launch-skew"],
        lambda r: four_gpu_run(r, skew_us=500.0),
    ),
    (
        "16_two_hosts",
        "Two hosts in one run",
        "Two workers with two A100s each. Worker 1's input pipeline is slow, so its GPUs wait for input "
        "and worker 0's all-reduce waits for it: the job's straggler.",
        ["input.bound", "job.straggler"],
        two_hosts,
    ),
    (
        "17_multi_gpu_partial_capture",
        "Eight GPUs, two of them working, each at its own time",
        "Reproduces the shape of a public 8-GPU BERT fine-tuning capture (older TensorFlow: annotations, saved "
        "derived lines, a Steps line per working GPU, no CUDA API events). GPUs 0, 2, 3, 5 and 7 have no "
        "events, GPU 1 only 19 host-to-device copies; GPUs 4 and 6 each run one step of 665 dropout kernels, "
        "648 ms apart, each waiting 11.5% of its step for input.",
        ["multigpu.idle-gpus", "multigpu.serialized", "input.bound", "kernels.small"],
        lambda r: bert_partial_capture(r.old_host("bert-8gpu-host")),
    ),
    (
        "18_input_prefetched_after_02",
        "After 02_input_bound: parallel map and prefetch",
        "02_input_bound after the guide's fix, everything else the same: the pipeline maps with "
        "`num_parallel_calls=tf.data.AUTOTUNE` and ends in `.prefetch(tf.data.AUTOTUNE)`, so the tf.data threads "
        "prepare the next batch while the step computes and the get-next call returns in ~35 µs. Compare it with "
        "02_input_bound (`tb-gpu-advisor diff demo_logs --run 02_input_bound demo_logs --new-run "
        '18_input_prefetched_after_02`, or "Compare with" in the tab): the step drops from ~23.4 ms to ~9 ms and '
        "input.bound goes from critical to pass.",
        [],
        input_prefetched,
    ),
    (
        "19_mixed_precision_after_08",
        "After 08_fp32_on_tensor_core_gpu: mixed precision",
        "08_fp32_on_tensor_core_gpu after turning on mixed precision "
        "(`tf.keras.mixed_precision.set_global_policy('mixed_float16')`), everything else the same: "
        "convolutions and GEMMs run 16-bit Tensor Core kernels (volta_fp16_s884cudnn, volta_h884gemm), "
        "element-wise kernels run in half, the optimizer stays in fp32. Compare it with 08: the step shortens "
        "from ~17.2 ms to ~7.4 ms, precision.mixed-off and tensorcore.unused are fixed, and the input copy, "
        "unchanged at ~0.38 ms but now 5% of a shorter step, makes input.bound a new warning: the next thing "
        "to look at.",
        ["input.bound"],
        mixed_precision_volta,
    ),
]


# Multi-rank PyTorch jobs (Kineto JSON, one file per rank), from `tests/support/kineto_writer.py`.
JOBS = [
    (
        "20_ddp_straggler_8_ranks",
        "An 8-rank DDP job with a straggler",
        "Eight ranks on A100s, data-parallel with NCCL. Rank 5 computes 30 ms a step against the others' "
        "20 ms, so the other seven wait for it inside their last all-reduce: every rank's step is as long, "
        "and the job view names rank 5 and the time the others lose waiting for it, which is waiting, not "
        "transfer. Each rank all-reduces its gradients in two DDP buckets a step, two calls where the guide "
        "expects one.",
        ["job.straggler", "job.imbalance", "job.wait", "job.allreduce-count"],
        {"compute_us": {5: 30_000.0}},
    ),
    (
        "21_ddp_exposed_allreduce_8_ranks",
        "An 8-rank DDP job whose all-reduce is not overlapped",
        "Eight ranks on A100s, each computing 20 ms a step and then all-reducing 12 ms of gradients after "
        "the backward pass instead of during it: 37% of every step is communication nothing hides.",
        ["job.exposed-comm"],
        {"overlap": False, "transfer_us": 12_000.0},
    ),
]


def job_readme(name: str, title: str, shows: str, checks: list[str]) -> str:
    listed = ", ".join(f"`{c}`" for c in checks)
    return (
        f"# {title}\n\n{shows}\n\n"
        "- Files: one `<worker>.1700000000000.pt.trace.json.gz` per rank (`distributedInfo` gives the rank)\n"
        f"- Checks it should trigger: {listed}\n\n"
        "Made by `scripts/make_demo_logs.py` with the Kineto writer (`tests/support/kineto_writer.py`).\n"
    )


def readme(run: Run) -> str:
    checks = ", ".join(f"`{c}`" for c in run.checks) if run.checks else "none above `info`"
    hosts = ", ".join(w.host for w in run.writers)
    return (
        f"# {run.title}\n\n{run.shows}\n\n"
        f"- Host file(s): {hosts} (`plugins/profile/{SESSION}/<host>.xplane.pb`)\n"
        f"- Checks it should trigger: {checks}\n\n"
        "Made by `scripts/make_demo_logs.py` with the profile writer (`tests/support/xplane_writer.py`).\n"
    )


def build(outdir: str) -> list[Run]:
    os.makedirs(outdir, exist_ok=True)
    for entry in sorted(os.listdir(outdir)):
        path = os.path.join(outdir, entry)
        if entry not in KEEP and os.path.isdir(path):
            shutil.rmtree(path)
    runs = []
    for name, title, shows, checks, fn in RUNS:
        run = Run(name, title, shows, checks)
        fn(run)
        for w in run.writers:
            w.write(outdir, run=name, session=SESSION)
        with open(os.path.join(outdir, name, "README.md"), "w") as f:
            f.write(readme(run))
        runs.append(run)
    for name, title, shows, checks, kw in JOBS:
        folder = os.path.join(outdir, name)
        os.makedirs(folder, exist_ok=True)
        for rank, w in ddp_job(8, **kw).items():
            with open(os.path.join(folder, f"node{rank // 4}_{1000 + rank}.1700000000000.pt.trace.json.gz"), "wb") as f:
                f.write(w.to_bytes())
        with open(os.path.join(folder, "README.md"), "w") as f:
            f.write(job_readme(name, title, shows, checks))
        runs.append(Run(name, title, shows, checks))
    return runs


def main(argv: list[str]) -> int:
    outdir = (
        argv[1]
        if len(argv) > 1
        else os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "demo_logs")
    )
    runs = build(outdir)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(outdir) for f in fs)
    print(f"wrote {len(runs)} runs to {outdir} ({total / 1e6:.1f} MB in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

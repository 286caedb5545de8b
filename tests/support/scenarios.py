"""Writer-made profiles whose numbers are worked out by hand (the comments give the arithmetic)."""

from __future__ import annotations

import os
import sys

from support.xplane_writer import GPU_SPECS, ProfileWriter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import make_demo_logs  # noqa: E402

STEP_US = 1000.0
STEPS = 3


def single_gpu(fmt: str = "new", copy_names: str = "short") -> ProfileWriter:
    """One V100, three 1000 µs steps, each (µs from the step's start):

    input wait on the host      [0, 100)      IteratorGetNextOp::DoCompute
    MemcpyH2D 1 MiB             [100, 150)    IteratorGetNext
    h884gemm (fp16, TC)         [200, 500)    dense/MatMul, launched [193, 198)
    sgemm (fp32)                [520, 720)    dense_1/MatMul, launched [513, 518)
    EigenMetaKernel<half>       [720, 770)    relu, launched [713, 718)
    MemcpyD2H 4096 B            [800, 820)    loss/Identity, launched [793, 798)
    Memset 256 B                [820, 825)
    host op Unique (host-placed)[850, 950)    on tf_Compute
    host op dense/MatMul        [185, 192)    on tf_Compute (device-placed: it has kernels)

    Breakdown per step (precedence): compute 300+250+5 = 555, H2D 50, D2H 20, input wait 100,
    launch wait 7 (A) + 7 (B) + 7 (D2H) = 21 (C's launch overlaps B; H2D's overlaps the input wait),
    idle/other 1000 - 746 = 254. Busy 625 (62.5%). 16-bit: 350 of 555 µs device compute (kernels and memsets), 6 of 9 kernels.
    Op time: device 620/step, host 100/step -> 86.11%.

    `copy_names="long"` names copies MemcpyHtoD/MemcpyDtoH (the names the profile plugin knows).
    """
    w = ProfileWriter("worker0", fmt=fmt)
    gpu = w.gpu(0, GPU_SPECS["V100"])
    compute = gpu.stream(7, "Compute")
    h2d = gpu.stream(8, "MemcpyH2D")
    d2h = gpu.stream(9, "MemcpyD2H")
    py = w.thread("python", 1)
    tfc = w.thread("tf_Compute/2", 2)
    it = w.thread("tf_data_iterator_get_next/3", 3)
    names = {"H2D": "MemcpyHtoD", "D2H": "MemcpyDtoH"} if copy_names == "long" else {}
    for i in range(STEPS):
        t = i * STEP_US
        py.step(i, t, STEP_US)
        it.get_next(t, 100)
        h2d.memcpy("H2D", t + 100, 50, 1 << 20, op="IteratorGetNext:IteratorGetNext", launch=py, name=names.get("H2D"))
        tfc.op("dense/MatMul:MatMul", t + 185, 7)
        compute.kernel(
            "volta_h884gemm_128x128_ldg8_nn",
            t + 200,
            300,
            op="dense/MatMul:MatMul",
            shape="(half[64,512];half[512,512])",
            grid=(8, 8, 1),
            block=(256, 1, 1),
            regs=126,
            shared=16384,
            launch=py,
        )
        compute.kernel(
            "volta_sgemm_128x64_nn",
            t + 520,
            200,
            op="dense_1/MatMul:MatMul",
            shape="(float[64,512];float[512,10])",
            grid=(4, 1, 1),
            block=(128, 1, 1),
            regs=64,
            launch=py,
        )
        compute.kernel(
            "void Eigen::internal::EigenMetaKernel<Eigen::half>",
            t + 720,
            50,
            op="relu:Relu",
            shape="(half[64,512])",
            grid=(40, 1, 1),
            block=(1024, 1, 1),
            regs=20,
            launch=py,
        )
        d2h.memcpy("D2H", t + 800, 20, 4096, op="loss/Identity:Identity", launch=py, name=names.get("D2H"))
        compute.memset(t + 820, 5, 256)
        tfc.op("cpu/Unique:Unique", t + 850, 100)
    return w


def multi_gpu(fmt: str = "new") -> ProfileWriter:
    """Two A100s (and an idle third), two 2000 µs steps from t=100 µs. Per step: GPU0 compute [0, 1200) as two 600 µs bf16 TC
    kernels, GPU1 compute [0, 800) one fp32 kernel; then NCCL all-reduce on both [1200, 1400).
    GPU0 busy 1400/2000 = 70%, GPU1 busy (800 + 200)/2000 = 50%; host mean 60%."""
    w = ProfileWriter("worker0", fmt=fmt)
    py = w.thread("python", 1)
    g0 = w.gpu(0, GPU_SPECS["A100"])
    g1 = w.gpu(1, GPU_SPECS["A100"])
    w.gpu(2, GPU_SPECS["A100"])  # an idle GPU: plane with no lines
    s0, s1 = g0.stream(7, "Compute"), g1.stream(7, "Compute")
    n0, n1 = g0.stream(20, "Compute"), g1.stream(20, "Compute")
    for i in range(2):
        t = 100 + i * 2000.0
        py.step(i, t, 2000)
        for k in range(2):
            s0.kernel(
                "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32",
                t + 600 * k,
                600,
                op=f"replica_0/dense/MatMul_{k}:MatMul",
                shape="(bfloat16[256,1024];bfloat16[1024,1024])",
                launch=py,
                lead_us=0,
            )
        s1.kernel(
            "ampere_sgemm_128x64_nn",
            t,
            800,
            op="replica_1/dense/MatMul:MatMul",
            shape="(float[256,1024];float[1024,1024])",
            launch=py,
            lead_us=0,
        )
        n0.nccl(t + 1200, 200)
        n1.nccl(t + 1200, 200)
    return w


def bert_8gpu() -> ProfileWriter:
    """The 8-GPU capture of issue 9 (scripts/make_demo_logs.py builds it for the demo too)."""
    w = ProfileWriter("bert-8gpu-host", fmt="old", group_ids=True)
    make_demo_logs.bert_partial_capture(w)
    return w


BERT_GPUS = make_demo_logs.BERT_GPUS

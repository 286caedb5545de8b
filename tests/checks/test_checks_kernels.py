"""Section 3 of the checklist (kernel efficiency): Tensor Cores, matmul dimensions, fusion."""

import os

import pytest
from support.sim import Sim, run_check
from support.step_graphs import PAIRS_DIR, VALIDATION_DIR, capture_files, loaded

from tb_gpu_advisor.checks.findings import NOT_APPLICABLE, PASS, WARNING

TC_FP16 = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn"
FP16_NO_TC = "ampere_fp16_sgemm_fp16_128x64_nn"
SGEMM = "ampere_sgemm_128x64_nn"
HALF = "(half[64,512];half[512,512])"
FLOAT = "(float[64,512];float[512,512])"
EIGEN = "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>>"


def approx(v, rel=1e-6):
    return pytest.approx(v, rel=rel, abs=1e-9)


def test_tensorcore_unused():
    # 600 µs fp32 sgemm and 200 µs Tensor Core gemm: 75% of compute; mixed precision counts as on (25%
    # of matmul time is 16-bit), so the fp32 kernels' saving is this check's: 600 x (1 - 1/3) = 400 µs
    def body(i, t):
        s.kernel(t, 600, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT)
        s.kernel(t + 600, 200, name=TC_FP16, op="e/MatMul:MatMul", shape=HALF)

    s = Sim()
    s.steps(4, 1000, body)
    f = s.run("tensorcore.unused")
    assert f.status == WARNING and f.metric("no_tensor_core_pct") == approx(75.0)
    assert f.saving_ms == approx(0.4) and s.run("precision.mixed-off").saving_ms is None
    assert f.details[0]["kernel"] == SGEMM and f.details[0]["precision"] == "32-bit"
    # all 32-bit: mixed precision is off, and the same 400 µs is precision.mixed-off's saving, not this one's
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT))
    assert s.run("tensorcore.unused").saving_ms is None and s.run("precision.mixed-off").saving_ms == approx(0.4)
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=TC_FP16, op="e/MatMul:MatMul", shape=HALF))
    f = s.run("tensorcore.unused")
    assert f.status == PASS and f.metric("no_tensor_core_pct") == 0
    s = Sim(spec="P100")
    s.steps(4, 1000, body)
    f = s.run("tensorcore.unused")
    assert f.status == NOT_APPLICABLE and "6.0" in f.reason
    s = Sim()  # element-wise kernels only: no matmul or convolution to judge
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=EIGEN, op="a/Mul:Mul", shape="(half[64])"))
    f = s.run("tensorcore.unused")
    assert f.status == NOT_APPLICABLE and "No matmul or convolution" in f.reason


def test_tensorcore_dims():
    def prof(shape, name=FP16_NO_TC, op="f/MatMul:MatMul"):
        s = Sim()
        s.steps(4, 1000, lambda i, t: s.kernel(t, 500, name=name, op=op, shape=shape))
        return s.run("tensorcore.dims")

    f = prof("(half[64,1001];half[1001,4000])")
    assert f.status == WARNING and f.metric("ops_not_multiple_of_8") == 1 and f.metric("affected_pct") == approx(100.0)
    assert f.details[0]["padded"] == "(half[64,1008];half[1008,4000])" and not f.details[0]["uses_tensor_cores"]
    assert f.saving_ms == approx(0.5 * 2 / 3)
    # a convolution's channels are padded (TensorFlow's NHWC input, [kh, kw, in, out] filter), not its
    # spatial dimensions, and not an image's 3 input channels (cuDNN pads a stem's itself)
    f = prof("(half[32,56,55,12];half[3,3,12,64])", op="c/Conv2D:Conv2D")
    assert f.status == WARNING and f.details[0]["padded"] == "(half[32,56,55,16];half[3,3,16,64])"
    assert prof("(half[32,56,55,3];half[7,7,3,64])", op="c/Conv2D:Conv2D").status == PASS
    f = prof("(half[64,1024];half[1024,4000])")
    assert f.status == PASS and f.metric("ops_checked") == 1
    f = prof(None)
    assert f.status == NOT_APPLICABLE and "shape" in f.reason
    f = prof(FLOAT, name=SGEMM)
    assert f.status == NOT_APPLICABLE and "16-bit" in f.reason


def test_fusion_xla_candidates():
    # a chain of ten 20 µs element-wise kernels and a 100 µs gemm: 200 of 300 µs
    def body(i, t, n, xla):
        kw = {"hlo_module": "cluster_0", "hlo_op": "fusion"} if xla else {}
        for j in range(n):
            s.kernel(t + 20 * j, 20, name=EIGEN, op=f"m/Relu_{j}:Relu", **kw)
        s.kernel(t + 300, 100, name=SGEMM, op="m/MatMul:MatMul", **kw)

    s = Sim()
    s.steps(4, 1000, lambda i, t: body(i, t, 10, False))
    f = s.run("fusion.xla-candidates")
    assert f.status == WARNING and f.metric("chain_pct") == approx(200 / 3) and f.metric("chains_per_step") == 1
    assert f.metric("xla") == "off" and f.evidence[0].end_ms - f.evidence[0].start_ms == approx(0.2)
    s = Sim()
    s.steps(4, 1000, lambda i, t: body(i, t, 10, True))
    f = s.run("fusion.xla-candidates")
    assert f.status == PASS and "XLA is already on" in f.summary
    s = Sim()
    s.steps(4, 1000, lambda i, t: body(i, t, 2, False))  # two in a row is no chain
    f = s.run("fusion.xla-candidates")
    assert f.status == PASS and f.metric("chain_pct") == 0


def test_layout_channels_last():
    """cuDNN's NCHW <-> NHWC layout changes on real H200 captures (tests/data/gpu_pairs): ResNet-50 at
    batch 256 in fp32 and NCHW spends 14.4 ms a step of 115 in 226 layout-change kernels; its bf16 run in
    channels_last has none (not applicable); ViT's patch embedding has a few (a pass). The finding's saving is the channels_last what-if: the layout changes and
    their launches gone, and nothing else (bf16 is precision.mixed-off's)."""
    fp32 = loaded(capture_files(os.path.join(PAIRS_DIR, "rn50_b256_fp32"))[0])
    f = run_check(fp32.analysis, "layout.channels-last", whatif=True)
    assert f.status == "warning" and f.whatif["change"] == "channels_last"
    assert f.metric("layout_ms_per_step") == pytest.approx(14.4, abs=0.1)
    assert f.metric("layout_kernels_per_step") == pytest.approx(226, abs=1)
    # the step is GPU-bound: the saving is about the kernels' own time
    assert 0.8 * 14.4 <= f.saving_ms <= 14.4 + 0.5
    assert "torch.channels_last" in f.snippet
    bf16 = loaded(capture_files(os.path.join(PAIRS_DIR, "rn50_b256_bf16"))[0])
    assert run_check(bf16.analysis, "layout.channels-last", whatif=True).status == NOT_APPLICABLE
    # ViT's one convolution (its patch embedding) converts its layout: 0.35 ms of a 165 ms step
    vit = loaded(capture_files(os.path.join(VALIDATION_DIR, "vit_fp32"))[0])
    f = run_check(vit.analysis, "layout.channels-last", whatif=True)
    assert f.status == PASS and f.metric("layout_ms_per_step") == pytest.approx(0.35, abs=0.02)

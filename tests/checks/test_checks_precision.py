"""Section 4 of the checklist: mixed precision and XLA."""

import pytest
from support.sim import Sim, analysis_of, host_only, run_check

from tb_gpu_advisor.checks.findings import INFO, NOT_APPLICABLE, PASS, WARNING

TC_FP16 = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn"
FP16_NO_TC = "ampere_fp16_sgemm_fp16_128x64_nn"
SGEMM = "ampere_sgemm_128x64_nn"
HALF = "(half[64,512];half[512,512])"
FLOAT = "(float[64,512];float[512,512])"


def approx(v, rel=1e-6):
    return pytest.approx(v, rel=rel, abs=1e-9)


def test_no_saving_exceeds_the_step():
    """A 32-bit GEMM attributed to a step but lasting four times as long (found by the property test):
    the 3x Tensor Core speed-up would save 1.33 ms of a 0.5 ms step; the saving is the step, no more."""
    s = Sim()
    s.steps(2, 500, lambda i, t: s.kernel(t, 2000, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT) if i == 0 else None)
    f = s.run("precision.mixed-off")
    assert f.status == WARNING and f.metric("fp32_eligible_ms_per_step") == approx(1.0)
    assert f.saving_ms == approx(0.5) and f.saving_pct == approx(100.0)


def test_precision_mixed_off():
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT))
    f = s.run("precision.mixed-off")
    assert f.status == WARNING and f.metric("fp16_pct") == 0
    assert f.title == "Mixed precision off: 0.0% of matmul/conv time in 16-bit"
    assert f.metric("fp32_eligible_ms_per_step") == approx(0.6) and f.saving_ms == approx(0.4)
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=TC_FP16, op="d/MatMul:MatMul", shape=HALF))
    f = s.run("precision.mixed-off")
    assert f.status == PASS and f.metric("fp16_pct") == approx(100.0)
    s = Sim(spec="V100")  # a threshold override moves the line
    s.steps(
        4,
        1000,
        lambda i, t: (
            s.kernel(t, 100, name=TC_FP16, op="a/MatMul:MatMul", shape=HALF),
            s.kernel(t + 100, 700, name=SGEMM, op="b/MatMul:MatMul", shape=FLOAT),
        ),
    )
    assert s.run("precision.mixed-off").status == PASS  # 12.5% >= 10%
    assert s.run("precision.mixed-off", overrides={"precision.mixed-off.warning": 20}).status == WARNING
    s = Sim(spec="P100")
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT))
    assert s.run("precision.mixed-off").status == NOT_APPLICABLE


def test_precision_looks_at_matmul_and_conv_only():
    """16-bit element-wise work does not make mixed precision "on", and without matmul/conv kernels the
    check has nothing to judge (issue 9: a dropout-only capture got 99.97% where the Profile tab said 30.5%)."""
    s = Sim()
    s.steps(
        4,
        1000,
        lambda i, t: (
            s.kernel(
                t,
                500,
                name="void Eigen::internal::EigenMetaKernel<Eigen::half>",
                op="m/Mul:Mul",
                shape="(half[64,64];half[64,64])",
            ),
            s.kernel(t + 500, 100, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT),
        ),
    )
    f = s.run("precision.mixed-off")
    assert f.status == WARNING and f.metric("fp16_pct") == 0
    s = Sim()
    s.steps(
        4,
        1000,
        lambda i, t: s.kernel(
            t, 500, name="void Eigen::internal::EigenMetaKernel<Eigen::half>", op="m/Mul:Mul", shape="(half[64])"
        ),
    )
    assert s.run("precision.mixed-off").status == NOT_APPLICABLE


def test_precision_fp16_no_tensorcore():
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 500, name=FP16_NO_TC, op="d/MatMul:MatMul", shape=HALF))
    f = s.run("precision.fp16-no-tensorcore")
    assert f.status == WARNING and f.metric("no_tensor_core_pct") == approx(100.0)
    assert f.details[0]["kernel"] == FP16_NO_TC and f.saving_ms == approx(0.5 * 2 / 3)
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 500, name=TC_FP16, op="d/MatMul:MatMul", shape=HALF))
    assert s.run("precision.fp16-no-tensorcore").status == PASS
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 500, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT))
    f = s.run("precision.fp16-no-tensorcore")
    assert f.status == NOT_APPLICABLE and "precision.mixed-off" in f.reason
    # odd dimensions are tensorcore.dims' saving, not counted again here
    s = Sim()
    s.steps(
        4,
        1000,
        lambda i, t: s.kernel(t, 500, name=FP16_NO_TC, op="d/MatMul:MatMul", shape="(half[64,1001];half[1001,4000])"),
    )
    f = s.run("precision.fp16-no-tensorcore")
    assert f.status == WARNING and f.saving_ms == 0 and s.run("tensorcore.dims").saving_ms == approx(0.5 * 2 / 3)


def test_precision_dynamic_loss_scale():
    def prof(op_at, fp16=True):
        s = Sim()

        def body(i, t):
            s.kernel(t, 800, name=TC_FP16 if fp16 else SGEMM, op="d/MatMul:MatMul", shape=HALF if fp16 else FLOAT)
            if op_at is not None:
                s.tfc.op("LossScaleOptimizer/cond:If", t + op_at, 150)

        s.steps(4, 1000, body)
        return s.run("precision.dynamic-loss-scale")

    # after the step's compute: 150 µs of 1000 with the GPU idle; the saving leaves out the next
    # kernel's launch in flight [895, 940) in the first three steps: (3 x 105 + 150) / 4
    f = prof(800)
    assert f.status == WARNING and f.metric("loss_scale_pct") == approx(15.0)
    assert f.metric("loss_scale_ops_per_step") == 1 and f.saving_ms == approx((3 * 105 + 150) / 4 / 1000)
    f = prof(100)  # hidden under compute
    assert f.status == INFO and f.metric("loss_scale_pct") == 0
    assert prof(None).status == PASS
    assert prof(None, fp16=False).status == NOT_APPLICABLE


def test_precision_fp16_softmax():
    def prof(op, shape="(half[8,128])"):
        s = Sim()
        s.steps(
            4, 1000, lambda i, t: s.kernel(t, 50, name="GenericSoftmaxKernel<Eigen::half, float>", op=op, shape=shape)
        )
        return s.run("precision.fp16-softmax")

    f = prof("model/attention/Softmax:Softmax")
    assert (
        f.status == WARNING and f.metric("fp16_softmax_ops") == 1 and f.details == [{"op": "model/attention/Softmax"}]
    )
    assert prof("loss/softmax_cross_entropy/Softmax:Softmax").status == PASS
    s = Sim()
    s.steps(
        4,
        1000,
        lambda i, t: s.kernel(
            t, 50, name="GenericSoftmaxKernel<float, float>", op="a/Softmax:Softmax", shape="(float[8,128])"
        ),
    )
    assert s.run("precision.fp16-softmax").status == NOT_APPLICABLE


def test_xla_off_and_recompile():
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 500))
    assert s.run("xla.off").status == INFO
    assert s.run("xla.recompile").status == NOT_APPLICABLE

    def prof(compiles):
        s = Sim()

        def body(i, t):
            if i < compiles:
                s.tfc.op("cluster_0/xla_compile:_XlaCompile", t + 10, 300)
                s.tfc.event("XlaCompilationCache::CompileStrict", t + 20, 280)  # nested: counted once
            s.kernel(t + 400, 500, name="loop_fusion_1", hlo_module="cluster_0", hlo_op="fusion.1")

        s.steps(4, 1000, body)
        return s

    s = prof(3)
    assert s.run("xla.off").status == PASS
    f = s.run("xla.recompile")
    assert f.status == WARNING and f.metric("compilations") == 3 and f.metric("compile_ms_per_step") == approx(0.225)
    assert len(f.evidence) == 3 and f.evidence[0].end_ms - f.evidence[0].start_ms == approx(0.3)
    f = prof(1).run("xla.recompile")
    assert f.status == PASS and f.metric("compilations") == 1


def test_jax_capture_gets_jax_advice():
    """A JAX capture always uses XLA: xla.off does not apply, and recommendations speak JAX (issue 9)."""
    w = host_only()
    md = w.space.planes.add(id=50, name="/host:metadata")
    md.stat_metadata[1].id, md.stat_metadata[1].name = 1, "jax_version"
    md.stats.add(metadata_id=1, str_value="0.10.2")
    a = analysis_of(w)
    assert a.profile.framework == "jax"
    f = run_check(a, "xla.off")
    assert f.status == NOT_APPLICABLE and "JAX" in f.reason
    f = run_check(a, "capture.no-gpu")
    assert "jax" in f.recommendation.lower() and "CUPTI" not in f.recommendation

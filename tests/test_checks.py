"""Every check on a profile that triggers it and one that passes, with the numbers worked out by hand;
not-applicable where its data is missing. Steps are 1000 µs unless said otherwise."""
import pytest
from sim import T0, Sim, analysis_of, host_only, run_check

from tb_gpu_advisor.checks import REGISTRY
from tb_gpu_advisor.report import CRITICAL, INFO, NOT_APPLICABLE, PASS, WARNING
from tb_gpu_advisor.xplane.writer import GPU_SPECS, ProfileWriter

TC_FP16 = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn"
FP16_NO_TC = "ampere_fp16_sgemm_fp16_128x64_nn"
SGEMM = "ampere_sgemm_128x64_nn"
HALF = "(half[64,512];half[512,512])"
FLOAT = "(float[64,512];float[512,512])"
EIGEN = "void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<float>>"


def approx(v, rel=1e-6):
    return pytest.approx(v, rel=rel, abs=1e-9)


# -- 0. before the checklist -----------------------------------------------------------------


def test_capture_no_gpu():
    f = run_check(analysis_of(host_only()), "capture.no-gpu")
    assert f.status == WARNING and f.metric("gpus") == 0
    s = Sim()  # GPU plane and stream lines, but no event on them
    s.steps(2, 1000, lambda i, t: None)
    f = s.run("capture.no-gpu")
    assert f.status == WARNING and (f.metric("gpus"), f.metric("active_gpus")) == (1, 0)
    s = Sim()
    s.steps(2, 1000, lambda i, t: s.kernel(t, 100))
    assert s.run("capture.no-gpu").status == PASS


def test_capture_no_steps():
    s = Sim()
    s.steps(3, 1000, lambda i, t: s.kernel(t, 100))
    f = s.run("capture.no-steps")
    assert f.status == PASS and f.metric("steps") == 3
    w = ProfileWriter("h")
    gpu = w.gpu(0, GPU_SPECS["A100"])
    gpu.stream(7).kernel("k", 10, 100)
    f = run_check(analysis_of(w), "capture.no-steps")
    assert f.status == WARNING and f.metric("source") == "whole-capture" and f.metric("steps") == 1
    gpu.derived_line("Steps", [("0", 10, 50), ("1", 60, 50)])
    f = run_check(analysis_of(w), "capture.no-steps")
    assert f.status == INFO and f.metric("steps") == 2
    w = ProfileWriter("h")
    w.gpu(0, GPU_SPECS["A100"]).stream(7).kernel("k", 10, 100)
    for i in range(3):
        w.thread("python").event("train_function", i * 200, 150)
    f = run_check(analysis_of(w), "capture.no-steps")
    assert f.status == INFO and f.metric("source") == "step-function-calls" and f.metric("steps") == 3


def test_offload_small_model():
    # per step: 300 µs H2D, a 100 µs kernel: 0.1 ms compute against 0.3 ms of copies
    s = Sim()
    s.steps(4, 1000, lambda i, t: (s.h2d[0].memcpy("H2D", t + 100, 300, 1 << 20), s.kernel(t + 500, 100)))
    f = s.run("offload.small-model")
    assert f.status == WARNING
    assert f.metric("compute_ms_per_step") == approx(0.1) and f.metric("overhead_ms_per_step") == approx(0.3)
    s = Sim()  # 0.6 ms of compute, still under 1 ms, but more than the 0.3 ms of copies
    s.steps(4, 1000, lambda i, t: (s.h2d[0].memcpy("H2D", t + 10, 300, 1 << 20), s.kernel(t + 350, 600)))
    assert s.run("offload.small-model").status == PASS
    assert run_check(analysis_of(host_only()), "offload.small-model").status == NOT_APPLICABLE


# -- 1. input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("wait_us,status", [(250, CRITICAL), (100, WARNING), (20, PASS)])
def test_input_bound_levels(wait_us, status):
    s = Sim()
    s.steps(4, 1000, lambda i, t: (s.get_next(t, wait_us), s.kernel(t + 300, 600)))
    f = s.run("input.bound")
    assert f.status == status
    assert f.metric("input_pct") == approx(wait_us / 10)
    assert f.metric("input_ms_per_step") == approx(wait_us / 1000)
    assert f.saving_ms == approx(wait_us / 1000) and f.saving_pct == approx(wait_us / 10)


def test_input_bound_counts_input_copies_the_step_waits_on():
    # wait [0,100), input copy [100,200) with nothing else on the GPU, another input copy [300,400)
    # under compute (not waited on): 200 µs of 1000
    def body(i, t):
        s.get_next(t, 100)
        s.h2d[0].memcpy("H2D", t + 100, 100, 1 << 20, op="IteratorGetNext:IteratorGetNext")
        s.kernel(t + 200, 700, lead=150)
        s.h2d[0].memcpy("H2D", t + 300, 100, 1 << 20, op="IteratorGetNext:IteratorGetNext")

    s = Sim()
    s.steps(4, 1000, body)
    f = s.run("input.bound")
    assert f.status == CRITICAL and f.metric("input_pct") == approx(20.0)
    assert f.metric("input_copy_ms_per_step") == approx(0.1) and f.metric("host_wait_ms_per_step") == approx(0.1)
    assert f.evidence[0].thread == "tf_data_iterator_get_next/3"
    assert f.evidence[0].end_ms - f.evidence[0].start_ms == approx(0.1)


def test_input_bound_without_gpu_and_tf_data_stages():
    w = host_only(4, 1000)
    it = w.thread("tf_data_iterator_get_next/3")
    res = w.thread("tf_data_iterator_resource/4")
    for i in range(4):
        t = T0 + i * 1000
        it.get_next(t, 600)
        res.event("Iterator::Root::Prefetch", t, 600)
        res.event("Iterator::Root::Prefetch::Map", t + 10, 490)
    f = run_check(analysis_of(w), "input.bound")
    assert f.status == CRITICAL and f.metric("input_pct") == approx(60.0)
    assert [d["stage"] for d in f.details] == ["Iterator::Root::Prefetch::Map", "Iterator::Root::Prefetch"]
    assert f.details[0]["thread_ms_per_step"] == approx(0.49) and f.details[1]["thread_ms_per_step"] == approx(0.11)


# -- 2. utilisation ----------------------------------------------------------------------------


def gaps_profile(with_host_work: bool, kernel_us: float = 700):
    """Device work [0, kernel_us) each step; with host work, Python runs [700, 900) after it."""
    s = Sim()

    def body(i, t):
        s.kernel(t, kernel_us)
        if with_host_work:
            s.py.event("$keras/callbacks.py:300 on_train_batch_end", t + 700, 200)

    s.steps(4, 1000, body)
    return s


def test_steps_gaps():
    # 3 gaps of 300 µs over 4 steps: 225 µs per step, 22.5%; 200 of each 300 is host work
    f = gaps_profile(True).run("steps.gaps")
    assert f.status == WARNING
    assert f.metric("gap_pct") == approx(22.5) and f.metric("gap_ms_per_step") == approx(0.225)
    assert f.metric("host_work_pct_of_gaps") == approx(200 / 3) and f.metric("unexplained_pct_of_gaps") == approx(100 / 3)
    assert "steps.host-work" in f.summary
    assert len(f.evidence) == 3 and f.evidence[0].end_ms - f.evidence[0].start_ms == approx(0.3)
    f = gaps_profile(False, kernel_us=950).run("steps.gaps")  # gaps of 50 µs: 3.75%
    assert f.status == PASS and f.metric("gap_pct") == approx(3.75)
    s = Sim()
    s.steps(1, 1000, lambda i, t: s.kernel(t, 100))
    assert s.run("steps.gaps").status == NOT_APPLICABLE
    assert run_check(analysis_of(host_only()), "steps.gaps").status == NOT_APPLICABLE


def test_steps_host_work():
    f = gaps_profile(True).run("steps.host-work")  # 3 x 200 µs over 4 steps
    assert f.status == WARNING and f.metric("host_work_pct") == approx(15.0)
    assert f.details[0]["event"] == "$keras/callbacks.py:300 on_train_batch_end"
    assert f.details[0]["ms_per_step"] == approx(0.15)
    f = gaps_profile(False).run("steps.host-work")
    assert f.status == PASS and f.metric("host_work_pct") == 0


def test_host_thread_contention():
    # tf.data busy [0, 200), first kernel at 250, launches from shared threads
    def body(i, t, busy_at):
        s.w.thread("tf_data_private_threadpool/7").event("Iterator::Root::Prefetch::Map", t + busy_at, 200)
        s.kernel(t + 250, 600)

    s = Sim(private=False)
    s.steps(4, 1000, lambda i, t: body(i, t, 0))
    f = s.run("host.thread-contention")
    assert f.status == WARNING and f.metric("contention_pct") == approx(20.0)
    assert f.metric("first_kernel_delay_ms") == approx(0.25) and f.metric("gpu_private") == "off"
    assert "TF_GPU_THREAD_MODE=gpu_private" in f.snippet
    s = Sim(private=False)
    s.steps(4, 1000, lambda i, t: body(i, t, 300))  # tf.data busy after the first launches
    assert s.run("host.thread-contention").status == PASS
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t + 250, 600))
    assert s.run("host.thread-contention").status == NOT_APPLICABLE


def test_kernels_launch_bound():
    # 30 kernels of 20 µs every 30 µs from 31 µs, each launch 25 µs long ending 1 µs before its
    # kernel: the GPU waits 10 µs before each kernel, 26 µs before the first: 316 µs of 1000
    def body(i, t):
        for j in range(30):
            s.kernel(t + 31 + 30 * j, 20, lead=1, launch_us=25)

    s = Sim()
    s.steps(4, 1000, body)
    f = s.run("kernels.launch-bound")
    assert f.status == CRITICAL and f.metric("launch_wait_pct") == approx(31.6)
    assert f.metric("waits_per_step") == 30 and f.saving_ms == approx(0.316)
    # launched 200 µs ahead: never waited on
    s = Sim()
    s.steps(4, 1000, lambda i, t: [s.kernel(t + 10 + 100 * j, 90, lead=200) for j in range(10)])
    f = s.run("kernels.launch-bound")
    assert f.status == PASS and f.metric("launch_wait_pct") == 0


def test_kernels_small():
    def body(i, t, n, big):
        for j in range(n):
            s.kernel(t + 40 * j, 20, op="model/scale/Mul:Mul")
        if big:
            s.kernel(t + 11_000, 50_000, name=SGEMM, op="big/MatMul:MatMul")

    s = Sim()
    s.steps(4, 10_000, lambda i, t: body(i, t, 250, False))
    f = s.run("kernels.small")
    assert f.status == WARNING and f.metric("small_kernels_per_step") == 250
    assert f.metric("small_kernel_pct") == approx(100.0) and f.metric("mean_small_kernel_us") == approx(20.0)
    assert f.details[0]["op_type"] == "Mul" and f.details[0]["kernels"] == 1000
    s = Sim()  # as many, but 5 ms of 55 ms of compute: info
    s.steps(4, 70_000, lambda i, t: body(i, t, 250, True))
    f = s.run("kernels.small")
    assert f.status == INFO and f.metric("small_kernel_pct") == approx(100 * 5 / 55)
    s = Sim()
    s.steps(4, 10_000, lambda i, t: body(i, t, 10, False))
    assert s.run("kernels.small").status == PASS


def test_ops_eager():
    # 10 eager Mul per step: 50 µs of dispatch each, 30 µs eager kernels: share 100%, 50% of the step
    def body(i, t):
        for j in range(10):
            s.py.eager("Mul", t + 100 * j, 50)
            s.kernel(t + 100 * j + 40, 30, op="Mul:Mul", is_eager=True, lead=1)

    s = Sim()
    s.steps(4, 1000, body)
    f = s.run("ops.eager")
    assert f.status == CRITICAL and f.metric("eager_pct") == approx(100.0)
    assert f.metric("eager_step_pct") == approx(50.0) and f.metric("eager_ops") == 40
    assert f.details[0]["op_type"] == "Mul"
    # one 5 µs eager Cast next to 20 µs of graph ops: 20% of op time but 0.5% of the step: info
    s = Sim()
    s.steps(4, 1000, lambda i, t: (s.tfc.op("dense/MatMul:MatMul", t + 100, 20), s.py.eager("Cast", t + 500, 5)))
    f = s.run("ops.eager")
    assert f.status == INFO and f.metric("eager_pct") == approx(20.0)
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 500, op="dense/MatMul:MatMul"))
    assert s.run("ops.eager").status == PASS
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 500))
    assert s.run("ops.eager").status == NOT_APPLICABLE


def test_placement_host_ops():
    # 600 µs of device op, 200 µs of Unique on the host while the GPU idles: 25%
    s = Sim()
    s.steps(4, 1000, lambda i, t: (s.kernel(t, 600, op="dense/MatMul:MatMul"), s.tfc.op("cpu/Unique:Unique", t + 700, 200)))
    f = s.run("placement.host-ops")
    assert f.status == WARNING and f.metric("host_op_pct") == approx(25.0)
    assert f.metric("exposed_ms_per_step") == approx(0.2) and f.saving_ms == approx(0.2)
    assert f.details[0]["op"] == "cpu/Unique (Unique)" and f.details[0]["ms_per_step"] == approx(0.2)
    assert f.evidence[0].thread == "tf_Compute/9"
    s = Sim()
    s.steps(4, 1000, lambda i, t: (s.kernel(t, 600, op="dense/MatMul:MatMul"), s.tfc.op("cpu/Unique:Unique", t + 700, 10)))
    f = s.run("placement.host-ops")
    assert f.status == PASS and f.metric("host_op_pct") == approx(100 * 10 / 610)
    assert run_check(analysis_of(host_only()), "placement.host-ops").status == NOT_APPLICABLE


def test_memcpy_excessive():
    # D2H of 8 MiB [400, 500) between two kernels: 100 µs of idle compute; input copies are not counted
    def body(i, t):
        s.kernel(t, 400, op="a/MatMul:MatMul")
        s.d2h[0].memcpy("D2H", t + 400, 100, 8 << 20, op="model/to_host:_Send")
        s.kernel(t + 500, 400, op="b/MatMul:MatMul", lead=300)
        s.h2d[0].memcpy("H2D", t + 900, 50, 1 << 20, op="IteratorGetNext:IteratorGetNext")

    s = Sim()
    s.steps(4, 1000, body)
    f = s.run("memcpy.excessive")
    assert f.status == WARNING and f.metric("blocking_copy_pct") == approx(10.0)
    assert f.metric("mid_step_d2h_per_step") == 1 and f.metric("d2h_per_step") == 1
    assert f.metric("d2h_mb_per_step") == approx(8.388608) and f.metric("h2d_per_step") == 0
    row = f.details[0]
    assert (row["copy"], row["op"], row["before"], row["after"]) == ("MemcpyD2H", "model/to_host", "a/MatMul", "b/MatMul")
    assert f.evidence[0].stream_id == 9
    s = Sim()  # a 4-byte copy at the end of the step: 0.5%, not mid-step
    s.steps(4, 1000, lambda i, t: (s.kernel(t, 900), s.d2h[0].memcpy("D2H", t + 900, 5, 4)))
    f = s.run("memcpy.excessive")
    assert f.status == PASS and f.metric("blocking_copy_pct") == approx(0.5)
    s = Sim()  # mid-step but hidden under compute: info
    s.steps(4, 1000, lambda i, t: (s.kernel(t, 400), s.d2h[0].memcpy("D2H", t + 100, 50, 8 << 20), s.kernel(t + 400, 400)))
    f = s.run("memcpy.excessive")
    assert f.status == INFO and f.metric("blocking_copy_pct") == 0


# -- 3. kernel efficiency ------------------------------------------------------------------------


def test_tensorcore_unused():
    # 600 µs fp32 sgemm and 200 µs Tensor Core gemm: 75% of compute; saving 600 x (1 - 1/3) = 400 µs
    def body(i, t):
        s.kernel(t, 600, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT)
        s.kernel(t + 600, 200, name=TC_FP16, op="e/MatMul:MatMul", shape=HALF)

    s = Sim()
    s.steps(4, 1000, body)
    f = s.run("tensorcore.unused")
    assert f.status == WARNING and f.metric("no_tensor_core_pct") == approx(75.0)
    assert f.saving_ms == approx(0.4) and f.details[0]["kernel"] == SGEMM and f.details[0]["precision"] == "32-bit"
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=TC_FP16, op="e/MatMul:MatMul", shape=HALF))
    f = s.run("tensorcore.unused")
    assert f.status == PASS and f.metric("no_tensor_core_pct") == 0
    s = Sim(spec="P100")
    s.steps(4, 1000, body)
    f = s.run("tensorcore.unused")
    assert f.status == NOT_APPLICABLE and "6.0" in f.reason


def test_tensorcore_dims():
    def prof(shape, name=FP16_NO_TC, op="f/MatMul:MatMul"):
        s = Sim()
        s.steps(4, 1000, lambda i, t: s.kernel(t, 500, name=name, op=op, shape=shape))
        return s.run("tensorcore.dims")

    f = prof("(half[64,1001];half[1001,4000])")
    assert f.status == WARNING and f.metric("ops_not_multiple_of_8") == 1 and f.metric("affected_pct") == approx(100.0)
    assert f.details[0]["padded"] == "(half[64,1008];half[1008,4000])" and not f.details[0]["uses_tensor_cores"]
    assert f.saving_ms == approx(0.5 * 2 / 3)
    f = prof("(half[32,56,56,3];half[3,3,3,64])", op="c/Conv2D:Conv2D")
    assert f.status == WARNING and f.details[0]["padded"] == "(half[32,56,56,8];half[3,3,8,64])"
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


# -- 4. precision and XLA -------------------------------------------------------------------------


def test_precision_mixed_off():
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT))
    f = s.run("precision.mixed-off")
    assert f.status == WARNING and f.metric("fp16_pct") == 0
    assert f.metric("fp32_eligible_ms_per_step") == approx(0.6) and f.saving_ms == approx(0.4)
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=TC_FP16, op="d/MatMul:MatMul", shape=HALF))
    f = s.run("precision.mixed-off")
    assert f.status == PASS and f.metric("fp16_pct") == approx(100.0)
    s = Sim(spec="V100")  # a threshold override moves the line
    s.steps(4, 1000, lambda i, t: (s.kernel(t, 100, name=TC_FP16, op="a/MatMul:MatMul", shape=HALF),
                                   s.kernel(t + 100, 700, name=SGEMM, op="b/MatMul:MatMul", shape=FLOAT)))  # fmt: skip
    assert s.run("precision.mixed-off").status == PASS  # 12.5% >= 10%
    assert s.run("precision.mixed-off", overrides={"precision.mixed-off.warning": 20}).status == WARNING
    s = Sim(spec="P100")
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600, name=SGEMM, op="d/MatMul:MatMul", shape=FLOAT))
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


def test_precision_dynamic_loss_scale():
    def prof(op_at, fp16=True):
        s = Sim()

        def body(i, t):
            s.kernel(t, 800, name=TC_FP16 if fp16 else SGEMM, op="d/MatMul:MatMul", shape=HALF if fp16 else FLOAT)
            if op_at is not None:
                s.tfc.op("LossScaleOptimizer/cond:If", t + op_at, 150)

        s.steps(4, 1000, body)
        return s.run("precision.dynamic-loss-scale")

    f = prof(800)  # after the step's compute: 150 µs of 1000 with the GPU idle
    assert f.status == WARNING and f.metric("loss_scale_pct") == approx(15.0)
    assert f.metric("loss_scale_ops_per_step") == 1 and f.saving_ms == approx(0.15)
    f = prof(100)  # hidden under compute
    assert f.status == INFO and f.metric("loss_scale_pct") == 0
    assert prof(None).status == PASS
    assert prof(None, fp16=False).status == NOT_APPLICABLE


def test_precision_fp16_softmax():
    def prof(op, shape="(half[8,128])"):
        s = Sim()
        s.steps(4, 1000, lambda i, t: s.kernel(t, 50, name="GenericSoftmaxKernel<Eigen::half, float>", op=op, shape=shape))
        return s.run("precision.fp16-softmax")

    f = prof("model/attention/Softmax:Softmax")
    assert f.status == WARNING and f.metric("fp16_softmax_ops") == 1 and f.details == [{"op": "model/attention/Softmax"}]
    assert prof("loss/softmax_cross_entropy/Softmax:Softmax").status == PASS
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 50, name="GenericSoftmaxKernel<float, float>", op="a/Softmax:Softmax",
                                           shape="(float[8,128])"))  # fmt: skip
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


# -- 5. several GPUs -------------------------------------------------------------------------------


MULTI = ["multigpu.input", "allreduce.count", "allreduce.cost", "multigpu.copies", "multigpu.imbalance",
         "multigpu.serialized", "multigpu.launch-skew"]  # fmt: skip


@pytest.mark.parametrize("check_id", MULTI)
def test_multigpu_checks_need_two_gpus(check_id):
    s = Sim(gpus=2)  # a second GPU plane, but idle
    s.steps(4, 1000, lambda i, t: s.kernel(t, 500))
    f = s.run(check_id)
    assert f.status == NOT_APPLICABLE and "(1 found)" in f.reason


def test_multigpu_batch():
    def prof(frac):
        s = Sim()
        s.steps(4, 1000, lambda i, t: s.kernel(t, 500))
        if frac is not None:
            s.py.memory(T0 + 1, 1 << 30, int(frac * GPU_SPECS["A100"].memory_bytes), allocator="GPU_0_bfc")
        return s.run("multigpu.batch")

    f = prof(0.3)
    assert f.status == INFO and f.metric("peak_memory_pct") == approx(30.0, rel=1e-6)
    assert prof(0.8).status == PASS
    assert prof(None).status == NOT_APPLICABLE


def two_gpus(body, steps=4, step_us=1000.0):
    s = Sim(gpus=2)
    s.steps(steps, step_us, lambda i, t: body(s, i, t))
    return s


def test_multigpu_input():
    s = two_gpus(lambda s, i, t: (s.get_next(t, 250), s.kernel(t + 300, 600, gpu=0), s.kernel(t + 300, 600, gpu=1)))
    f = s.run("multigpu.input")
    assert f.status == CRITICAL and f.metric("input_pct_gpu0") == approx(25.0) and f.metric("input_pct_gpu1") == approx(25.0)
    s = two_gpus(lambda s, i, t: (s.get_next(t, 20), s.kernel(t + 30, 900, gpu=0), s.kernel(t + 30, 900, gpu=1)))
    assert s.run("multigpu.input").status == PASS


def allreduce_body(n_calls, nccl_us=50.0):
    def body(s, i, t):
        for d in range(2):
            s.kernel(t, 500, gpu=d)
            for k in range(n_calls):
                s.nccl_stream[d].nccl(t + 500 + 100 * k, nccl_us)

    return body


def test_allreduce_count():
    f = two_gpus(allreduce_body(3)).run("allreduce.count")
    assert f.status == WARNING and f.metric("allreduce_per_gpu_per_step") == 3.0
    assert f.saving_ms == approx(0.1)  # two extra 50 µs calls per step
    f = two_gpus(allreduce_body(1)).run("allreduce.count")
    assert f.status == PASS and f.metric("allreduce_per_gpu_per_step") == 1.0
    assert two_gpus(allreduce_body(0)).run("allreduce.count").status == NOT_APPLICABLE


def test_allreduce_cost():
    def body(s, i, t, nccl_us):
        for d in range(2):
            s.kernel(t, 600, gpu=d)
            s.nccl_stream[d].nccl(t + 600, nccl_us)

    s = two_gpus(lambda s, i, t: body(s, i, t, 300))
    f = s.run("allreduce.cost")
    assert f.status == WARNING and f.metric("allreduce_pct") == approx(30.0)
    assert f.metric("bandwidth_gbps") == 300.0  # A100: NVLink 3 by default
    # 25M parameters x 4 bytes x 2(n-1)/n over 300 GB/s = 0.333 ms
    f = s.run("allreduce.cost", params=25_000_000)
    assert f.metric("estimate_ms") == approx(1 / 3) and f.metric("measured_over_estimate") == approx(0.9)
    s = two_gpus(lambda s, i, t: body(s, i, t, 50))
    f = s.run("allreduce.cost")
    assert f.status == PASS and f.metric("allreduce_pct") == approx(5.0)
    # 1M parameters over 300 GB/s: 13.3 µs expected, 50 µs measured: 3.75x slower than the estimate
    f = s.run("allreduce.cost", params=1_000_000)
    assert f.status == WARNING and f.metric("measured_over_estimate") == approx(3.75)
    f = s.run("allreduce.cost", params=1_000_000, bandwidth_gbps=10.0)
    assert f.status == PASS and f.metric("bandwidth_gbps") == 10.0
    # without --params, from the all-reduce op's shape: 25M floats, 0.333 ms expected, 0.3 ms measured
    s = two_gpus(lambda s, i, t: [(s.kernel(t, 600, gpu=d), s.nccl_stream[d].nccl(t + 600, 300, shape="(float[25000000])"))
                                  for d in range(2)])  # fmt: skip
    f = s.run("allreduce.cost")
    assert f.metric("params") == 25_000_000 and f.metric("estimate_ms") == approx(1 / 3)
    assert "from the all-reduce shapes" in f.summary
    # GPU1 arrives 200 µs early and waits inside its NCCL kernel: the transfer is GPU0's 100 µs
    s = two_gpus(lambda s, i, t: (s.kernel(t, 600, gpu=0), s.kernel(t, 400, gpu=1),
                                  s.nccl_stream[0].nccl(t + 600, 100), s.nccl_stream[1].nccl(t + 400, 300)))  # fmt: skip
    f = s.run("allreduce.cost")
    assert f.metric("allreduce_ms_per_step") == approx(0.1) and f.metric("waiting_ms_per_step") == approx(0.1)
    assert f.status == PASS and "multigpu.imbalance" in f.summary


def test_multigpu_copies():
    def body(s, i, t):
        for d in range(2):
            s.kernel(t, 400, gpu=d)
            s.kernel(t + 500, 400, gpu=d, lead=300)
        s.d2h[1].memcpy("D2H", t + 400, 100, 8 << 20, op="x/to_host:_Send")

    f = two_gpus(body).run("multigpu.copies")
    assert f.status == WARNING and f.metric("blocking_copy_pct") == approx(10.0)
    assert f.metric("blocking_copy_ms_per_step_gpu1") == approx(0.1) and f.metric("blocking_copy_ms_per_step_gpu0") == 0
    assert f.evidence[0].device_id == 1
    f = two_gpus(lambda s, i, t: (s.kernel(t, 900, gpu=0), s.kernel(t, 900, gpu=1))).run("multigpu.copies")
    assert f.status == PASS


def test_multigpu_imbalance():
    f = two_gpus(lambda s, i, t: (s.kernel(t, 800, gpu=0), s.kernel(t, 500, gpu=1))).run("multigpu.imbalance")
    assert f.status == WARNING and f.metric("spread_pct") == approx(37.5)
    assert f.metric("compute_ms_per_step_gpu0") == approx(0.8) and f.saving_ms == approx(0.15)  # 800 - mean 650
    assert f.evidence[0].device_id == 0
    f = two_gpus(lambda s, i, t: (s.kernel(t, 800, gpu=0), s.kernel(t, 800, gpu=1))).run("multigpu.imbalance")
    assert f.status == PASS and f.metric("spread_pct") == 0


def test_multigpu_serialized_and_launch_skew():
    serial = two_gpus(lambda s, i, t: (s.kernel(t, 400, gpu=0), s.kernel(t + 400, 400, gpu=1)))
    f = serial.run("multigpu.serialized")
    assert f.status == WARNING and f.metric("serialization_index") == approx(1.0) and f.saving_ms == approx(0.4)
    f = serial.run("multigpu.launch-skew")  # the skew is the serialisation: info, pointing there
    assert f.status == INFO and "multigpu.serialized" in f.summary

    skew = two_gpus(lambda s, i, t: (s.kernel(t, 600, gpu=0), s.kernel(t + 100, 600, gpu=1)))
    f = skew.run("multigpu.launch-skew")
    assert f.status == WARNING and f.metric("skew_pct") == approx(10.0) and f.metric("skew_ms_per_step") == approx(0.1)
    f = skew.run("multigpu.serialized")  # union 700, sum 1200, max 600: (700-600)/(1200-600)
    assert f.status == PASS and f.metric("serialization_index") == approx(1 / 6)

    together = two_gpus(lambda s, i, t: (s.kernel(t, 600, gpu=0), s.kernel(t, 600, gpu=1)))
    assert together.run("multigpu.launch-skew").status == PASS
    assert together.run("multigpu.serialized").metric("serialization_index") == 0


def test_every_registered_check_is_tested_here():
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    missing = [c.id for c in REGISTRY if f'"{c.id}"' not in source]
    assert missing == []

"""Section 2 of the checklist (one GPU, utilisation): gaps, host work, thread contention, launches,
small kernels, eager ops, placement, copies. Steps are 1000 µs; kernels are launched 100 µs ahead
(the launch call ends 100 µs before the kernel) unless said otherwise.

Idle time is attributed once (measures/timing.py): the breakdown's categories first, then, in the idle rest,
loss scaling, compilation, host ops, Python work, tf.data. A launch still in flight (up to its end plus
40 µs) is launch wait, so where a check's host activity overlaps the next kernel's launch, its saving is
smaller than its measured time by that overlap."""

import os

import pytest
from support.sim import T0, Sim, analysis_of, host_only, run_check

from tb_gpu_advisor.checks.findings import CRITICAL, INFO, NOT_APPLICABLE, PASS, WARNING
from tb_gpu_advisor.model.analysis import analyse


def approx(v, rel=1e-6):
    return pytest.approx(v, rel=rel, abs=1e-9)


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
    # 3 gaps of 300 µs over 4 steps: 225 µs per step, 22.5%. Each gap [700, 1000): the next kernel's
    # launch ends at 900, so [895, 940) is launch wait (15%); Python [700, 895) (65%); [940, 1000)
    # unexplained (20%), the only part that is this check's saving: 3 x 60 / 4 = 45 µs per step.
    f = gaps_profile(True).run("steps.gaps")
    assert f.status == WARNING and f.title == "Gaps between steps: GPU 0 idle 22.5% of each step"
    assert f.metric("gap_pct") == approx(22.5) and f.metric("gap_ms_per_step") == approx(0.225)
    assert f.metric("host_work_pct_of_gaps") == approx(65.0) and f.metric("unexplained_pct_of_gaps") == approx(20.0)
    assert f.metric("launch_pct_of_gaps") == approx(15.0)
    assert f.saving_ms == approx(0.045)
    assert "steps.host-work" in f.summary
    assert len(f.evidence) == 3 and f.evidence[0].end_ms - f.evidence[0].start_ms == approx(0.3)
    f = gaps_profile(False, kernel_us=950).run("steps.gaps")  # gaps of 50 µs: 3.75%
    assert f.status == PASS and f.metric("gap_pct") == approx(3.75)
    s = Sim()
    s.steps(1, 1000, lambda i, t: s.kernel(t, 100))
    assert s.run("steps.gaps").status == NOT_APPLICABLE
    assert run_check(analysis_of(host_only()), "steps.gaps").status == NOT_APPLICABLE


def test_steps_host_work():
    # Python [700, 900) in each of the 4 steps while the GPU idles: 20% (the last step's counts too);
    # the saving leaves out [895, 900) of the first three steps, the next kernel's launch in flight
    f = gaps_profile(True).run("steps.host-work")
    assert f.status == WARNING and f.metric("host_work_pct") == approx(20.0)
    assert f.title == "Host work: GPU idle 20.0% of each step while Python works"
    assert f.details[0]["event"] == "$keras/callbacks.py:300 on_train_batch_end"
    assert f.details[0]["ms_per_step"] == approx(0.2)
    assert f.saving_ms == approx((3 * 195 + 200) / 4 / 1000)
    assert f.evidence[0].thread == "python"
    f = gaps_profile(False).run("steps.host-work")
    assert f.status == PASS and f.metric("host_work_pct") == 0


def test_graph_calls_on_the_python_thread_are_not_host_work():
    """In a tf.function step the Python thread sits in FunctionRun (and in real captures
    EagerExecute of the function, KernelAndDeviceFunc::Run ...) while the graph runs: waiting, not work."""
    s = Sim()

    def body(i, t):
        s.kernel(t, 500)
        s.py.event("KernelAndDeviceFunc::Run", t + 2, 990)
        s.py.event("EagerExecute", t + 1, 995, eager_op="__inference_train_step_1208", is_func=1)

    s.steps(4, 1000, body)
    assert s.run("steps.host-work").metric("host_work_pct") == 0


def test_host_thread_contention():
    # tf.data busy [0, 200), first kernel at 250 (launched [145, 150)), launches from shared threads:
    # 200 µs of tf.data before the first kernel, 20%; the saving leaves out the launch wait [145, 190)
    def body(i, t, busy_at):
        s.w.thread("tf_data_private_threadpool/7").event("Iterator::Root::Prefetch::Map", t + busy_at, 200)
        s.kernel(t + 250, 600)

    s = Sim(private=False)
    s.steps(4, 1000, lambda i, t: body(i, t, 0))
    f = s.run("host.thread-contention")
    assert f.status == WARNING and f.metric("contention_pct") == approx(20.0)
    assert f.metric("first_kernel_delay_ms") == approx(0.25) and f.metric("gpu_private") == "off"
    assert f.saving_ms == approx(0.155)
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
    assert f.title == "Launch-bound: GPU 0 waits 31.6% of each step for kernel launches"
    assert f.metric("waits_per_step") == 30 and f.saving_ms == approx(0.316)
    # launched 200 µs ahead: never waited on
    s = Sim()
    s.steps(4, 1000, lambda i, t: [s.kernel(t + 10 + 100 * j, 90, lead=200) for j in range(10)])
    f = s.run("kernels.launch-bound")
    assert f.status == PASS and f.metric("launch_wait_pct") == 0


def test_launch_bound_needs_launch_events():
    """Without CUDA API launch events (a real 8-GPU capture had none) there is nothing to measure."""
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.compute[0].kernel("k", t + 10, 500))
    f = s.run("kernels.launch-bound")
    assert f.status == NOT_APPLICABLE and "launch events" in f.reason


def test_kernels_small():
    def body(i, t, n, big):
        for j in range(n):
            s.kernel(t + 40 * j, 20, op="model/scale/Mul:Mul")
        if big:
            s.kernel(t + 11_000, 50_000, name="ampere_sgemm_128x64_nn", op="big/MatMul:MatMul")

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


def test_kernels_small_counts_per_gpu():
    """Two GPUs with 250 small kernels per step each: 250 per step, not 500 (issue 9: 1136 = 2 x 568)."""
    s = Sim(gpus=2)
    s.steps(
        4,
        10_000,
        lambda i, t: [s.kernel(t + 40 * j, 20, op="model/scale/Mul:Mul", gpu=d) for d in (0, 1) for j in range(250)],
    )
    f = s.run("kernels.small")
    assert f.metric("small_kernels_per_step") == 250 and f.metric("small_kernels_per_step_gpu1") == 250


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


def test_eager_ops_counted_once_inside_steps_and_next_is_input():
    """EagerExecute with EagerLocalExecute inside it is one execution; eager ops outside the steps do
    not count; next(iterator) from Python is input wait, not an eager op (issue 9)."""
    s = Sim()

    def body(i, t):
        s.py.eager("Mul", t + 100, 50)
        s.py.event("EagerLocalExecute: Mul", t + 101, 48)
        s.py.event("EagerExecute", t + 10, 60, eager_op="IteratorGetNext", is_func=0)
        s.kernel(t + 300, 500, op="dense/MatMul:MatMul")

    s.steps(4, 1000, body)
    s.py.eager("Mul", T0 + 4000 + 100, 50)  # after the last step
    f = s.run("ops.eager")
    assert f.metric("eager_ops") == 4 and f.metric("eager_host_ms_per_step") == approx(0.05)
    assert [d["op_type"] for d in f.details] == ["Mul"]
    assert s.run("input.bound").metric("host_wait_ms_per_step") == approx(0.06)


def test_placement_host_ops():
    # 600 µs of device op, 200 µs of Unique on the host while the GPU idles: 25%; the saving leaves
    # out [895, 900), the next kernel's launch in flight
    s = Sim()
    s.steps(
        4, 1000, lambda i, t: (s.kernel(t, 600, op="dense/MatMul:MatMul"), s.tfc.op("cpu/Unique:Unique", t + 700, 200))
    )
    f = s.run("placement.host-ops")
    assert f.status == WARNING and f.metric("host_op_pct") == approx(25.0)
    assert f.title == "Host ops: 25.0% of op time runs on the host"
    assert f.metric("exposed_ms_per_step") == approx(0.2) and f.saving_ms == approx((3 * 195 + 200) / 4 / 1000)
    assert f.details[0]["op"] == "cpu/Unique (Unique)" and f.details[0]["ms_per_step"] == approx(0.2)
    assert f.evidence[0].thread == "tf_Compute/9"
    s = Sim()
    s.steps(
        4, 1000, lambda i, t: (s.kernel(t, 600, op="dense/MatMul:MatMul"), s.tfc.op("cpu/Unique:Unique", t + 700, 10))
    )
    f = s.run("placement.host-ops")
    assert f.status == PASS and f.metric("host_op_pct") == approx(100 * 10 / 610)
    assert run_check(analysis_of(host_only()), "placement.host-ops").status == NOT_APPLICABLE
    # kernels with no framework op: nothing to place, not a PASS over "n/a" of op time
    s = Sim()
    s.steps(4, 1000, lambda i, t: s.kernel(t, 600))
    f = s.run("placement.host-ops")
    assert f.status == NOT_APPLICABLE and "n/a" not in f.summary and "No framework op" in f.summary


def test_placement_leaves_out_runtime_plumbing_and_names_py_function():
    """_Arg, _Recv, _Send, RemoteCall and kernel-less ReadVariableOp are not compute (issue 9: 16.9%
    where the real host compute was ~0.2%); a tf.py_function in the step is named."""
    s = Sim()

    def body(i, t):
        s.kernel(t, 600, op="dense/MatMul:MatMul")
        for j, op in enumerate(
            ("args_0:_Arg", "recv:_Recv", "send:_Send", "call:RemoteCall", "v/ReadVariableOp:ReadVariableOp")
        ):
            s.tfc.op(op, t + 610 + 10 * j, 8)
        s.tfc.op("model/py_function:EagerPyFunc", t + 700, 140)

    s.steps(4, 1000, body)
    f = s.run("placement.host-ops")
    assert f.metric("host_op_pct") == approx(100 * 140 / 740)
    assert "tf.py_function" in f.summary and "py_function" in f.recommendation
    assert [d["op"] for d in f.details] == ["model/py_function (EagerPyFunc)"]


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
    assert f.title == "Excessive copies: 10.0% of each step waits on copies"
    assert f.metric("mid_step_d2h_per_step") == 1 and f.metric("d2h_per_step") == 1
    assert f.metric("d2h_mb_per_step") == approx(8.388608) and f.metric("h2d_per_step") == 0
    row = f.details[0]
    assert (row["copy"], row["op"], row["before"], row["after"]) == (
        "MemcpyD2H",
        "model/to_host",
        "a/MatMul",
        "b/MatMul",
    )
    assert f.evidence[0].stream_id == 9
    s = Sim()  # a 4-byte copy at the end of the step: 0.5%, not mid-step
    s.steps(4, 1000, lambda i, t: (s.kernel(t, 900), s.d2h[0].memcpy("D2H", t + 900, 5, 4)))
    f = s.run("memcpy.excessive")
    assert f.status == PASS and f.metric("blocking_copy_pct") == approx(0.5)
    s = Sim()  # mid-step but hidden under compute: info
    s.steps(
        4, 1000, lambda i, t: (s.kernel(t, 400), s.d2h[0].memcpy("D2H", t + 100, 50, 8 << 20), s.kernel(t + 400, 400))
    )
    f = s.run("memcpy.excessive")
    assert f.status == INFO and f.metric("blocking_copy_pct") == 0
    # titled for what it notes, the sync point, not "Excessive copies: 0.0%"
    assert f.title == "Device-to-host copies mid-step: 1.0 per step on GPU 0 (0.0% of the step waits on copies)"


# -- host-device syncs: named as syncs, costed by the step graph -------------------------------------

PAIRS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "gpu_pairs")


def _real(run: str):
    from tb_gpu_advisor.report.engine import read_path

    path = next(os.path.join(PAIRS, run, f) for f in sorted(os.listdir(os.path.join(PAIRS, run))) if ".pt.trace" in f)
    return analyse(read_path(path))


def test_syncs_are_named_and_costed_by_the_step_graph():
    """ResNet-50 on an H200 with a `loss.item()` and a `torch.cuda.synchronize()` each step
    (tests/data/gpu_pairs/rn50_b64_sync): both are named as what the user wrote, the host's wait in
    them is the capture's (6.6-7.7 ms a step by hand from the trace's cudaStreamSynchronize calls), and
    the saving is the step re-timed without them: 0.8 ms, not the wait (the GPU had that work to do
    anyway; docs/whatif.md shows this model misses the 2.3 ms the fix realised)."""
    f = run_check(_real("rn50_b64_sync"), "steps.syncs", whatif=True)
    assert f.status == WARNING
    rows = {r["op"]: r for r in f.details}
    assert set(rows) == {"aten::_local_scalar_dense", ""}
    assert rows["aten::_local_scalar_dense"]["call"].startswith(".item()") and rows[""]["call"].startswith(
        "torch.cuda.synchronize()"
    )
    assert rows["aten::_local_scalar_dense"]["wait_ms_per_step"] == pytest.approx(7.24, abs=0.01)
    assert f.metric("syncs_per_step") == 2
    assert f.whatif["change"] == "syncs" and f.saving_ms == pytest.approx(0.81, abs=0.05)
    assert f.saving_ms < 0.2 * rows["aten::_local_scalar_dense"]["wait_ms_per_step"]
    assert len(f.evidence) == 3 and all("waits" in e.label for e in f.evidence)


def test_no_syncs_in_the_steps_pass():
    """The same ResNet-50 without them: the profiler's own synchronize as it stops is not counted."""
    f = run_check(_real("rn50_b64_fp32"), "steps.syncs", whatif=True)
    assert f.status == PASS and f.metric("syncs_per_step") == 0


def _real_any(folder: str):
    """The one profile of a run folder under tests/data (XSpace or a PyTorch trace)."""
    from tb_gpu_advisor.formats.discovery import discover
    from tb_gpu_advisor.report.engine import read_file

    (f,) = discover(os.path.join(os.path.dirname(PAIRS), folder))[0]
    return analyse(read_file(f))


@pytest.mark.parametrize(
    "folder,line",
    [
        # JAX op by op: every kernel's op is the untyped `XlaModule` container, so the group is the
        # kernel's own name (by hand from the XSpace: 74 `loop_multiply_fusion` kernels a step of 231)
        ("gpu_pairs/jax_eager", "most are loop_multiply_fusion: 74 a step, 0.17 ms a step, 2.3 µs each"),
        # three steps of the graphed GPT-2: 1,077 kernels of the graphed backward in all, 359 a step
        ("gpu_validation/gpt2_b1_graphed", "most are GraphedBackward: 359 a step, 3.40 ms a step, 9.5 µs each"),
    ],
)
def test_the_small_kernels_line_names_its_group_per_step(folder, line):
    """kernels.small names its largest group of small kernels, a name and what it is a step, beside the
    kernels a step it counts. Before issue 48 it read "most are : 1155 kernels, 2.93 ms" (an op without
    a type named by its empty type; the whole capture's count beside "231 per step")."""
    f = run_check(_real_any(folder), "kernels.small")
    assert line in f.summary
    assert "most are :" not in f.summary

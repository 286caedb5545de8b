"""Section 1 of the checklist: input.bound (multigpu.input is with the multi-GPU checks)."""

import pytest
from support.sim import T0, Sim, analysis_of, host_only, run_check

from tb_gpu_advisor.checks.findings import CRITICAL, PASS, WARNING


def approx(v, rel=1e-6):
    return pytest.approx(v, rel=rel, abs=1e-9)


@pytest.mark.parametrize("wait_us,status", [(250, CRITICAL), (100, WARNING), (20, PASS)])
def test_input_bound_levels(wait_us, status):
    s = Sim()
    s.steps(4, 1000, lambda i, t: (s.get_next(t, wait_us), s.kernel(t + 300, 600)))
    f = s.run("input.bound")
    assert f.status == status
    assert f.metric("input_pct") == approx(wait_us / 10)
    assert f.metric("input_ms_per_step") == approx(wait_us / 1000)
    assert f.saving_ms == approx(wait_us / 1000) and f.saving_pct == approx(wait_us / 10)
    if status != PASS:
        assert f.title == f"Input-bound: {wait_us / 10:.1f}% of each step waits for input"
    else:
        assert f.title == "Input pipeline keeps up"


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
    assert "IteratorGetNextOp::DoCompute" in f.summary  # what the step waits in


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


def test_input_bound_is_over_the_gpus_that_compute():
    """A GPU with no kernels does not count: here GPU 1 only copies (issue 9: 36.7% "on GPU 0", a GPU
    with no events, where the working GPUs waited ~11.5%)."""
    s = Sim(gpus=3)
    s.steps(
        4, 1000, lambda i, t: (s.get_next(t, 115), s.kernel(t + 200, 700, gpu=2), s.h2d[1].memcpy("H2D", t + 10, 5, 64))
    )
    f = s.run("input.bound")
    assert f.status == WARNING and f.metric("input_pct") == approx(11.5)

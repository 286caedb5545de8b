import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from support import scenarios
from support.xplane_writer import GPU_SPECS, ProfileWriter

from tb_gpu_advisor.formats.xplane.reader import read_profile_bytes
from tb_gpu_advisor.model import intervals as iv
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.model.steps import CATEGORIES, SOURCE_DEVICE, SOURCE_HOST, SOURCE_WHOLE, host_steps

US = 1_000_000


def analysed(w):
    return analyse(read_profile_bytes(w.to_bytes(), "t.xplane.pb", w.host))


@pytest.mark.parametrize("fmt", ["new", "old"])
def test_single_gpu_breakdown_exact(fmt):
    a = analysed(scenarios.single_gpu(fmt))
    assert a.steps.source == SOURCE_HOST and a.steps.number.tolist() == [0, 1, 2]
    assert a.steps.dur_ps.tolist() == [1000 * US] * 3
    b = a.gpus[0].breakdown_ps // US
    expected = {
        "device_compute": 555,
        "device_collectives": 0,
        "memcpy_h2d": 50,
        "memcpy_d2h": 20,
        "memcpy_d2d": 0,
        "host_input_wait": 100,
        "kernel_launch_wait": 21,
        "idle_other": 254,
    }
    for step in range(3):
        assert dict(zip(CATEGORIES, b[step].tolist())) == expected
    # the parts add up to the step time, exactly, in picoseconds
    assert (a.gpus[0].breakdown_ps.sum(axis=1) == a.steps.dur_ps).all()
    assert a.breakdown_ms()["device_compute"] == pytest.approx(0.555)


@pytest.mark.parametrize("fmt", ["new", "old"])
def test_single_gpu_headline_exact(fmt):
    h = analysed(scenarios.single_gpu(fmt)).headline()
    assert h["device_busy_pct"] == pytest.approx(62.5)
    assert h["fp16_compute_pct"] == pytest.approx(100 * 350 / 555)  # memsets are device compute
    assert (h["fp16_kernels"], h["kernels"]) == (6, 9)
    assert h["device_op_time_pct"] == pytest.approx(100 * 620 / 720)
    assert h["per_gpu"][0]["device_busy_pct"] == pytest.approx(62.5)
    s = analysed(scenarios.single_gpu(fmt)).steps.summary()
    assert (s["count"], s["mean_ms"], s["stdev_ms"], s["min_ms"], s["max_ms"]) == (3, 1.0, 0.0, 1.0, 1.0)


@pytest.mark.parametrize("fmt", ["new", "old"])
def test_multi_gpu_per_gpu_numbers(fmt):
    a = analysed(scenarios.multi_gpu(fmt))
    h = a.headline()
    per = {g["device_id"]: g for g in h["per_gpu"]}
    assert per[0]["device_busy_pct"] == pytest.approx(70.0)
    assert per[1]["device_busy_pct"] == pytest.approx(50.0)
    assert 2 not in per and h["idle_gpus"] == [2] and h["active_gpus"] == [0, 1]
    assert h["device_busy_pct"] == pytest.approx(60.0)  # (70 + 50) / 2 active GPUs; the idle one is listed apart
    assert per[0]["compute_ms_per_step"] == pytest.approx(1.2) and per[1]["compute_ms_per_step"] == pytest.approx(0.8)
    assert h["compute_ms_per_step"] == pytest.approx(1.0)
    assert per[0]["fp16_compute_pct"] == 100.0 and per[1]["fp16_compute_pct"] == 0.0
    b0 = dict(zip(CATEGORIES, (a.gpus[0].breakdown_ps[0] // US).tolist()))
    b1 = dict(zip(CATEGORIES, (a.gpus[1].breakdown_ps[0] // US).tolist()))
    # step 1's first kernels are launched [t-5, t) with t the start of step 1: 5 µs of launch wait
    # that fall at the end of step 0
    assert (b0["device_compute"], b0["device_collectives"], b0["kernel_launch_wait"], b0["idle_other"]) == (
        1200,
        200,
        5,
        595,
    )
    assert (b1["device_compute"], b1["device_collectives"], b1["kernel_launch_wait"], b1["idle_other"]) == (
        800,
        200,
        5,
        995,
    )
    for g in a.gpus.values():
        assert (g.breakdown_ps.sum(axis=1) == a.steps.dur_ps).all()
        assert (g.breakdown_ps >= 0).all()


def test_step_sources():
    w = ProfileWriter("h")
    gpu = w.gpu(0, GPU_SPECS["A100"])
    gpu.stream(7, "Compute").kernel("k", 10, 100)
    gpu.stream(7, "Compute").kernel("k", 500, 100)
    p = read_profile_bytes(w.to_bytes(), "t", "h")
    s = host_steps(p)
    assert s.source == SOURCE_WHOLE and s.dur_ps.tolist() == [590 * US]

    gpu.derived_line("Steps", [("0", 10, 300), ("1", 400, 300)])
    a = analysed(w)
    assert a.host_steps.source == SOURCE_WHOLE
    s = a.gpus[0].steps
    assert s.source == SOURCE_DEVICE and s.dur_ps.tolist() == [300 * US, 300 * US]
    assert a.steps is s  # reported first: the GPU's own steps, as the host has no markers

    py = w.thread("python")
    py.step(7, 0, 400)
    py.step(8, 450, 100)  # marker shorter than the device work launched in it
    gpu.stream(7, "Compute").kernel("k", 540, 200)
    p = read_profile_bytes(w.to_bytes(), "t", "h")
    s = host_steps(p)
    assert s.source == SOURCE_HOST and s.number.tolist() == [7, 8]
    # step 7 runs to the next marker; the last step runs to the end of its device work
    assert s.start_ps.tolist() == [0, 450 * US] and s.end_ps.tolist() == [450 * US, 740 * US]


def test_nested_markers_use_the_most_frequent_name():
    w = ProfileWriter("h")
    py = w.thread("python")
    py.step(0, 0, 1000, name="train_loop")
    for i in range(4):
        py.step(i, i * 250, 200, name="Profiled batch")
    s = host_steps(read_profile_bytes(w.to_bytes(), "t", "h"))
    assert len(s) == 4 and s.marker == "Profiled batch"


def test_no_gpu_breakdown_adds_up():
    w = ProfileWriter("h")
    py = w.thread("python")
    it = w.thread("tf_data_iterator_get_next/1")
    for i in range(4):
        py.step(i, i * 100, 100)
        it.get_next(i * 100 + 10, 30)
    a = analysed(w)
    assert a.gpus == {} and a.headline()["device_busy_pct"] is None
    b = a.breakdown_ms()
    assert b["host_input_wait"] == pytest.approx(0.030)
    assert b["idle_other"] == pytest.approx(0.070)


def test_intervals():
    u = iv.union(np.array([5, 0, 2, 20]), np.array([8, 3, 4, 25]))
    assert u[0].tolist() == [0, 5, 20] and u[1].tolist() == [4, 8, 25]
    d = iv.subtract(u, (np.array([1, 6]), np.array([2, 30])))
    assert d[0].tolist() == [0, 2, 5] and d[1].tolist() == [1, 4, 6]
    assert iv.measure_in(u, np.array([0, 3, 6]), np.array([10, 6, 22])).tolist() == [7, 2, 4]
    assert iv.total(iv.union(np.array([], np.int64), np.array([], np.int64))) == 0
    assert iv.subtract(iv.EMPTY, u)[0].tolist() == []


interval_lists = st.lists(st.tuples(st.integers(0, 60), st.integers(1, 12)), max_size=12)


def _points(a: iv.Intervals) -> set[int]:
    return {t for s, e in zip(a[0].tolist(), a[1].tolist()) for t in range(s, e)}


@settings(max_examples=300, deadline=None)
@given(interval_lists, interval_lists)
def test_intersect_and_subtract_are_the_sets_of_instants(x, y):
    """Worked out instant by instant, including a small set against a larger one far from it (the
    operations first cut the other set down to the span of one)."""
    a = iv.union(np.array([s for s, _ in x], np.int64), np.array([s + d for s, d in x], np.int64))
    b = iv.union(np.array([s for s, _ in y], np.int64), np.array([s + d for s, d in y], np.int64))
    for got, want in ((iv.intersect(a, b), _points(a) & _points(b)), (iv.subtract(a, b), _points(a) - _points(b))):
        assert _points(got) == want
        assert all(e > s for s, e in zip(got[0].tolist(), got[1].tolist()))
        assert got[0].tolist() == sorted(got[0].tolist())


def test_step_breakdown_listed_and_bounded():
    a = analysed(scenarios.single_gpu())
    rows = a.step_breakdown()
    assert [r["step"] for r in rows] == [0, 1, 2]
    assert rows[1]["start_ms"] == pytest.approx(1.0) and rows[1]["end_ms"] == pytest.approx(2.0)
    assert rows[0]["breakdown_ms"]["device_compute"] == pytest.approx(0.555)
    assert sum(rows[0]["breakdown_ms"].values()) == pytest.approx(1.0)
    assert [r["step"] for r in a.step_breakdown(limit=2)] == [0, 2]


def test_keras_step_function_calls_when_no_markers():
    from tb_gpu_advisor.model.steps import SOURCE_FUNCTIONS

    w = ProfileWriter("h")
    py = w.thread("python")
    gpu = w.gpu(0, GPU_SPECS["A100"]).stream(7, "Compute")
    for i in range(4):
        py.event("multi_step_on_iterator", 100 + i * 500, 450)
        gpu.kernel("k", 120 + i * 500, 300)
    s = host_steps(read_profile_bytes(w.to_bytes(), "t", "h"))
    assert s.source == SOURCE_FUNCTIONS and s.marker == "multi_step_on_iterator"
    assert s.number.tolist() == [0, 1, 2, 3] and s.dur_ps.tolist() == [500 * US] * 3 + [450 * US]

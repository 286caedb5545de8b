"""Threads change nothing but time: the report of a multi-GPU profile is identical on one thread and
on four, and lazily computed table columns equal the ones computed at once."""

import os

import numpy as np
import pytest

from tb_gpu_advisor.common import parallel
from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.model.profile import CORE_COLUMNS, EventTable
from tb_gpu_advisor.report.engine import analyse_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNS = ["12_multi_gpu_imbalance", "15_multi_gpu_launch_skew", "17_multi_gpu_partial_capture", "02_input_bound"]


def report(run: str, threads: int, monkeypatch) -> dict:
    monkeypatch.setenv("TB_GPU_ADVISOR_THREADS", str(threads))
    assert parallel.threads() == threads
    (f,) = [x for x in discover(os.path.join(ROOT, "demo_logs"))[0] if x.run.startswith(run)]
    return analyse_file(f)[1]


@pytest.mark.parametrize("run", RUNS)
def test_one_thread_and_four_give_the_same_report(run, monkeypatch):
    one, four = report(run, 1, monkeypatch), report(run, 4, monkeypatch)
    assert one == four
    assert one["checks"] and all(c["status"] != "error" for c in one["checks"])


def test_a_failing_task_raises_in_the_caller():
    def f(x):
        if x == 3:
            raise ValueError("three")
        return x * 2

    assert parallel.map_ordered(lambda x: x * 2, range(10)) == list(range(0, 20, 2))
    with pytest.raises(ValueError, match="three"):
        parallel.map_ordered(f, range(10))


def test_threads_setting(monkeypatch):
    monkeypatch.setenv("TB_GPU_ADVISOR_THREADS", "abc")
    assert 1 <= parallel.threads() <= 4
    monkeypatch.setenv("TB_GPU_ADVISOR_THREADS", "-3")
    assert parallel.threads() == 1


def eager(t: EventTable) -> dict:
    return {k: np.array(v) for k, v in t.columns.items()}


def test_lazy_take_and_concat_equal_eager_ones():
    rng = np.random.default_rng(0)
    tables = []
    for _ in range(3):
        n = 50
        start = np.sort(rng.integers(0, 1000, n))
        cols = {k: rng.integers(0, 100, n).astype(dt) for k, (dt, _) in CORE_COLUMNS.items()}
        cols["start_ps"] = start
        cols["kind"] = lambda v=cols["kind"]: v  # a column computed when first read
        tables.append(EventTable(cols))
    merged = EventTable.concat(tables, CORE_COLUMNS)
    start = np.concatenate([t.start_ps for t in tables])
    order = np.argsort(start, kind="stable")
    for k in CORE_COLUMNS:
        expected = np.concatenate([np.asarray(t.column(k)) for t in tables])[order]
        assert np.array_equal(merged.column(k), expected), k
    mask = merged.kind > 50
    part = merged.take(mask, ("start_ps", "kind", "dur_ps"))
    assert sorted(part.keys()) == ["dur_ps", "kind", "start_ps"] and len(part) == int(mask.sum())
    assert np.array_equal(part.dur_ps, merged.dur_ps[mask]) and np.array_equal(part.end_ps, merged.end_ps[mask])
    with pytest.raises(AttributeError):
        part.name  # noqa: B018  a column the take left out
    assert eager(merged.take(np.arange(len(merged)))).keys() == eager(merged).keys()


def test_an_analysis_is_freed_without_the_garbage_collector():
    """No reference cycle keeps an analysis alive: the plugin frees a replaced or evicted one at once,
    which keeps TensorBoard's memory level while a file is rewritten (benchmarks/plugin_benchmark.py)."""
    import gc
    import weakref

    from tb_gpu_advisor.present.export import chrome_trace
    from tb_gpu_advisor.present.timeline import Timeline

    (f,) = [x for x in discover(os.path.join(ROOT, "demo_logs"))[0] if x.run.startswith("12_")]
    gc.collect()
    gc.disable()
    try:
        m, rep = analyse_file(f)
        a = m.analysis
        Timeline(a, rep).window(None, None, 200)
        assert "".join(chrome_trace(a, rep, 1.0, 2.0))
        refs = [weakref.ref(m), weakref.ref(a), weakref.ref(a.profile)]
        del m, a, rep
        assert [r() for r in refs] == [None, None, None]
    finally:
        gc.enable()

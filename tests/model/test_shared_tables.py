"""After the analysis the per-stream and per-thread tables are views of the merged host and GPU
tables (issue 26's memory target): they read as before, and hold nothing of their own until read."""

import os

import numpy as np
import pytest

from tb_gpu_advisor.checks import run_checks
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.model.analysis import analyse
from tb_gpu_advisor.report.engine import read_path

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "demo_logs")
CASES = ["12_multi_gpu_imbalance", "04_gaps_thread_contention", "pytorch_resnet50_num_workers_4"]


def _path(case: str) -> str:
    return next(
        os.path.join(d, f)
        for d, _, fs in sorted(os.walk(os.path.join(DEMO, case)))
        for f in sorted(fs)
        if f.endswith((".xplane.pb", ".pt.trace.json.gz"))
    )


@pytest.mark.parametrize("case", CASES)
def test_per_line_tables_read_as_before_the_analysis(case):
    path = _path(case)
    ref, p = read_path(path), read_path(path)
    a = analyse(p)
    run_checks(Measures(a))
    lines = [*p.streams, *p.threads]
    assert any(not h.events.nbytes_kept() for h in lines)  # some are views, empty until read
    for h, r in zip(lines, [*ref.streams, *ref.threads], strict=True):
        assert len(h.events) == len(r.events) and sorted(h.events.keys()) == sorted(r.events.keys())
        for k in r.events.keys():
            x, y = h.events.column(k), r.events.column(k)
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), (h.name, k)
        assert np.array_equal(h.events.end_ps, r.events.end_ps)
    # the merged tables read again from the views: the same as from the tables the reader made
    for d in p.devices:
        x, y = p.device_events(d.id), ref.device_events(d.id)
        assert all(np.array_equal(x.column(k), y.column(k), equal_nan=True) for k in y.keys())


def test_the_report_leaves_the_views_empty():
    for case in ("12_multi_gpu_imbalance", "pytorch_resnet50_num_workers_4"):
        p = read_path(_path(case))
        a = analyse(p)
        a.summary()
        run_checks(Measures(a))
        # every thread, and every stream of a GPU with several (one stream's table is the GPU's own)
        several = {d.id for d in p.devices if len(p.device_streams(d.id)) > 1}
        views = [*p.threads, *(s for s in p.streams if s.device_id in several)]
        assert views and [h.events.nbytes_kept() for h in views] == [0] * len(views), case

"""A job's collectives split into transfer and wait by when each rank arrives (issue 50, item 6), and a
rank's own input wait kept where its step window starts after its marker. On a real 8-rank DLRM job
(public: facebookresearch/param's test data) and on a writer-made job that mirrors it."""

import pytest
from support.kineto_writer import dlrm_job

from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.report.engine import advise


def test_a_rank_keeps_its_own_dataloader_wait_where_its_step_starts_after_its_marker(tmp_path):
    """Rank 1 of the DLRM job (tests/support/kineto_writer.py, counted on the real trace): its marker
    starts at 0, its DataLoader fetch runs [167, 1267) µs, and 64 kernels whose launch is not in the trace
    (4 µs every 4.5 µs) run from 1038 µs, ending before the step's own device work. torch-tb-profiler's
    rule starts its step at their end, 1325.5 µs, past the fetch: the step window stays so, and the rank's
    input wait counts the fetch while its GPU is idle: 871 µs before those kernels and 25 in the 0.5 µs
    between the 51 that start before the fetch ends (before: 0, and the rank stood out in input)."""
    w = dlrm_job()[1]
    path = tmp_path / "worker1_step_12.1694128201556.pt.trace.json.gz"
    path.write_bytes(w.to_bytes())
    (f,) = discover(str(tmp_path))[0]
    r = advise(f)
    assert r["steps"]["mean_ms"] == pytest.approx((20_030 - 1325.5) / 1000)
    assert r["rank_measures"]["input_ms"] == pytest.approx(((1038 - 167) + 50 * 0.5) / 1000)

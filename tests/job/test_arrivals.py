"""A job's collectives split into transfer and wait by when each rank arrives (issue 50, item 6), and a
rank's own input wait kept where its step window starts after its marker. On a real 8-rank DLRM job
(public: facebookresearch/param's test data) and on a writer-made job that mirrors it."""

import os
import statistics

import pytest
from support.kineto_writer import DLRM_ARRIVE, DLRM_TRANSFER, dlrm_job

from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.measures import HostDigest, arrivals
from tb_gpu_advisor.report.engine import advise

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TWO_OF_128 = os.path.join(ROOT, "tests", "data", "pytorch", "two_ranks_of_128")


def _write_dlrm(root) -> str:
    run = root / "dlrm"
    run.mkdir()
    for r, w in dlrm_job().items():
        (run / f"worker{r}_step_12.1694128201545.pt.trace.json.gz").write_bytes(w.to_bytes())
    return str(run)


# By hand from the DLRM table (tests/support/kineto_writer.py, counted on the real trace): in each
# collective the last rank is the latest to start; the others' wait is how much earlier they started.
LAST = [max(range(8), key=lambda r: a[r]) for a in DLRM_ARRIVE]  # [7, 7, 7, 7, 7, 5, 5, 4]
WAITS = [[max(a) - a[r] for r in range(8)] for a in DLRM_ARRIVE]  # µs
CHARGED_7 = sum(statistics.mean(w[r] for r in range(8) if r != 7) for w, last in zip(WAITS, LAST) if last == 7)


def test_the_ranks_collectives_are_paired_by_step_and_order(tmp_path):
    """measures/arrival.py on the ranks' digests: the mirror's 8 collectives paired in its one step, each
    one's transfer its shortest time, each rank's wait its time beyond it, the last rank the latest to
    start (by hand above); the two ranks of a 128-rank job, whose kernels' ends keep different distances,
    not paired."""
    run = _write_dlrm(tmp_path)
    digests = sorted((HostDigest.from_dict(advise(f)["rank_measures"]) for f in discover(run)[0]), key=lambda d: d.rank)
    a = arrivals(digests)
    assert (a.steps, a.per_step, a.unpaired) == (1, 8.0, 0)
    assert [c.last for c in a.collectives] == LAST and [c.kind for c in a.collectives] == list("ssssasaa")
    assert [c.transfer_ms for c in a.collectives] == pytest.approx([t / 1000 for t in DLRM_TRANSFER])
    assert a.wait_ms == pytest.approx([sum(w[r] for w in WAITS) / 1000 for r in range(8)])
    assert a.charged_ms[7] == pytest.approx(CHARGED_7 / 1000) and a.last == (0, 0, 0, 0, 1, 2, 0, 5)
    two = arrivals([HostDigest.from_dict(advise(f)["rank_measures"]) for f in discover(TWO_OF_128)[0]])
    assert (two.steps, two.unpaired) == (0, 2) and two.wait_ms == (None, None)


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

"""A job's collectives split into transfer and wait by when each rank arrives (issue 50, item 6): the
last rank to reach a collective has the shortest time in it, the transfer; the others' time beyond it is
waiting, charged to that rank. On a real 8-rank DLRM job (public: facebookresearch/param's test data),
on a writer-made job that mirrors it, and on real gloo DDP jobs captured here with one rank made late."""

import json
import os
import statistics
import subprocess
import sys

import pytest
from support.ddp_timings import forward_ms, slowed_in_every_cycle
from support.disturbed import undisturbed
from support.kineto_writer import DLRM_ARRIVE, DLRM_TRANSFER, dlrm_job
from support.sim import SEEN
from support.wild import wild

from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.job import analyse_jobs, jobs
from tb_gpu_advisor.measures import HostDigest, arrivals
from tb_gpu_advisor.report.engine import advise

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TWO_OF_128 = os.path.join(ROOT, "tests", "data", "pytorch", "two_ranks_of_128")


def _job(logdir: str) -> dict:
    files, _ = discover(logdir)
    (job,) = jobs([advise(f) for f in files])
    for c in job["checks"]:
        SEEN[c["id"]].add(c["status"])
    return job


def _checks(job: dict) -> dict:
    return {c["id"]: c for c in job["checks"]}


def _hta_stragglers(run: str) -> list[int]:
    hta = pytest.importorskip("hta.trace_analysis")
    return hta.TraceAnalysis(trace_dir=run, include_last_profiler_step=True).get_potential_stragglers()


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


def _the_dlrm_reading(job: dict, transfer_ms: float, wait_ms: list[float]) -> None:
    """What the job says of the DLRM job, real or mirrored: rank 7 is the straggler by its arrival, the
    ranks' collective time is waiting (`wait_ms` by rank, by hand), and the transfer is job.exposed-comm's
    alone."""
    c = _checks(job)
    assert LAST == [7, 7, 7, 7, 7, 5, 5, 4] and CHARGED_7 == pytest.approx(5078.9, abs=0.1)
    assert job["stragglers"] == [job["ranks"][7]["host"]]
    st = c["job.straggler"]
    assert st["status"] == "warning", st
    assert st["title"] == (
        "Straggler: rank 7 (worker7_step_12) arrives last at 5 of 8 collectives a step; the others wait 5.1 ms for it"
    )
    m = {x["name"]: x["value"] for x in st["metrics"]}
    assert m["charged_ms"] == pytest.approx(CHARGED_7 / 1000, abs=0.01) and m["last_arrivals"] == 5
    # its own work is the others': entering the step late is most of it (rank 7's marker starts 7.5 ms
    # after rank 1's; from its marker it reaches the first all-to-all as soon as the median rank does)
    assert m["before_late_ms"] > 3.0 and m["work_late_ms"] < 0.2 and m["input_late_ms"] < 0.1
    assert "is no slower: it is late" in st["summary"]
    assert "enters its steps late" in st["recommendation"] and "bucket_cap_mb" not in st["recommendation"]
    wait = c["job.wait"]
    assert wait["status"] == "critical"
    assert (
        f"moving the data takes {transfer_ms:.2f} ms of the 8 collectives a step paired across 8 ranks"
        in (wait["summary"])
    )
    assert (
        "Last to arrive, per step: rank 7 (worker7_step_12) at 5, rank 5 (worker5_step_12) at 2, "
        "rank 4 (worker4_step_12) at 1."
    ) in wait["summary"]
    assert (
        "The longest wait: 7.62 ms at the 1st collective of step 10 (a send/recv), rank 7 (worker7_step_12) behind "
        "rank 1 (worker1_step_12)."
    ) in wait["summary"]
    # the transfer, 0.22 ms of 12.5-19.9 ms steps, is no problem: no DDP-bucket, no_sync or FSDP advice
    assert "job.exposed-comm" not in c or c["job.exposed-comm"]["status"] == "pass"
    longest = job["arrivals"]["longest"][0]
    assert (longest["step"], longest["collective"], longest["kind"]) == (10, 1, "send/recv")
    assert (longest["last"], longest["first"]) == ("rank 7 (worker7_step_12)", "rank 1 (worker1_step_12)")
    assert longest["lag_ms"] == pytest.approx(7.624, abs=0.002)
    for r in job["ranks"]:
        assert r["transfer_ms"] == pytest.approx(transfer_ms, abs=0.002)
        assert r["wait_ms"] == pytest.approx(wait_ms[r["rank"]], abs=0.001)
        # rank 1's step keeps its DataLoader fetch: it waits for input as the others do
        assert "input_ms" not in r["outliers"] and r["input_ms"] > 0.85


def test_a_mirror_of_the_dlrm_job_names_its_late_rank_and_calls_its_wait_wait(tmp_path):
    """Eight ranks written where the real DLRM job's events are (tests/support/kineto_writer.py:
    DLRM_*): markers 0-7.5 ms apart, each rank's 8 NCCL kernels where they start on the real ranks,
    ending at one moment after the shortest (10, 8, 7, 7, 86, 10, 20, 69 µs: 0.217 ms a step), and the
    64 kernels without a launch on ranks 1 and 3. Before: no straggler (own-work z 1.9), 59.5%
    "exposed communication" critical with DDP-bucket advice, rank 1 standing out in input. HTA's
    straggler analysis names ranks 2 and 7 on these files, as on the real ones."""
    run = _write_dlrm(tmp_path)
    _the_dlrm_reading(_job(run), sum(DLRM_TRANSFER) / 1000, [sum(w[r] for w in WAITS) / 1000 for r in range(8)])
    assert _hta_stragglers(run) == [2, 7]


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


def _kernels_by_hand(path: str) -> list[tuple[float, float]]:
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    k = [e for e in events if e.get("cat") == "kernel" and e["name"].startswith("ncclKernel")]
    return [(e["ts"], e["ts"] + e["dur"]) for e in sorted(k, key=lambda e: e["ts"])]


def test_the_real_dlrm_job_names_rank_7_by_its_arrival():
    """The real job: 8 V100s, one profiled step, NCCL all-to-all and all-reduce (github.com/
    facebookresearch/param at 1e115ff, et_replay/tests/inputs/dlrm_kineto.tar.gz, MIT). By hand from
    the raw events: each collective's kernels end within 7 µs on all ranks; the shortest kernels add
    up to 0.217 ms a step; rank 7 starts the first five last, the first 7.624 ms after rank 1. HTA
    0.5.0's get_potential_stragglers names ranks 2 and 7."""
    run = wild("hta_dlrm_v100_8ranks")
    files = sorted(os.listdir(run))
    kernels = [_kernels_by_hand(os.path.join(run, f)) for f in files if f.endswith(".json")]
    assert len(kernels) == 8 and {len(k) for k in kernels} == {8}
    for i in range(8):
        ends = [k[i][1] for k in kernels]
        assert max(ends) - min(ends) <= 7
    durs = [[k[i][1] - k[i][0] for k in kernels] for i in range(8)]  # per collective, per rank
    shortest = sum(min(d) for d in durs)
    assert shortest == 217
    waits = [sum(d[r] - min(d) for d in durs) / 1000 for r in range(8)]
    # 85-98% of each rank's 1.7-11.3 ms in NCCL kernels is waiting
    assert [round(w / sum(d[r] for d in durs) * 1000 * 100) for r, w in enumerate(waits)] == [
        96,
        98,
        94,
        98,
        97,
        97,
        94,
        88,
    ]
    starts = [[k[i][0] for k in kernels] for i in range(8)]
    assert [max(range(8), key=lambda r: s[r]) for s in starts[:5]] == [7] * 5
    assert starts[0][7] - starts[0][1] == 7624
    _the_dlrm_reading(_job(run), shortest / 1000, waits)
    assert _hta_stragglers(run) == [2, 7]


def test_collectives_whose_ends_keep_different_distances_are_not_paired():
    """Two ranks of a 128-rank job, five `ncclKernel_SendRecv` a step each: by hand, the distance from
    one kernel's end to the next differs between them by 14 to 134 ms in 8 of 9 (they move data with
    other peers: not the same collectives), so nothing is paired, and job.exposed-comm reads their
    collective time as before."""
    reports = [advise(f) for f in discover(TWO_OF_128)[0]]
    (job,) = jobs(reports)
    c = {f.id: f for f in analyse_jobs(reports)[0].findings}
    assert c["job.wait"].status == "not-applicable" and "ends keep different distances" in c["job.wait"].summary
    assert job["arrivals"] is None and all(r["wait_ms"] is None for r in job["ranks"])
    assert _checks(job)["job.exposed-comm"]["status"] == "critical"


def test_a_balanced_writer_made_job_waits_for_no_one(tmp_path):
    """Eight ranks doing the same work reach each all-reduce together: no wait, no late rank."""
    from support.kineto_writer import ddp_job

    run = tmp_path / "balanced"
    run.mkdir()
    for r, w in ddp_job(8, steps=3, kernels_per_step=4).items():
        (run / f"node0_{1000 + r}.1700000000000.pt.trace.json.gz").write_bytes(w.to_bytes())
    job = _job(str(tmp_path))
    c = _checks(job)
    assert c["job.wait"]["status"] == "pass" and c["job.straggler"]["status"] == "pass"
    assert all(r["wait_ms"] == 0 and r["charged_ms"] == 0 and r["last_arrivals"] == 0 for r in job["ranks"])


@pytest.fixture(scope="module")
def late(tmp_path_factory):
    """A real gloo DDP job of 4 ranks (torch 2.13 CPU) in which rank 1's host sleeps 30 ms at the start of
    each step (`capture_torch_ddp.py --late-rank 1`): the same compute and input as the others, so its
    own work does not name it."""
    pytest.importorskip("torch")

    def capture() -> str | None:
        # a capture in which the machine slowed rank 1's own compute in every cycle makes it a straggler by
        # its work too (once under load: 9.1 ms more compute a step): made again, as the balanced job's is
        logdir, timings = tmp_path_factory.mktemp("ddp_late"), tmp_path_factory.mktemp("ddp_late_timings")
        script = os.path.join(ROOT, "scripts", "capture_torch_ddp.py")
        cmd = [sys.executable, script, str(logdir), "--late-rank", "1", "--timings", str(timings)]
        subprocess.run(cmd, check=True, capture_output=True, timeout=300)
        return None if slowed_in_every_cycle(forward_ms(str(timings)), 1) else str(logdir)

    return undisturbed(capture, 5, "the machine slowed the late rank's own compute in every cycle of every capture")


def test_a_real_ddp_job_names_the_rank_that_starts_late_by_its_arrival(late):
    """Each of the other ranks' gloo:all_reduce spans is about 30 ms longer than rank 1's: by its own
    work (compute and input wait) rank 1 is no straggler, by its arrival it is, and its host is what
    made it late."""
    job = _job(late)
    c = _checks(job)
    assert [r["rank"] for r in job["ranks"] if r["straggler"]] == [1]
    st = c["job.straggler"]
    assert st["title"].startswith("Straggler: rank 1 (") and "arrives last at 1 of 1 collectives a step" in st["title"]
    m = {x["name"]: x["value"] for x in st["metrics"]}
    assert m["charged_ms"] > 15 and m["host_late_ms"] > m["work_late_ms"] + m["input_late_ms"] + m["before_late_ms"]
    assert "host" in st["recommendation"] and "DataLoader" not in st["recommendation"]
    by = {r["rank"]: r for r in job["ranks"]}
    assert all(by[1]["charged_ms"] > 15 and by[r]["charged_ms"] < 1 for r in (0, 2, 3))
    assert c["job.wait"]["status"] in ("warning", "critical")

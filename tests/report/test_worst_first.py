"""The worst problem first, everywhere (issue 41): a job's own findings on its own row of the overview,
above its ranks; a capture note (what the capture lacks, no cost) never above a problem with a cost;
severity and order following the saving; a verdict that follows the measure, not a threshold crossed
by a hair; evidence windows that show the gaps themselves.

On the demo's DDP jobs (writer-made, 8 ranks each), real H200 captures (tests/data/gpu_pairs,
tests/data/gpu_validation) and the real H100 input pair (tests/data/gpu)."""

from __future__ import annotations

import os
from functools import lru_cache

import pytest

from tb_gpu_advisor.checks import Options
from tb_gpu_advisor.checks.findings import CRITICAL, CRITICAL_SAVING_PCT, WARNING
from tb_gpu_advisor.formats.discovery import discover
from tb_gpu_advisor.job import jobs
from tb_gpu_advisor.report import CAPTURE_NOTES, overview, worst_finding
from tb_gpu_advisor.report.compare import compare
from tb_gpu_advisor.report.engine import analyse_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO = os.path.join(ROOT, "demo_logs")
DATA = os.path.join(ROOT, "tests", "data")


@lru_cache(maxsize=None)
def _analysed(folder: str, overrides: tuple = ()) -> tuple:
    options = Options(overrides=dict(overrides))
    return tuple(analyse_file(f, options) for f in discover(folder)[0])


def _reports(folder: str) -> list[dict]:
    return [r for _, r in _analysed(folder)]


@pytest.fixture(scope="module")
def ddp():
    reports = [
        r
        for run in ("20_ddp_straggler_8_ranks", "21_ddp_exposed_allreduce_8_ranks")
        for r in _reports(os.path.join(DEMO, run))
    ]
    return reports, jobs(reports)


def test_a_jobs_own_findings_are_its_row_above_its_ranks(ddp):
    """The straggler (+9.8 ms a step, 31% of the 31.1 ms step: critical by its cost) and the exposed
    communication are on each job's own row, first among the run's rows; each rank's row below says
    only that its capture lacks shapes, a note that ranks after every problem with a cost."""
    reports, runs = ddp
    rows = overview(reports, runs)
    assert len(rows) == 2 * (8 + 1)
    for run, check, status in (("20_ddp", "job.straggler", CRITICAL), ("21_ddp", "job.exposed-comm", CRITICAL)):
        mine = [r for r in rows if r["run"].startswith(run)]
        assert rows.index(mine[0]) + 8 == rows.index(mine[-1])  # the run's rows together
        head, ranks = mine[0], mine[1:]
        assert head["job"] and head["host"] == "*" and head["ranks"] == 8
        assert (head["check"], head["status"], head["note"]) == (check, status, False)
        assert not any(r["job"] for r in ranks)
        assert {r["check"] for r in ranks} == {"capture.shapes"} and all(r["note"] for r in ranks)
    straggler = next(r for r in rows if r["job"] and r["run"].startswith("20_"))
    assert straggler["title"].startswith("Straggler: rank 5 (node1_1005)")
    assert straggler["top_saving_ms"] == pytest.approx(9.8, abs=0.05)
    # the exposed communication costs the median rank's exposed collective time (no straggler here)
    job21 = next(j for j in runs if j["run"].startswith("21_"))
    exposed = sorted(x["exposed_collective_ms"] for x in job21["ranks"])
    median = (exposed[3] + exposed[4]) / 2
    head21 = next(r for r in rows if r["job"] and r["run"].startswith("21_"))
    assert head21["top_saving_ms"] == pytest.approx(median, rel=1e-6) and median > 10
    # the job with the larger saving first
    assert rows[0] is head21 and rows[9] is straggler


def test_a_capture_note_never_outranks_a_problem_with_a_cost():
    """worst_finding's order: a costed warning before a critical note without cost and a warning
    without cost; among costed ones the larger saving first, a critical one first at equal saving."""
    note = {"id": "capture.lost-events", "status": CRITICAL, "saving_ms": None, "title": "n"}
    assert "capture.lost-events" in CAPTURE_NOTES
    uncosted = {"id": "tensorcore.unused", "status": WARNING, "saving_ms": None, "title": "u"}
    small = {"id": "input.bound", "status": WARNING, "saving_ms": 0.5, "title": "s"}
    big = {"id": "steps.host-work", "status": WARNING, "saving_ms": 3.0, "title": "b"}
    tie = {"id": "kernels.small", "status": CRITICAL, "saving_ms": 3.0, "title": "t"}
    assert worst_finding([note, uncosted, small]) is small
    assert worst_finding([note, small, big]) is big
    assert worst_finding([big, tie]) is tie
    assert worst_finding([note, uncosted]) is uncosted  # a note is last even when critical
    assert worst_finding([note]) is note


@pytest.mark.parametrize(
    "folder",
    [
        os.path.join(DATA, "gpu_pairs", "jax_eager"),
        os.path.join(DATA, "gpu_validation", "gpt2_b1_eager"),
        os.path.join(DATA, "gpu_pairs", "loader_w0"),
        os.path.join(DATA, "gpu_pairs", "rn50_b256_fp32"),
    ],
)
def test_severity_and_order_follow_the_saving(folder):
    """On real H200 captures: every problem whose fix saves 20% of the step or more is critical, and
    the report lists its problems by saving, the larger first, capture notes without cost last."""
    (r,) = _reports(folder)
    problems = [c for c in r["checks"] if c["status"] in (CRITICAL, WARNING)]
    assert problems
    for c in problems:
        if (c["saving_pct"] or 0) >= CRITICAL_SAVING_PCT:
            assert c["status"] == CRITICAL, c["id"]
    costed = [c for c in problems if not (c["id"] in CAPTURE_NOTES and not c["saving_ms"])]
    assert problems[: len(costed)] == costed
    savings = [c["saving_ms"] or 0 for c in costed]
    assert savings == sorted(savings, reverse=True)
    assert worst_finding(r["checks"]) is problems[0]


def test_a_jax_step_run_op_by_op_is_critical():
    """jax_eager (an H200): the step is Python dispatching op by op, 130x the jitted step. Its
    host-work finding is critical and first, and its saving is most of the step."""
    (r,) = _reports(os.path.join(DATA, "gpu_pairs", "jax_eager"))
    first = r["checks"][0]
    assert (first["id"], first["status"]) == ("steps.host-work", CRITICAL)
    assert first["saving_pct"] > 90 and first["whatif"]["change"] == "graph+compile"
    assert "jax.jit" in first["recommendation"]


def test_a_threshold_crossed_by_a_hair_is_no_new_problem():
    """The same real capture (ResNet-50 fp32, an H200) analysed twice, once with a check's warning
    threshold just above its measure: its status moves (pass against warning) while the measure is the same, so the compare
    calls it unchanged, within noise, never "new" or "fixed"."""
    folder = os.path.join(DATA, "gpu_pairs", "rn50_b256_fp32")
    ((m, r),) = _analysed(folder)
    # tensorcore.unused: 13.0% of device compute in eligible kernels without Tensor Cores (warning at 10%)
    hit = next(c for c in r["checks"] if c["id"] == "tensorcore.unused")
    assert hit["status"] == WARNING and hit["metrics"][0]["value"] == pytest.approx(13.04, abs=0.01)
    raised = (("tensorcore.unused.warning", hit["metrics"][0]["value"] * 1.01),)
    ((m2, r2),) = _analysed(folder, raised)
    assert {c["id"]: c for c in r2["checks"]}[hit["id"]]["status"] != WARNING
    for base, new in (((m, r), (m2, r2)), ((m2, r2), (m, r))):
        d = compare(base, new)
        row = next(c for c in d["checks"] if c["id"] == hit["id"])
        assert row["verdict"] == "unchanged" and row["within_noise"], row
        assert hit["id"] not in d["summary"]["new"] + d["summary"]["fixed"]


def test_a_fixed_input_pipeline_shows_no_new_problem_for_what_did_not_change():
    """loader_w0 → loader_w4 (an H200, the DataLoader given 4 workers): the input wait is fixed; no
    finding is called new or worse unless its measure moved beyond a change."""
    base = _analysed(os.path.join(DATA, "gpu_pairs", "loader_w0"))[0]
    new = _analysed(os.path.join(DATA, "gpu_pairs", "loader_w4"))[0]
    d = compare(base, new)
    assert "input.bound" in d["summary"]["fixed"]
    for c in d["checks"]:
        if c["verdict"] in ("new", "worse"):
            b, n = c["base_value"], c["new_value"]
            assert b is not None and n is not None and abs(n - b) >= 0.05 * abs(b), c


def test_host_work_evidence_is_the_largest_gaps_each_labelled():
    """gpt2_b1_eager (GPT-2, batch 1, an H200): the host-work evidence is its largest gaps, not whole
    steps: each window under a millisecond in a step of about 18 ms, labelled with its step, its length
    and the host work in it, largest first."""
    (r,) = _reports(os.path.join(DATA, "gpu_validation", "gpt2_b1_eager"))
    hw = next(c for c in r["checks"] if c["id"] == "steps.host-work")
    step = r["steps"]["mean_ms"]
    ev = hw["evidence"]
    assert 1 <= len(ev) <= 3
    gaps = []
    for e in ev:
        width = e["end_ms"] - e["start_ms"]
        assert 0 < width < 0.1 * step
        assert " ms gap, the GPU idle while the host works" in e["label"] and e["label"].startswith("step ")
        assert "most in aten::" in e["label"] and e["events"]
        gaps.append(float(e["label"].split(": a ")[1].split(" ms gap")[0]))
    assert gaps == sorted(gaps, reverse=True)

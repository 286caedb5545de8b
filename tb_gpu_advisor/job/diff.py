"""`diff` on jobs: a job of many ranks (or one rank's profiling cycles) before a change against the
same job after it.

Each side is read as the job view reads it (`job.jobs`: its ranks in the picked cycle). Ranks are
paired by their rank number (PyTorch `distributedInfo.rank`), else by worker name. Each pair is
compared as two runs are (`compare.compare`, noise included); the answer keeps every rank's step
change and verdicts, and the whole comparison of the **median rank** (the pair whose step time before
is the median; the lower one of two), which stands for the job: in a synchronous job every rank's step
is as long, and the median is not moved by one straggler. The job checks (job.straggler, ...) are
compared by their status (they declare no time of their own); a job check that fires anew or worse after
the change fails the gate (`job_regressions`).

Memory: the analyses of both sides are held only for small jobs (KEEP files); beyond that, the
paired files are analysed again for their comparison, one pair at a time.
"""

from __future__ import annotations

from typing import Any, Callable

from tb_gpu_advisor.checks import Options
from tb_gpu_advisor.common.errors import ProfileReadError
from tb_gpu_advisor.formats.discovery import HostFile
from tb_gpu_advisor.job.analysis import jobs
from tb_gpu_advisor.measures import Measures
from tb_gpu_advisor.report import ANALYSIS_FAILED
from tb_gpu_advisor.report.compare import compare, regressions, status_verdict
from tb_gpu_advisor.report.diff_doc import JOB_DIFF_SCHEMA, Diff, JobCheckChange, JobDiff, JobSide, RankChange
from tb_gpu_advisor.report.engine import analyse_file, failure_message, unreadable_report

SCHEMA = JOB_DIFF_SCHEMA
KEEP = 16  # files per side whose analyses are kept between the job's reading and the comparisons

Analyse = Callable[[HostFile], "tuple[Measures, dict]"]


class JobDiffError(ValueError):
    """Two sides that cannot be compared as jobs; said in the user's terms."""


def _key(x: dict) -> tuple[str, Any]:
    return ("rank", x["rank"]) if x.get("rank") is not None else ("worker", x["worker"])


class _Side:
    """One side of the comparison: its files' reports, the job they form, and analyses kept if few."""

    def __init__(self, files: list[HostFile], analyse: Analyse, cycle: int | None, which: str) -> None:
        self.analyse = analyse
        self.by_host = {(f.run, f.host): f for f in files}
        self.kept: dict[tuple[str, str], tuple[Measures, dict]] = {}
        reports = []
        for f in files:
            try:
                a, r = analyse(f)
            except ProfileReadError as e:
                reports.append(unreadable_report(f, str(e)))
                continue
            except Exception as e:  # noqa: BLE001  reported for this file only, as `analyze` does
                reports.append(unreadable_report(f, f"{f.path}: {failure_message(e)}", ANALYSIS_FAILED))
                continue
            reports.append(r)
            if len(files) <= KEEP:
                self.kept[(f.run, f.host)] = (a, r)
        self.failed = [m for r in reports if r["failure"] for m in r["errors"]]
        try:
            found = jobs(reports, cycle)
        except ValueError as e:
            raise JobDiffError(f"{which}: {e}") from None
        if len(found) != 1:
            names = ", ".join(j["run"] for j in found) or "none"
            raise JobDiffError(f"{which} holds {len(found)} jobs ({names}); name one with --run")
        self.job = found[0]
        self.ranks = {_key(x): x for x in self.job["ranks"]}

    def analysed(self, x: dict) -> tuple[Measures, dict]:
        got = self.kept.get((x["run"], x["host"]))
        return got if got is not None else self.analyse(self.by_host[(x["run"], x["host"])])

    def about(self) -> JobSide:
        j = self.job
        return {"run": j["run"], "ranks": j["ranks_captured"], "world_size": j["world_size"], "cycle": j["cycle"]}


def diff_jobs(
    base_files: list[HostFile],
    new_files: list[HostFile],
    options: Options | None = None,
    cycle: int | None = None,
    new_cycle: int | None = None,
    analyse: Analyse | None = None,
    all_checks: bool = False,
) -> JobDiff:
    """The comparison of two jobs (see the module's docstring); raises JobDiffError. `all_checks`: the
    median rank's unchanged checks listed too."""
    opts = options or Options()
    run = analyse or (lambda f: analyse_file(f, opts))
    base = _Side(base_files, run, cycle, "before")
    new = _Side(new_files, run, cycle if new_cycle is None else new_cycle, "after")
    paired = [k for k in base.ranks if k in new.ranks]
    if not paired:
        raise JobDiffError("the jobs before and after have no rank in common to compare")
    timed = sorted((k for k in paired if base.ranks[k]["step_ms"] is not None), key=lambda k: base.ranks[k]["step_ms"])
    median_key = timed[(len(timed) - 1) // 2] if timed else paired[0]
    rows: list[RankChange] = []
    median: Diff | None = None
    for k in paired:
        b, n = base.ranks[k], new.ranks[k]
        # predicted against realised on the median rank only, the one the answer shows in full
        d = compare(base.analysed(b), new.analysed(n), all_checks=all_checks, realised=k == median_key)
        s, v = d["steps"], d["summary"]
        rows.append(
            {
                "rank": b["rank"],
                "label": b["label"],
                "base_host": b["host"],
                "new_host": n["host"],
                "base_step_ms": s["base"]["mean_ms"],
                "new_step_ms": s["new"]["mean_ms"],
                "delta_ms": s["delta_ms"],
                "delta_pct": s["delta_pct"],
                "interval_ms": s["interval_ms"],
                "step": v["step"],
                "fixed": v["fixed"],
                "new": v["new"],
                "worse": v["worse"],
                "better": v["better"],
            }
        )
        if k == median_key:
            median = d
    assert median is not None
    b_checks = {c["id"]: c for c in base.job["checks"]}
    n_checks = {c["id"]: c for c in new.job["checks"]}
    job_checks: list[JobCheckChange] = [
        {
            "id": cid,
            "title": _title(n_checks.get(cid) or b_checks[cid]),
            "base_status": b_checks[cid]["status"] if cid in b_checks else None,
            "new_status": n_checks[cid]["status"] if cid in n_checks else None,
            "verdict": status_verdict(b_checks.get(cid), n_checks.get(cid)),
        }
        for cid in list(b_checks) + [c for c in n_checks if c not in b_checks]
    ]

    def ids(v: str) -> list[str]:
        return [c["id"] for c in job_checks if c["verdict"] == v]

    def count(v: str) -> int:
        return sum(r["step"] == v for r in rows)

    return {
        "schema": "tb-gpu-advisor/job-diff@2",
        "base": base.about(),
        "new": new.about(),
        "summary": {
            "step": median["summary"]["step"],
            "ranks": {
                "faster": count("faster"),
                "slower": count("slower"),
                "same": count("same"),
                "uncertain": count("uncertain"),
                "unknown": count("unknown"),
            },
            "fixed": ids("fixed"),
            "new": ids("new"),
            "worse": ids("worse"),
            "better": ids("better"),
        },
        "median_rank": next(r["label"] for r, k in zip(rows, paired) if k == median_key),
        "median": median,
        "ranks": rows,
        "job_checks": job_checks,
        "only_base": [base.ranks[k]["label"] for k in base.ranks if k not in new.ranks],
        "only_new": [new.ranks[k]["label"] for k in new.ranks if k not in base.ranks],
        "errors": base.failed + new.failed,
    }


def _title(c: dict) -> str:
    """A check's own title (what passing means), not one side's finding."""
    return c.get("check_title") or c["title"]


def job_regressions(d: JobDiff, pct: float) -> list[str]:
    """What `--fail-on PCT` gates on for jobs: the median rank's regressions, and job checks that got
    worse or fired only after the change."""
    out = [f"median rank {d['median_rank']}: {line}" for line in regressions(d["median"], pct)]
    for c in d["job_checks"]:
        if c["verdict"] in ("new", "worse"):
            out.append(f"{c['id']}: {c['base_status'] or 'not run'} -> {c['new_status']}")
    return out

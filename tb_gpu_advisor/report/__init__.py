"""One file's report: its findings ranked, as the versioned JSON (`tb-gpu-advisor/report@1`), the summary
the all-hosts view keeps of it, and the overview of many. `engine` makes it from a file, `compare` puts
two side by side."""

from __future__ import annotations

import math
from typing import Any

from tb_gpu_advisor import __version__
from tb_gpu_advisor.checks.findings import CRITICAL, PASS, PROBLEMS, SEVERITY, WARNING, Finding

SCHEMA = "tb-gpu-advisor/report@1"


def _capture_notes() -> frozenset[str]:
    from tb_gpu_advisor.checks import REGISTRY

    return frozenset(c.id for c in REGISTRY if c.section == "capture")


CAPTURE_NOTES = _capture_notes()  # checks of what a capture lacks: a note, not a cost


def problem_order(check_id: str, status: str, saving_ms: float | None) -> tuple[bool, float, int]:
    """How problems rank, everywhere (a report's findings, the overview's rows, the run picker, a job's
    ranks): by the saving, the larger first, more severe first at equal saving; a capture note
    without a cost (what the capture lacks) after every problem with one."""
    saving = saving_ms or 0.0
    return (check_id in CAPTURE_NOTES and saving <= 0, -saving, SEVERITY[status])


def rank(findings: list[Finding]) -> list[Finding]:
    """Problems (critical, warning) first, in `problem_order`; then checks that failed, info, pass and
    not-applicable, each by saving then id."""

    def key(f: Finding) -> tuple[int, tuple[bool, float, int], str]:
        group = 0 if f.status in PROBLEMS else SEVERITY[f.status] - 1
        return (group, problem_order(f.id, f.status, f.saving_ms), f.id)

    return sorted(findings, key=key)


def clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become None, NumPy scalars become Python numbers."""
    t = type(value)  # the plain types first: a report has about 16,000 values
    if t is str or t is int or value is None or t is bool:
        return value
    if t is float:
        return None if math.isnan(value) or math.isinf(value) else value
    if t is dict:
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


UNREADABLE, ANALYSIS_FAILED = "unreadable", "analysis-failed"  # a report's `failure`


def report_json(
    run: str, host: str, summary: dict | None, findings: list[Finding], errors: list[str], failure: str | None = None
) -> dict:
    """The report of one host. `failure` says why it has no checks: the file could not be read
    (UNREADABLE) or the analysis failed on it (ANALYSIS_FAILED, a bug); None when it was analysed."""
    out: dict = {
        "schema": SCHEMA,
        "failure": failure,
        "advisor_version": __version__,
        "run": run,
        "host": host,
        "devices": [],
        "steps": None,
        "headline": None,
        "breakdown_ms": None,
        "breakdown_ms_per_gpu": {},
        "warnings": [],
        "checks": [f.to_json() for f in rank(findings)],
        "errors": errors,
    }
    if summary:
        out.update(summary)
    return clean(out)


SUMMARY_CHECK_KEYS = ("id", "title", "status", "saving_ms")


def host_summary(report: dict) -> dict:
    """What the all-hosts view and the job layer (job.jobs, overview) read of a host's report (schema
    `HostSummary`): about 6 kB where the report is tens (its evidence, details and advice are for the
    host's own view), so a job of 1,024 ranks is served and held in a few MB."""
    out = {k: report[k] for k in ("run", "host", "failure", "errors", "steps", "headline") if k in report}
    out.update({k: report[k] for k in ("framework", "rank_measures") if k in report})
    out["checks"] = [{k: c[k] for k in SUMMARY_CHECK_KEYS} for c in report["checks"]]
    return out


def worst_finding(checks: list[dict]) -> dict | None:
    """The problem that costs most of a report's (or a job's) checks, in `problem_order`: the largest
    saving, a critical one before a warning at equal saving, never a capture note when a problem
    with a cost is there."""
    problems = [c for c in checks if c["status"] in (CRITICAL, WARNING)]
    return min(problems, key=lambda c: problem_order(c["id"], c["status"], c.get("saving_ms"))) if problems else None


def _worst(r: dict) -> dict | None:
    return worst_finding(r.get("checks", []))


def _row_order(row: dict) -> tuple[bool, float, int]:
    status = row["status"]
    return (
        row.get("note", False),
        -(row["top_saving_ms"] or 0.0),
        {CRITICAL: 0, "error": 1, WARNING: 2, PASS: 3}.get(status, 4),
    )


def _host_row(r: dict) -> dict:
    worst = _worst(r)
    savings = [c["saving_ms"] or 0 for c in r.get("checks", []) if c["status"] in (CRITICAL, WARNING)]
    return {
        "run": r["run"],
        "host": r["host"],
        "job": False,
        "status": worst["status"] if worst else ("error" if r.get("failure") else PASS),
        "check": worst["id"] if worst else None,
        "title": worst["title"] if worst else (r["errors"][0] if r.get("failure") else None),
        "step_ms": (r.get("steps") or {}).get("mean_ms"),
        "device_busy_pct": (r.get("headline") or {}).get("device_busy_pct"),
        "top_saving_ms": max(savings, default=0.0),
        "note": bool(worst and worst["id"] in CAPTURE_NOTES and not worst.get("saving_ms")),
    }


def job_row(job: dict) -> dict:
    """A job's own row (schema `OverviewRow`, host "*": all its ranks): its worst job finding (a
    straggler, exposed communication), the median step of its ranks and their mean GPU busy share."""
    worst = worst_finding(job.get("checks", []))
    steps = sorted(x["step_ms"] for x in job["ranks"] if x.get("step_ms") is not None)
    busy = [x["device_busy_pct"] for x in job["ranks"] if x.get("device_busy_pct") is not None]
    savings = [c.get("saving_ms") or 0 for c in job.get("checks", []) if c["status"] in (CRITICAL, WARNING)]
    runs = {x["run"] for x in job["ranks"] if x.get("run")}
    return {
        # the run its ranks' files are in (an XSpace job's session), so the row sits with theirs
        "run": runs.pop() if len(runs) == 1 else job["run"],
        "host": "*",
        "job": True,
        "ranks": len(job["ranks"]),
        "status": worst["status"] if worst else PASS,
        "check": worst["id"] if worst else None,
        "title": worst["title"] if worst else None,
        "step_ms": steps[len(steps) // 2] if steps else None,
        "device_busy_pct": sum(busy) / len(busy) if busy else None,
        "top_saving_ms": max(savings, default=0.0),
        "note": bool(worst and worst["id"] in CAPTURE_NOTES and not worst.get("saving_ms")),
    }


def overview(reports: list[dict], jobs: list[dict] | None = None) -> list[dict]:
    """One row per run and host, and one per job (`jobs`: job.analysis.jobs) above its ranks: the worst
    finding, the step time, the GPU busy share and the largest saving. Runs in the order of their worst
    row (`problem_order`: the largest saving first, ties by status); in a run, the job's row first,
    then its hosts in that order."""
    by_run: dict[str, list[dict]] = {}
    for r in reports:
        by_run.setdefault(r["run"], []).append(_host_row(r))
    for j in jobs or []:
        by_run.setdefault(j["run"], []).append(job_row(j))
    groups = []
    for run, rows in by_run.items():
        rows.sort(key=lambda x: (not x["job"], _row_order(x), x["host"]))
        groups.append((min(_row_order(x) for x in rows), run, rows))
    groups.sort(key=lambda g: (g[0], g[1]))
    return [row for _, _, rows in groups for row in rows]

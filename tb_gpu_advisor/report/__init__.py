"""One file's report: its findings ranked, as the versioned JSON (`tb-gpu-advisor/report@1`), the summary
the all-hosts view keeps of it, and the overview of many. `engine` makes it from a file, `compare` puts
two side by side."""

from __future__ import annotations

import math
from typing import Any

from tb_gpu_advisor import __version__
from tb_gpu_advisor.checks.findings import CRITICAL, PASS, PROBLEMS, SEVERITY, WARNING, Finding

SCHEMA = "tb-gpu-advisor/report@1"


def rank(findings: list[Finding]) -> list[Finding]:
    """Problems (critical, warning) first, by estimated saving, more severe first at equal saving;
    then checks that failed, info, pass and not-applicable, each by saving then id."""

    def key(f: Finding) -> tuple[int, float, int, str]:
        group = 0 if f.status in PROBLEMS else SEVERITY[f.status] - 1
        return (group, -(f.saving_ms or 0.0), SEVERITY[f.status], f.id)

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
    """The most severe problem of a report's ranked checks: a critical one before any warning, the
    largest saving first among equals. (The checks are ranked by saving, so the first problem listed
    may be a warning with a larger saving than a critical one.)"""
    problems = [c for c in checks if c["status"] in (CRITICAL, WARNING)]
    return min(problems, key=lambda c: SEVERITY[c["status"]]) if problems else None  # min keeps the first of equals


def _worst(r: dict) -> dict | None:
    return worst_finding(r.get("checks", []))


def overview(reports: list[dict]) -> list[dict]:
    """One row per run and host, worst first (by status, then by top saving): the worst finding,
    the mean step time, the GPU busy share and the largest saving."""
    rows = []
    for r in reports:
        worst = _worst(r)
        savings = [c["saving_ms"] or 0 for c in r.get("checks", []) if c["status"] in (CRITICAL, WARNING)]
        rows.append(
            {
                "run": r["run"],
                "host": r["host"],
                "status": worst["status"] if worst else ("error" if r.get("failure") else PASS),
                "check": worst["id"] if worst else None,
                "title": worst["title"] if worst else (r["errors"][0] if r.get("failure") else None),
                "step_ms": (r.get("steps") or {}).get("mean_ms"),
                "device_busy_pct": (r.get("headline") or {}).get("device_busy_pct"),
                "top_saving_ms": max(savings, default=0.0),
            }
        )
    rank = {CRITICAL: 0, "error": 1, WARNING: 2, PASS: 3}
    rows.sort(key=lambda x: (rank.get(x["status"], 4), -(x["top_saving_ms"] or 0), x["run"], x["host"]))
    return rows

"""Findings, evidence and the versioned report (`tb-gpu-advisor/report@1`)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from tb_gpu_advisor import __version__

SCHEMA = "tb-gpu-advisor/report@1"

CRITICAL, WARNING, INFO, PASS, NOT_APPLICABLE = "critical", "warning", "info", "pass", "not-applicable"
ERROR = "error"  # the check itself failed on this profile (a bug in the advisor, never the user's program)
STATUSES = (CRITICAL, WARNING, ERROR, INFO, PASS, NOT_APPLICABLE)  # the order findings are listed in
SEVERITY = {s: i for i, s in enumerate(STATUSES)}
PROBLEMS = (CRITICAL, WARNING)


def at_least(status: str, level: str) -> bool:
    """True if `status` is a finding about the program as severe as `level` or more (an `error` is
    about the advisor, so it is never at least a level)."""
    if status == ERROR:
        return False
    return SEVERITY[status] <= SEVERITY[level]


@dataclasses.dataclass
class Metric:
    name: str
    value: float | int | str | None
    unit: str = ""
    label: str = ""

    def to_json(self) -> dict:
        v = self.value
        if isinstance(v, float):
            v = None if math.isnan(v) or math.isinf(v) else round(v, 6)
        return {"name": self.name, "value": v, "unit": self.unit, "label": self.label or self.name}


@dataclasses.dataclass
class Evidence:
    """A time range on a device stream or host thread, in ms from the start of the profile (the
    trace viewer's axis), and the events that make it up."""

    where: str  # e.g. "GPU 0 · Stream #7(Compute)" or "host · python"
    start_ms: float
    end_ms: float
    label: str
    events: list[str] = dataclasses.field(default_factory=list)
    device_id: int | None = None
    thread: str | None = None
    stream_id: int | None = None

    def to_json(self) -> dict:
        return {
            "where": self.where,
            "device_id": self.device_id,
            "stream_id": self.stream_id,
            "thread": self.thread,
            "start_ms": round(self.start_ms, 6),
            "end_ms": round(self.end_ms, 6),
            "label": self.label,
            "events": self.events[:20],
        }


@dataclasses.dataclass
class Finding:
    id: str
    title: str  # the problem, with its number, when the check fires; the check's own title otherwise
    section: str
    status: str
    summary: str  # one line: what was measured
    link: str
    recommendation: str
    snippet: str | None = None
    reason: str | None = None  # why not-applicable
    metrics: list[Metric] = dataclasses.field(default_factory=list)
    thresholds: dict[str, float] = dataclasses.field(default_factory=dict)
    threshold_units: dict[str, str] = dataclasses.field(default_factory=dict)
    saving_ms: float | None = None  # per step
    saving_pct: float | None = None  # of step time
    saving_basis: str | None = None  # how the saving was estimated
    # the range the saving is uncertain within (per step), where it can be stated; the reason in saving_basis
    saving_low_ms: float | None = None
    saving_high_ms: float | None = None
    evidence: list[Evidence] = dataclasses.field(default_factory=list)
    details: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # tables (top ops, ...)
    check_title: str = ""  # the check's own title (what passing means)
    device_id: int | None = None  # the GPU the numbers are about, when one
    source: str = ""  # the module that defines the check
    measures: str = ""  # how the check measures, in a sentence or two (shown on hover in the panel)
    table: dict[str, Any] | None = None  # the table rows that are its evidence (tables.link_findings)

    def metric(self, name: str) -> Any:
        for m in self.metrics:
            if m.name == name:
                return m.value
        raise KeyError(name)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "check_title": self.check_title,
            "section": self.section,
            "status": self.status,
            "device_id": self.device_id,
            "summary": self.summary,
            "reason": self.reason,
            "metrics": [m.to_json() for m in self.metrics],
            "thresholds": [
                {"name": k, "value": v, "unit": self.threshold_units.get(k, "")} for k, v in self.thresholds.items()
            ],
            "saving_ms": None if self.saving_ms is None else round(self.saving_ms, 6),
            "saving_pct": None if self.saving_pct is None else round(self.saving_pct, 4),
            "saving_low_ms": None if self.saving_low_ms is None else round(self.saving_low_ms, 6),
            "saving_high_ms": None if self.saving_high_ms is None else round(self.saving_high_ms, 6),
            "saving_basis": self.saving_basis,
            "evidence": [e.to_json() for e in self.evidence],
            "details": self.details,
            "recommendation": self.recommendation,
            "snippet": self.snippet,
            "link": self.link,
            "table": self.table,
            "measures": self.measures,
        }


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

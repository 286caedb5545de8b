"""What a check returns: a finding (its status, numbers, saving, evidence and advice), the statuses
in the order findings are listed, and how severe each is. `report` makes a file's report of them."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

CRITICAL, WARNING, INFO, PASS, NOT_APPLICABLE = "critical", "warning", "info", "pass", "not-applicable"
ERROR = "error"  # the check itself failed on this profile (a bug in the advisor, never the user's program)
STATUSES = (CRITICAL, WARNING, ERROR, INFO, PASS, NOT_APPLICABLE)  # the order findings are listed in
SEVERITY = {s: i for i, s in enumerate(STATUSES)}
PROBLEMS = (CRITICAL, WARNING)
# a problem whose fix saves this share of the step or more is critical, whatever its own thresholds
# say: severity follows cost (a check's `critical` threshold can make it critical sooner). The saving
# is the what-if's (the step re-timed with the fix) or a job's measured wait, not a local estimate
CRITICAL_SAVING_PCT = 20.0


def by_cost(status: str, saving_pct: float | None) -> str:
    """A warning raised to critical when its saving is CRITICAL_SAVING_PCT of the step or more."""
    if status == WARNING and saving_pct is not None and saving_pct >= CRITICAL_SAVING_PCT:
        return CRITICAL
    return status


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
    table: dict[str, Any] | None = None  # the table rows that are its evidence (tables.link)
    # the step re-timed with its fix applied (graph/whatif.py): what the saving is, where it is known
    whatif: dict[str, Any] | None = None
    # the other fixes its advice offers, each re-timed on its own (`precision.mixed-off`: TF32 beside bf16)
    alternatives: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # what its evidence and details name (kernels, ops, stages, ...), as the check gave them: its
    # table's rows are found by these (not part of the JSON)
    names: list[str] = dataclasses.field(default_factory=list)

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
            "whatif": self.whatif,
            "alternatives": self.alternatives,
        }

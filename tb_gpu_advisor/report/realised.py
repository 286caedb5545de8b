"""Predicted against realised: when the run after a change no longer has findings the run before had,
what the before-run's report predicted their fixes would save beside what the step did, both steps
without the profiler (docs/whatif.md, "Predicted against realised"), so that a user sees how right the
advisor was on their own runs.

A pure function of the two reports (`tb-gpu-advisor/report@1`), and of the before-run's what-if where
several findings are gone at once (their fixes are then predicted together, as one simulation: the
saving of a fix depends on what else changed). Compare shows it as one optional field of the comparison
and one line per format (docs/whatif.md says how it plugs in)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from tb_gpu_advisor.checks.findings import INFO, PROBLEMS
from tb_gpu_advisor.report.whatif import together

# a finding's status in the after-run that says its problem is gone
GONE = ("pass", "not-applicable")


@dataclasses.dataclass(frozen=True, slots=True)
class Realised:
    """The before-run's prediction for the fixes the after-run made, and what the step did."""

    findings: tuple[str, ...]  # the before-run's findings the after-run no longer has
    change: str  # their fixes, simulated together ("bf16+channels_last")
    predicted_ms: float  # the saving the before-run's what-if predicted
    low_ms: float  # the range it stated
    high_ms: float
    predicted_step_ms: float  # the step it predicted after the fixes
    before_step_ms: float  # each run's step without the profiler (its report's step model)
    after_step_ms: float
    profiler: tuple[str, str]  # how each run's profiler cost was taken out ("capture", "logged")

    @property
    def realised_ms(self) -> float:
        return self.before_step_ms - self.after_step_ms

    @property
    def error_pct(self) -> float | None:
        """The prediction's error as a share of the realised saving (None where nothing was saved)."""
        r = self.realised_ms
        return 100.0 * (self.predicted_ms - r) / r if r > 0 else None

    @property
    def inside(self) -> bool:
        """The realised saving lies inside the stated range."""
        return self.low_ms <= self.realised_ms <= self.high_ms

    @property
    def sentence(self) -> str:
        """ "bf16+channels_last: predicted 61.1 ms a step (55.5–67.9), realised 61.6 (116.2 → 54.6 ms,
        both without the profiler): inside the range"."""
        where = "inside the range" if self.inside else "outside the range"
        return (
            f"{self.change}: predicted {self.predicted_ms:.1f} ms a step ({self.low_ms:.1f}–{self.high_ms:.1f}), "
            f"realised {self.realised_ms:.1f} ({self.before_step_ms:.1f} → {self.after_step_ms:.1f} ms, both "
            f"without the profiler): {where}"
        )

    def to_json(self) -> dict:
        return {
            "findings": list(self.findings),
            "change": self.change,
            "predicted_ms": round(self.predicted_ms, 4),
            "low_ms": round(self.low_ms, 4),
            "high_ms": round(self.high_ms, 4),
            "predicted_step_ms": round(self.predicted_step_ms, 4),
            "realised_ms": round(self.realised_ms, 4),
            "before_step_ms": round(self.before_step_ms, 4),
            "after_step_ms": round(self.after_step_ms, 4),
            "error_pct": None if self.error_pct is None else round(self.error_pct, 1),
            "inside": self.inside,
            "profiler": list(self.profiler),
            "sentence": self.sentence,
        }


def realised(
    before: dict[str, Any], after: dict[str, Any], predict: Callable[[str], dict | None] | None = None
) -> Realised | None:
    """The before-run's prediction for the findings with a simulated fix that the after-run no longer has
    (its check passes there, or does not apply), against the change of the two steps without the
    profiler; None where no such finding is gone, or a report has no step model. `predict(change)`: the
    before-run's what-if (`Prediction.to_json()`) of several fixes together, needed where more than one
    finding is gone (without it, None then)."""
    sb, sa = before.get("step_model"), after.get("step_model")
    if not sb or not sa:
        return None
    status_after = {f["id"]: f["status"] for f in after.get("checks", [])}
    gone = [
        f
        for f in before.get("checks", [])
        if f.get("whatif")
        and not f["whatif"].get("withheld")
        and f["status"] in (*PROBLEMS, INFO)
        and status_after.get(f["id"], "pass") in GONE
    ]
    if not gone:
        return None
    changes = {f["whatif"]["change"] for f in gone}
    change = together({c for one in changes for c in one.split("+")})
    if len(changes) == 1:
        w = gone[0]["whatif"]
    elif predict is not None:
        w = predict(change)
    else:
        return None
    if w is None:
        return None
    return Realised(
        tuple(sorted(f["id"] for f in gone)),
        w["change"],
        w["saving_ms"],
        w["saving_low_ms"],
        w["saving_high_ms"],
        w["new_step_ms"],
        sb["step_ms"],
        sa["step_ms"],
        (sb.get("profiler", {}).get("basis", "capture"), sa.get("profiler", {}).get("basis", "capture")),
    )

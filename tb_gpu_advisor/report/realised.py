"""Predicted against realised: when the run after a change no longer has findings the run before had,
what the before-run's report predicted their fixes would save beside what the step did, both steps
without the profiler (docs/whatif.md, "Predicted against realised"), so that a user sees how right the
advisor was on their own runs.

A pure function of the two reports (`tb-gpu-advisor/report@1`), and of the before-run's what-if where
several findings are gone at once (their fixes are then predicted together, as one simulation: the
saving of a fix depends on what else changed). Compare (report/compare.py) gives it as the comparison's
`realised` field (report/diff_doc.py) and one line in every format.

The steps without the profiler are each known only to within the model's measured error
(report/step.py, STEP_MODEL_ERROR): where that error allows either sign of the step's change (the
steps' verdict on that basis is "uncertain"), the realised saving cannot judge the prediction, and the
line says so with the range the error allows instead of calling it inside or outside."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from tb_gpu_advisor.checks.findings import INFO, PROBLEMS
from tb_gpu_advisor.report import diff_doc
from tb_gpu_advisor.report.step import host_and_device
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
    # the realised saving's range that each step's measured error allows, and whether that error leaves
    # the step's change of one sign (its verdict on the steps without the profiler not "uncertain")
    realised_range_ms: tuple[float, float]
    told: bool

    @property
    def realised_ms(self) -> float:
        return self.before_step_ms - self.after_step_ms

    @property
    def error_pct(self) -> float | None:
        """The prediction's error as a share of the realised saving (None where nothing was saved)."""
        r = self.realised_ms
        return 100.0 * (self.predicted_ms - r) / r if r > 0 else None

    @property
    def inside(self) -> bool | None:
        """The realised saving lies inside the stated range; None where the steps' measured error allows
        either sign of the step's change (the realised saving cannot judge the prediction)."""
        if not self.told:
            return None
        return self.low_ms <= self.realised_ms <= self.high_ms

    @property
    def sentence(self) -> str:
        """ "layout.channels-last, precision.mixed-off gone: bf16+channels_last predicted to save 61.1 ms a
        step (55.5–67.9), realised 61.6 (116.2 → 54.6 ms, both without the profiler): inside the range";
        savings under 10 ms with two decimals."""
        d = 2 if max(abs(self.predicted_ms), abs(self.realised_ms)) < 10 else 1
        if self.inside is None:
            lo, hi = self.realised_range_ms
            where = f"cannot tell, the model's measured error allows a realised {lo:+.{d}f} to {hi:+.{d}f} ms"
        else:
            where = "inside the range" if self.inside else "outside the range"
        return (
            f"{', '.join(self.findings)} gone: {self.change} predicted to save {self.predicted_ms:.{d}f} ms a step "
            f"({self.low_ms:.{d}f}–{self.high_ms:.{d}f}), "
            f"realised {self.realised_ms:.{d}f} ({self.before_step_ms:.{d}f} → {self.after_step_ms:.{d}f} ms, both "
            f"without the profiler): {where}"
        )

    def to_json(self) -> diff_doc.Realised:
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
            "realised_interval_ms": [round(x, 4) for x in self.realised_range_ms],
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
    apart = host_and_device(sb, sa)
    assert apart is not None
    lo, hi = apart["interval_ms"]  # the step's change (after - before): the saving is its negation
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
        (-hi, -lo),
        apart["verdict"] != "uncertain",
    )

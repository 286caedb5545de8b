"""The comparison's document, typed: what `compare` (report/compare.py) and `diff_jobs` (job/diff.py)
make and every format renders, the text and markdown (present/render_diff.py), the JSON of the command,
the MCP tool and the `compare` route, and the tab (its TypeScript types are generated from schema.json,
whose `Diff` and `JobDiff` scripts/write_schema.py writes from these).

A part that a comparison may lack is typed `X | None`, so that a renderer reading it unguarded fails
type checking (mypy), not a user's run. Every key is always present (a missing part is null). A new
optional part is a new key typed `X | None`, null where it does not apply. Descriptions are the
`Annotated` strings; schema.json takes them.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

DIFF_SCHEMA = "tb-gpu-advisor/diff@2"
JOB_DIFF_SCHEMA = "tb-gpu-advisor/job-diff@2"

# a check's verdict; see report/compare.py
CheckVerdict = Literal["fixed", "new", "worse", "better", "exposed", "unchanged"]
# the step's: "same" is unchanged within the noise, "uncertain" a change the basis cannot tell from the
# profiler's cost or the model's error, "unknown" no steps
StepWord = Literal["faster", "slower", "same", "uncertain", "unknown"]
# what the step's verdict is judged on: the captured steps, or the steps without the profiler (the model)
Basis = Literal["captured", "unprofiled"]


class Pair:
    """The mark of a list of two numbers, (low, high): schema.json gives it as such."""


Interval = Annotated[list[float], Pair]


class Side(TypedDict):
    run: str
    host: str
    framework: str | None


class StepStats(TypedDict):
    count: int | None
    mean_ms: float | None
    stdev_ms: float | None
    min_ms: float | None
    max_ms: float | None


class Steps(TypedDict):
    """The captured steps of both runs and the change of their mean."""

    base: StepStats
    new: StepStats
    delta_ms: float | None
    delta_pct: float | None
    confidence: Annotated[float, "the intervals' confidence level"]
    interval_ms: Annotated[
        Interval | None, "95% bootstrap interval of the change (low, high), null with fewer than 3 steps in a run"
    ]
    significant: Annotated[
        bool | None,
        "whether the change exceeds the steps' own variation (and 5% of the base's step time); null without an interval",
    ]


class ErrorBand(TypedDict):
    """The measured error of the step without the profiler (the model's step / the timed step - 1) on
    captures of one kind."""

    kind: Annotated[str, "the kind of capture the band was measured on"]
    low_pct: float
    high_pct: float
    source: Annotated[str, "where it was measured"]


class ApartSide(TypedDict):
    captured_step_ms: float
    step_ms: Annotated[float, "the step without the profiler (the report's step model)"]
    device_ms: float
    host_ms: float
    profiler_ms: float
    profiler_pct: float
    bound: str
    error: ErrorBand


class Apart(TypedDict):
    """The two captures' steps without the profiler (docs/whatif.md), the device's and the host's work apart."""

    base: ApartSide
    new: ApartSide
    step_delta_ms: float
    step_delta_pct: float | None
    device_delta_ms: float
    host_delta_ms: float
    interval_ms: Annotated[Interval, "the change's range given each estimate's error band"]
    verdict: Annotated[StepWord, "the verdict on this basis alone"]
    profiled_apart: Annotated[bool, "the profiler's cost is 10% or more of either captured step"]


class StepVerdict(TypedDict):
    """The step's verdict, the basis it was judged on and the change on that basis with its interval."""

    verdict: StepWord
    basis: Annotated[
        Basis,
        "captured: the captured steps (the profiler's cost under 10% of both); unprofiled: the steps without "
        "the profiler, with the model's measured error",
    ]
    delta_ms: float | None
    delta_pct: float | None
    interval_ms: Annotated[
        Interval | None,
        "the basis's interval: the captured steps' bootstrap interval widened by the difference of the "
        "profiler's cost between the captures, or the range the model's error band allows",
    ]
    reason: Annotated[str | None, "why the verdict is uncertain"]
    captured: Annotated[StepWord, "the captured steps' verdict, by the noise rule alone"]


class Summary(TypedDict):
    step: Annotated[StepWord, "the step's verdict (`verdict.verdict`)"]
    basis: Basis
    captured_step: Annotated[StepWord, "the captured steps' verdict, by the noise rule alone"]
    fixed: list[str]
    new: list[str]
    worse: list[str]
    better: list[str]
    exposed: Annotated[
        list[str],
        "checks that fire (or fire more severely) after the change while their own time did not grow",
    ]
    within_noise: Annotated[list[str], "checks whose status fell while their own time did not move beyond the noise"]
    unchanged: Annotated[int, "checks unchanged (listed in `checks` only when all were asked for)"]


class BreakdownRow(TypedDict):
    category: str
    base_ms: float | None
    new_ms: float | None
    delta_ms: float | None
    delta_pct: float | None


class HeadlineRow(TypedDict):
    key: str
    label: str
    unit: str
    base: float | None
    new: float | None
    delta: float | None


class ShareChange(TypedDict):
    """A share-of-the-step check's share in both runs (its thresholds' basis), with the noise."""

    base_pct: float
    new_pct: float
    delta_pts: float
    interval_pts: Interval
    significant: bool


class CheckTime(TypedDict):
    """A check's own time per step in both runs (`@check(time=...)`) and whether it moved beyond the noise."""

    measure: Annotated[str, "what the time is"]
    wait: Annotated[bool, "a wait: its growth counts only as far as the step grew"]
    base_ms: float | None
    new_ms: float | None
    delta_ms: float | None
    interval_ms: Annotated[
        Interval | None, "95% bootstrap interval of the change; null where the check has no per-step samples"
    ]
    grown_ms: Annotated[
        float | None,
        "its growth beyond the noise (for a wait, no more than the step's), the interval's low end where there is one; "
        "null when it did not grow beyond the noise",
    ]
    cut: Annotated[bool, "it fell beyond the noise"]
    share: Annotated[ShareChange | None, "its share of the step, for a check whose thresholds are a share"]


class CheckChange(TypedDict):
    id: str
    title: str
    base_status: str | None
    new_status: str | None
    base_title: str | None
    new_title: str | None
    label: Annotated[str | None, "the label of its measure (its first metric)"]
    unit: str | None
    base_value: float | int | str | None
    new_value: float | int | str | None
    base_saving_ms: float | None
    new_saving_ms: float | None
    verdict: CheckVerdict
    within_noise: Annotated[bool, "its status changed while its own time did not move beyond the noise"]
    time: Annotated[CheckTime | None, "its own time; null for a check judged by its status"]


class Realised(TypedDict):
    """Predicted against realised (report/realised.py, docs/whatif.md): the before-run's findings that the
    after-run no longer has, the saving the before-run predicted for their fixes (simulated together), and
    what the step did, both steps without the profiler."""

    findings: Annotated[list[str], "the before-run's findings the after-run no longer has"]
    change: Annotated[str, "their fixes, simulated together on the before-run (`whatif` change names)"]
    predicted_ms: Annotated[float, "the saving a step the before-run predicted"]
    low_ms: Annotated[float, "the low end of the range it stated"]
    high_ms: Annotated[float, "the high end of the range it stated"]
    predicted_step_ms: Annotated[float, "the step it predicted after the fixes, without the profiler"]
    realised_ms: Annotated[float, "the saving realised: before_step_ms - after_step_ms"]
    before_step_ms: Annotated[float, "the before-run's step without the profiler (its report's step model)"]
    after_step_ms: Annotated[float, "the after-run's step without the profiler"]
    realised_interval_ms: Annotated[
        Interval, "the realised saving's range that each step's measured error allows (`apart`'s, negated)"
    ]
    error_pct: Annotated[float | None, "the prediction's error, % of the realised saving; null where nothing was saved"]
    inside: Annotated[
        bool | None,
        "the realised saving lies inside the stated range; null where the steps' measured error allows "
        "either sign of the step's change (`apart.verdict` uncertain): the step cannot judge the prediction",
    ]
    profiler: Annotated[list[str], "how each run's profiler cost was taken out (capture, logged)"]
    sentence: Annotated[str, "the line the text, the markdown and the tab show"]


class Mover(TypedDict):
    name: str
    base_ms: float
    new_ms: float
    delta_ms: float


class Diff(TypedDict):
    """`tb-gpu-advisor diff --format json`, the MCP `diff` tool and the `compare` route: the new run against
    the base."""

    schema: Literal["tb-gpu-advisor/diff@2"]
    base: Side
    new: Side
    summary: Summary
    verdict: StepVerdict
    steps: Steps
    apart: Annotated[Apart | None, "the steps without the profiler; null where a report has no step model"]
    realised: Annotated[
        Realised | None,
        "the before-run's prediction for the findings the after-run no longer has, beside what the step did; "
        "null where none with a simulated fix is gone, or a report has no step model",
    ]
    breakdown_ms: list[BreakdownRow]
    headline: list[HeadlineRow]
    checks: Annotated[
        list[CheckChange],
        "the checks that changed, exposed or within the noise, worst first; every check with `--all`",
    ]
    all_checks: Annotated[bool, "whether `checks` lists the unchanged checks too"]
    kernels: Annotated[list[Mover], "the kernels whose device time per step changed most"]
    ops: Annotated[list[Mover], "the ops whose device time per step changed most"]


class JobSide(TypedDict):
    run: str
    ranks: int
    world_size: int | None
    cycle: int


class RankChange(TypedDict):
    rank: int | None
    label: str
    base_host: str
    new_host: str
    base_step_ms: float | None
    new_step_ms: float | None
    delta_ms: float | None
    delta_pct: float | None
    interval_ms: Interval | None
    step: StepWord
    fixed: list[str]
    new: list[str]
    worse: list[str]
    better: list[str]


class JobCheckChange(TypedDict):
    id: str
    title: str
    base_status: str | None
    new_status: str | None
    verdict: CheckVerdict


class RankCounts(TypedDict):
    faster: int
    slower: int
    same: int
    uncertain: int
    unknown: int


class JobSummary(TypedDict):
    step: StepWord
    ranks: RankCounts
    fixed: list[str]
    new: list[str]
    worse: list[str]
    better: list[str]


class JobDiff(TypedDict):
    """`diff --format json` on two jobs: every rank pair's step change, the job checks, and the median rank's
    comparison in full."""

    schema: Literal["tb-gpu-advisor/job-diff@2"]
    base: JobSide
    new: JobSide
    summary: JobSummary
    median_rank: str
    median: Diff
    ranks: list[RankChange]
    job_checks: list[JobCheckChange]
    only_base: list[str]
    only_new: list[str]
    errors: list[str]

"""Every check of CHECKLIST.md, one module per id prefix (`input.bound` lives in `input.py`; `capture.*` in the package `capture/`, an aspect a module). Importing
this package registers them; `run_checks` runs them all on one analysed profile, in guide order."""

from __future__ import annotations

import logging
from typing import Sequence

from tb_gpu_advisor.checks import (  # noqa: F401  (registration, in guide order within each section)
    allreduce,
    capture,
    fusion,
    host,
    input,
    job,
    kernels,
    layout,
    memcpy,
    multigpu,
    offload,
    ops,
    placement,
    precision,
    steps,
    tensorcore,
    xla,
)
from tb_gpu_advisor.checks.base import (
    HOST,
    JOB,
    REGISTRY,
    SECTIONS,
    Check,
    Context,
    JobContext,
    Options,
    RankRow,
    good_rows,
)
from tb_gpu_advisor.checks.findings import ERROR, INFO, NOT_APPLICABLE, PASS, PROBLEMS, Finding
from tb_gpu_advisor.common.parallel import map_ordered
from tb_gpu_advisor.measures import Measures, arrivals

__all__ = [
    "REGISTRY",
    "SECTIONS",
    "Check",
    "Options",
    "run_checks",
    "run_job_checks",
    "catalogue",
    "tables_of",
    "unjudged",
    "collective_time_checks",
    "stragglers",
]

# Guide order: by section, then as the checklist lists them within a section.
REGISTRY.sort(key=lambda c: (int(SECTIONS[c.section][0]), c.order))  # guide order: section, then `order`
log = logging.getLogger(__name__)


def run_checks(measures: Measures, options: Options | None = None) -> tuple[list[Finding], list[str]]:
    """All findings (passes included) and the errors of checks that failed, on one file's measures
    (the engine's, built once per file). A failing check is a bug in the advisor: it is reported with
    status `error` and a one-line reason, and the other checks still run."""
    options = options or Options()
    try:  # read by most checks: computed once, before they run side by side
        _ = measures.host_sets
    except Exception:  # noqa: BLE001  the checks that read it report the failure
        pass

    def one(spec: Check) -> tuple[Finding, str | None]:
        ctx = Context(spec, measures, options)
        try:
            return spec.evaluate(ctx), None
        except Exception as e:  # noqa: BLE001  one broken check must not hide the others
            reason = f"The check failed on this profile ({type(e).__name__}: {str(e)[:200]}); please report it."
            log.debug("check %s failed", spec.id, exc_info=True)
            f = ctx.not_applicable(reason)
            f.status = ERROR
            f.title = f"{ctx.text(spec.title)}: the check failed"
            return f, f"check {spec.id} failed: {type(e).__name__}: {str(e)[:200]}"

    results = map_ordered(one, [c for c in REGISTRY if c.scope == HOST])
    findings = [f for f, _ in results]
    blind(findings)
    return findings, [e for _, e in results if e]


def run_job_checks(
    rows: Sequence[RankRow], framework: str, world_size: int | None, options: Options | None = None
) -> list[Finding]:
    """The job checks on the ranks of a job's picked cycle (`job.JobRank`s), in guide order; each
    sees the findings of those before it. A failing check is reported as `error`, as in run_checks."""
    options = options or Options()
    out: dict[str, Finding] = {}
    paired = arrivals(good_rows(rows))  # once for every job check
    for spec in (c for c in REGISTRY if c.scope == JOB):
        ctx = JobContext(spec, rows, framework, world_size, options, dict(out), paired)
        try:
            out[spec.id] = spec.fn(ctx)
        except Exception as e:  # noqa: BLE001  one broken check must not hide the others
            log.debug("job check %s failed", spec.id, exc_info=True)
            f = ctx.finding(ERROR, f"The check failed on this job ({type(e).__name__}); please report it.")
            f.title = f"{ctx.text(spec.title)}: the check failed"
            out[spec.id] = f
    return list(out.values())


def blind(findings: list[Finding]) -> None:
    """A capture problem that leaves a check without what it measures makes that check "cannot tell"
    (not applicable, saying why) instead of passing (capture.BLINDS)."""
    by_id = {f.id: f for f in findings}
    for cid, blinded in capture.BLINDS.items():
        cause = by_id.get(cid)
        if cause is None or cause.status not in (*PROBLEMS, INFO):
            continue
        for bid in blinded:
            f = by_id.get(bid)
            if f is not None and f.status == PASS:
                f.status = NOT_APPLICABLE
                f.reason = f"Cannot tell: {cause.title} ({cid})."
                f.summary = f"{f.reason} {f.summary}"
                f.metrics = []


def catalogue() -> list[dict]:
    return [c.to_json() for c in REGISTRY]


def tables_of() -> dict[str, str | None]:
    """Each check's table (`@check(table=...)`), by id: where its finding's evidence rows are."""
    return {c.id: c.table for c in REGISTRY}


def unjudged(findings: Sequence[Finding]) -> list[str]:
    """The headline numbers left unjudged: those of checks (`@check(headline=...)`) that do not apply."""
    judges = {c.id: c.headline for c in REGISTRY if c.headline}
    return [judges[f.id] for f in findings if f.id in judges and f.status == NOT_APPLICABLE]


def stragglers(findings: Sequence[Finding]) -> set[str]:
    """The hosts the job checks that name stragglers (`@check(marks_stragglers=True)`) name in their details."""
    marking = {c.id for c in REGISTRY if c.marks_stragglers}
    return {d["host"] for f in findings if f.id in marking for d in f.details}


def collective_time_checks() -> list[str]:
    """The checks that read a rank's collective time as transfer (`@check(collective_time=True)`)."""
    return [c.id for c in REGISTRY if c.collective_time]

"""A report's step model: the steps re-timed by their graph as captured and without the profiler, and
every finding's fix simulated together, so that what the findings save together never double counts
(docs/whatif.md)."""

from __future__ import annotations

from tb_gpu_advisor.checks.findings import PROBLEMS, Finding
from tb_gpu_advisor.measures import Measures, Prediction

# the order the fixes are applied in when they are simulated together (each changes what the ones
# after it re-time), and the ones a broader fix holds
ORDER = (
    "warmup",
    "allocator",
    "input",
    "host",
    "syncs",
    "overlap",
    "padding",
    "bf16",
    "fp16",
    "tf32",
    "channels_last",
    "fusion",
    "compile",
    "graph",
    "reduce-overhead",
)
HELD = {
    "tf32": ("bf16", "fp16"),
    "fusion": ("compile", "reduce-overhead"),
    "padding": ("compile", "reduce-overhead"),
    "compile": ("reduce-overhead",),
    "graph": ("reduce-overhead",),
}


def together(changes: set[str]) -> str:
    """The fixes of several findings as one change ("bf16+compile+graph"), the ones another holds left out."""
    keep = {c for c in changes if not any(h in changes for h in HELD.get(c, ()))}
    return "+".join(c for c in ORDER if c in keep)


def all_fixes(m: Measures, fixes: set[str]) -> tuple[Prediction | None, list[str]]:
    """Every finding's fix (`fixes`: their changes, "graph+compile" one fix) simulated at once, never
    slower than one of them alone: where the whole set is slower than its best fix (a fix that costs
    more than it saves, such as autocast's casts on a host-bound step), the fixes are added to the best
    one in the order of their own new steps, each kept only where it makes the step faster. (The
    prediction, the fixes left out.)"""
    if not fixes:
        return None, []

    def parts(chosen: set[str]) -> set[str]:
        return {c for f in chosen for c in f.split("+")}

    whole = m.predict(together(parts(fixes)), ranged=False)
    singles = {f: p for f in sorted(fixes) if (p := m.predict(f, ranged=False)) is not None}
    if not singles or (whole is not None and whole.new_step_ps <= min(p.new_step_ps for p in singles.values())):
        return m.predict(together(parts(fixes))), []  # its range simulated only now it is the answer
    best = min(singles, key=lambda f: singles[f].new_step_ps)
    kept, step = {best}, singles[best].new_step_ps
    for f in sorted(singles, key=lambda f: singles[f].new_step_ps):
        if f in kept:
            continue
        tried = m.predict(together(parts(kept | {f})), ranged=False)
        if tried is not None and tried.new_step_ps < step:
            kept, step = kept | {f}, tried.new_step_ps
    return m.predict(together(parts(kept))), sorted(fixes - kept)


def step_model_json(m: Measures, findings: list[Finding]) -> dict | None:
    sm = m.step_model
    if sm is None:
        return None
    fixes = [f for f in findings if f.whatif and f.status in (*PROBLEMS, "info")]
    combined, left_out = all_fixes(m, {f.whatif["change"] for f in fixes})  # type: ignore[index]
    half = m.step_spread.half_range_ps or 0.0
    return {
        "captured_step_ms": round(sm.captured_ps / 1e9, 4),
        "step_ms": round(sm.unprofiled_ps / 1e9, 4),
        "profiler_ms": round(sm.profiler_ps / 1e9, 4),
        "profiler_pct": round(100.0 * sm.profiler_share, 2),
        # the ends of the profiler's cost's range, widened by what another capture of as many steps
        # would measure at this one's step spread (measures.StepSpread)
        "step_range_ms": [round(max(sm.low_ps - half, 0.0) / 1e9, 4), round((sm.high_ps + half) / 1e9, 4)],
        "profiler": sm.profiler.to_json() if sm.profiler is not None else None,
        "bound": sm.bound,
        "device_ms": round(sm.device_ps / 1e9, 4),
        "host_ms": round(sm.host_ps / 1e9, 4),
        # (none under CUPTI's range profiler, whose times are its own: every saving is withheld)
        "all": combined.to_json() if combined is not None and not m.range_records else None,
        "left_out": left_out,
        "findings": [f.id for f in fixes],
    }

"""A report's step model: the steps re-timed by their graph as captured and without the profiler, and
every finding's fix simulated together, so that what the findings save together never double counts
(docs/whatif.md)."""

from __future__ import annotations

from tb_gpu_advisor.checks.findings import PROBLEMS, Finding
from tb_gpu_advisor.measures import Measures

# the order the fixes are applied in when they are simulated together (each changes what the ones
# after it re-time), and the ones a broader fix holds
ORDER = ("input", "host", "syncs", "overlap", "padding", "bf16", "fp16", "tf32", "fusion", "compile", "graph")
HELD = {"tf32": ("bf16", "fp16"), "fusion": ("compile",), "padding": ("compile",)}


def together(changes: set[str]) -> str:
    """The fixes of several findings as one change ("bf16+compile+graph"), the ones another holds left out."""
    keep = {c for c in changes if not any(h in changes for h in HELD.get(c, ()))}
    return "+".join(c for c in ORDER if c in keep)


def step_model_json(m: Measures, findings: list[Finding]) -> dict | None:
    sm = m.step_model
    if sm is None:
        return None
    fixes = [f for f in findings if f.whatif and f.status in (*PROBLEMS, "info")]
    changes = {c for f in fixes for c in f.whatif["change"].split("+")}  # type: ignore[index]
    combined = m.predict(together(changes)) if changes else None
    return {
        "captured_step_ms": round(sm.captured_ps / 1e9, 4),
        "step_ms": round(sm.unprofiled_ps / 1e9, 4),
        "profiler_ms": round(sm.profiler_ps / 1e9, 4),
        "profiler_pct": round(100.0 * sm.profiler_share, 2),
        "bound": sm.bound,
        "device_ms": round(sm.device_ps / 1e9, 4),
        "host_ms": round(sm.host_ps / 1e9, 4),
        "all": combined.to_json() if combined is not None else None,
        "findings": [f.id for f in fixes],
    }

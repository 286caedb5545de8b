"""How a check declares itself, and the context it runs in.

Each check is a function of the `Analysis` (profile + derived steps) decorated with `@check(...)`,
which records its id, title, guide section and link, thresholds (defaults, units), recommendation
and snippet. The catalogue (`tb-gpu-advisor checks`, the panel's checklist) is generated from these
declarations; nothing is listed twice.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from tb_gpu_advisor.analysis import Analysis
from tb_gpu_advisor.report import NOT_APPLICABLE, Evidence, Finding, Metric

GUIDE = "https://www.tensorflow.org/guide/gpu_performance_analysis"

# Guide sections: (number, title, anchor on the guide page)
SECTIONS = {
    "capture": ("0", "Before the checklist", "#overview"),
    "input": ("1", "Input pipeline (guide 1.1)", "#1._debug_the_input_pipeline"),
    "utilisation": ("2", "One GPU: utilisation (guide 1.2)", "#2._debug_the_performance_of_one_gpu"),
    "kernels": ("3", "One GPU: kernel efficiency (guide 1.2.3)", "#3._more_efficient_kernels_on_gpus"),
    "precision": ("4", "Mixed precision and XLA (guide 1.3)", "#3._enable_mixed_precision_and_xla"),
    "multigpu": ("5", "Several GPUs on one host (guide 2)", "#2._optimize_the_performance_on_the_multi-gpu_single_host"),
}


@dataclasses.dataclass(frozen=True)
class Threshold:
    default: float
    unit: str
    description: str


@dataclasses.dataclass(frozen=True)
class Check:
    id: str
    title: str
    section: str  # key of SECTIONS
    anchor: str  # the guide heading this check comes from
    thresholds: dict[str, Threshold]
    recommendation: str
    snippet: str | None
    fn: Callable[["Context"], Finding]
    needs_gpu: bool = False  # not-applicable, without running, on a profile with no GPU activity

    def evaluate(self, ctx: "Context") -> Finding:
        if self.needs_gpu and not ctx.a.gpus:
            return ctx.not_applicable(NO_GPU)
        return self.fn(ctx)

    @property
    def link(self) -> str:
        return GUIDE + self.anchor

    @property
    def section_title(self) -> str:
        return SECTIONS[self.section][1]

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "section": self.section_title,
            "section_order": int(SECTIONS[self.section][0]),
            "link": self.link,
            "thresholds": [
                {"name": k, "default": t.default, "unit": t.unit, "description": t.description}
                for k, t in self.thresholds.items()
            ],
            "recommendation": self.recommendation,
            "snippet": self.snippet,
        }


REGISTRY: list[Check] = []
NO_GPU = "No GPU activity in the profile."


def paragraphs(text: str) -> str:
    """Source-wrapped text as paragraphs: lines joined, paragraphs separated by a blank line."""
    return "\n\n".join(" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip())


def check(*, id: str, title: str, section: str, anchor: str, recommendation: str, snippet: str | None = None,
          thresholds: dict[str, Threshold] | None = None, needs_gpu: bool = False):  # fmt: skip
    def register(fn):
        if any(c.id == id for c in REGISTRY):
            raise ValueError(f"duplicate check id {id}")
        REGISTRY.append(Check(id, title, section, anchor, thresholds or {}, paragraphs(recommendation),
                              snippet.strip() if snippet else None, fn, needs_gpu))  # fmt: skip
        return fn

    return register


@dataclasses.dataclass
class Options:
    """What the user can set: threshold overrides (`check.threshold` -> value), the model's
    parameter count and the interconnect bandwidth (GB/s) for the all-reduce estimate."""

    overrides: dict[str, float] = dataclasses.field(default_factory=dict)
    params: int | None = None
    bandwidth_gbps: float | None = None

    def validate(self) -> None:
        known = {f"{c.id}.{t}" for c in REGISTRY for t in c.thresholds}
        for key in self.overrides:
            if key not in known:
                raise ValueError(f"unknown threshold {key!r} (see `tb-gpu-advisor checks`)")


class Context:
    """What a check function sees: the analysis, its resolved thresholds, and finding builders."""

    def __init__(self, spec: Check, analysis: Analysis, options: Options):
        self.spec = spec
        self.a = analysis
        self.options = options
        self.t = {k: float(options.overrides.get(f"{spec.id}.{k}", th.default)) for k, th in spec.thresholds.items()}

    @property
    def step_ps(self) -> float:
        """Mean step time, ps."""
        n = len(self.a.steps)
        return float(self.a.steps.dur_ps.sum()) / n if n else 0.0

    def finding(self, status: str, summary: str, metrics: list[Metric] | None = None, *,
                saving_ps: float | None = None, saving_basis: str | None = None,
                evidence: list[Evidence] | None = None, details: list[dict] | None = None,
                recommendation: str | None = None) -> Finding:  # fmt: skip
        """A finding; `saving_ps` is the estimated saving per step (ps)."""
        saving_ms = saving_pct = None
        if saving_ps is not None:
            saving_ps = max(float(saving_ps), 0.0)
            saving_ms = saving_ps / 1e9
            saving_pct = 100.0 * saving_ps / self.step_ps if self.step_ps > 0 else None
        return Finding(
            id=self.spec.id,
            title=self.spec.title,
            section=self.spec.section_title,
            status=status,
            summary=summary,
            link=self.spec.link,
            recommendation=paragraphs(recommendation) if recommendation else self.spec.recommendation,
            snippet=self.spec.snippet,
            metrics=metrics or [],
            thresholds=dict(self.t),
            threshold_units={k: th.unit for k, th in self.spec.thresholds.items()},
            saving_ms=saving_ms,
            saving_pct=saving_pct,
            saving_basis=saving_basis if saving_ps is not None else None,
            evidence=evidence or [],
            details=details or [],
        )

    def not_applicable(self, reason: str) -> Finding:
        f = self.finding(NOT_APPLICABLE, reason)
        f.reason = reason
        return f

    def level(self, value: float | None, warning: str = "warning", critical: str | None = "critical") -> str:
        """Status of a measured value against this check's `warning`/`critical` thresholds."""
        from tb_gpu_advisor.report import CRITICAL, PASS, WARNING

        if value is None:
            return PASS
        if critical is not None and critical in self.t and value >= self.t[critical]:
            return CRITICAL
        if warning in self.t and value >= self.t[warning]:
            return WARNING
        return PASS
